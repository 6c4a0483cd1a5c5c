/* test_timeline.c: commits and signaled (core/src/timeline.c, slot.c,
 * device.c).
 *
 * Rules: TL-7 TL-8 TL-9 TL-10 TL-11 TL-12 TL-13 TL-14 TL-15 TL-21 TL-22
 *        TL-23 TL-24 TL-25 TL-26 TL-27, with LMEM-11, LOSS-2, ERR-28 and
 *        ERR-36 for the reasons of the losses they make; SUBMIT-2, SUBMIT-3,
 *        OPEN-20 and OPEN-23 for map_peer (edge ABI 1.2).
 *
 * The asynchronous test device (tests/driver/testdev.c, "test:ID,options")
 * holds work back until rig commits it when opened with commit_k: with a
 * large k nothing it is given runs until a wait commits it, which makes
 * "not run" observable. Its fault_at=N names an absolute value, so the tests
 * that use it first learn where the next device's timeline starts
 * (probe_start). Two drivers linked into this file stand for what the test
 * device cannot: "own" keeps its own word (RIG_EDGE_OWN_WORD) with a value
 * the test sets, and "lazy" never commits on its own, whatever k it states.
 *
 * Every wait is bounded: loops poll with sleeps up to a deadline, and the
 * process's wait hook ends any blocking rig call that outlives the test's
 * deadline (it then returns RIG_INTERRUPTED, which fails the assertion
 * instead of hanging). Timing is only ever asserted as "not before" or
 * within generous timeouts.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rig/edge.h>
#include <rig/rig.h>

#include "driver_memory.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------ */

/* Each test's setup: its blocking calls end 30 s from its start. */
static int arm(void **state) {
  (void)state;
  arm_deadline(30.0);
  return 0;
}

static uint64_t signaled_of(rig_device *d) {
  uint64_t v = UINT64_MAX;
  check_ok(rig_device_signaled(d, &v), "rig_device_signaled");
  return v;
}

/* Polls rig_device_signaled (which commits nothing) until it reports at least v
 * or timeout_s passed; returns the last value. */
static uint64_t poll_signaled(rig_device *d, uint64_t v, double timeout_s) {
  double end = now_s() + timeout_s;
  uint64_t s = signaled_of(d);
  while (s < v && now_s() < end) {
    sleep_ms(1);
    s = signaled_of(d);
  }
  return s;
}

/* Whether each of the n bytes at p is c; volatile, as a worker might write
 * them if a rule broke. */
static bool bytes_are(const volatile unsigned char *p, size_t n, unsigned char c) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != c)
      return false;
  return true;
}

/* The start of test-device timelines must stay far below the commit_k the
 * tests give, or the device would commit the first value on its own. */
static rig_device *open_holding(const char *name) {
  rig_device *d = open_ok(name);
  assert_true(rig_device_submitted(d) < 1000);
  return d;
}

#define HOLD_K "commit_k=1000000"

/* ---- TL-7, TL-8 ------------------------------------------------------------ */

/* TL-7, TL-8: a driver keeps submitted work back until commit, and work
 * not committed never runs: a fill on a device with a large k stays
 * unreported and its bytes unchanged, however long no wait comes. */
static void tl_7_8_uncommitted_work_never_runs(void **state) {
  (void)state;
  rig_device *d = open_holding("test:tl7," HOLD_K ",delay_us=0");
  rig_buffer *b = create_ok(d, 256);
  volatile unsigned char *bytes = rig_buffer_host_address(b);
  assert_non_null(bytes);
  memset((void *)bytes, 0, 256); /* no work has touched it: no order needed */
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 0xab, 1, &p), "rig_buffer_submit_fill");
  uint64_t v = rig_point_value(p);
  assert_true(rig_device_submitted(d) == v);
  double end = now_s() + 0.05;
  while (now_s() < end) {
    assert_true(signaled_of(d) < v);      /* TL-7: kept back */
    assert_true(bytes_are(bytes, 256, 0)); /* TL-8: not run */
    sleep_ms(1);
  }
  /* A wait commits it (TL-9), and then it runs. */
  check_ok(rig_point_wait(p), "rig_point_wait");
  assert_true(signaled_of(d) >= v);
  assert_true(bytes_are(bytes, 256, 0xab));
  rig_buffer_release(b);
  close_release(d);
}

/* ---- TL-14, TL-24 ---------------------------------------------------------- */

/* TL-14, TL-24: rig_device_signaled commits nothing and waits for nothing: called
 * many times, and with time for a committed fill to run, it still does not
 * report the value, and the fill has not run. */
static void tl_14_24_signaled_commits_nothing(void **state) {
  (void)state;
  rig_device *d = open_holding("test:tl14," HOLD_K ",delay_us=0");
  rig_buffer *b = create_ok(d, 64);
  volatile unsigned char *bytes = rig_buffer_host_address(b);
  memset((void *)bytes, 0, 64);
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 0x11, 1, &p), "rig_buffer_submit_fill");
  uint64_t v = rig_point_value(p);
  for (int i = 0; i < 100000; i++) {
    uint64_t s = UINT64_MAX;
    assert_int_equal(rig_device_signaled(d, &s), RIG_OK);
    assert_true(s < v);
  }
  sleep_ms(30); /* time for work a commit would have released */
  assert_true(signaled_of(d) < v);
  assert_true(bytes_are(bytes, 64, 0));
  check_ok(rig_point_wait(p), "rig_point_wait");
  assert_true(bytes_are(bytes, 64, 0x11));
  rig_buffer_release(b);
  close_release(d);
}

/* ---- TL-15 ------------------------------------------------------------------- */

/* TL-15: rig_point_reached commits the work it asks about: called again
 * and again it turns true, with no wait and no other commit. */
static void tl_15_point_reached_commits(void **state) {
  (void)state;
  rig_device *d = open_holding("test:tl15," HOLD_K ",delay_us=0");
  rig_buffer *b = create_ok(d, 64);
  volatile unsigned char *bytes = rig_buffer_host_address(b);
  memset((void *)bytes, 0, 64);
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 0x22, 1, &p), "rig_buffer_submit_fill");
  sleep_ms(20);
  assert_true(signaled_of(d) < rig_point_value(p)); /* held back until now */
  bool reached = false;
  double end = now_s() + 5.0;
  while (!(reached = rig_point_reached(p)) && now_s() < end)
    sleep_ms(1);
  assert_true(reached);
  assert_true(rig_point_reached(p)); /* for good */
  assert_true(bytes_are(bytes, 64, 0x22));
  rig_buffer_release(b);
  close_release(d);
}

/* ---- TL-9 -------------------------------------------------------------------- */

/* TL-9: a wait for a point commits the awaited work first: rig_point_wait
 * returns, and a host read of a buffer (rig_buffer_get) waits for the fill
 * that wrote it, committing it, and sees its bytes. (Queue waits on another
 * device's word: core waits for every point on the host before a submit,
 * so that case is the host wait too.) */
static void tl_9_waits_commit(void **state) {
  (void)state;
  rig_device *d = open_holding("test:tl9," HOLD_K ",delay_us=0");
  rig_buffer *b = create_ok(d, 128);
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 0x33, 1, &p), "rig_buffer_submit_fill");
  assert_true(signaled_of(d) < rig_point_value(p));
  check_ok(rig_point_wait(p), "rig_point_wait");
  assert_true(signaled_of(d) >= rig_point_value(p));
  assert_true(rig_point_reached(p));

  check_ok(rig_buffer_submit_fill(b, 0x5a, 1, &p), "rig_buffer_submit_fill");
  sleep_ms(20);
  assert_true(signaled_of(d) < rig_point_value(p));
  unsigned char out[128];
  memset(out, 0, sizeof out);
  check_ok(rig_buffer_get(b, 0, out, sizeof out), "rig_buffer_get");
  assert_true(bytes_are(out, sizeof out, 0x5a));
  assert_true(signaled_of(d) >= rig_point_value(p));
  rig_buffer_release(b);
  close_release(d);
}

/* ---- TL-10, TL-12 ------------------------------------------------------------ */

/* TL-10, TL-12: while submissions go on, a driver commits on its own at
 * least every k values, so each value is reported at most k values late,
 * with no wait of rig's: after each submit, signaled (which commits
 * nothing) comes within k of submitted. Each fill writes a buffer of its
 * own, made beforehand, so that no submit waits on an earlier one. */
static void tl_10_12_reported_at_most_k_late(void **state) {
  (void)state;
  enum { K = 4, N = 13 };
  rig_device *d = open_ok("test:tl10,commit_k=4,delay_us=0");
  rig_buffer *b[N];
  for (int i = 0; i < N; i++)
    b[i] = create_ok(d, 64);
  for (int i = 0; i < N; i++) {
    rig_point p;
    check_ok(rig_buffer_submit_fill(b[i], (uint32_t)i, 4, &p), "rig_buffer_submit_fill");
    uint64_t v = rig_point_value(p);
    assert_true(rig_device_submitted(d) == v);
    uint64_t s = poll_signaled(d, v - K, 5.0);
    if (s < v - K)
      print_error("value %llu: signaled %llu after 5 s\n", (unsigned long long)v,
                  (unsigned long long)s);
    assert_true(s >= v - K);
    assert_true(s <= v); /* never past what was submitted */
  }
  for (int i = 0; i < N; i++)
    rig_buffer_release(b[i]);
  close_release(d);
}

/* ---- TL-11, TL-13 ------------------------------------------------------------ */

/* The dynamic symbols librig-core defines, read from its file's .dynsym:
 * calls f for each defined global function name. */
static int each_core_symbol(void (*f)(const char *name, void *ctx), void *ctx) {
  Dl_info info;
  void *fn = dlsym(RTLD_DEFAULT, "rig_device_signaled");
  if (!fn || !dladdr(fn, &info) || !info.dli_fname || !strstr(info.dli_fname, "librig-core"))
    return -1;
  FILE *in = fopen(info.dli_fname, "rb");
  if (!in)
    return -1;
  fseek(in, 0, SEEK_END);
  long len = ftell(in);
  fseek(in, 0, SEEK_SET);
  unsigned char *img = malloc((size_t)len);
  int count = -1;
  if (img && fread(img, 1, (size_t)len, in) == (size_t)len) {
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
      if (sh[i].sh_type != SHT_DYNSYM)
        continue;
      const Elf64_Sym *sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
      const char *str = (const char *)(img + sh[sh[i].sh_link].sh_offset);
      count = 0;
      for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
        if (sym[k].st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
            ELF64_ST_BIND(sym[k].st_info) != STB_LOCAL) {
          f(str + sym[k].st_name, ctx);
          count++;
        }
    }
  }
  free(img);
  fclose(in);
  return count;
}

static void no_commit_in(const char *name, void *ctx) {
  if (name && strstr(name, "commit")) {
    print_error("librig-core exports %s\n", name);
    ++*(int *)ctx;
  }
}

/* TL-13: programs have no commit call. TL-11: nor can they learn k. No
 * function librig-core exports names a commit, and the names a program
 * could look for are not there; rig_device_signaled, looked up the same way, is
 * (the lookup itself works). <rig/rig.h> declares no commit and no k. */
static void tl_11_13_no_commit_call(void **state) {
  (void)state;
  assert_non_null(dlsym(RTLD_DEFAULT, "rig_device_signaled"));
  const char *names[] = {"rig_commit", "rig_device_commit", "rig_timeline_commit",
                         "rig_point_commit", "rig_commit_k", "rig_device_commit_k",
                         "rig_flush"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    assert_null(dlsym(RTLD_DEFAULT, names[i]));
  int commits = 0;
  int n = each_core_symbol(no_commit_in, &commits);
  assert_true(n > 50); /* the whole public API was seen */
  assert_int_equal(commits, 0);
}

/* "lazy": a driver that never commits on its own, whatever k its facts
 * state. Its submit takes the work; its commit runs it: the word takes the
 * value. Core's rule is the same for every k (TL-11): commit before any
 * wait; if core trusted a stated k and skipped the commit, the wait would
 * end only by the hook. */
typedef struct lazy {
  volatile uint64_t *word;
  uint32_t k;
  _Atomic uint64_t taken;   /* the last value submitted */
  _Atomic int commits;
} lazy;

static int lazy_open(const char *args, void **out, rig_edge_error *err) {
  lazy *l = calloc(1, sizeof *l);
  if (!l)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "lazy: out of memory");
  l->k = (uint32_t)strtoul(args, NULL, 10);
  *out = l;
  return RIG_EDGE_OK;
}
static int lazy_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  strcpy(f->arch, "lazy");
  f->alignment = 16;
  f->budget = 1 << 20;
  f->flags = RIG_EDGE_COMPUTES;
  driver_memory_queues(f);
  f->commit_k = ((lazy *)h)->k; /* informative only, and here a lie */
  return RIG_EDGE_OK;
}
static void lazy_destroy(void *h) { free(h); }
static int lazy_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  ((lazy *)h)->word = word;
  return RIG_EDGE_OK;
}
static int lazy_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  atomic_store(&((lazy *)h)->taken, w->value);
  return RIG_EDGE_OK;
}
static int lazy_commit(void *h, uint64_t value, rig_edge_error *err) {
  lazy *l = h;
  atomic_fetch_add(&l->commits, 1);
  uint64_t t = atomic_load(&l->taken);
  rig_edge_word_store(l->word, value < t ? value : t);
  return RIG_EDGE_OK;
}
static const rig_edge_driver lazy_driver = {
    RIG_EDGE_DRIVER_INIT("lazy"),
    .open = lazy_open,
    .facts = lazy_facts,
    .destroy = lazy_destroy,
    .bind_word = lazy_bind_word,
    .submit = lazy_submit,
    .commit = lazy_commit,
    .allocate = driver_memory_allocate_unaddressed,
    .release = driver_memory_release,
};

/* TL-11: rig never reads k. Drivers stating k = 0 (nonsense), 1 (a lie:
 * this one never commits on its own) and 2^32 - 1 open alike, and on each
 * a wait commits the work: rig counts on no k. TL-13: the commit is rig's,
 * from the wait, never the program's. The test device with commit_k=3
 * opens and its waits end the same way. */
static void tl_11_13_k_is_never_read(void **state) {
  (void)state;
  const char *ks[] = {"0", "1", "4294967295"};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "lazy:%s", ks[i]);
    rig_device *d = NULL;
    check_ok(rig_device_open_driver(name, &lazy_driver, ks[i], &d), name);
    rig_buffer *b = create_ok(d, 64);
    rig_point p;
    check_ok(rig_buffer_submit_fill(b, 1, 4, &p), "rig_buffer_submit_fill");
    sleep_ms(10);
    assert_true(signaled_of(d) < rig_point_value(p)); /* it never commits itself */
    check_ok(rig_point_wait(p), "rig_point_wait");  /* TL-9 whatever k says */
    assert_true(signaled_of(d) >= rig_point_value(p));
    rig_buffer_release(b);
    close_release(d);
  }
  rig_device *t = open_ok("test:k,commit_k=3,delay_us=0");
  rig_buffer *b = create_ok(t, 64);
  check_ok(rig_buffer_fill(b, 7, 4), "rig_buffer_fill");
  uint32_t w = 0;
  check_ok(rig_buffer_get(b, 0, &w, sizeof w), "rig_buffer_get");
  assert_int_equal(w, 7);
  rig_buffer_release(b);
  close_release(t);
}

/* ---- TL-21, LMEM-11 ------------------------------------------------------------ */

/* TL-21, LMEM-11, LOSS-2, ERR-28, ERR-36: a submit the driver refuses loses
 * the device with the driver's message; work it took before still completes
 * on its worker, so signaled goes on into values that were dropped, while
 * their points stay unreached for good and their waits are Lost.
 *
 * Values 1 and 2 (after the start) each take 150 ms; value 3 faults at
 * once. The loss is recorded with value 2 not yet reached, unless the
 * thread stalled for 300 ms between the first submit and the third; then
 * the test tries again on a fresh device (at most three times). */
static void tl_21_lmem_11_signaled_past_the_loss(void **state) {
  (void)state;
  bool checked = false;
  for (int attempt = 0; attempt < 3 && !checked; attempt++) {
    uint64_t s = probe_start("timeline-probe");
    char name[96];
    snprintf(name, sizeof name, "test:tl21-%d,fault_at=%llu,delay_us=150000", attempt,
             (unsigned long long)(s + 3));
    rig_device *d = open_ok(name);
    assert_true(rig_device_submitted(d) == s); /* the probe's slot and start */
    rig_buffer *b[3];
    for (int i = 0; i < 3; i++)
      b[i] = create_ok(d, 64);
    rig_point p1, p2, p3 = RIG_POINT_NONE;
    check_ok(rig_buffer_submit_fill(b[0], 1, 4, &p1), "fill 1");
    check_ok(rig_buffer_submit_fill(b[1], 2, 4, &p2), "fill 2");
    assert_int_equal(rig_buffer_submit_fill(b[2], 3, 4, &p3), RIG_LOST); /* LOSS-2 */
    assert_true(p3 == RIG_POINT_NONE); /* no out-parameter on failure */
    char want[RIG_MESSAGE_BYTES], why[64];
    snprintf(why, sizeof why, "injected fault at %llu", (unsigned long long)(s + 3));
    snprintf(want, sizeof want, "%s lost: %s", name, why);
    assert_string_equal(rig_error_last()->message, want); /* ERR-28, ERR-36 */
    assert_ptr_equal(rig_error_last()->device, d);
    assert_non_null(rig_device_lost(d));
    assert_string_equal(rig_device_lost(d), why);
    assert_true(rig_device_submitted(d) == s + 3);

    bool r1 = rig_point_reached(p1), r2 = rig_point_reached(p2);
    if (!r2) {
      /* The worker goes on: signaled reports value 2 (TL-21). */
      uint64_t v = poll_signaled(d, s + 2, 5.0);
      assert_true(v >= s + 2);
      /* Yet 2 was dropped at the loss and is never reached (LMEM-11). */
      for (int i = 0; i < 3; i++) {
        assert_false(rig_point_reached(p2));
        assert_int_equal(rig_point_wait(p2), RIG_LOST);
        assert_string_equal(rig_error_last()->message, want);
      }
      assert_true(rig_point_reached(p1) == r1); /* what the loss fixed */
      if (!r1)
        assert_int_equal(rig_point_wait(p1), RIG_LOST);
      else
        check_ok(rig_point_wait(p1), "wait 1");
      /* The lost device's memory is Lost to every use (LMEM-8). */
      uint32_t w;
      assert_int_equal(rig_buffer_get(b[1], 0, &w, sizeof w), RIG_LOST);
      checked = true;
    } else
      print_message("tl21: value 2 reached before the loss (a stall); again\n");
    for (int i = 0; i < 3; i++)
      rig_buffer_release(b[i]);
    check_ok(rig_device_close(d), "rig_device_close of the lost device");  /* runs its stop */
    if (checked)
      assert_false(rig_point_reached(p2)); /* and after its stop (LMEM-11) */
    rig_device_release(d);
  }
  assert_true(checked);
}

/* ---- TL-22..27: a driver that keeps its own word ----------------------------------- */

/* "own": RIG_EDGE_OWN_WORD, with the value its signaled() reports set by
 * the test. It computes, takes fills and runs none of them (its submit only
 * records), and counts its signaled() calls and stops. The test reaches
 * the record of the device it opened last through own_last. */
typedef struct own {
  _Atomic uint64_t value;         /* what signaled() reports */
  _Atomic int reads, stops;
  _Atomic bool fail_read;         /* signaled() faults "link down" */
  _Atomic bool fail_submit;       /* submit faults "queue gone" */
  /* TL-26: the next read blocks until the test lets it go. */
  _Atomic bool hold;
  pthread_mutex_t m;
  pthread_cond_t c;
  bool in_read, go;
  /* TL-23, TL-27: a submit that asks rig_device_signaled from inside it. */
  _Atomic(rig_device *) probe;
  rig_status probe_status;
  uint64_t probe_value;
  int probe_reads;                /* reads the probe made of the driver */
} own;

static own *own_last;

static int own_open(const char *args, void **out, rig_edge_error *err) {
  own *o = calloc(1, sizeof *o);
  if (!o)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "own: out of memory");
  pthread_mutex_init(&o->m, NULL);
  pthread_cond_init(&o->c, NULL);
  own_last = o;
  *out = o;
  return RIG_EDGE_OK;
}
static int own_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  strcpy(f->arch, "own");
  f->alignment = 16;
  f->budget = 1 << 20;
  f->flags = RIG_EDGE_OWN_WORD | RIG_EDGE_COMPUTES;
  driver_memory_queues(f);
  f->commit_k = UINT32_MAX; /* never read (TL-11) */
  return RIG_EDGE_OK;
}
static int own_stop(void *h, rig_edge_error *err) {
  atomic_fetch_add(&((own *)h)->stops, 1);
  return RIG_EDGE_OK;
}
static void own_destroy(void *h) {
  own *o = h;
  if (own_last == o)
    own_last = NULL;
  pthread_mutex_destroy(&o->m);
  pthread_cond_destroy(&o->c);
  free(o);
}
static int own_signaled(void *h, uint64_t *out, rig_edge_error *err) {
  own *o = h;
  atomic_fetch_add(&o->reads, 1);
  if (atomic_exchange(&o->hold, false)) {
    /* TL-26: wait, at most 10 s, while the test loses the device. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&o->m);
    o->in_read = true;
    pthread_cond_broadcast(&o->c);
    while (!o->go && pthread_cond_timedwait(&o->c, &o->m, &until) == 0)
      ;
    pthread_mutex_unlock(&o->m);
  }
  if (atomic_load(&o->fail_read))
    return rig_edge_fail(err, RIG_EDGE_FAULT, "link down");
  *out = atomic_load(&o->value);
  return RIG_EDGE_OK;
}
static int own_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  own *o = h;
  if (atomic_load(&o->fail_submit))
    return rig_edge_fail(err, RIG_EDGE_FAULT, "queue gone");
  rig_device *d = atomic_load(&o->probe);
  if (d) { /* inside core's submit lock: rig_device_signaled answers without a read */
    atomic_store(&o->value, w->value); /* the driver has "done" it already */
    int before = atomic_load(&o->reads);
    o->probe_value = UINT64_MAX;
    o->probe_status = rig_device_signaled(d, &o->probe_value);
    o->probe_reads = atomic_load(&o->reads) - before;
    atomic_store(&o->probe, NULL);
  }
  return RIG_EDGE_OK;
}
static const rig_edge_driver own_driver = {
    RIG_EDGE_DRIVER_INIT("own"),
    .open = own_open,
    .facts = own_facts,
    .stop = own_stop,
    .destroy = own_destroy,
    .signaled = own_signaled,
    .submit = own_submit,
    .allocate = driver_memory_allocate_unaddressed,
    .release = driver_memory_release,
};

static rig_device *open_own(const char *name, own **o) {
  rig_device *d = NULL;
  check_ok(rig_device_open_driver(name, &own_driver, "", &d), name);
  *o = own_last;
  assert_non_null(*o);
  atomic_store(&(*o)->value, rig_device_submitted(d)); /* it starts where its slot does */
  return d;
}

/* TL-22, TL-23, LOSS-2: while live, rig_device_signaled reads the driver's own
 * word. Lost (by a submit the driver refuses) and not yet stopped, it
 * answers the last value read without asking the driver, however the
 * driver's value moves. Once the stop returned (rig_device_close), it reads the
 * driver's word again, and reports what the driver reports, a dropped
 * value included, whose point stays unreached (LMEM-11). */
static void tl_22_23_own_word_after_a_loss(void **state) {
  (void)state;
  own *o;
  rig_device *d = open_own("own:tl22", &o);
  uint64_t s = rig_device_submitted(d);
  rig_buffer *b = create_ok(d, 64);
  rig_point p1, p2 = RIG_POINT_NONE;
  check_ok(rig_buffer_submit_fill(b, 1, 4, &p1), "fill");
  assert_true(rig_point_value(p1) == s + 1);
  int r = atomic_load(&o->reads);
  assert_true(signaled_of(d) == s);       /* live: the driver's value */
  atomic_store(&o->value, s + 1);
  assert_true(signaled_of(d) == s + 1);
  assert_true(atomic_load(&o->reads) >= r + 2);

  atomic_store(&o->fail_submit, true);
  assert_int_equal(rig_buffer_submit_fill(b, 2, 4, &p2), RIG_LOST);
  assert_string_equal(rig_error_last()->message, "own:tl22 lost: queue gone");
  assert_string_equal(rig_device_lost(d), "queue gone");
  p2 = rig_device_point(d, s + 2);
  assert_true(rig_device_submitted(d) == s + 2);

  /* TL-23: lost, stop not returned: the last value read, no driver read. */
  atomic_store(&o->value, s + 2);
  r = atomic_load(&o->reads);
  for (int i = 0; i < 1000; i++) {
    uint64_t v = UINT64_MAX;
    assert_int_equal(rig_device_signaled(d, &v), RIG_OK);
    assert_true(v == s + 1);
    assert_false(rig_point_reached(p2));
  }
  assert_true(rig_point_reached(p1));
  assert_int_equal(rig_point_wait(p2), RIG_LOST);
  assert_int_equal(atomic_load(&o->reads), r);
  assert_int_equal(atomic_load(&o->stops), 0);

  /* TL-22: after rig_device_close (its stop returned), reads the driver again. */
  rig_buffer_release(b);
  check_ok(rig_device_close(d), "rig_device_close");
  assert_int_equal(atomic_load(&o->stops), 1);
  r = atomic_load(&o->reads);
  assert_true(signaled_of(d) == s + 2);
  assert_true(atomic_load(&o->reads) > r);
  assert_false(rig_point_reached(p2)); /* a dropped value, reported (TL-21) */
  assert_int_equal(rig_point_wait(p2), RIG_LOST);
  assert_string_equal(rig_error_last()->message, "own:tl22 lost: queue gone");
  rig_device_release(d);
}

/* ---- SUBMIT-2, SUBMIT-3 with OWN_WORD peers: map_peer (edge ABI 1.2) ---------------- */

/* "peer": "own" whose queue waits on another "peer" device's own word
 * through map_peer, which gives the peer's handle as the mapping, or
 * refuses while peer_refuse is set. Its submit records the waits it got.
 * "peer11" is the same as a 1.1 table: its size ends before map_peer, so
 * core must never call it, whatever the field holds. */
static _Atomic int peer_maps, peer_unmaps;
static _Atomic bool peer_refuse;
static _Atomic uint32_t peer_nwaits;
static void *_Atomic peer_mapping;
static _Atomic uint64_t peer_value;

static int peer_map(void *h, void *other, void **out, rig_edge_error *err) {
  atomic_fetch_add(&peer_maps, 1);
  if (atomic_load(&peer_refuse))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "another queue");
  *out = other;
  return RIG_EDGE_OK;
}
static void peer_unmap(void *h, void *mapping) { atomic_fetch_add(&peer_unmaps, 1); }
static int peer_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  atomic_store(&peer_nwaits, w->nwaits);
  atomic_store(&peer_mapping, w->nwaits ? w->waits[0].mapping : NULL);
  atomic_store(&peer_value, w->nwaits ? w->waits[0].value : 0);
  return own_submit(h, w, err);
}
static const rig_edge_driver peer_driver = {
    RIG_EDGE_DRIVER_INIT("peer"),
    .open = own_open,
    .facts = own_facts,
    .stop = own_stop,
    .destroy = own_destroy,
    .signaled = own_signaled,
    .submit = peer_submit,
    .allocate = driver_memory_allocate_unaddressed,
    .release = driver_memory_release,
    .unmap_word = peer_unmap,
    .map_peer = peer_map,
};
/* peer's table as a 1.1 driver states it: map_peer lies past its size and
 * is never called. Filled by the test that opens it; core keeps the
 * pointer for the devices' lives. */
static rig_edge_driver peer11_driver;
static void make_peer11(void) {
  peer11_driver = peer_driver;
  peer11_driver.abi_minor = 1;
  peer11_driver.size = offsetof(rig_edge_driver, map_peer);
  peer11_driver.name = "peer11";
}

static rig_device *open_peer(const rig_edge_driver *t, const char *name, own **o) {
  rig_device *d = NULL;
  check_ok(rig_device_open_driver(name, t, "", &d), name);
  *o = own_last;
  assert_non_null(*o);
  atomic_store(&(*o)->value, rig_device_submitted(d));
  return d;
}

/* Sets an own device's value after 50 ms: B's point, reached while A's
 * submit waits for it on the host. */
typedef struct later {
  own *o;
  uint64_t value;
} later;
static void *reach_later(void *arg) {
  later *l = arg;
  sleep_ms(50);
  atomic_store(&l->o->value, l->value);
  return NULL;
}

/* A's fill whose waits name B's pending point p; returns A's point. */
static rig_point fill_after(rig_device *a, rig_buffer *b, rig_point p) {
  rig_part part = rig_part_fill(0, 1, 1);
  rig_submission *s;
  rig_run *run;
  rig_point q;
  check_ok(rig_submission_make(a, &part, 1, &s), "rig_submission_make");
  check_ok(rig_submission_take(s, &run), "rig_submission_take");
  check_ok(rig_run_submit(run, &b, 1, &p, 1, &q), "rig_run_submit");
  rig_submission_release(s);
  return q;
}

/* A after B's pending point, A and B of one table (t): counts the queue
 * or the host wait, checks the waits A's driver got, and closes both.
 * queue: whether map_peer may be asked and says yes. */
static void peer_waits(const rig_edge_driver *t, const char *na, const char *nb, bool queue) {
  own *oa, *ob;
  rig_device *a = open_peer(t, na, &oa), *b = open_peer(t, nb, &ob);
  rig_buffer *ba = create_ok(a, 64), *bb = create_ok(b, 64);
  int maps = atomic_load(&peer_maps), unmaps = atomic_load(&peer_unmaps);
  for (int round = 0; round < 2; round++) {
    rig_point pb;
    check_ok(rig_buffer_submit_fill(bb, 1, 4, &pb), "fill on B");
    assert_false(rig_point_reached(pb));
    rig_stats before, after;
    rig_device_stats(a, &before);
    later l = {ob, rig_point_value(pb)};
    pthread_t th;
    if (!queue)
      assert_int_equal(pthread_create(&th, NULL, reach_later, &l), 0);
    fill_after(a, ba, pb);
    rig_device_stats(a, &after);
    if (queue) { /* SUBMIT-2: B's handle as the mapping, B's value */
      assert_true(after.queue_waits == before.queue_waits + 1);
      assert_true(after.host_waits == before.host_waits);
      assert_int_equal(atomic_load(&peer_nwaits), 1);
      assert_ptr_equal(atomic_load(&peer_mapping), ob);
      assert_true(atomic_load(&peer_value) == rig_point_value(pb));
      assert_true(after.word_mappings == 1);
      atomic_store(&ob->value, rig_point_value(pb));
    } else { /* SUBMIT-3: the host waited, the driver got no wait */
      pthread_join(th, NULL);
      assert_true(after.host_waits == before.host_waits + 1);
      assert_true(after.queue_waits == before.queue_waits);
      assert_int_equal(atomic_load(&peer_nwaits), 0);
      assert_true(after.word_mappings == 0);
    }
  }
  /* OPEN-20: one mapping for both rounds; t's map_peer asked where its
   * table has it (a refusal asks again at each submit). */
  int asked = atomic_load(&peer_maps) - maps;
  if (t == &peer11_driver)
    assert_int_equal(asked, 0);
  else
    assert_int_equal(asked, queue ? 1 : 2);
  atomic_store(&oa->value, rig_device_submitted(a));
  rig_buffer_release(ba);
  rig_buffer_release(bb);
  close_release(a); /* OPEN-23: its stop gives the mapping back */
  assert_int_equal(atomic_load(&peer_unmaps) - unmaps, queue ? 1 : 0);
  close_release(b);
}

/* SUBMIT-2, TL-9, OPEN-20, OPEN-23: a device's queue waits on the own word
 * of another device of its driver where the driver maps it (map_peer). */
static void submit_2_queue_waits_on_an_own_word_peer(void **state) {
  (void)state;
  atomic_store(&peer_refuse, false);
  peer_waits(&peer_driver, "peer:a", "peer:b", true);
}

/* SUBMIT-3: where map_peer refuses, the host waits for the point. */
static void submit_3_host_waits_where_map_peer_refuses(void **state) {
  (void)state;
  atomic_store(&peer_refuse, true);
  peer_waits(&peer_driver, "peer:c", "peer:d", false);
  atomic_store(&peer_refuse, false);
}

/* SUBMIT-3 and the edge's versioning: a 1.1 table ends before map_peer,
 * so core never reads it and waits on the host. */
static void submit_3_host_waits_for_a_1_1_driver(void **state) {
  (void)state;
  atomic_store(&peer_refuse, false);
  make_peer11();
  peer_waits(&peer11_driver, "peer11:a", "peer11:b", false);
}

/* TL-23, TL-27: inside a lock (here: from the driver's submit, which core
 * calls under the device's submit lock), rig_device_signaled answers the last
 * value read, without asking the driver, and never with RIG_INVALID. */
static void tl_23_27_inside_a_lock(void **state) {
  (void)state;
  own *o;
  rig_device *d = open_own("own:tl23", &o);
  uint64_t s = rig_device_submitted(d);
  assert_true(signaled_of(d) == s); /* the last value read: s */
  rig_buffer *b = create_ok(d, 64);
  atomic_store(&o->probe, d);
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 1, 4, &p), "fill");
  assert_null(atomic_load(&o->probe)); /* the probe ran */
  assert_int_equal(o->probe_status, RIG_OK);
  assert_true(o->probe_value == s);  /* not the driver's s + 1 */
  assert_int_equal(o->probe_reads, 0);
  assert_true(signaled_of(d) == s + 1); /* outside the lock: read */
  rig_buffer_release(b);
  close_release(d);
}

/* TL-25: a read through the driver that fails loses the device with the
 * driver's message, and rig_device_signaled returns RIG_LOST having written the
 * last value read. */
static void tl_25_failed_read_loses(void **state) {
  (void)state;
  own *o;
  rig_device *d = open_own("own:tl25", &o);
  uint64_t s = rig_device_submitted(d);
  assert_true(signaled_of(d) == s);
  atomic_store(&o->value, s + 7);
  atomic_store(&o->fail_read, true);
  uint64_t v = UINT64_MAX;
  assert_int_equal(rig_device_signaled(d, &v), RIG_LOST);
  assert_true(v == s);
  assert_string_equal(rig_error_last()->message, "own:tl25 lost: link down");
  assert_ptr_equal(rig_error_last()->device, d);
  assert_non_null(rig_device_lost(d));
  assert_string_equal(rig_device_lost(d), "link down");
  /* Lost now: a later call answers the last value read (TL-23). */
  int r = atomic_load(&o->reads);
  v = UINT64_MAX;
  assert_int_equal(rig_device_signaled(d, &v), RIG_OK);
  assert_true(v == s);
  assert_int_equal(atomic_load(&o->reads), r);
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_create(d, 64, &b), RIG_LOST);
  atomic_store(&o->fail_read, false);
  close_release(d);
}

typedef struct reader {
  rig_device *d;
  rig_status st;
  uint64_t v;
  char message[RIG_MESSAGE_BYTES];
} reader;

static void *read_signaled(void *arg) {
  reader *r = arg;
  r->st = rig_device_signaled(r->d, &r->v);
  snprintf(r->message, sizeof r->message, "%s", rig_error_last()->message);
  return NULL;
}

/* TL-26: a device lost while the read is under way: rig_device_signaled raises
 * Lost. A second thread reads; the driver's read blocks until the test has
 * lost the device through a refused submit; then the read succeeds in the
 * driver, and rig_device_signaled still returns RIG_LOST. */
static void tl_26_lost_while_reading(void **state) {
  (void)state;
  own *o;
  rig_device *d = open_own("own:tl26", &o);
  uint64_t s = rig_device_submitted(d);
  rig_buffer *b = create_ok(d, 64);
  atomic_store(&o->hold, true);
  reader r = {d, RIG_OK, UINT64_MAX, ""};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, read_signaled, &r), 0);
  double end = now_s() + 5.0;
  pthread_mutex_lock(&o->m);
  while (!o->in_read && now_s() < end) {
    pthread_mutex_unlock(&o->m);
    sleep_ms(1);
    pthread_mutex_lock(&o->m);
  }
  bool in_read = o->in_read;
  pthread_mutex_unlock(&o->m);
  if (in_read) {
    atomic_store(&o->fail_submit, true);
    rig_point p;
    assert_int_equal(rig_buffer_submit_fill(b, 1, 4, &p), RIG_LOST);
  }
  pthread_mutex_lock(&o->m);
  o->go = true;
  pthread_cond_broadcast(&o->c);
  pthread_mutex_unlock(&o->m);
  pthread_join(t, NULL);
  assert_true(in_read);
  assert_int_equal(r.st, RIG_LOST);
  assert_true(r.v == s); /* what the driver read */
  assert_string_equal(r.message, "own:tl26 lost: queue gone");
  rig_buffer_release(b);
  close_release(d);
}

int main(void) {
  rig_runtime_set_wait_hook(past_deadline, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(tl_7_8_uncommitted_work_never_runs, arm),
      cmocka_unit_test_setup(tl_14_24_signaled_commits_nothing, arm),
      cmocka_unit_test_setup(tl_15_point_reached_commits, arm),
      cmocka_unit_test_setup(tl_9_waits_commit, arm),
      cmocka_unit_test_setup(tl_10_12_reported_at_most_k_late, arm),
      cmocka_unit_test_setup(tl_11_13_no_commit_call, arm),
      cmocka_unit_test_setup(tl_11_13_k_is_never_read, arm),
      cmocka_unit_test_setup(tl_21_lmem_11_signaled_past_the_loss, arm),
      cmocka_unit_test_setup(tl_22_23_own_word_after_a_loss, arm),
      cmocka_unit_test_setup(tl_23_27_inside_a_lock, arm),
      cmocka_unit_test_setup(submit_2_queue_waits_on_an_own_word_peer, arm),
      cmocka_unit_test_setup(submit_3_host_waits_where_map_peer_refuses, arm),
      cmocka_unit_test_setup(submit_3_host_waits_for_a_1_1_driver, arm),
      cmocka_unit_test_setup(tl_25_failed_read_loses, arm),
      cmocka_unit_test_setup(tl_26_lost_while_reading, arm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
