/* test_domains.c: threads, locks and waits (core/src/lock.c, slot.c,
 * local.c, timeline.c), and values per device.
 *
 * Rules: DOM-1 DOM-3 DOM-6 DOM-7 DOM-8 DOM-9 DOM-10 DOM-12 DOM-13 DOM-14
 *        DOM-15 DOM-16 DOM-17 DOM-18 DOM-19 DOM-20 DOM-21 DOM-22 DOM-23 DOM-24
 *        DOM-25 DOM-26, LOCAL-1..7, TL-23, TL-27, SUBMIT-12 SUBMIT-13
 *        SUBMIT-14, ERR-26, OPEN-51.
 *
 * "Inside a lock" is made the way a library meets it: a key's init
 * (rig_local_init) runs under the locals lock, so every call it makes is a
 * call inside a lock (DOM-12, DOM-13). Nothing inside init asserts: a
 * failed cmocka assertion would jump out with the lock held. Each call's
 * status, message and whether it changed anything are recorded, and
 * asserted once init has returned.
 *
 * The asynchronous test device (tests/driver/testdev.c, "test:ID,delay_us=N")
 * makes a wait block: its work completes N microseconds after it is
 * submitted. Every wait is bounded: flags are polled up to a deadline, and
 * the process's wait hook ends any blocking rig call that outlives the
 * test's deadline (it then returns RIG_INTERRUPTED, which fails an
 * assertion instead of hanging). Timing is asserted only as "not yet" or
 * within generous bounds; the measured figures are printed.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rig/rig.h>

#include "util.h"

/* ---- helpers ------------------------------------------------------------ */

/* Each test's setup: its blocking calls end 60 s from its start, through
 * the wait hook, which tests that set another hook put back. */
static int arm(void **state) {
  (void)state;
  arm_deadline(60.0);
  rig_runtime_set_wait_hook(past_deadline, NULL);
  return 0;
}

/* Polls f up to secs; whether it was set. */
static bool wait_flag(atomic_bool *f, double secs) {
  double end = now_s() + secs;
  while (!atomic_load(f)) {
    if (now_s() > end)
      return false;
    sleep_ms(1);
  }
  return true;
}

static rig_buffer *filled(rig_device *d, size_t n, uint8_t byte) {
  rig_buffer *b = create_ok(d, n);
  check_ok(rig_buffer_fill(b, byte, 1), "rig_buffer_fill");
  return b;
}

/* Whether every byte of b, read through rig, is byte. */
static bool bytes_are(rig_buffer *b, uint8_t byte) {
  size_t n = rig_buffer_length(b);
  uint8_t *got = malloc(n);
  assert_non_null(got);
  check_ok(rig_buffer_get(b, 0, got, n), "rig_buffer_get");
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++)
    ok = got[i] == byte;
  free(got);
  return ok;
}

/* The same, read at b's host address: lock-free, for use inside init, on
 * memory whose writer is this thread or ordered before it. */
static bool raw_is(const rig_buffer *b, uint8_t byte) {
  const volatile uint8_t *p = rig_buffer_host_address(b);
  if (!p)
    return false;
  for (size_t i = 0; i < rig_buffer_length(b); i++)
    if (p[i] != byte)
      return false;
  return true;
}

static char sentinel_obj;
#define SENTINEL ((void *)&sentinel_obj)

/* ---- keys that count -------------------------------------------------------- */

typedef struct value {
  int serial;       /* unique for the process: a made value is a new one */
  rig_device *dev;  /* the device it was made for; not a reference */
} value;
static atomic_int serials;

typedef struct counts {
  atomic_int inits, releases;
  unsigned init_sleep_ms;    /* widens the window of a first get */
  unsigned release_sleep_ms; /* makes a close that does not wait for it visible */
  atomic_bool in_init, in_release, released;
  void *keep;                /* a value whose release is counted apart */
  atomic_int keep_released;
} counts;

static void *counted_init(rig_device *d, void *ctx) {
  counts *c = ctx;
  atomic_fetch_add(&c->inits, 1);
  atomic_store(&c->in_init, true);
  if (c->init_sleep_ms)
    sleep_ms(c->init_sleep_ms);
  value *v = malloc(sizeof *v);
  if (v) {
    v->serial = atomic_fetch_add(&serials, 1) + 1;
    v->dev = d;
  }
  return v;
}

static void counted_release(void *v, void *ctx) {
  counts *c = ctx;
  atomic_store(&c->in_release, true);
  if (v == c->keep)
    atomic_fetch_add(&c->keep_released, 1);
  if (c->release_sleep_ms)
    sleep_ms(c->release_sleep_ms);
  atomic_fetch_add(&c->releases, 1);
  atomic_store(&c->released, true);
  free(v);
}

static rig_local_key *counted_key(counts *c) {
  rig_local_key *k = NULL;
  check_ok(rig_local_new_key(counted_init, counted_release, c, &k), "rig_local_new_key");
  return k;
}

static void *get_ok(rig_local_key *k, rig_device *d) {
  void *v = NULL;
  check_ok(rig_local_get(k, d, &v), "rig_local_get");
  assert_non_null(v);
  return v;
}

/* A key whose init runs body(arg, d): how a test runs calls inside a lock. */
typedef struct body_key {
  void (*body)(void *arg, rig_device *d);
  void *arg;
  atomic_int runs;
} body_key;

static void *body_init(rig_device *d, void *ctx) {
  body_key *b = ctx;
  atomic_fetch_add(&b->runs, 1);
  b->body(b->arg, d);
  return &b->runs; /* a value; the key has no release */
}

/* Runs bk's body inside a lock, as the init of a new key's value on d. */
static void run_inside_init(body_key *bk, rig_device *d) {
  rig_local_key *k = NULL;
  check_ok(rig_local_new_key(body_init, NULL, bk, &k), "rig_local_new_key");
  void *v = get_ok(k, d);
  assert_ptr_equal(v, &bk->runs);
  assert_int_equal(atomic_load(&bk->runs), 1);
}

/* ---- LOCAL-1, LOCAL-2, LOCAL-3, LOCAL-4, LOCAL-7 ----------------------------- */

struct getter {
  rig_local_key *k;
  rig_device *d;
  pthread_barrier_t *bar;
  void *out;
  rig_status st;
  atomic_bool done;
};

static void *getter_main(void *arg) {
  struct getter *g = arg;
  pthread_barrier_wait(g->bar);
  g->st = rig_local_get(g->k, g->d, &g->out);
  atomic_store(&g->done, true);
  return NULL;
}

/* LOCAL-1, LOCAL-2, LOCAL-3, LOCAL-4, LOCAL-7: a key's init runs once per
 * device, at the first get: four threads' concurrent first gets make one
 * value, later gets return it without init; another device has a value of
 * its own; a closed device's value is gone with it, and a reopened name is
 * a new device whose first get runs init again. */
static void local_1_2_3_4_7_init_once_per_device(void **state) {
  (void)state;
  static counts c = {.init_sleep_ms = 20};
  rig_local_key *k = counted_key(&c);
  rig_device *d = open_ok("memory:dom-local-1");
  assert_int_equal(atomic_load(&c.inits), 0); /* LOCAL-2: not before the first get */

  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, 4);
  struct getter g[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    g[i] = (struct getter){.k = k, .d = d, .bar = &bar};
    assert_int_equal(pthread_create(&th[i], NULL, getter_main, &g[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    assert_true(wait_flag(&g[i].done, 30));
    pthread_join(th[i], NULL);
  }
  pthread_barrier_destroy(&bar);
  for (int i = 0; i < 4; i++) {
    check_ok(g[i].st, "concurrent first rig_local_get");
    assert_ptr_equal(g[i].out, g[0].out);            /* one value */
  }
  assert_int_equal(atomic_load(&c.inits), 1);
  value *v = g[0].out;
  assert_ptr_equal(v->dev, d);
  int first_serial = v->serial;

  for (int i = 0; i < 3; i++)
    assert_ptr_equal(get_ok(k, d), v);               /* LOCAL-3 */
  assert_int_equal(atomic_load(&c.inits), 1);

  rig_device *e = open_ok("memory:dom-local-1b");
  value *ve = get_ok(k, e);                          /* LOCAL-1: per device */
  assert_ptr_not_equal(ve, v);
  assert_ptr_equal(ve->dev, e);
  assert_int_equal(atomic_load(&c.inits), 2);

  /* LOCAL-4: the value lives as long as its device, and no longer. */
  rig_device *old = rig_device_retain(d);
  close_release(d);
  assert_int_equal(atomic_load(&c.releases), 1);
  void *x = SENTINEL;
  assert_int_equal(rig_local_get(k, old, &x), RIG_LOST);
  assert_ptr_equal(x, SENTINEL);
  assert_int_equal(atomic_load(&c.inits), 2);

  /* LOCAL-7: the reopened name is a new device with values of its own. */
  rig_device *n = open_ok("memory:dom-local-1");
  assert_false(rig_device_equal(old, n));
  value *vn = get_ok(k, n);
  assert_int_equal(atomic_load(&c.inits), 3);
  assert_int_not_equal(vn->serial, first_serial);
  assert_ptr_equal(vn->dev, n);
  assert_ptr_equal(get_ok(k, e), ve);                /* e's is untouched */

  close_release(n);
  close_release(e);
  rig_device_release(old);
  assert_int_equal(atomic_load(&c.releases), 3);
  assert_int_equal(atomic_load(&c.inits), 3);
}

/* ---- LOCAL-5, LOCAL-6 ---------------------------------------------------------- */

/* LOCAL-5, LOCAL-6: rig_device_close returns only once the key's release has run
 * for the device's value (the release sleeps before it sets its flag, so a
 * close that did not wait for it would show); the host's values are never
 * dropped: the host is never closed. */
static void local_5_6_close_returns_after_release(void **state) {
  (void)state;
  static counts c = {.release_sleep_ms = 100};
  rig_local_key *k = counted_key(&c);
  rig_device *d = open_ok("memory:dom-local-5");
  value *v = get_ok(k, d);
  assert_ptr_equal(v->dev, d);
  void *hv = get_ok(k, rig_device_host());
  c.keep = hv;
  assert_int_equal(atomic_load(&c.inits), 2);

  check_ok(rig_device_close(d), "rig_device_close");
  assert_true(atomic_load(&c.released));             /* LOCAL-6 */
  assert_int_equal(atomic_load(&c.releases), 1);     /* LOCAL-5: once */
  assert_int_equal(atomic_load(&c.keep_released), 0);
  rig_device_release(d);

  /* The host's value stays: the host is never closed. */
  assert_int_equal(rig_device_close(rig_device_host()), RIG_INVALID);
  assert_ptr_equal(get_ok(k, rig_device_host()), hv);
  assert_int_equal(atomic_load(&c.inits), 2);
  assert_int_equal(atomic_load(&c.releases), 1);
  assert_int_equal(atomic_load(&c.keep_released), 0);
}

struct closer {
  rig_device *d;
  rig_status st;
  atomic_bool done;
};

static void *closer_main(void *arg) {
  struct closer *c = arg;
  c->st = rig_device_close(c->d);
  atomic_store(&c->done, true);
  return NULL;
}

/* LOCAL-6, OPEN-51: every holder shares the close, and each one's
 * rig_device_close returns only after the values were dropped: a second close
 * made while the first one's release runs returns after that release. */
static void local_6_open_51_a_shared_close_returns_after_release(void **state) {
  (void)state;
  static counts c = {.release_sleep_ms = 300};
  rig_local_key *k = counted_key(&c);
  rig_device *d = open_ok("memory:dom-local-6");
  (void)get_ok(k, d);

  struct closer first = {.d = d};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, closer_main, &first), 0);
  assert_true(wait_flag(&c.in_release, 30));         /* the first close drops */
  rig_status st = rig_device_close(d);                       /* a second holder's */
  bool released_at_return = atomic_load(&c.released);
  assert_true(wait_flag(&first.done, 30));
  pthread_join(th, NULL);
  check_ok(first.st, "first rig_device_close");
  check_ok(st, "second rig_device_close");
  assert_true(released_at_return);                   /* LOCAL-6 */
  assert_int_equal(atomic_load(&c.releases), 1);     /* LOCAL-5: once */
  rig_device_release(d);
}

struct slow_get {
  rig_local_key *k;
  rig_device *d;
  void *out;
  rig_status st;
  atomic_bool done;
};

static void *slow_get_main(void *arg) {
  struct slow_get *g = arg;
  g->st = rig_local_get(g->k, g->d, &g->out);
  atomic_store(&g->done, true);
  return NULL;
}

/* LOCAL-5, LOCAL-6: a value whose init runs while its device closes is
 * dropped too, before rig_device_close returns: the close does not drop the
 * device's table from under the init, leaving the value it makes never
 * released (or written into freed memory). */
static void local_5_6_a_value_made_during_close_is_released(void **state) {
  (void)state;
  static counts c = {.init_sleep_ms = 300};
  rig_local_key *k = counted_key(&c);
  rig_device *d = open_ok("memory:dom-local-5b");

  struct slow_get g = {.k = k, .d = d};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, slow_get_main, &g), 0);
  assert_true(wait_flag(&c.in_init, 30));            /* init runs */
  check_ok(rig_device_close(d), "rig_device_close");
  int releases_at_return = atomic_load(&c.releases);
  assert_true(wait_flag(&g.done, 30));
  pthread_join(th, NULL);
  /* The get either made the value before the close dropped the values, or
   * was refused as a get of a lost device; either way the one value init
   * made was released before rig_device_close returned. */
  if (g.st != RIG_OK)
    assert_int_equal(g.st, RIG_LOST);
  assert_int_equal(atomic_load(&c.inits), 1);
  assert_int_equal(releases_at_return, 1);
  assert_int_equal(atomic_load(&c.releases), 1);
  rig_device_release(d);
}

/* ---- DOM-12, DOM-13, DOM-14, DOM-16 ------------------------------------------- */

#define NPROBES 96

typedef struct probe {
  char what[96];
  rig_status st;
  char message[RIG_MESSAGE_BYTES];
  bool unchanged; /* the call left everything it could touch as it was */
} probe;

typedef struct probes {
  int n;
  probe p[NPROBES];
} probes;

static void note(probes *ps, const char *what, const rig_device *d, rig_status st,
                 bool unchanged) {
  if (ps->n >= NPROBES)
    return;
  probe *p = &ps->p[ps->n++];
  snprintf(p->what, sizeof p->what, "%s on %s", what, d ? rig_device_name(d) : "-");
  p->st = st;
  p->unchanged = unchanged;
  snprintf(p->message, sizeof p->message, "%s", st != RIG_OK ? rig_error_last()->message : "");
}

/* Asserts every probe was refused as a call inside a lock, having done
 * nothing (DOM-14). */
static void assert_refused(const probes *ps, int at_least) {
  int bad = 0;
  for (int i = 0; i < ps->n; i++) {
    const probe *p = &ps->p[i];
    if (p->st != RIG_INVALID || !strstr(p->message, "inside a lock") || !p->unchanged) {
      print_error("%s: %s \"%s\"%s\n", p->what, rig_status_name(p->st), p->message,
                  p->unchanged ? "" : " and it changed something");
      bad++;
    }
  }
  assert_true(ps->n >= at_least);
  assert_int_equal(bad, 0);
}

/* What the may-lock calls made inside init name, on one device. */
typedef struct target {
  rig_device *dev;
  rig_buffer *b, *b2;    /* 4 KiB each, filled 0x11 and 0x22 */
  rig_point reached;     /* a point of dev's, reached */
  rig_submission *s;     /* a fill on dev */
  rig_device *closable;  /* a device a close would close */
  const char *never;     /* a name no one opens */
} target;

static void target_make(target *t, rig_device *d, rig_device *closable, const char *never) {
  t->dev = d;
  t->closable = closable;
  t->never = never;
  t->b = filled(d, 4096, 0x11);
  t->b2 = create_ok(d, 4096);
  check_ok(rig_buffer_submit_fill(t->b2, 0x22, 1, &t->reached), "rig_buffer_submit_fill");
  check_ok(rig_point_wait(t->reached), "rig_point_wait");
  rig_part part = rig_part_fill(0, 0x33, 1);
  check_ok(rig_submission_make(d, &part, 1, &t->s), "rig_submission_make");
  /* Cached memory, so that a free_cache that ran would change allocated. */
  rig_buffer *c = create_ok(d, 65536);
  rig_buffer_release(c);
  rig_buffer *mover = create_ok(d, 128); /* moves c into the cache */
  rig_buffer_release(mover);
}

static void target_drop(target *t) {
  rig_buffer_release(t->b);
  rig_buffer_release(t->b2);
  rig_submission_release(t->s);
}

typedef struct inside {
  target t[2];
  rig_local_key *missing, *self;
  counts *missing_counts;
  probes ps;
  uint64_t allocated[2], budget[2], submitted[2]; /* read outside, before */
} inside;

static void count_bytes(void *bytes, size_t n, void *ctx) {
  (void)bytes;
  (void)n;
  atomic_fetch_add((atomic_int *)ctx, 1);
}

/* Every call that may lock, made inside init on t's device: each must be
 * RIG_INVALID at once, and leave its out-parameters, the memory, the
 * budgets and the timelines as they were (DOM-14). */
static void may_lock_calls(inside *x, const target *t) {
  probes *ps = &x->ps;
  rig_device *d = t->dev;
  uint64_t alloc0 = rig_device_allocated(d), budget0 = rig_device_budget(d), sub0 = rig_device_submitted(d);
  rig_status st;

  rig_buffer *nb = SENTINEL;
  st = rig_buffer_create(d, 4096, &nb);
  note(ps, "rig_buffer_create", d, st, nb == SENTINEL && rig_device_allocated(d) == alloc0);
  st = rig_buffer_create_kind(d, 4096, RIG_KIND_DEVICE, &nb);
  note(ps, "rig_buffer_create_kind", d, st, nb == SENTINEL && rig_device_allocated(d) == alloc0);

  rig_device *od = SENTINEL;
  st = rig_device_open(t->never, &od);
  note(ps, "rig_device_open", d, st, od == SENTINEL);
  st = rig_device_open_memory(strchr(t->never, ':') + 1, &od);
  note(ps, "rig_device_open_memory", d, st, od == SENTINEL);
  st = rig_device_open("CPU", &od); /* needs no lock, but may lock (DOM-16) */
  note(ps, "rig_device_open(\"CPU\")", d, st, od == SENTINEL);
  st = rig_device_close(t->closable);
  note(ps, "rig_device_close", t->closable, st, rig_device_lost(t->closable) == NULL);

  st = rig_device_set_budget(d, 1);
  note(ps, "rig_device_set_budget", d, st, rig_device_budget(d) == budget0 && rig_device_allocated(d) == alloc0);
  st = rig_device_free_cache(d);
  note(ps, "rig_device_free_cache", d, st, rig_device_allocated(d) == alloc0);
  st = rig_point_wait(t->reached); /* would not even block */
  note(ps, "rig_point_wait", d, st, true);

  uint8_t buf[16];
  memset(buf, 0xee, sizeof buf);
  st = rig_buffer_get(t->b, 0, buf, sizeof buf);
  bool untouched = true;
  for (size_t i = 0; i < sizeof buf; i++)
    untouched = untouched && buf[i] == 0xee;
  note(ps, "rig_buffer_get", d, st, untouched);
  uint8_t src[16];
  memset(src, 0x77, sizeof src);
  st = rig_buffer_put(t->b, 0, src, sizeof src);
  note(ps, "rig_buffer_put", d, st, raw_is(t->b, 0x11));
  st = rig_buffer_fill(t->b, 0x55, 1);
  note(ps, "rig_buffer_fill", d, st, raw_is(t->b, 0x11) && rig_device_submitted(d) == sub0);
  rig_point pp = 12345;
  st = rig_buffer_submit_fill(t->b, 0x55, 1, &pp);
  note(ps, "rig_buffer_submit_fill", d, st,
       pp == 12345 && raw_is(t->b, 0x11) && rig_device_submitted(d) == sub0);
  st = rig_buffer_copy(t->b2, t->b);
  note(ps, "rig_buffer_copy", d, st, raw_is(t->b, 0x11) && rig_device_submitted(d) == sub0);
  st = rig_buffer_submit_copy(t->b2, t->b, &pp);
  note(ps, "rig_buffer_submit_copy", d, st,
       pp == 12345 && raw_is(t->b, 0x11) && rig_device_submitted(d) == sub0);

  atomic_int calls = 0;
  st = rig_buffer_read(t->b, count_bytes, &calls);
  note(ps, "rig_buffer_read", d, st, atomic_load(&calls) == 0);
  st = rig_buffer_write(t->b, count_bytes, &calls);
  note(ps, "rig_buffer_write", d, st, atomic_load(&calls) == 0);
  st = rig_buffer_wait(t->b, RIG_READ_WRITE);
  note(ps, "rig_buffer_wait", d, st, true);
  void *bytes = SENTINEL;
  st = rig_buffer_export(t->b, &bytes);
  note(ps, "rig_buffer_export", d, st, bytes == SENTINEL);
  st = rig_buffer_free(t->b);
  note(ps, "rig_buffer_free", d, st, !rig_buffer_dead(t->b));

  rig_part part = rig_part_fill(0, 1, 1);
  rig_submission *ns = SENTINEL;
  st = rig_submission_make(d, &part, 1, &ns);
  note(ps, "rig_submission_make", d, st, ns == SENTINEL);
  rig_run *nr = SENTINEL;
  st = rig_submission_take(t->s, &nr);
  note(ps, "rig_submission_take", d, st, nr == SENTINEL);

  void *v = SENTINEL;
  st = rig_local_get(x->missing, d, &v);
  note(ps, "rig_local_get of another key", d, st,
       v == SENTINEL && atomic_load(&x->missing_counts->inits) == 0);
  st = rig_local_get(x->self, d, &v); /* the key whose init runs: no value yet */
  note(ps, "rig_local_get of its own key", d, st, v == SENTINEL);
}

static inside in14;
static counts in14_missing;
static body_key in14_key;

static void in14_body(void *arg, rig_device *d) {
  inside *x = arg;
  (void)d;
  for (int i = 0; i < 2; i++)
    may_lock_calls(x, &x->t[i]);
}

/* DOM-12, DOM-13, DOM-14, DOM-16: inside a key's init, which runs inside
 * a lock, every call that may lock returns RIG_INVALID at once with a
 * message saying so, having done nothing; on init's own device and on
 * another device, whose locks the thread does not hold (DOM-16). */
static void dom_12_13_14_16_may_lock_calls_inside_init_are_refused(void **state) {
  (void)state;
  inside *x = &in14;
  rig_device *d = open_ok("memory:dom14");
  rig_device *other = open_ok("memory:dom16");
  rig_device *closable = open_ok("memory:dom14-closable");
  target_make(&x->t[0], d, closable, "memory:dom14-never");
  target_make(&x->t[1], other, closable, "memory:dom16-never");
  x->missing = counted_key(&in14_missing);
  x->missing_counts = &in14_missing;
  for (int i = 0; i < 2; i++) {
    x->allocated[i] = rig_device_allocated(x->t[i].dev);
    x->budget[i] = rig_device_budget(x->t[i].dev);
    x->submitted[i] = rig_device_submitted(x->t[i].dev);
  }

  in14_key.body = in14_body;
  in14_key.arg = x;
  check_ok(rig_local_new_key(body_init, NULL, &in14_key, &x->self), "rig_local_new_key");
  assert_ptr_equal(get_ok(x->self, d), &in14_key.runs);
  assert_int_equal(atomic_load(&in14_key.runs), 1);
  assert_refused(&x->ps, 2 * 24);

  /* Nothing was done: checked again from outside, through rig. */
  for (int i = 0; i < 2; i++) {
    target *t = &x->t[i];
    assert_true(bytes_are(t->b, 0x11));
    assert_true(bytes_are(t->b2, 0x22));
    assert_false(rig_buffer_dead(t->b));
    assert_int_equal(rig_device_submitted(t->dev), x->submitted[i]);
    assert_int_equal(rig_device_budget(t->dev), x->budget[i]);
    assert_int_equal(rig_device_allocated(t->dev), x->allocated[i]);
    /* The cache was there to free: outside, the same call frees it. */
    check_ok(rig_device_free_cache(t->dev), "rig_device_free_cache");
    assert_true(rig_device_allocated(t->dev) < x->allocated[i]);
  }
  assert_null(rig_device_lost(closable));
  assert_int_equal(atomic_load(&in14_missing.inits), 0);
  /* DOM-25: outside init, the refused get runs its init. */
  value *mv = get_ok(x->missing, d);
  assert_ptr_equal(mv->dev, d);
  assert_int_equal(atomic_load(&in14_missing.inits), 1);
  assert_int_equal(atomic_load(&in14_key.runs), 1); /* its value was made once */
  assert_ptr_equal(get_ok(x->self, d), &in14_key.runs);

  for (int i = 0; i < 2; i++)
    target_drop(&x->t[i]);
  close_release(closable);
  close_release(other);
  close_release(d);
}

/* ---- DOM-15, SUBMIT-12, SUBMIT-13 -------------------------------------------- */

typedef struct in_submit {
  rig_buffer *b;
  rig_run *r;
  rig_status st;
  char message[RIG_MESSAGE_BYTES];
  rig_point p;
  uint64_t sub_before, sub_after;
  bool untouched;
} in_submit;

static in_submit in15;
static body_key in15_key;

static void in15_body(void *arg, rig_device *d) {
  in_submit *x = arg;
  x->sub_before = rig_device_submitted(d);
  x->p = 777;
  rig_buffer *bufs[1] = {x->b};
  x->st = rig_run_submit(x->r, bufs, 1, NULL, 0, &x->p);
  snprintf(x->message, sizeof x->message, "%s", rig_error_last()->message);
  x->sub_after = rig_device_submitted(d);
  x->untouched = raw_is(x->b, 0x00);
}

struct submitter {
  rig_run *r;
  rig_buffer *b;
  rig_point p;
  rig_status st;
  atomic_bool done;
};

static void *submitter_main(void *arg) {
  struct submitter *s = arg;
  rig_buffer *bufs[1] = {s->b};
  s->st = rig_run_submit(s->r, bufs, 1, NULL, 0, &s->p);
  atomic_store(&s->done, true);
  return NULL;
}

/* DOM-15, SUBMIT-12, SUBMIT-13: rig_run_submit inside init is refused, yet
 * frees its run. The run was taken by this thread, which runs the init:
 * once freed it is neither under way nor this thread's, so another
 * thread's submit takes it as a free run (SUBMIT-14) and succeeds. */
static void dom_15_submit_13_submit_inside_init_frees_its_run(void **state) {
  (void)state;
  in_submit *x = &in15;
  rig_device *d = open_ok("memory:dom15");
  x->b = filled(d, 4096, 0x00);
  rig_part part = rig_part_fill(0, 0x5a, 1);
  rig_submission *s;
  check_ok(rig_submission_make(d, &part, 1, &s), "rig_submission_make");
  check_ok(rig_submission_take(s, &x->r), "rig_submission_take");

  in15_key.body = in15_body;
  in15_key.arg = x;
  run_inside_init(&in15_key, d);
  if (x->st != RIG_INVALID || !strstr(x->message, "inside a lock"))
    print_error("rig_run_submit inside init: %s \"%s\"\n", rig_status_name(x->st), x->message);
  assert_int_equal(x->st, RIG_INVALID);
  assert_non_null(strstr(x->message, "inside a lock"));
  assert_int_equal(x->p, 777);                       /* no point written */
  assert_int_equal(x->sub_after, x->sub_before);     /* no value assigned */
  assert_true(x->untouched);

  struct submitter other = {.r = x->r, .b = x->b};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, submitter_main, &other), 0);
  assert_true(wait_flag(&other.done, 30));
  pthread_join(th, NULL);
  if (other.st != RIG_OK)
    print_error("the run after the refused submit: %s\n", rig_status_name(other.st));
  check_ok(other.st, "rig_run_submit of the freed run from another thread");
  check_ok(rig_point_wait(other.p), "rig_point_wait");
  assert_int_equal(rig_point_value(other.p), x->sub_before + 1);
  assert_true(bytes_are(x->b, 0x5a));

  /* And the submission's runs serve this thread again. */
  rig_run *r2;
  check_ok(rig_submission_take(s, &r2), "rig_submission_take");
  rig_buffer *bufs[1] = {x->b};
  rig_point p2;
  check_ok(rig_run_submit(r2, bufs, 1, NULL, 0, &p2), "rig_run_submit");
  check_ok(rig_point_wait(p2), "rig_point_wait");

  rig_submission_release(s);
  rig_buffer_release(x->b);
  close_release(d);
}

/* ---- DOM-17..24, TL-23, TL-27 ------------------------------------------------ */

#define NCHECKS 48

typedef struct checks {
  int n;
  char fail[NCHECKS][200];
} checks;

static void checkf(checks *c, bool ok, const char *fmt, ...) {
  if (ok)
    return;
  if (c->n < NCHECKS) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->fail[c->n], sizeof c->fail[c->n], fmt, ap);
    va_end(ap);
  }
  c->n++;
}

#define CHECK(c, cond) checkf((c), (cond), "line %d: %s", __LINE__, #cond)
#define CHECK_OK(c, expr)                                                             \
  do {                                                                                \
    rig_status check_st_ = (expr);                                                    \
    checkf((c), check_st_ == RIG_OK, "line %d: %s: %s \"%s\"", __LINE__, #expr,       \
           rig_status_name(check_st_), rig_error_last()->message);                    \
  } while (0)

static void assert_checks(const checks *c) {
  for (int i = 0; i < c->n && i < NCHECKS; i++)
    print_error("inside init: %s\n", c->fail[i]);
  assert_int_equal(c->n, 0);
}

typedef struct lockfree {
  rig_device *d, *t;       /* d: init's (memory); t: a slow test device */
  rig_buffer *b, *tb, *spare;
  rig_submission *s;
  rig_run *r;
  rig_point pd, pt;        /* d's last point (reached); t's fill (pending) */
  rig_local_key *existing;
  void *existing_value;
  /* read outside, before init */
  char name[64];
  const char *iset, *bus, *failure;
  bool cache_ok, t_reaches_d;
  uint64_t cache, budget, allocated, submitted_d, submitted_t, signaled_d, signaled_t;
  rig_stats stats_t;
  void *host_address;
  rig_profile *prof; /* taken outside, read and freed inside */
  size_t prof_records;
  uint32_t prof_devices;
  checks c;
} lockfree;

static lockfree in17;
static body_key in17_key;
static counts in17_existing, in17_new;

static void lockfree_calls(void *arg, rig_device *dev) {
  lockfree *x = arg;
  checks *c = &x->c;
  rig_device *d = x->d;
  char buf[160], want[160];
  CHECK(c, dev == d);

  /* DOM-17 (and rig_device_instruction_set, rig_device_bus: docs/decisions.md) */
  CHECK(c, strcmp(rig_device_name(d), x->name) == 0);
  CHECK(c, rig_device_equal(d, d) && !rig_device_equal(d, x->t));
  CHECK(c, strcmp(rig_device_arch(d), "memory") == 0);
  CHECK(c, strcmp(rig_device_instruction_set(d), x->iset) == 0);
  CHECK(c, rig_device_bus(d) == x->bus);
  CHECK(c, rig_device_computes(d) && rig_device_runs_on_host(d));
  CHECK(c, rig_device_alignment(d) == 64);
  uint64_t cb = 0;
  CHECK(c, rig_device_cache_bytes(d, &cb) == x->cache_ok && (!x->cache_ok || cb == x->cache));
  CHECK(c, rig_device_capability(d, "no-such-record") == NULL);
  CHECK(c, rig_device_capability(x->t, "no-such-record") == NULL);
  CHECK(c, rig_device_reaches(rig_device_host(), d) && rig_device_reaches(x->t, d) == x->t_reaches_d);
  CHECK(c, rig_device_format(d, buf, sizeof buf) == strlen(x->name) &&
               strcmp(buf, x->name) == 0);
  CHECK(c, rig_device_submitted(d) == x->submitted_d && rig_device_submitted(x->t) == x->submitted_t);
  CHECK(c, rig_device_lost(d) == NULL && rig_device_lost(x->t) == NULL);
  CHECK(c, rig_runtime_failure() == x->failure);
  CHECK(c, rig_device_budget(d) == x->budget && rig_device_allocated(d) == x->allocated);
  rig_stats st;
  rig_device_stats(x->t, &st);
  CHECK(c, st.queue_waits == x->stats_t.queue_waits && st.host_waits == x->stats_t.host_waits &&
               st.word_mappings == x->stats_t.word_mappings);
  CHECK(c, rig_device_point(d, 1) == rig_point_make(rig_point_slot(x->pd), 1));
  CHECK(c, rig_device_retain(d) == d);
  rig_device_release(d);
  CHECK(c, rig_device_host() != NULL);

  /* DOM-24, TL-23, TL-27: the last value read, RIG_OK, without asking. */
  uint64_t v = UINT64_MAX;
  CHECK_OK(c, rig_device_signaled(d, &v));
  CHECK(c, v == x->signaled_d);
  v = UINT64_MAX;
  CHECK_OK(c, rig_device_signaled(x->t, &v));
  CHECK(c, v == x->signaled_t);

  /* DOM-18 */
  rig_device *pdv = rig_point_device(x->pd);
  CHECK(c, pdv == d);
  rig_device_release(pdv);
  CHECK(c, rig_point_value(x->pd) == x->submitted_d);
  CHECK(c, rig_point_reached(x->pd));
  /* Inside a lock it answers from the last value read (rig.h). */
  CHECK(c, rig_point_reached(x->pt) == (x->signaled_t >= rig_point_value(x->pt)));
  snprintf(want, sizeof want, "%s:%llu", x->name,
           (unsigned long long)rig_point_value(x->pd));
  CHECK(c, rig_point_format(x->pd, buf, sizeof buf) == strlen(want) && strcmp(buf, want) == 0);

  /* DOM-19 */
  CHECK(c, rig_buffer_length(x->b) == 4096 && rig_buffer_device(x->b) == d);
  CHECK(c, rig_buffer_access(x->b) == RIG_READ_WRITE && rig_buffer_kind(x->b) == RIG_KIND_DEVICE);
  CHECK(c, !rig_buffer_dead(x->b) && rig_buffer_host_address(x->b) == x->host_address);
  rig_buffer *view = NULL;
  CHECK_OK(c, rig_buffer_view(x->b, 8, 16, RIG_READ, &view));
  if (view) {
    CHECK(c, rig_buffer_length(view) == 16 && rig_buffer_access(view) == RIG_READ);
    CHECK(c, rig_buffer_overlaps(x->b, view) && rig_buffer_share_byte(x->b, view));
    CHECK(c, rig_buffer_host_address(view) == (char *)x->host_address + 8);
    rig_buffer_release(view);
  }
  CHECK(c, rig_buffer_reached(x->b, RIG_READ) && rig_buffer_reached(x->b, RIG_READ_WRITE));
  rig_point sw = 1, su = 1;
  rig_buffer_stamps(x->b, d, &sw, &su);
  CHECK(c, sw == x->pd && su == x->pd);
  rig_buffer_stamps(x->b, x->t, &sw, &su);
  CHECK(c, sw == RIG_POINT_NONE && su == RIG_POINT_NONE);
  CHECK(c, rig_buffer_retain(x->b) == x->b);
  rig_buffer_release(x->b);
  rig_buffer_release(x->spare); /* the last reference: collected, never blocks */
  x->spare = NULL;

  /* DOM-22 */
  rig_claim *cl = NULL;
  CHECK_OK(c, rig_buffer_claim(x->b, &cl));
  if (cl) {
    CHECK(c, rig_claim_only(cl));
    rig_claim_release(cl);
  }
  rig_claim *hold = NULL;
  CHECK_OK(c, rig_claim_hold(x->b, &hold));
  if (hold)
    rig_claim_release(hold);
  /* DOM-22: all of Profile but take. Start, inside a lock, only sets the
   * switch; stop clears it. */
  rig_profile_start(0);
  CHECK(c, rig_profile_active());
  rig_profile_stop();
  CHECK(c, !rig_profile_active());
  size_t nrec = SIZE_MAX;
  const rig_profile_record *rec = rig_profile_records(x->prof, &nrec);
  CHECK(c, nrec == x->prof_records && (nrec == 0 || rec != NULL));
  CHECK(c, rig_profile_devices(x->prof) == x->prof_devices && rig_profile_dropped(x->prof) == 0);
  CHECK(c, rig_profile_device(x->prof, x->prof_devices) == NULL); /* out of range */
  FILE *sink = fopen("/dev/null", "w");
  CHECK(c, sink != NULL);
  if (sink) {
    CHECK_OK(c, rig_profile_write_chrome(x->prof, sink));
    fclose(sink);
  }
  rig_profile_free(x->prof);
  x->prof = NULL;

  /* DOM-23 */
  rig_local_key *k2 = NULL;
  CHECK_OK(c, rig_local_new_key(counted_init, counted_release, &in17_new, &k2));
  void *val = NULL;
  CHECK_OK(c, rig_local_get(x->existing, d, &val));
  CHECK(c, val == x->existing_value);

  /* DOM-21 */
  CHECK(c, rig_submission_slots(x->s) == 1 && rig_run_submission(x->r) == x->s);
  CHECK(c, rig_submission_retain(x->s) == x->s);
  rig_submission_release(x->s);

  rig_runtime_set_wait_hook(past_deadline, NULL);
  /* None of the calls above was refused as a call inside a lock. */
  CHECK(c, strstr(rig_error_last()->message, "inside a lock") == NULL);
}

/* DOM-17..19, DOM-21..24, TL-23, TL-27: inside init, every lock-free call
 * answers as outside: properties, timelines, points, buffers, claims,
 * keys and existing values, runs. rig_device_signaled answers RIG_OK with the
 * last value read, without asking the driver: the slow device's fill has
 * run by the time init runs, and inside init neither rig_device_signaled nor
 * rig_point_reached reports it; outside, both do. */
static void dom_17_24_tl_23_27_lock_free_calls_inside_init(void **state) {
  (void)state;
  lockfree *x = &in17;
  x->d = open_ok("memory:dom17");
  x->t = open_ok("test:dom17,delay_us=50000");
  x->b = filled(x->d, 4096, 0x44);
  x->spare = create_ok(x->d, 4096);
  x->tb = create_ok(x->t, 4096);
  rig_part part = rig_part_fill(0, 1, 1);
  check_ok(rig_submission_make(x->d, &part, 1, &x->s), "rig_submission_make");
  check_ok(rig_submission_take(x->s, &x->r), "rig_submission_take");
  x->existing = counted_key(&in17_existing);
  x->existing_value = get_ok(x->existing, x->d);

  snprintf(x->name, sizeof x->name, "%s", rig_device_name(x->d));
  x->iset = rig_device_instruction_set(x->d);
  x->bus = rig_device_bus(x->d);
  x->failure = rig_runtime_failure();
  x->cache_ok = rig_device_cache_bytes(x->d, &x->cache);
  x->t_reaches_d = rig_device_reaches(x->t, x->d);
  x->host_address = rig_buffer_host_address(x->b);
  x->pd = rig_device_point(x->d, rig_device_submitted(x->d));
  check_ok(rig_device_signaled(x->d, &x->signaled_d), "rig_device_signaled");

  check_ok(rig_buffer_submit_fill(x->tb, 0x3c, 1, &x->pt), "rig_buffer_submit_fill");
  x->submitted_t = rig_device_submitted(x->t);
  check_ok(rig_device_signaled(x->t, &x->signaled_t), "rig_device_signaled"); /* the last read */
  rig_device_stats(x->t, &x->stats_t);
  sleep_ms(400); /* the fill runs meanwhile; nothing reads t's word */
  x->submitted_d = rig_device_submitted(x->d);
  x->budget = rig_device_budget(x->d);
  x->allocated = rig_device_allocated(x->d);
  /* A profile of nothing to read inside (a memory device times no work). */
  rig_profile_start(0);
  check_ok(rig_profile_take(&x->prof), "rig_profile_take");
  rig_profile_stop();
  rig_profile_records(x->prof, &x->prof_records);
  x->prof_devices = rig_profile_devices(x->prof);

  /* A known last error, which a refused call inside would overwrite. */
  rig_buffer *none = SENTINEL;
  assert_int_equal(rig_buffer_view(NULL, 0, 0, RIG_READ, &none), RIG_INVALID);
  assert_ptr_equal(none, SENTINEL);
  in17_key.body = lockfree_calls;
  in17_key.arg = x;
  run_inside_init(&in17_key, x->d);
  assert_checks(&x->c);
  assert_int_equal(atomic_load(&in17_new.inits), 0);

  /* TL-23 observed: outside, the same call reads the device. */
  uint64_t now = 0;
  check_ok(rig_device_signaled(x->t, &now), "rig_device_signaled");
  if (x->signaled_t < rig_point_value(x->pt) && now >= rig_point_value(x->pt))
    print_message("TL-23: inside init rig_device_signaled answered %llu, the last value read; "
                  "outside %llu\n",
                  (unsigned long long)x->signaled_t, (unsigned long long)now);
  else
    print_message("TL-23: the fill had %s run when init ran (read %llu, now %llu); "
                  "the difference was not observed\n",
                  now >= rig_point_value(x->pt) ? "already" : "not yet",
                  (unsigned long long)x->signaled_t, (unsigned long long)now);
  check_ok(rig_point_wait(x->pt), "rig_point_wait");
  assert_true(rig_point_reached(x->pt));
  assert_true(bytes_are(x->tb, 0x3c));
  /* The run taken outside, used inside only for its submission, submits. */
  rig_point p;
  check_ok(rig_run_submit(x->r, &x->b, 1, NULL, 0, &p), "rig_run_submit");
  assert_true(bytes_are(x->b, 0x01));

  rig_submission_release(x->s);
  rig_buffer_release(x->b);
  rig_buffer_release(x->tb);
  close_release(x->t);
  close_release(x->d);
}

/* ---- DOM-20 -------------------------------------------------------------------- */

typedef struct image_calls {
  rig_image *im;
  rig_function *f;
  /* read outside, before init */
  rig_device *dev;
  const char *name;
  rig_image *image;
  uint32_t params;
  uint64_t threads, entry;
  checks c;
} image_calls;

static image_calls in20;
static body_key in20_key;

static void image_calls_inside(void *arg, rig_device *dev) {
  image_calls *x = arg;
  checks *c = &x->c;
  (void)dev;
  CHECK(c, rig_image_device(x->im) == x->dev);
  CHECK(c, rig_function_name(x->f) != NULL && strcmp(rig_function_name(x->f), x->name) == 0);
  CHECK(c, rig_function_image(x->f) == x->image);
  CHECK(c, rig_function_params(x->f) == x->params);
  CHECK(c, rig_function_threads(x->f) == x->threads);
  CHECK(c, rig_function_entry(x->f) == x->entry);
  CHECK(c, strstr(rig_error_last()->message, "inside a lock") == NULL);
}

/* DOM-20: inside init, the image's and its functions' properties answer
 * as outside: device, name, image, params, threads, entry. */
static void dom_20_image_calls_inside_init(void **state) {
  (void)state;
  image_calls *x = &in20;
  rig_device *d = open_ok("memory:dom20");
  x->im = kernel_load("add");
  check_ok(rig_image_resolve(x->im, "add", &x->f), "rig_image_resolve");
  assert_non_null(x->f);
  x->dev = rig_image_device(x->im);
  x->name = rig_function_name(x->f);
  x->image = rig_function_image(x->f);
  x->params = rig_function_params(x->f);
  x->threads = rig_function_threads(x->f);
  x->entry = rig_function_entry(x->f);
  assert_ptr_equal(x->dev, rig_device_host());
  assert_string_equal(x->name, "add");
  assert_ptr_equal(x->image, x->im);
  assert_int_not_equal(x->entry, 0);

  rig_buffer *none = SENTINEL; /* a known last error, which a refusal inside would overwrite */
  assert_int_equal(rig_buffer_view(NULL, 0, 0, RIG_READ, &none), RIG_INVALID);
  in20_key.body = image_calls_inside;
  in20_key.arg = x;
  run_inside_init(&in20_key, d);
  assert_checks(&x->c);

  rig_image_release(x->im);
  close_release(d);
}

/* ---- DOM-13 -------------------------------------------------------------------- */

/* What a may-lock call made from a callback answered. */
typedef struct answer {
  int calls;
  rig_status st;
  char message[RIG_MESSAGE_BYTES];
} answer;

static void probe_create(answer *p) {
  rig_buffer *b = NULL;
  p->calls++;
  p->st = rig_buffer_create(rig_device_host(), 16, &b);
  snprintf(p->message, sizeof p->message, "%s", p->st ? rig_error_last()->message : "");
  rig_buffer_release(b);
}

static answer in13_keep, in13_write, in13_claim;
static void probe_keep(void *v) { probe_create(v); }
static void probe_write(void *bytes, size_t n, void *ctx) { probe_create(ctx); }
static void probe_claim(rig_claim *c, rig_buffer *b, void *ctx) { probe_create(ctx); }

static void expect_inside(const answer *p, bool under_lock) {
  assert_int_equal(p->calls, 1);
  if (under_lock) {
    assert_int_equal(p->st, RIG_INVALID);
    assert_non_null(strstr(p->message, "inside a lock"));
  } else {
    if (p->st != RIG_OK)
      print_error("refused outside a lock: %s\n", p->message);
    assert_int_equal(p->st, RIG_OK);
  }
}

/* DOM-13: "inside a lock" is a call from a callback rig runs while the
 * thread holds a lock of rig's, not any call from a callback. A kept
 * value's release runs inside one: a may-lock call from it is refused.
 * Buffer.write's callback and Claim.with_'s run inside none: the same call
 * from them is served, and so is it on the same thread once the callback
 * that held the lock has returned. */
static void dom_13_inside_a_lock_is_a_callback_under_a_lock(void **state) {
  (void)state;
  rig_device *m = open_ok("memory:dom13");
  rig_buffer *b = create_ok(m, 64);
  rig_part part = rig_part_fill(0, 1, 1);
  rig_submission *s;
  rig_run *r;
  rig_point p;
  check_ok(rig_submission_make(m, &part, 1, &s), "rig_submission_make");
  check_ok(rig_submission_keep(s, &in13_keep, probe_keep), "rig_submission_keep");
  check_ok(rig_submission_take(s, &r), "rig_submission_take");
  check_ok(rig_run_submit(r, &b, 1, NULL, 0, &p), "rig_run_submit");
  rig_submission_release(s);
  check_ok(rig_device_free_cache(m), "rig_device_free_cache"); /* notes the work before */
  check_ok(rig_device_free_cache(m), "rig_device_free_cache"); /* that work done: the value goes */
  expect_inside(&in13_keep, true);

  check_ok(rig_buffer_write(b, probe_write, &in13_write), "rig_buffer_write");
  expect_inside(&in13_write, false);
  check_ok(rig_claim_with(b, probe_claim, &in13_claim), "rig_claim_with");
  expect_inside(&in13_claim, false);

  answer after = {0};
  probe_create(&after); /* the thread left the release's lock */
  expect_inside(&after, false);
  rig_buffer_release(b);
  close_release(m);
}

/* ---- DOM-25 ------------------------------------------------------------------- */

typedef struct outside {
  rig_device *d;
  rig_local_key *k;
  rig_status create, fill, wait, local, open, close, budget, make, submit;
  int calls;
  void *val;
} outside;

static void outside_calls(outside *o) {
  o->calls++;
  rig_buffer *b = NULL;
  o->create = rig_buffer_create(o->d, 256, &b);
  if (o->create == RIG_OK) {
    o->fill = rig_buffer_fill(b, 0x42, 1);
    rig_point p = 0;
    rig_status st = rig_buffer_submit_fill(b, 0x43, 1, &p);
    o->wait = st ? st : rig_point_wait(p);
    rig_part part = rig_part_fill(0, 0x44, 1);
    rig_submission *s = NULL;
    o->make = rig_submission_make(o->d, &part, 1, &s);
    if (o->make == RIG_OK) {
      rig_run *r = NULL;
      o->submit = rig_submission_take(s, &r);
      if (o->submit == RIG_OK)
        o->submit = rig_run_submit(r, &b, 1, NULL, 0, &p);
      rig_submission_release(s);
    }
    rig_buffer_release(b);
  }
  o->local = rig_local_get(o->k, o->d, &o->val);
  rig_device *e = NULL;
  o->open = rig_device_open("memory:dom25-other", &e);
  if (o->open == RIG_OK) {
    o->close = rig_device_close(e);
    rig_device_release(e);
  }
  o->budget = rig_device_set_budget(o->d, rig_device_budget(o->d));
}

static void outside_bytes(void *bytes, size_t n, void *ctx) {
  (void)bytes;
  (void)n;
  outside_calls(ctx);
}

static void assert_outside(const outside *o) {
  assert_int_equal(o->calls, 1);
  assert_int_equal(o->create, RIG_OK);
  assert_int_equal(o->fill, RIG_OK);
  assert_int_equal(o->wait, RIG_OK);
  assert_int_equal(o->make, RIG_OK);
  assert_int_equal(o->submit, RIG_OK);
  assert_int_equal(o->local, RIG_OK);
  assert_int_equal(o->open, RIG_OK);
  assert_int_equal(o->close, RIG_OK);
  assert_int_equal(o->budget, RIG_OK);
}

static outside hook_calls;
static atomic_int hook_runs;
static int calling_hook(void *ctx) {
  (void)ctx;
  if (atomic_fetch_add(&hook_runs, 1) == 0) {
    /* No rig_point_wait from here: it would call this hook again. */
    rig_buffer *b = NULL;
    hook_calls.calls++;
    hook_calls.create = rig_buffer_create(hook_calls.d, 256, &b);
    if (hook_calls.create == RIG_OK) {
      hook_calls.fill = rig_buffer_put(b, 0, "dom25", 5);
      rig_buffer_release(b);
    }
    hook_calls.local = rig_local_get(hook_calls.k, hook_calls.d, &hook_calls.val);
  }
  return past_deadline(NULL);
}

/* DOM-25: a callback rig makes outside any lock is an ordinary caller: from
 * a rig_buffer_read callback, and from the wait hook (which runs inside no
 * lock of rig's, rig.h), calls that may lock succeed, a missing value's
 * init runs, a device opens and closes. */
static void dom_25_calls_from_callbacks_outside_locks(void **state) {
  (void)state;
  static counts c1, c2;
  rig_device *d = open_ok("memory:dom25");
  rig_buffer *rb = filled(d, 64, 0x01);
  outside o = {.d = d, .k = counted_key(&c1)};
  check_ok(rig_buffer_read(rb, outside_bytes, &o), "rig_buffer_read");
  assert_outside(&o);
  assert_int_equal(atomic_load(&c1.inits), 1);
  assert_ptr_equal(get_ok(o.k, d), o.val);

  /* The wait hook, while a wait blocks on a slow device. */
  rig_device *slow = open_ok("test:dom25,delay_us=200000");
  rig_buffer *x = create_ok(slow, 64);
  rig_point p;
  check_ok(rig_buffer_submit_fill(x, 0x25, 1, &p), "rig_buffer_submit_fill");
  hook_calls = (outside){.d = d, .k = counted_key(&c2)};
  atomic_store(&hook_runs, 0);
  rig_runtime_set_wait_hook(calling_hook, NULL);
  rig_status st = rig_point_wait(p);
  rig_runtime_set_wait_hook(past_deadline, NULL);
  check_ok(st, "rig_point_wait");
  assert_true(atomic_load(&hook_runs) >= 1);
  assert_int_equal(hook_calls.calls, 1);
  assert_int_equal(hook_calls.create, RIG_OK);
  assert_int_equal(hook_calls.fill, RIG_OK);
  assert_int_equal(hook_calls.local, RIG_OK);
  assert_int_equal(atomic_load(&c2.inits), 1);

  rig_buffer_release(x);
  close_release(slow);
  rig_buffer_release(rb);
  close_release(d);
}

/* ---- DOM-3, DOM-8 ---------------------------------------------------------------- */

typedef struct waiter {
  rig_point p;
  rig_status st;
  atomic_bool started, done;
  double t0, t1;
} waiter;

static void *waiter_main(void *arg) {
  waiter *w = arg;
  w->t0 = now_s();
  atomic_store(&w->started, true);
  w->st = rig_point_wait(w->p);
  w->t1 = now_s();
  atomic_store(&w->done, true);
  return NULL;
}

/* DOM-3, DOM-8: a blocked wait holds no lock of rig's. While thread A
 * waits for a slow device's point (1.5 s), this thread creates buffers,
 * submits on that device and on others, opens and closes a device, makes
 * a value per device and moves memory; all of it returns while A still
 * waits. */
static void dom_3_8_a_blocked_wait_holds_no_lock(void **state) {
  (void)state;
  static counts c;
  rig_device *slow = open_ok("test:dom3,delay_us=1500000");
  rig_buffer *xs = create_ok(slow, 4096);
  waiter a = {0};
  check_ok(rig_buffer_submit_fill(xs, 0xa5, 1, &a.p), "rig_buffer_submit_fill");
  assert_false(rig_point_reached(a.p));
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, waiter_main, &a), 0);
  assert_true(wait_flag(&a.started, 30));
  sleep_ms(50); /* A is in its wait */

  double tb = now_s();
  /* The same device: a buffer, a fill submitted, a value per device. */
  rig_buffer *y = create_ok(slow, 4096);
  rig_point py;
  check_ok(rig_buffer_submit_fill(y, 0x5b, 1, &py), "rig_buffer_submit_fill on the waited device");
  rig_local_key *k = counted_key(&c);
  value *sv = get_ok(k, slow);
  assert_ptr_equal(sv->dev, slow);
  /* Another device: buffers, blocking fills and copies, a submission. */
  rig_device *m = open_ok("memory:dom3-other");
  rig_buffer *mb = filled(m, 4096, 0x3d);
  rig_buffer *hb = filled(rig_device_host(), 4096, 0x00);
  check_ok(rig_buffer_copy(mb, hb), "rig_buffer_copy");
  rig_part part = rig_part_fill(0, 0x3e, 1);
  rig_submission *s;
  rig_run *r;
  rig_point pm;
  check_ok(rig_submission_make(m, &part, 1, &s), "rig_submission_make");
  check_ok(rig_submission_take(s, &r), "rig_submission_take");
  check_ok(rig_run_submit(r, &mb, 1, NULL, 0, &pm), "rig_run_submit");
  check_ok(rig_point_wait(pm), "rig_point_wait on another device");
  check_ok(rig_device_set_budget(m, rig_device_budget(m)), "rig_device_set_budget");
  check_ok(rig_device_free_cache(m), "rig_device_free_cache");
  /* A third device opens and closes. */
  rig_device *e = open_ok("memory:dom3-extra");
  close_release(e);
  double te = now_s();
  bool a_waits = !atomic_load(&a.done);
  if (!a_waits)
    print_error("A returned after %.3f s, before these calls (%.3f s) ended\n", a.t1 - a.t0,
                te - tb);
  assert_true(a_waits);                               /* DOM-3 */
  print_message("DOM-3: %.1f ms of calls while the wait blocked\n", (te - tb) * 1e3);

  assert_true(wait_flag(&a.done, 30));
  pthread_join(th, NULL);
  check_ok(a.st, "A's rig_point_wait");
  assert_true(rig_point_reached(a.p));
  assert_true(bytes_are(hb, 0x3d));
  assert_true(bytes_are(mb, 0x3e));
  check_ok(rig_point_wait(py), "rig_point_wait");
  assert_true(bytes_are(y, 0x5b));
  assert_true(bytes_are(xs, 0xa5));

  rig_submission_release(s);
  rig_buffer_release(mb);
  rig_buffer_release(hb);
  rig_buffer_release(y);
  rig_buffer_release(xs);
  close_release(m);
  close_release(slow);
  assert_int_equal(atomic_load(&c.releases), 1);
}

/* ---- DOM-9 ----------------------------------------------------------------------- */

typedef struct beat {
  int calls;
  double last, max_gap;
} beat;

static int beat_hook(void *ctx) {
  beat *b = ctx;
  double t = now_s();
  if (t - b->last > b->max_gap)
    b->max_gap = t - b->last;
  b->last = t;
  b->calls++;
  return past_deadline(NULL);
}

/* DOM-9: while a wait blocks (over 1 s) the wait hook is called again and
 * again. The rule says every 200 ms; on a noisy machine this asserts a
 * gap under 1 s and prints the largest one measured. */
static void dom_9_wait_hook_called_while_blocked(void **state) {
  (void)state;
  rig_device *slow = open_ok("test:dom9,delay_us=1200000");
  rig_buffer *x = create_ok(slow, 64);
  rig_point p;
  check_ok(rig_buffer_submit_fill(x, 0x09, 1, &p), "rig_buffer_submit_fill");
  static beat b;
  double start = now_s();
  b = (beat){.last = start};
  rig_runtime_set_wait_hook(beat_hook, &b);
  rig_status st = rig_point_wait(p);
  double end = now_s();
  rig_runtime_set_wait_hook(past_deadline, NULL);
  if (end - b.last > b.max_gap)
    b.max_gap = end - b.last;
  print_message("DOM-9: %d hook calls in a %.3f s wait; largest gap %.1f ms\n", b.calls,
                end - start, b.max_gap * 1e3);
  check_ok(st, "rig_point_wait");
  assert_true(end - start >= 1.0);
  assert_true(b.calls >= 3);
  assert_true(b.max_gap < 1.0);
  assert_true(bytes_are(x, 0x09));
  rig_buffer_release(x);
  close_release(slow);
}

/* ---- DOM-10, ERR-26 ---------------------------------------------------------------- */

static atomic_int interrupt_calls;
static int interrupt_on_second(void *ctx) {
  (void)ctx;
  return atomic_fetch_add(&interrupt_calls, 1) >= 1;
}

/* DOM-10, DOM-26, ERR-26: a hook that answers non-zero ends rig_point_wait
 * with RIG_INTERRUPTED; the device is not lost, no value was assigned, a later
 * wait of the same point succeeds and the device takes more work. */
static void dom_10_err_26_an_interrupted_wait_loses_nothing(void **state) {
  (void)state;
  rig_device *slow = open_ok("test:dom10,delay_us=400000");
  rig_buffer *x = create_ok(slow, 256);
  rig_point p;
  check_ok(rig_buffer_submit_fill(x, 0x6e, 1, &p), "rig_buffer_submit_fill");
  uint64_t sub0 = rig_device_submitted(slow);
  atomic_store(&interrupt_calls, 0);
  rig_runtime_set_wait_hook(interrupt_on_second, NULL);
  rig_status st = rig_point_wait(p);
  rig_status last = rig_error_last()->status;
  rig_runtime_set_wait_hook(past_deadline, NULL);
  assert_int_equal(st, RIG_INTERRUPTED);
  assert_int_equal(last, RIG_INTERRUPTED);
  assert_true(atomic_load(&interrupt_calls) >= 2);
  assert_null(rig_device_lost(slow));                        /* DOM-10: no device lost */
  assert_int_equal(rig_device_submitted(slow), sub0);        /* no value assigned */

  check_ok(rig_point_wait(p), "rig_point_wait after the interrupt");
  assert_true(rig_point_reached(p));
  assert_true(bytes_are(x, 0x6e));
  check_ok(rig_buffer_fill(x, 0x6f, 1), "rig_buffer_fill");   /* ERR-26: usable */
  assert_true(bytes_are(x, 0x6f));
  assert_null(rig_device_lost(slow));
  rig_buffer_release(x);
  close_release(slow);
}

/* ---- DOM-1, DOM-6 ---------------------------------------------------------------------- */

#define FILLS 50

struct filler {
  rig_device *d;
  int id;
  char err[400];
  rig_point points[FILLS];
  atomic_bool done;
};

static void *filler_main(void *arg) {
  struct filler *f = arg;
  rig_buffer *b = NULL;
  rig_status st = rig_buffer_create(f->d, 1 << 20, &b);
  if (st != RIG_OK) {
    snprintf(f->err, sizeof f->err, "rig_buffer_create: %s", rig_error_last()->message);
    atomic_store(&f->done, true);
    return NULL;
  }
  const volatile uint8_t *raw = rig_buffer_host_address(b);
  for (int i = 0; i < FILLS && !f->err[0]; i++) {
    uint8_t byte = (uint8_t)(f->id * FILLS + i + 1);
    rig_point p = 0;
    st = rig_buffer_submit_fill(b, byte, 1, &p);
    if (st != RIG_OK)
      snprintf(f->err, sizeof f->err, "fill %d: %s", i, rig_error_last()->message);
    else if (!rig_point_reached(p))
      snprintf(f->err, sizeof f->err, "fill %d: not reached when its submit returned", i);
    else if (raw[0] != byte || raw[(1 << 20) - 1] != byte)
      snprintf(f->err, sizeof f->err, "fill %d: bytes not written when its submit returned", i);
    f->points[i] = p;
  }
  rig_buffer_release(b);
  atomic_store(&f->done, true);
  return NULL;
}

/* DOM-1, DOM-6: four threads submit fills on one memory device at once;
 * each fill's work is done when its submit returns, and every submit got a
 * value of its own. */
static void dom_1_6_synchronous_submits_complete_before_return(void **state) {
  (void)state;
  rig_device *m = open_ok("memory:dom1");
  uint64_t sub0 = rig_device_submitted(m);
  struct filler f[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    memset(&f[i], 0, sizeof f[i]);
    f[i].d = m;
    f[i].id = i;
    assert_int_equal(pthread_create(&th[i], NULL, filler_main, &f[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    assert_true(wait_flag(&f[i].done, 60));
    pthread_join(th[i], NULL);
  }
  rig_point all[4 * FILLS];
  for (int i = 0; i < 4; i++) {
    if (f[i].err[0])
      print_error("thread %d: %s\n", i, f[i].err);
    assert_int_equal(f[i].err[0], 0);
    memcpy(&all[i * FILLS], f[i].points, sizeof f[i].points);
  }
  assert_int_equal(rig_device_submitted(m), sub0 + 4 * FILLS);
  qsort(all, 4 * FILLS, sizeof all[0], compare_u64);
  for (int i = 0; i < 4 * FILLS; i++)
    assert_int_equal(rig_point_value(all[i]), sub0 + 1 + (uint64_t)i); /* one value each */
  close_release(m);
}

/* ---- DOM-7 ------------------------------------------------------------------------------- */

typedef struct after_fill {
  rig_buffer *small, *big;
  rig_point p;
  rig_status st;
  bool big_written;
  atomic_bool done;
} after_fill;

static void *after_fill_main(void *arg) {
  after_fill *a = arg;
  a->st = rig_buffer_submit_fill(a->small, 0x2c, 1, &a->p);
  const volatile uint8_t *raw = rig_buffer_host_address(a->big);
  size_t n = rig_buffer_length(a->big);
  a->big_written = a->st == RIG_OK && raw[0] == 0x7b && raw[n / 2] == 0x7b && raw[n - 1] == 0x7b;
  atomic_store(&a->done, true);
  return NULL;
}

/* DOM-7, DOM-6: while one thread's submit runs a large fill on a memory
 * device (its work runs under the device's submit lock), another thread's
 * wait for an earlier value of the device returns at once, before that
 * submit returns; a third thread's submit gets its value only after the
 * fill's work is done. A fill that ends before the wait is checked is
 * retried larger, and at last the check is skipped with a note. */
static void dom_6_7_waits_for_earlier_values_return_during_a_long_submit(void **state) {
  (void)state;
  rig_device *m = open_ok("memory:dom7");
  rig_buffer *small = create_ok(m, 4096);
  rig_point p0;
  check_ok(rig_buffer_submit_fill(small, 0x01, 1, &p0), "rig_buffer_submit_fill");
  check_ok(rig_point_wait(p0), "rig_point_wait");
  bool checked = false;
  for (size_t size = (size_t)256 << 20; size <= (size_t)1 << 30 && !checked; size *= 2) {
    fill_thread f = {.b = create_ok(m, size), .pattern = 0x7b, .size = 1};
    uint64_t s_before = rig_device_submitted(m);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fill_thread_run, &f), 0);
    /* The fill's value is assigned before its work runs, under the lock. */
    double end = now_s() + 30;
    while (rig_device_submitted(m) == s_before && !atomic_load(&f.done) && now_s() < end)
      ;
    double t = now_s();
    rig_status st = rig_point_wait(p0);
    double wait_ms = (now_s() - t) * 1e3;
    bool during = !atomic_load(&f.done);
    /* DOM-6: a submit made now waits for the fill's work. */
    after_fill a = {.small = small, .big = f.b};
    pthread_t th2;
    assert_int_equal(pthread_create(&th2, NULL, after_fill_main, &a), 0);
    assert_true(wait_flag(&f.done, 60));
    pthread_join(th, NULL);
    assert_true(wait_flag(&a.done, 60));
    pthread_join(th2, NULL);
    check_ok(st, "rig_point_wait of an earlier value");
    check_ok(f.st, "the large fill");
    check_ok(a.st, "a fill submitted during the large one");
    assert_int_equal(rig_point_value(f.p), s_before + 1);
    assert_true(rig_point_value(a.p) > rig_point_value(f.p));
    assert_true(a.big_written);                      /* DOM-6 */
    if (during) {
      print_message("DOM-7: the wait returned in %.3f ms during a fill of %zu MiB\n", wait_ms,
                    size >> 20);
      checked = true;
    } else
      print_message("DOM-7: the fill of %zu MiB ended before the wait was checked; "
                    "retrying larger\n", size >> 20);
    rig_buffer_release(f.b);
    check_ok(rig_device_free_cache(m), "rig_device_free_cache");
  }
  if (!checked)
    print_message("DOM-7: not checked: every fill ended before the wait\n");
  rig_buffer_release(small);
  close_release(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(local_1_2_3_4_7_init_once_per_device, arm),
      cmocka_unit_test_setup(local_5_6_close_returns_after_release, arm),
      cmocka_unit_test_setup(local_6_open_51_a_shared_close_returns_after_release, arm),
      cmocka_unit_test_setup(local_5_6_a_value_made_during_close_is_released, arm),
      cmocka_unit_test_setup(dom_12_13_14_16_may_lock_calls_inside_init_are_refused, arm),
      cmocka_unit_test_setup(dom_15_submit_13_submit_inside_init_frees_its_run, arm),
      cmocka_unit_test_setup(dom_17_24_tl_23_27_lock_free_calls_inside_init, arm),
      cmocka_unit_test_setup(dom_25_calls_from_callbacks_outside_locks, arm),
      cmocka_unit_test_setup(dom_3_8_a_blocked_wait_holds_no_lock, arm),
      cmocka_unit_test_setup(dom_9_wait_hook_called_while_blocked, arm),
      cmocka_unit_test_setup(dom_10_err_26_an_interrupted_wait_loses_nothing, arm),
      cmocka_unit_test_setup(dom_1_6_synchronous_submits_complete_before_return, arm),
      cmocka_unit_test_setup(dom_6_7_waits_for_earlier_values_return_during_a_long_submit, arm),
      cmocka_unit_test_setup(dom_20_image_calls_inside_init, arm),
      cmocka_unit_test_setup(dom_13_inside_a_lock_is_a_callback_under_a_lock, arm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
