/* test_devices.c: devices, opening and closing, properties and timelines,
 * on the device under test (RIG_CONF_DEVICE: "memory:conformance", "CPU").
 *
 * Rules: DEV-1..5, OPEN-1 OPEN-2 OPEN-4 OPEN-16..18 OPEN-30 OPEN-31
 *        OPEN-38..41 OPEN-44..46 OPEN-48 OPEN-49 OPEN-51 OPEN-55 OPEN-57
 *        OPEN-58 OPEN-59, PROP-1..5 PROP-8 PROP-10 PROP-11 PROP-13 PROP-14 PROP-18
 *        PROP-20 PROP-23 PROP-25..30 PROP-32 PROP-36 PROP-39, TL-1..6
 *        TL-16..20 TL-23 TL-24 TL-27, ERR-39..41 ERR-44 ERR-45.
 *
 * Each test opens what it needs and releases it. Rules that need a device
 * to be lost by a fault, to hang or to be remote, io devices, an open
 * racing rig_runtime_fail and forks are left to the issues that bring them. The
 * host cannot close (OPEN-59): where a rule is about closing, the host's
 * run checks that its close is refused and changes nothing, and the
 * memory device's run checks the rule. rig_runtime_fail fails the whole process,
 * so its test runs in a forked child.
 */
#include "common.h"
#include "check.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- helpers -------------------------------------------------------------- */

/* rig_device_signaled's value, asserting it answered (TL-19). */
static uint64_t signaled_of(rig_device *d) {
  uint64_t v = UINT64_MAX;
  assert_int_equal(rig_device_signaled(d, &v), RIG_OK);
  return v;
}

static uint32_t slot_of(const rig_device *d) { return rig_point_slot(rig_device_point(d, 0)); }

static rig_buffer *mkbuf(rig_device *d, size_t n) {
  rig_buffer *b = NULL;
  conf_ok(rig_buffer_create(d, n, &b));
  assert_non_null(b);
  return b;
}

/* Opens name (which must open here) with a reference for the caller. */
static rig_device *open_name(const char *name) {
  rig_device *d = NULL;
  conf_ok(rig_device_open(name, &d));
  assert_non_null(d);
  return d;
}

/* The device under test, with a reference. Only the first open may skip
 * (conf_open exits 77 where the device does not open here); once it has
 * opened, an open that fails is a failure of the test. */
static rig_device *dut(void) {
  static bool opened;
  if (!opened) {
    opened = true;
    return conf_open();
  }
  return open_name(conf_name());
}

/* Runs n fills on a fresh buffer of d; returns the last one's point. */
static rig_point work(rig_device *d, int n) {
  rig_buffer *b = mkbuf(d, 256);
  rig_point p = RIG_POINT_NONE;
  for (int i = 0; i < n; i++)
    conf_ok(rig_buffer_submit_fill(b, 0x01010101u * (uint32_t)(i + 1), 4, &p));
  rig_buffer_release(b);
  return p;
}

static uint32_t word_at(rig_buffer *b, size_t off) {
  uint32_t w;
  memcpy(&w, (const char *)rig_buffer_host_address(b) + off, sizeof w);
  return w;
}

/* Asserts that st is RIG_LOST for d with reason why (ERR-36). */
static void assert_lost(rig_status st, const rig_device *d, const char *why) {
  char want[RIG_MESSAGE_BYTES];
  snprintf(want, sizeof want, "%s lost: %s", rig_device_name(d), why);
  if (st != RIG_LOST)
    print_error("got %s: %s\n", rig_status_name(st), rig_error_last()->message);
  assert_int_equal(st, RIG_LOST);
  assert_int_equal(rig_error_last()->status, RIG_LOST);
  assert_ptr_equal(rig_error_last()->device, d);
  assert_string_equal(rig_error_last()->message, want);
}

/* ---- DEV ----------------------------------------------------------------- */

/* DEV-1, DEV-2, OPEN-30, PROP-10: two opens of one name give one device
 * (a rig_device, DEV-2's type):
 * the same rig_device handle, rig_device_equal, and the open device itself, not a
 * new one (its timeline and memory carry on). */
static void dev_1_open_30_prop_10_one_device_per_name(void **state) {
  (void)state;
  rig_device *a = dut();
  rig_buffer *b = mkbuf(a, 64);
  rig_point p = RIG_POINT_NONE;
  conf_ok(rig_buffer_submit_fill(b, 0x5a5a5a5a, 4, &p));
  uint64_t before = rig_device_submitted(a);

  rig_device *b2 = open_name(conf_name());
  assert_ptr_equal(a, b2);
  assert_true(rig_device_equal(a, b2));
  assert_true(rig_device_submitted(b2) == before); /* OPEN-30: not made afresh */
  assert_null(rig_device_lost(b2));
  uint32_t w = 0;
  conf_ok(rig_buffer_get(b, 0, &w, sizeof w)); /* its memory is still there */
  assert_int_equal(w, 0x5a5a5a5a);

  /* PROP-10: equal is pointer identity, for every pair here. */
  rig_device *other = open_name("memory:conf-dev1-other");
  rig_device *all[] = {a, b2, rig_device_host(), other};
  for (size_t i = 0; i < 4; i++)
    for (size_t j = 0; j < 4; j++)
      assert_int_equal(rig_device_equal(all[i], all[j]), all[i] == all[j]);
  assert_false(rig_device_equal(other, a));
  assert_true(rig_device_equal(other, other));

  rig_buffer_release(b);
  rig_device_release(other);
  rig_device_release(b2);
  rig_device_release(a);
}

static void fill_ab(void *bytes, size_t n, void *ctx) {
  (void)ctx;
  memset(bytes, 0xab, n);
}

/* DEV-3, DEV-4, DEV-5: the host is "CPU", one device for the whole
 * process, and its memory is the process's: bytes written through the
 * buffer's address are the buffer's bytes, and host code writes them in
 * place. */
static void dev_3_4_host_is_cpu_and_its_memory_the_process(void **state) {
  (void)state;
  rig_device *h = rig_device_host();
  assert_non_null(h);
  assert_string_equal(rig_device_name(h), "CPU");
  assert_ptr_equal(rig_device_host(), h);
  rig_device *c = open_name("CPU");
  assert_ptr_equal(c, h);
  assert_true(rig_device_equal(c, h));
  rig_device_release(c);
  assert_ptr_equal(rig_device_retain(h), h); /* no-ops on the host */
  rig_device_release(h);
  rig_device_release(h);
  assert_string_equal(rig_device_name(rig_device_host()), "CPU");
  assert_null(rig_device_lost(h));
  if (conf_is_host()) {
    rig_device *d = dut();
    assert_ptr_equal(d, h);
    rig_device_release(d);
  }

  /* DEV-4: host memory is the process's. */
  rig_buffer *b = mkbuf(h, 100);
  unsigned char *p = rig_buffer_host_address(b);
  assert_non_null(p);
  for (int i = 0; i < 100; i++)
    p[i] = (unsigned char)i;
  unsigned char got[100];
  conf_ok(rig_buffer_get(b, 0, got, sizeof got));
  for (int i = 0; i < 100; i++)
    assert_int_equal(got[i], i);
  /* DEV-5: host work is this process's code, on these very bytes. */
  conf_ok(rig_buffer_write(b, fill_ab, NULL));
  for (int i = 0; i < 100; i++)
    assert_int_equal(p[i], 0xab);
  rig_buffer_release(b);
}

/* ---- OPEN: opening -------------------------------------------------------- */

/* OPEN-1, OPEN-2, OPEN-44 (and ERR-1, ERR-4): an open that cannot be made
 * is RIG_UNAVAILABLE with a reason; misuse is RIG_INVALID, not an Error;
 * neither writes the out-parameter, and neither leaves the name opening.
 * rig_device_open_memory fails exactly where rig_device_open of "memory:NAME" does. */
static void open_1_2_44_unopenable_and_misuse(void **state) {
  (void)state;
  rig_device *const sentinel = (rig_device *)(uintptr_t)0x1234;
  rig_device *d = sentinel;

  /* OPEN-1: no such driver. */
  for (int i = 0; i < 2; i++) { /* twice: the failed name is not left opening */
    assert_int_equal(rig_device_open("conf-no-such-driver:0", &d), RIG_UNAVAILABLE);
    assert_ptr_equal(d, sentinel);
    assert_int_equal(rig_error_last()->status, RIG_UNAVAILABLE);
    assert_non_null(strstr(rig_error_last()->message, "conf-no-such-driver"));
  }

  /* OPEN-2: misuse. */
  const char *bad[] = {"", "../memory:x", "a/b:x", "..:x", ":x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (rig_device_open(bad[i], &d) != RIG_INVALID)
      print_error("rig_device_open(\"%s\") is not RIG_INVALID\n", bad[i]);
    assert_int_equal(rig_device_open(bad[i], &d), RIG_INVALID);
    assert_int_equal(rig_error_last()->status, RIG_INVALID);
    assert_ptr_equal(d, sentinel);
  }
  assert_int_equal(rig_device_open(NULL, &d), RIG_INVALID);
  assert_int_equal(rig_device_open(conf_name(), NULL), RIG_INVALID);
  assert_int_equal(rig_device_open("memory:conf-null-out", NULL), RIG_INVALID);
  assert_ptr_equal(d, sentinel);

  /* OPEN-44: rig_device_open_memory is rig_device_open of "memory:NAME". */
  assert_int_equal(rig_device_open_memory(NULL, &d), RIG_INVALID);
  assert_int_equal(rig_device_open_memory("conf-44", NULL), RIG_INVALID);
  char longname[300];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  assert_int_equal(rig_device_open_memory(longname, &d), RIG_INVALID);
  assert_ptr_equal(d, sentinel);
  rig_device *m = NULL, *o = NULL;
  conf_ok(rig_device_open_memory("conf-44", &m));
  conf_ok(rig_device_open("memory:conf-44", &o));
  assert_ptr_equal(m, o);
  assert_string_equal(rig_device_name(m), "memory:conf-44");
  rig_device_release(o);
  rig_device_release(m);
}

/* OPEN-31, OPEN-16, TL-17, OPEN-10: an open of a name not open makes a new
 * device, live, on a slot of its own, starting its timeline where its slot
 * says (nothing reported beyond it). */
static void open_31_first_open_makes_a_device(void **state) {
  (void)state;
  rig_device *d = dut();
  char name[64];
  snprintf(name, sizeof name, "memory:conf-31-%ld", (long)getpid());
  rig_device *n = open_name(name);
  assert_ptr_not_equal(n, d);
  assert_false(rig_device_equal(n, d));
  assert_ptr_not_equal(n, rig_device_host());
  assert_string_equal(rig_device_name(n), name);
  assert_null(rig_device_lost(n));
  assert_int_not_equal(slot_of(n), slot_of(d));
  assert_int_not_equal(slot_of(n), slot_of(rig_device_host()));
  assert_true(signaled_of(n) == rig_device_submitted(n));
  uint64_t start = rig_device_submitted(n);
  rig_point p = work(n, 1);
  assert_true(rig_point_value(p) == start + 1);
  assert_int_equal(rig_point_slot(p), slot_of(n));
  /* The device under test is untouched by the other's open and work. */
  assert_null(rig_device_lost(d));
  conf_ok(rig_device_close(n));
  rig_device_release(n);
  rig_device_release(d);
}

/* ---- OPEN: memory devices -------------------------------------------------- */

static bool all_words(rig_buffer *b, uint32_t w) {
  for (size_t off = 0; off + 4 <= rig_buffer_length(b); off += 4)
    if (word_at(b, off) != w)
      return false;
  return true;
}

/* OPEN-39: a memory device's memory is its own: charged to it, not to the
 * host nor to another memory device; it has no host memory of the host's
 * kinds (pinned, mapped) to give; and it lives in host memory this process
 * addresses: bytes written through the address are the buffer's, the
 * device's own copy moves them, and two devices' buffers never share one. */
static void open_39_memory_is_private_and_host_addressed(void **state) {
  (void)state;
  rig_device *m1 = open_name("memory:conf-39a"), *m2 = open_name("memory:conf-39b");
  conf_ok(rig_device_free_cache(rig_device_host()));
  uint64_t host0 = rig_device_allocated(rig_device_host()), m10 = rig_device_allocated(m1), m20 = rig_device_allocated(m2);
  rig_buffer *a = mkbuf(m1, 4096), *c = mkbuf(m1, 4096), *b = mkbuf(m2, 4096);
  assert_true(rig_device_allocated(m2) >= m20 + 4096);
  assert_int_equal(rig_device_allocated(m1) - m10, 2 * (rig_device_allocated(m2) - m20)); /* each its own */
  assert_int_equal(rig_device_allocated(rig_device_host()), host0);
  assert_int_equal(rig_buffer_kind(a), RIG_KIND_DEVICE);
  for (rig_kind k = RIG_KIND_PINNED; k <= RIG_KIND_MAPPED; k++) {
    rig_buffer *none = NULL;
    conf_status(rig_buffer_create_kind(m1, 64, k, &none), RIG_INVALID);
    assert_null(none);
  }
  assert_int_equal(rig_device_allocated(rig_device_host()), host0);

  unsigned char *pa = rig_buffer_host_address(a), *pb = rig_buffer_host_address(b);
  assert_non_null(pa);
  assert_non_null(pb);
  assert_true(pa + 4096 <= pb || pb + 4096 <= pa);   /* no byte shared */
  for (int i = 0; i < 4096; i++)
    pa[i] = (unsigned char)(i * 7 + 1);
  memset(pb, 0xb2, 4096);
  conf_ok(rig_buffer_copy(a, c));                     /* m1's own copy */
  unsigned char got[4096];
  conf_ok(rig_buffer_get(c, 0, got, sizeof got));
  for (int i = 0; i < 4096; i++)
    assert_int_equal(got[i], (unsigned char)(i * 7 + 1));
  conf_ok(rig_buffer_get(b, 0, got, sizeof got));
  assert_int_equal(got[0], 0xb2);
  assert_int_equal(got[4095], 0xb2);

  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_buffer_release(c);
  conf_ok(rig_device_close(m1));
  conf_ok(rig_device_close(m2));
  rig_device_release(m1);
  rig_device_release(m2);
}

/* OPEN-38, OPEN-39, OPEN-40, OPEN-41, PROP-27, DOM-6: a memory device is
 * the open of "memory:NAME"; its memory is host memory this process
 * addresses; its fills and copies, and its submits, are done when they
 * return; its timeline is its own, apart from the host's. On the host's run
 * the memory device is one of its own, and the host's copies are likewise
 * done on return (DOM-6). */
static void open_38_39_40_41_memory_device(void **state) {
  (void)state;
  rig_device *m;
  if (conf_is_host()) {
    m = open_name("memory:conf-38");
  } else {
    m = dut();
    rig_device *m2 = NULL;
    const char *colon = strchr(conf_name(), ':');
    conf_ok(rig_device_open_memory(colon + 1, &m2)); /* OPEN-38 */
    assert_ptr_equal(m2, m);
    rig_device_release(m2);
  }
  rig_device *h = rig_device_host();
  assert_string_equal(rig_device_arch(m), "memory");
  assert_true(rig_device_runs_on_host(m));

  /* OPEN-39: host memory this process addresses. */
  rig_buffer *a = mkbuf(m, 4096), *b = mkbuf(m, 4096);
  assert_non_null(rig_buffer_host_address(a));
  assert_non_null(rig_buffer_host_address(b));
  assert_ptr_equal(rig_buffer_device(a), m);

  /* OPEN-41: done when submit returns; OPEN-40: on m's timeline only. */
  uint64_t hs = rig_device_submitted(h), ms = rig_device_submitted(m);
  rig_point p = RIG_POINT_NONE;
  conf_ok(rig_buffer_submit_fill(a, 0xc0ffee11, 4, &p));
  assert_true(all_words(a, 0xc0ffee11)); /* no wait: the bytes are there */
  assert_true(rig_point_reached(p));
  assert_true(signaled_of(m) == rig_point_value(p));
  conf_ok(rig_buffer_submit_copy(a, b, &p));
  assert_true(all_words(b, 0xc0ffee11));
  assert_true(rig_point_reached(p));
  assert_true(signaled_of(m) == rig_device_submitted(m));
  assert_int_equal(rig_point_slot(p), slot_of(m));
  assert_true(rig_device_submitted(m) == ms + 2);
  assert_true(rig_device_submitted(h) == hs); /* OPEN-40 */
  assert_int_not_equal(slot_of(m), slot_of(h));

  /* OPEN-41 through rig_run_submit: a fill and a copy in one submission. */
  rig_part parts[2] = {rig_part_fill(0, 0x77777777, 4), rig_part_copy(0, 1)};
  rig_submission *s = NULL;
  conf_ok(rig_submission_make(m, parts, 2, &s));
  rig_run *r = NULL;
  conf_ok(rig_submission_take(s, &r));
  rig_buffer *bufs[2] = {a, b};
  conf_ok(rig_run_submit(r, bufs, 2, NULL, 0, &p));
  assert_true(all_words(a, 0x77777777));
  assert_true(all_words(b, 0x77777777));
  assert_true(rig_point_reached(p));
  assert_true(rig_point_value(p) == ms + 3);
  assert_true(signaled_of(m) == ms + 3);
  rig_submission_release(s);

  /* OPEN-40: the host's work leaves m's timeline alone. */
  rig_buffer *x = mkbuf(h, 4096), *y = mkbuf(h, 4096);
  conf_ok(rig_buffer_submit_fill(x, 0x31313131, 4, &p));
  assert_int_equal(rig_point_slot(p), slot_of(h));
  assert_true(all_words(x, 0x31313131)); /* DOM-6: done on return */
  conf_ok(rig_buffer_submit_copy(x, y, &p));
  assert_true(all_words(y, 0x31313131));
  assert_true(rig_point_reached(p));
  assert_true(rig_device_submitted(h) == hs + 2);
  assert_true(rig_device_submitted(m) == ms + 3);

  /* PROP-27: the host computes on m's memory as on its own: copies both
   * ways and host access. */
  conf_ok(rig_buffer_copy(x, a));
  assert_true(all_words(a, 0x31313131));
  conf_ok(rig_buffer_fill(b, 0x42424242, 4));
  conf_ok(rig_buffer_copy(b, y));
  assert_true(all_words(y, 0x42424242));
  uint32_t w = 0x99887766, got = 0;
  conf_ok(rig_buffer_put(a, 8, &w, 4));
  conf_ok(rig_buffer_get(a, 8, &got, 4));
  assert_int_equal(got, 0x99887766);

  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(a);
  rig_buffer_release(b);
  if (conf_is_host())
    conf_ok(rig_device_close(m));
  rig_device_release(m);
}

/* ---- OPEN: closing ---------------------------------------------------------- */

/* The host's run of a closing rule: the close is refused and the host is
 * as before, its work going on (OPEN-59). */
static void host_close_refused(void) {
  rig_device *h = rig_device_host();
  uint64_t s = rig_device_submitted(h);
  assert_int_equal(rig_device_close(h), RIG_INVALID);
  assert_int_equal(rig_error_last()->status, RIG_INVALID);
  assert_null(rig_device_lost(h));
  assert_true(rig_device_submitted(h) == s);
  rig_point p = work(h, 1);
  assert_true(rig_point_value(p) == s + 1);
  assert_true(rig_point_reached(p));
}

#define SLOW_BYTES ((size_t)96 << 20)

/* OPEN-45, OPEN-46, OPEN-48, ERR-32, ERR-36, ERR-37, TL-23: close waits
 * for the work submitted before it (a long fill another thread submitted
 * is done when close returns), loses the device with "closed", and every
 * later use is RIG_LOST "NAME lost: closed" and assigns no value; its
 * points stay reached and signaled stays at the last value read. */
static void open_45_46_48_close_waits_then_loses_closed(void **state) {
  (void)state;
  if (conf_is_host()) {
    host_close_refused();
    return;
  }
  bool overlapped = false;
  for (int attempt = 0; attempt < 3 && !overlapped; attempt++) {
    rig_device *d = dut();
    rig_buffer *big = mkbuf(d, SLOW_BYTES);
    fill_thread f = {.b = big, .pattern = 0x6b6b, .size = 2}; /* the host fills a byte at a time */
    uint64_t v = rig_device_submitted(d) + 1;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fill_thread_run, &f), 0);
    while (rig_device_submitted(d) < v && !atomic_load(&f.done))
      ;
    overlapped = signaled_of(d) < v; /* the fill runs as close starts */
    conf_ok(rig_device_close(d));
    /* OPEN-45: the fill is done. */
    assert_true(signaled_of(d) == v);
    assert_true(rig_point_reached(rig_device_point(d, v)));
    const unsigned char *bytes = rig_buffer_host_address(big);
    assert_int_equal(bytes[SLOW_BYTES - 1], 0x6b);
    assert_int_equal(bytes[SLOW_BYTES / 2], 0x6b);
    assert_int_equal(pthread_join(t, NULL), 0);
    conf_ok(f.st);
    assert_true(rig_point_value(f.p) == v);
    /* OPEN-46 */
    assert_non_null(rig_device_lost(d));
    assert_string_equal(rig_device_lost(d), "closed");
    char fmt[128];
    rig_device_format(d, fmt, sizeof fmt);
    char want[128];
    snprintf(want, sizeof want, "%s (lost: closed)", conf_name());
    assert_string_equal(fmt, want);
    rig_buffer_release(big);
    rig_device_release(d);
  }
  assert_true(overlapped);

  /* OPEN-48: every use after the close. */
  rig_device *d = dut();
  rig_buffer *a = mkbuf(d, 64), *b = mkbuf(d, 64);
  rig_point p = work(d, 3);
  rig_part part = rig_part_fill(0, 1, 4);
  rig_submission *s = NULL;
  conf_ok(rig_submission_make(d, &part, 1, &s));
  rig_run *r = NULL;
  conf_ok(rig_submission_take(s, &r));
  uint64_t last = rig_device_submitted(d);
  conf_ok(rig_device_close(d));
  assert_string_equal(rig_device_lost(d), "closed");

  rig_buffer *c = NULL;
  assert_lost(rig_buffer_create(d, 64, &c), d, "closed");
  assert_null(c);
  rig_point q = RIG_POINT_NONE;
  assert_lost(rig_buffer_submit_fill(a, 7, 4, &q), d, "closed");
  assert_lost(rig_buffer_fill(a, 7, 4), d, "closed");
  assert_lost(rig_buffer_submit_copy(a, b, &q), d, "closed");
  assert_lost(rig_buffer_copy(a, b), d, "closed");
  assert_true(q == RIG_POINT_NONE);
  uint32_t w = 0;
  assert_lost(rig_buffer_put(a, 0, &w, 4), d, "closed");
  assert_lost(rig_buffer_get(a, 0, &w, 4), d, "closed");
  assert_lost(rig_buffer_write(a, fill_ab, NULL), d, "closed");
  assert_lost(rig_buffer_read(a, fill_ab, NULL), d, "closed");
  assert_lost(rig_buffer_wait(a, RIG_READ), d, "closed");
  rig_submission *s2 = NULL;
  assert_lost(rig_submission_make(d, &part, 1, &s2), d, "closed");
  assert_null(s2);
  assert_lost(rig_run_submit(r, &a, 1, NULL, 0, &q), d, "closed");
  /* No value assigned by any of them; what was reached stays reached. */
  assert_true(rig_device_submitted(d) == last);
  assert_true(signaled_of(d) == last); /* TL-23: the last value read */
  assert_true(rig_point_reached(p));
  conf_ok(rig_point_wait(p));
  assert_false(rig_point_reached(rig_device_point(d, last + 1)));
  /* A host buffer copied into the closed device's memory is a use too. */
  rig_buffer *hb = mkbuf(rig_device_host(), 64);
  assert_lost(rig_buffer_copy(hb, a), d, "closed");
  rig_buffer_release(hb);

  rig_submission_release(s);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_device_release(d);
}

static int interrupt_hook(void *ctx) {
  atomic_fetch_add((atomic_int *)ctx, 1);
  return 1;
}

/* OPEN-57, DOM-9, DOM-10: a close whose wait the wait hook ends returns
 * RIG_INTERRUPTED, leaving the device live and its work going on; the next
 * close finishes it. */
static void open_57_interrupted_close_finished_by_next_close(void **state) {
  (void)state;
  if (conf_is_host()) {
    atomic_int calls = 0;
    rig_runtime_set_wait_hook(interrupt_hook, &calls);
    host_close_refused(); /* refused, not interrupted */
    rig_runtime_set_wait_hook(NULL, NULL);
    return;
  }
  bool overlapped = false;
  for (int attempt = 0; attempt < 3 && !overlapped; attempt++) {
    rig_device *d = dut();
    rig_buffer *big = mkbuf(d, SLOW_BYTES);
    fill_thread f = {.b = big, .pattern = 0x4e4e, .size = 2}; /* the host fills a byte at a time */
    uint64_t v = rig_device_submitted(d) + 1;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fill_thread_run, &f), 0);
    while (rig_device_submitted(d) < v && !atomic_load(&f.done))
      ;
    atomic_int calls = 0;
    rig_runtime_set_wait_hook(interrupt_hook, &calls);
    rig_status st = rig_device_close(d);
    rig_runtime_set_wait_hook(NULL, NULL);
    if (st == RIG_INTERRUPTED) {
      overlapped = true;
      assert_true(atomic_load(&calls) > 0);
      assert_int_equal(rig_error_last()->status, RIG_INTERRUPTED);
      assert_null(rig_device_lost(d));                  /* DOM-10: nothing lost */
      assert_true(rig_device_submitted(d) == v);        /* and no value taken */
      rig_device *same = open_name(conf_name()); /* still the open device */
      assert_ptr_equal(same, d);
      rig_device_release(same);
    } else {
      conf_ok(st); /* the fill ended before the close waited */
    }
    conf_ok(rig_device_close(d));                       /* OPEN-57: finished */
    assert_string_equal(rig_device_lost(d), "closed");
    assert_true(signaled_of(d) == v);
    assert_int_equal(pthread_join(t, NULL), 0);
    conf_ok(f.st);
    const unsigned char *bytes = rig_buffer_host_address(big);
    assert_int_equal(bytes[SLOW_BYTES - 1], 0x4e);
    rig_buffer_release(big);
    rig_device_release(d);
  }
  assert_true(overlapped);
}

/* OPEN-49, RECLAIM-21: a closed device gives its memory back: what it had
 * cached at once, a buffer still held once it is released and a call moves
 * memory. */
static void open_49_close_returns_memory(void **state) {
  (void)state;
  if (conf_is_host()) {
    conf_ok(rig_device_free_cache(rig_device_host())); /* nothing collected or cached */
    uint64_t held = rig_device_allocated(rig_device_host());
    rig_buffer *b = mkbuf(rig_device_host(), 1 << 20);
    uint64_t with = rig_device_allocated(rig_device_host());
    assert_true(with == held + (1 << 20));
    host_close_refused();
    conf_ok(rig_device_free_cache(rig_device_host()));
    assert_true(rig_device_allocated(rig_device_host()) == with); /* b's memory stays */
    rig_buffer_release(b);
    return;
  }
  rig_device *d = dut();
  conf_ok(rig_device_free_cache(d));
  assert_true(rig_device_allocated(d) == 0);
  rig_buffer *kept = mkbuf(d, 256);
  rig_buffer *dropped = mkbuf(d, 1 << 20);
  conf_ok(rig_buffer_fill(dropped, 3, 4));
  rig_buffer_release(dropped);
  rig_buffer *again = mkbuf(d, 64); /* a move: dropped goes to the cache */
  rig_buffer_release(again);
  assert_true(rig_device_allocated(d) >= 256 + (1 << 20));
  conf_ok(rig_device_close(d));
  assert_true(rig_device_allocated(d) == 256); /* only what is still held */
  rig_buffer_release(kept);
  conf_ok(rig_device_free_cache(rig_device_host())); /* a move (RECLAIM-21) */
  assert_true(rig_device_allocated(d) == 0);
  rig_device_release(d);
}

/* OPEN-51, PROP-11, DEV-1: every holder shares one device, so one close
 * ends it for all of them; the next open of the name is a new device. */
static void open_51_close_ends_device_for_every_holder(void **state) {
  (void)state;
  if (conf_is_host()) {
    rig_device *a = open_name("CPU"), *b = rig_device_retain(rig_device_host());
    host_close_refused();
    assert_null(rig_device_lost(a));
    assert_null(rig_device_lost(b));
    rig_device_release(a);
    rig_device_release(b);
    return;
  }
  rig_device *a = dut();
  rig_device *b = dut();
  rig_device *c = rig_device_retain(a);
  rig_buffer *ab = mkbuf(a, 64);
  conf_ok(rig_device_close(b));
  assert_string_equal(rig_device_lost(a), "closed");
  assert_string_equal(rig_device_lost(c), "closed");
  rig_point q;
  assert_lost(rig_buffer_submit_fill(ab, 1, 4, &q), a, "closed");
  rig_buffer *x = NULL;
  assert_lost(rig_buffer_create(c, 64, &x), a, "closed");
  rig_device *n = dut();
  assert_ptr_not_equal(n, a);
  assert_false(rig_device_equal(n, a)); /* PROP-11 */
  assert_null(rig_device_lost(n));
  rig_device *n2 = dut();
  assert_ptr_equal(n2, n); /* DEV-1: one open device per name */
  rig_buffer_release(ab);
  rig_device_release(n2);
  rig_device_release(n);
  rig_device_release(c);
  rig_device_release(b);
  rig_device_release(a);
}

/* OPEN-55, ERR-40: a close of a device already lost only runs what it
 * still owes: it returns RIG_OK, and the device keeps its reason. */
static void open_55_close_of_closed_device(void **state) {
  (void)state;
  if (conf_is_host()) {
    host_close_refused();
    host_close_refused(); /* refused every time */
    return;
  }
  rig_device *d = dut();
  work(d, 2);
  uint64_t last = rig_device_submitted(d);
  conf_ok(rig_device_close(d));
  conf_ok(rig_device_close(d));
  conf_ok(rig_device_close(d));
  assert_string_equal(rig_device_lost(d), "closed");
  assert_true(rig_device_submitted(d) == last);
  /* The second close did not close the name's next device. */
  rig_device *n = dut();
  assert_ptr_not_equal(n, d);
  conf_ok(rig_device_close(d));
  assert_null(rig_device_lost(n));
  rig_device_release(n);
  rig_device_release(d);
}

/* OPEN-58, ERR-45: a close never sets the process's failure. */
static void open_58_close_keeps_failure_unset(void **state) {
  (void)state;
  assert_null(rig_runtime_failure());
  rig_device *d = conf_is_host() ? open_name("memory:conf-58") : dut();
  work(d, 1);
  conf_ok(rig_device_close(d));
  assert_string_equal(rig_device_lost(d), "closed");
  assert_null(rig_runtime_failure());
  assert_int_equal(rig_device_close(rig_device_host()), RIG_INVALID);
  assert_null(rig_runtime_failure());
  /* Opens go on: no failure stops them (OPEN-4 applies after rig_runtime_fail). */
  rig_device *n = conf_is_host() ? open_name("memory:conf-58") : dut();
  assert_null(rig_device_lost(n));
  assert_null(rig_runtime_failure());
  rig_device_release(n);
  rig_device_release(d);
}

/* OPEN-59: close of the host is RIG_INVALID and changes nothing; a close of
 * no device is RIG_INVALID too. */
static void open_59_close_host_invalid(void **state) {
  (void)state;
  rig_device *h = rig_device_host();
  const char *arch = rig_device_arch(h);
  uint64_t align = rig_device_alignment(h);
  assert_int_equal(rig_device_close(h), RIG_INVALID);
  assert_ptr_equal(rig_error_last()->device, h);
  assert_true(rig_error_last()->message[0] != 0);
  host_close_refused();
  assert_ptr_equal(rig_device_host(), h);
  assert_string_equal(rig_device_name(h), "CPU");
  assert_ptr_equal(rig_device_arch(h), arch);
  assert_true(rig_device_alignment(h) == align);
  assert_int_equal(rig_device_close(NULL), RIG_INVALID);
  assert_int_equal(rig_error_last()->status, RIG_INVALID);
  /* The host still opens as itself. */
  rig_device *c = open_name("CPU");
  assert_ptr_equal(c, h);
  rig_device_release(c);
}

/* OPEN-17, OPEN-18, PROP-11, TL-17, PROP-4, PROP-5: open, work, close,
 * release, reopen, many times: each reopen is a new device, not equal to
 * the old one, whose timeline starts where the earlier device of its slot
 * ended, so every value stays one device's. */
static void open_17_18_prop_11_reopen_is_a_new_device(void **state) {
  (void)state;
  if (conf_is_host()) {
    /* The host never closes: every open of "CPU" is the one host, and its
     * timeline goes on. */
    uint64_t s = rig_device_submitted(rig_device_host());
    for (int i = 0; i < 20; i++) {
      rig_device *c = open_name("CPU");
      assert_ptr_equal(c, rig_device_host());
      rig_point p = work(c, 1);
      assert_true(rig_point_value(p) == s + 1 + (uint64_t)i);
      rig_device_release(c);
    }
    host_close_refused();
    return;
  }
  rig_device *old = dut();
  work(old, 3);
  for (int round = 0; round < 50; round++) {
    uint64_t last = rig_device_submitted(old);
    uint32_t slot = slot_of(old);
    assert_true(last > 0);
    rig_point lastp = rig_device_point(old, last);
    conf_ok(rig_device_close(old));
    rig_device *n = dut();
    assert_ptr_not_equal(n, old);                /* PROP-11 */
    assert_false(rig_device_equal(n, old));
    assert_null(rig_device_lost(n));
    assert_string_equal(rig_device_lost(old), "closed");
    assert_string_equal(rig_device_name(n), rig_device_name(old));
    /* Nothing else opened meanwhile, so n takes the slot old left. */
    assert_int_equal(slot_of(n), slot);
    assert_true(rig_device_submitted(n) == last);       /* TL-17 */
    assert_true(signaled_of(n) == last);
    rig_point p = work(n, 1 + round % 3);
    assert_true(rig_point_value(p) > last);      /* OPEN-17 */
    assert_true(rig_point_value(p) == last + 1 + (uint64_t)(round % 3));
    assert_null(rig_point_device(lastp));        /* PROP-4 */
    assert_true(rig_point_reached(lastp));       /* PROP-5 */
    rig_device *pd = rig_point_device(p);
    assert_ptr_equal(pd, n);
    rig_device_release(pd);
    rig_device_release(old);
    old = n;
  }
  rig_device_release(old);
}

/* ---- PROP ------------------------------------------------------------------ */

typedef struct props {
  char name[128], arch[64], iset[64];
  const char *bus;
  bool runs_on_host, computes, has_cache, reaches_self;
  uint64_t alignment, cache;
} props;

static props props_of(const rig_device *d) {
  props p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "%s", rig_device_name(d));
  snprintf(p.arch, sizeof p.arch, "%s", rig_device_arch(d));
  snprintf(p.iset, sizeof p.iset, "%s", rig_device_instruction_set(d));
  p.bus = rig_device_bus(d);
  p.runs_on_host = rig_device_runs_on_host(d);
  p.computes = rig_device_computes(d);
  p.alignment = rig_device_alignment(d);
  p.has_cache = rig_device_cache_bytes(d, &p.cache);
  p.reaches_self = rig_device_reaches(d, d);
  return p;
}

static void assert_same_props(const props *a, const props *b) {
  assert_string_equal(a->name, b->name);
  assert_string_equal(a->arch, b->arch);
  assert_string_equal(a->iset, b->iset);
  assert_ptr_equal(a->bus, b->bus);
  assert_int_equal(a->runs_on_host, b->runs_on_host);
  assert_int_equal(a->computes, b->computes);
  assert_true(a->alignment == b->alignment);
  assert_int_equal(a->has_cache, b->has_cache);
  assert_true(a->cache == b->cache);
  assert_int_equal(a->reaches_self, b->reaches_self);
}

/* PROP-1, PROP-2, PROP-3, ERR-37: properties are set at open and kept: a
 * closed device held by the program answers them as before, with its
 * timeline and its loss reason. */
static void prop_1_2_3_properties_kept_after_close(void **state) {
  (void)state;
  rig_device *d = dut();
  work(d, 2);
  props before = props_of(d);
  assert_string_equal(before.name, conf_name());
  assert_true(before.alignment > 0);
  assert_null(rig_device_lost(d));
  uint64_t sub = rig_device_submitted(d);
  if (conf_is_host()) {
    host_close_refused();
    props after = props_of(d);
    assert_same_props(&before, &after);
    rig_device_release(d);
    return;
  }
  conf_ok(rig_device_close(d));
  /* The name's entry is gone, and other devices open meanwhile. */
  rig_device *other = open_name("memory:conf-prop-1");
  rig_device *n = dut();
  assert_ptr_not_equal(n, d);
  props after = props_of(d);
  assert_same_props(&before, &after);
  assert_true(rig_device_submitted(d) == sub);
  assert_true(signaled_of(d) == sub);
  assert_string_equal(rig_device_lost(d), "closed");
  /* Its successor has the same properties: they come from the opener. */
  props succ = props_of(n);
  assert_same_props(&before, &succ);
  conf_ok(rig_device_close(other));
  rig_device_release(other);
  rig_device_release(n);
  rig_device_release(d);
}

/* PROP-4: a point of a device names that device while it holds its slot
 * (with a reference of the caller's). */
static void prop_4_point_device_of_live_device(void **state) {
  (void)state;
  rig_device *d = dut();
  uint64_t start = rig_device_submitted(d);
  rig_point p = work(d, 3);
  for (uint64_t v = start + 1; v <= rig_point_value(p); v++) {
    rig_device *got = rig_point_device(rig_device_point(d, v));
    assert_ptr_equal(got, d);
    rig_device_release(got);
  }
  assert_null(rig_point_device(rig_device_point(d, 0)));
  assert_null(rig_point_device(RIG_POINT_NONE));
  rig_device_release(d);
}

/* PROP-8: a device's name is its opener's. */
static void prop_8_name_is_the_openers(void **state) {
  (void)state;
  rig_device *d = dut();
  assert_string_equal(rig_device_name(d), conf_name());
  char buf[128];
  size_t n = rig_device_format(d, buf, sizeof buf);
  assert_string_equal(buf, conf_name()); /* a live device prints its name */
  assert_int_equal(n, strlen(conf_name()));
  rig_device *m = NULL;
  conf_ok(rig_device_open_memory("conf-prop-8", &m));
  assert_string_equal(rig_device_name(m), "memory:conf-prop-8");
  rig_device_release(m);
  rig_device_release(d);
}

#if defined(__x86_64__)
/* The x86-64 psABI level of an arch name, 0 for none. */
static int level_of(const char *arch) {
  if (strcmp(arch, "x86-64") == 0)
    return 1;
  if (strncmp(arch, "x86-64-v", 8) == 0 && arch[8] >= '2' && arch[8] <= '4' && !arch[9])
    return arch[8] - '0';
  return 0;
}
#endif

/* PROP-13, PROP-14, PROP-18: the host's arch is an x86-64 psABI level on
 * x86-64 (and the CPU has every feature of each lower level, so code of
 * each runs), "arm64" on arm64 off macOS. */
static void prop_13_14_18_host_arch(void **state) {
  (void)state;
  const char *arch = rig_device_arch(rig_device_host());
  assert_non_null(arch);
#if defined(__x86_64__)
  int level = level_of(arch);
  if (level == 0)
    print_error("host arch '%s' is no x86-64 level\n", arch);
  assert_true(level >= 1 && level <= 4);
  __builtin_cpu_init();
  if (level >= 2) {
    assert_true(__builtin_cpu_supports("sse3"));
    assert_true(__builtin_cpu_supports("ssse3"));
    assert_true(__builtin_cpu_supports("sse4.1"));
    assert_true(__builtin_cpu_supports("sse4.2"));
    assert_true(__builtin_cpu_supports("popcnt"));
  }
  if (level >= 3) {
    assert_true(__builtin_cpu_supports("avx"));
    assert_true(__builtin_cpu_supports("avx2"));
    assert_true(__builtin_cpu_supports("bmi"));
    assert_true(__builtin_cpu_supports("bmi2"));
    assert_true(__builtin_cpu_supports("fma"));
  }
  if (level >= 4) {
    assert_true(__builtin_cpu_supports("avx512f"));
    assert_true(__builtin_cpu_supports("avx512bw"));
    assert_true(__builtin_cpu_supports("avx512cd"));
    assert_true(__builtin_cpu_supports("avx512dq"));
    assert_true(__builtin_cpu_supports("avx512vl"));
  }
#if defined(__GNUC__) && !defined(__clang__)
  /* PROP-14: the level names every lower level too. */
  const char *names[] = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  for (int l = 2; l <= level; l++)
    assert_true(level_of(names[l - 1]) == l);
  if (level >= 2)
    assert_true(__builtin_cpu_supports("x86-64-v2"));
  if (level >= 3)
    assert_true(__builtin_cpu_supports("x86-64-v3"));
  if (level >= 4)
    assert_true(__builtin_cpu_supports("x86-64-v4"));
#endif
#elif defined(__aarch64__) && !defined(__APPLE__)
  assert_string_equal(arch, "arm64"); /* PROP-18 */
#endif
  if (conf_is_host()) {
    rig_device *d = dut();
    assert_string_equal(rig_device_arch(d), arch);
    rig_device_release(d);
  }
}

/* PROP-20, PROP-23: a memory device's arch is "memory"; the instruction
 * set is "x86_64" for any x86-64 level, "arm64" for any arm64 arch, else
 * the arch itself. */
static void prop_20_23_arch_and_instruction_set(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_device *m = conf_is_host() ? open_name("memory:conf-prop-20") : rig_device_retain(d);
  assert_string_equal(rig_device_arch(m), "memory");
  assert_string_equal(rig_device_instruction_set(m), "memory");
  const char *harch = rig_device_arch(rig_device_host());
  const char *hiset = rig_device_instruction_set(rig_device_host());
#if defined(__x86_64__)
  assert_string_equal(hiset, "x86_64");
  assert_int_equal(strncmp(harch, "x86-64", 6), 0);
#elif defined(__aarch64__)
  assert_string_equal(hiset, "arm64");
  assert_int_equal(strncmp(harch, "arm64", 5), 0);
#endif
  (void)harch;
  assert_string_equal(rig_device_instruction_set(d), conf_is_host() ? hiset : "memory");
  rig_device_release(m);
  rig_device_release(d);
}

/* PROP-25, PROP-26: no bus for the host or a memory device; both run their
 * work as this process's code (and both compute). Every other device runs
 * its work elsewhere, though its worker threads are this process's: the
 * test and sample drivers' devices, which stand for GPUs. */
static void prop_25_26_bus_and_runs_on_host(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_device *m = open_name("memory:conf-prop-25");
  rig_device *all[] = {d, rig_device_host(), m};
  for (int i = 0; i < 3; i++) {
    assert_null(rig_device_bus(all[i]));
    assert_true(rig_device_runs_on_host(all[i]));
    assert_true(rig_device_computes(all[i]));
  }
  rig_device *t = open_name("test:conf-prop-26"), *s = open_name("sample:0");
  assert_false(rig_device_runs_on_host(t));
  assert_false(rig_device_runs_on_host(s));
  conf_ok(rig_device_close(t));
  conf_ok(rig_device_close(s));
  rig_device_release(t);
  rig_device_release(s);
  rig_device_release(m);
  rig_device_release(d);
}

/* PROP-28, PROP-29, PROP-30: every non-empty buffer starts on the device's
 * alignment, a power of two: 16 on the host, 64 on a memory device; a host
 * buffer of 128 bytes or more on 128 bytes, and of 64 KiB or more on a
 * page. Many sizes, all held at once so each is an allocation of its own. */
static void prop_28_29_30_alignment(void **state) {
  (void)state;
  rig_device *d = dut();
  uint64_t align = rig_device_alignment(d);
  assert_true(align > 0 && (align & (align - 1)) == 0);
  assert_true(align == (conf_is_host() ? 16u : 64u)); /* PROP-29 */
  assert_true(rig_device_alignment(rig_device_host()) == 16);
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

  size_t sizes[400];
  size_t n = 0;
  for (size_t s = 1; s <= 300; s++)
    sizes[n++] = s;
  const size_t more[] = {383, 384, 500, 1000, 1023, 1024, 4095, 4096, 4097, 10000,
                         32767, 32768, 65535, 65536, 65537, 100000, 131072,
                         (1u << 20) - 1, 1u << 20, (1u << 20) + 3, 3u << 20};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
    sizes[n++] = more[i];
  rig_buffer *bufs[400];
  for (int round = 0; round < 2; round++) { /* the second from the cache */
    for (size_t i = 0; i < n; i++) {
      bufs[i] = mkbuf(d, sizes[i]);
      uintptr_t a = (uintptr_t)rig_buffer_host_address(bufs[i]);
      assert_true(a != 0);
      if (a % align != 0)
        print_error("%s: %zu bytes at %p\n", conf_name(), sizes[i], (void *)a);
      assert_true(a % align == 0);                    /* PROP-28 */
      if (conf_is_host() && sizes[i] >= 128)
        assert_true(a % 128 == 0);                    /* PROP-30 */
      if (conf_is_host() && sizes[i] >= 65536)
        assert_true(a % page == 0);
    }
    for (size_t i = 0; i < n; i++)
      rig_buffer_release(bufs[i]);
  }
  rig_device_release(d);
}

/* The largest of cpu0's caches according to sysfs; false without sysfs. */
static bool sysfs_cache(uint64_t *out) {
  bool any = false;
  uint64_t best = 0;
  for (int i = 0; i < 64; i++) {
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "r");
    if (!f)
      break;
    unsigned long long v = 0;
    char unit = 0;
    int got = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (got < 1)
      continue;
    if (got == 2 && (unit == 'K' || unit == 'k'))
      v <<= 10;
    else if (got == 2 && (unit == 'M' || unit == 'm'))
      v <<= 20;
    else if (got == 2 && (unit == 'G' || unit == 'g'))
      v <<= 30;
    any = true;
    if (v > best)
      best = v;
  }
  *out = best;
  return any;
}

/* PROP-32, PROP-36: the host and a memory device report the largest cache
 * of the host CPU the OS states; on Linux with sysfs, that of cpu0. */
static void prop_32_36_cache_bytes(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_device *m = open_name("memory:conf-prop-32");
  uint64_t hc = 0, dc = 0, mc = 0;
  bool hk = rig_device_cache_bytes(rig_device_host(), &hc);
  bool dk = rig_device_cache_bytes(d, &dc);
  bool mk = rig_device_cache_bytes(m, &mc);
  assert_int_equal(hk, dk);
  assert_int_equal(hk, mk);
  assert_true(hc == dc && hc == mc);
  assert_int_equal(rig_device_cache_bytes(d, NULL), dk);
  uint64_t sys = 0;
  if (sysfs_cache(&sys) && sys > 0) {
    assert_true(hk);
    assert_true(hc > 0);
    assert_true(hc == sys);
  } else if (hk) {
    assert_true(hc > 0);
  }
  rig_device_release(m);
  rig_device_release(d);
}

/* PROP-39: no capability registered under a key → NULL. */
static void prop_39_no_capability_is_null(void **state) {
  (void)state;
  rig_device *d = dut();
  assert_null(rig_device_capability(d, "conf-no-such-capability"));
  assert_null(rig_device_capability(rig_device_host(), "conf-no-such-capability"));
  assert_null(rig_device_capability(d, NULL));
  rig_device_release(d);
}

/* ---- TL ---------------------------------------------------------------------- */

/* TL-1, TL-5, TL-16, TL-19, TL-20, SUBMIT-6: each submit takes the next
 * value, (d, submitted + 1), and submitted is then that value; signaled
 * has reached it and its writes are visible to the host. A refused submit
 * assigns nothing. On the host, whose queue runs only launches (HOST-4),
 * the fill is a launch of a host kernel (conf_submission_make). */
static void tl_1_5_16_submit_takes_the_next_value(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_buffer *b = mkbuf(d, 1024);
  rig_part part = rig_part_fill(0, 0, 4);
  uint64_t prev = rig_device_submitted(d);
  for (uint32_t i = 1; i <= 10; i++) {
    part.pattern = 0x10101010u * i;
    rig_submission *s = NULL;
    conf_ok(conf_submission_make(d, &part, 1, &s));
    rig_run *r = NULL;
    conf_ok(rig_submission_take(s, &r));
    rig_point p = RIG_POINT_NONE;
    conf_ok(conf_submit(r, &part, 1, &b, 1, NULL, 0, &p));
    assert_int_equal(rig_point_slot(p), slot_of(d));
    assert_true(rig_point_value(p) == prev + 1);      /* TL-1 */
    assert_true(rig_device_submitted(d) == prev + 1);        /* TL-5, TL-16 */
    uint64_t sig = signaled_of(d);
    assert_true(sig == rig_device_submitted(d));             /* TL-19: done on return */
    assert_true(rig_point_reached(rig_device_point(d, sig))); /* TL-20 */
    assert_true(all_words(b, 0x10101010u * i));
    /* A refused submit (a wrong buffer count) takes no value. */
    conf_ok(rig_submission_take(s, &r));
    rig_buffer *two[2] = {b, b};
    assert_int_equal(rig_run_submit(r, two, 2, NULL, 0, &p), RIG_INVALID);
    assert_true(rig_device_submitted(d) == prev + 1);
    prev++;
    rig_submission_release(s);
  }
  rig_buffer_release(b);
  rig_device_release(d);
}

/* TL-2, TL-4: the Buffer module's copies and fills take a value each on the
 * device that runs them, in the order they were accepted. */
static void tl_2_copies_and_fills_take_values(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_buffer *a = mkbuf(d, 512), *b = mkbuf(d, 512);
  uint64_t s = rig_device_submitted(d);
  rig_point p;
  /* The host's own blocking fills and copies take no value (STAMP-2,
   * STAMP-18); its submit_fill and submit_copy do (TL-3). */
  uint64_t k = conf_is_host() ? 0 : 1;
  conf_ok(rig_buffer_fill(a, 0x11, 1));
  assert_true(rig_device_submitted(d) == s + k);
  conf_ok(rig_buffer_copy(a, b));
  assert_true(rig_device_submitted(d) == s + 2 * k);
  assert_true(all_words(b, 0x11111111));
  s += 2 * k;
  conf_ok(rig_buffer_submit_fill(b, 0x2222, 2, &p));
  assert_true(p == rig_device_point(d, s + 1));
  conf_ok(rig_buffer_submit_copy(b, a, &p));
  assert_true(p == rig_device_point(d, s + 2));
  assert_true(rig_device_submitted(d) == s + 2);
  assert_true(all_words(a, 0x22222222));

  /* A copy between the device's memory and the host's takes one value, on
   * the device the point names. */
  rig_buffer *h = mkbuf(rig_device_host(), 512);
  uint64_t hs = rig_device_submitted(rig_device_host());
  uint64_t ds = rig_device_submitted(d);
  conf_ok(rig_buffer_submit_copy(a, h, &p));
  rig_device *ran = rig_point_device(p);
  assert_non_null(ran);
  assert_true(ran == d || ran == rig_device_host());
  uint64_t took = (rig_device_submitted(rig_device_host()) - hs) + (conf_is_host() ? 0 : rig_device_submitted(d) - ds);
  assert_true(took == 1);
  assert_true(rig_point_value(p) == rig_device_submitted(ran));
  rig_device_release(ran);
  assert_true(all_words(h, 0x22222222));
  rig_buffer_release(h);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_device_release(d);
}

/* TL-3: on the host, rig_buffer_submit_copy and rig_buffer_submit_fill take
 * host values for the work the host does; other timelines stay as they
 * are. */
static void tl_3_host_copy_takes_host_value(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_device *h = rig_device_host();
  rig_buffer *a = mkbuf(h, 300), *b = mkbuf(h, 300);
  uint64_t hs = rig_device_submitted(h), ds = rig_device_submitted(d);
  rig_point p;
  conf_ok(rig_buffer_submit_fill(a, 0x3c, 1, &p));
  assert_int_equal(rig_point_slot(p), slot_of(h));
  assert_true(rig_point_value(p) == hs + 1);
  conf_ok(rig_buffer_submit_copy(a, b, &p));
  assert_int_equal(rig_point_slot(p), slot_of(h));
  assert_true(rig_point_value(p) == hs + 2);
  assert_true(rig_device_submitted(h) == hs + 2);
  assert_true(rig_point_reached(p));
  const unsigned char *bb = rig_buffer_host_address(b);
  for (int i = 0; i < 300; i++)
    assert_int_equal(bb[i], 0x3c);
  if (!conf_is_host())
    assert_true(rig_device_submitted(d) == ds);
  rig_device *got = rig_point_device(p);
  assert_ptr_equal(got, h);
  rig_device_release(got);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_device_release(d);
}

#define TL4_THREADS 4
#define TL4_EACH 250

typedef struct tl4_thread {
  rig_device *d;
  rig_buffer *b;
  rig_point points[TL4_EACH];
  int failures;
} tl4_thread;

static void *tl4_submitter(void *arg) {
  tl4_thread *t = arg;
  for (int i = 0; i < TL4_EACH; i++)
    if (rig_buffer_submit_fill(t->b, (uint32_t)i, 4, &t->points[i]) != RIG_OK)
      t->failures++;
  return NULL;
}

typedef struct tl18_reader {
  rig_device *d;
  atomic_bool stop, started;
  long reads, back_sub, back_sig, sig_ahead;
  uint64_t first, last;
} tl18_reader;

/* Reads submitted and signaled over and over: neither may go back, and
 * signaled read first is never past submitted read after (TL-18, TL-19). */
static void *tl18_read(void *arg) {
  tl18_reader *r = arg;
  uint64_t sub = rig_device_submitted(r->d), sig = signaled_of(r->d);
  r->first = sub;
  atomic_store(&r->started, true);
  do {
    uint64_t g = signaled_of(r->d);
    uint64_t s = rig_device_submitted(r->d);
    r->back_sub += s < sub;
    r->back_sig += g < sig;
    r->sig_ahead += g > s;
    sub = s;
    sig = g;
    r->reads++;
  } while (!atomic_load(&r->stop));
  r->last = sub;
  return NULL;
}

/* Runs TL4_THREADS threads submitting fills on d, each on its own buffer,
 * and a reader; checks the reader's findings. Returns the threads. */
static tl4_thread *run_submitters(rig_device *d, uint64_t *start) {
  tl4_thread *ts = calloc(TL4_THREADS, sizeof *ts);
  assert_non_null(ts);
  tl18_reader rd = {.d = d};
  pthread_t th[TL4_THREADS], reader;
  for (int i = 0; i < TL4_THREADS; i++) {
    ts[i].d = d;
    ts[i].b = mkbuf(d, 64);
  }
  *start = rig_device_submitted(d);
  assert_int_equal(pthread_create(&reader, NULL, tl18_read, &rd), 0);
  while (!atomic_load(&rd.started)) /* the reader reads while they submit */
    sched_yield();
  for (int i = 0; i < TL4_THREADS; i++)
    assert_int_equal(pthread_create(&th[i], NULL, tl4_submitter, &ts[i]), 0);
  for (int i = 0; i < TL4_THREADS; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  atomic_store(&rd.stop, true);
  assert_int_equal(pthread_join(reader, NULL), 0);
  for (int i = 0; i < TL4_THREADS; i++) {
    assert_int_equal(ts[i].failures, 0);
    rig_buffer_release(ts[i].b);
  }
  /* TL-18: never back; TL-19: never reports past what it was given. */
  assert_true(rd.reads > 0);
  assert_int_equal(rd.back_sub, 0);
  assert_int_equal(rd.back_sig, 0);
  assert_int_equal(rd.sig_ahead, 0);
  assert_true(rd.last >= rd.first);
  return ts;
}

/* TL-4, PRE-9, TL-18: with several threads submitting at once, values
 * follow acceptance: every value of start+1..start+N is given exactly once,
 * each thread's values rise in the order it submitted, and submitted and
 * signaled never go back meanwhile. */
static void tl_4_values_follow_acceptance_across_threads(void **state) {
  (void)state;
  rig_device *d = dut();
  uint64_t start;
  tl4_thread *ts = run_submitters(d, &start);
  const size_t total = (size_t)TL4_THREADS * TL4_EACH;
  uint64_t *all = malloc(total * sizeof *all);
  assert_non_null(all);
  size_t k = 0;
  for (int i = 0; i < TL4_THREADS; i++)
    for (int j = 0; j < TL4_EACH; j++) {
      rig_point p = ts[i].points[j];
      assert_int_equal(rig_point_slot(p), slot_of(d));
      if (j > 0)
        assert_true(rig_point_value(p) > rig_point_value(ts[i].points[j - 1]));
      all[k++] = rig_point_value(p);
    }
  qsort(all, total, sizeof *all, compare_u64);
  for (size_t i = 0; i < total; i++)
    assert_true(all[i] == start + 1 + i); /* distinct and consecutive */
  assert_true(rig_device_submitted(d) == start + total);
  assert_true(signaled_of(d) == start + total);
  free(all);
  free(ts);
  rig_device_release(d);
}

/* TL-18: submitted never goes back, whatever the calls do: values, failed
 * calls, host work, reads; and after a close it stays. */
static void tl_18_submitted_is_monotone(void **state) {
  (void)state;
  rig_device *d = dut();
  uint64_t prev = rig_device_submitted(d);
#define STEP()                                                                   \
  do {                                                                           \
    uint64_t cur_ = rig_device_submitted(d);                                            \
    assert_true(cur_ >= prev);                                                   \
    prev = cur_;                                                                 \
  } while (0)
  rig_buffer *a = mkbuf(d, 64), *b = mkbuf(d, 128);
  for (int i = 0; i < 20; i++) {
    rig_point p;
    conf_ok(rig_buffer_submit_fill(a, (uint32_t)i, 4, &p));
    STEP();
    assert_int_equal(rig_buffer_copy(a, b), RIG_INVALID); /* lengths differ */
    STEP();
    uint32_t w = 0;
    conf_ok(rig_buffer_get(a, 0, &w, 4));
    STEP();
    (void)signaled_of(d);
    STEP();
    work(rig_device_host(), 1);
    STEP();
  }
  rig_buffer_release(a);
  rig_buffer_release(b);
  uint64_t start;
  free(run_submitters(d, &start)); /* concurrent: checked by the reader */
  STEP();
  if (!conf_is_host()) {
    conf_ok(rig_device_close(d));
    STEP();
    rig_buffer *c = NULL;
    assert_int_equal(rig_buffer_create(d, 64, &c), RIG_LOST);
    STEP();
  }
#undef STEP
  rig_device_release(d);
}

/* TL-6, TL-19, TL-20: signaled is what d reported reached: after each
 * fill it has the fill's value (memory and host run work before submit
 * returns), the point of signaled is reached, and the bytes are there. */
static void tl_19_20_signaled_reached_and_visible(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_buffer *b = mkbuf(d, 4096);
  for (uint32_t i = 0; i < 32; i++) {
    rig_point p;
    uint32_t pat = 0x9e3779b9u * (i + 1);
    conf_ok(rig_buffer_submit_fill(b, pat, 4, &p));
    uint64_t sig = signaled_of(d);
    assert_true(sig >= rig_point_value(p));
    assert_true(sig == rig_device_submitted(d)); /* done before submit returned */
    assert_true(rig_point_reached(rig_device_point(d, sig)));
    assert_true(all_words(b, pat));
  }
  rig_buffer_release(b);
  rig_device_release(d);
}

/* TL-24, TL-27: signaled never waits: called
 * while a long fill runs under the device's submit, it answers at once
 * with the value before the fill's, though the fill's value is submitted;
 * it sets no error. So does rig_point_reached for the fill's point. */
static void tl_24_27_signaled_never_blocks(void **state) {
  (void)state;
  rig_device *d = dut();
  rig_buffer *big = mkbuf(d, SLOW_BYTES);
  conf_ok(rig_buffer_fill(big, 0, 1)); /* its pages in, before the timing */
  fill_thread f = {.b = big, .pattern = 0x5d5d, .size = 2}; /* the host fills a byte at a time */
  uint64_t v = rig_device_submitted(d) + 1;
  /* A known last error, which signaled must leave alone. */
  assert_int_equal(rig_device_close(NULL), RIG_INVALID);
  char msg[RIG_MESSAGE_BYTES];
  snprintf(msg, sizeof msg, "%s", rig_error_last()->message);

  pthread_t t;
  double t0 = now_s();
  assert_int_equal(pthread_create(&t, NULL, fill_thread_run, &f), 0);
  long calls = 0, inside = 0;
  double worst = 0;
  while (!atomic_load(&f.done)) {
    uint64_t sub = rig_device_submitted(d);
    double c0 = now_s();
    uint64_t sig = signaled_of(d);
    bool reached = rig_point_reached(rig_device_point(d, v));
    double dt = now_s() - c0;
    if (dt > worst)
      worst = dt;
    assert_true(sig <= v);
    if (reached) /* reached for good: signaled has it from now on */
      assert_true(signaled_of(d) >= v);
    if (sub == v && sig < v)
      inside++; /* the fill's value is given and its work not done */
    calls++;
  }
  double fill_s = now_s() - t0;
  assert_int_equal(pthread_join(t, NULL), 0);
  conf_ok(f.st);
  print_message("%s: %ld calls during a %.0f ms fill, %ld inside it, slowest %.3f ms\n",
                conf_name(), calls, fill_s * 1e3, inside, worst * 1e3);
  assert_true(inside > 0);
  assert_true(worst < fill_s / 2); /* a wait would last the fill */
  assert_true(signaled_of(d) == v);
  assert_int_equal(rig_error_last()->status, RIG_INVALID); /* TL-27 */
  assert_string_equal(rig_error_last()->message, msg);
  rig_buffer_release(big);
  rig_device_release(d);
}

/* ---- rig_runtime_fail, in a child ------------------------------------------------------ */

#define CHILD_CHECK(c)                                                                 \
  do {                                                                                 \
    if (!(c)) {                                                                        \
      fprintf(stderr, "child: %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #c,  \
              rig_error_last()->message);                                              \
      _exit(1);                                                                        \
    }                                                                                  \
  } while (0)

static bool streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The child's side of err_39_41_44_open_4_fail_in_child: exits 0 when
 * every check holds, else 1 after saying which failed. */
static void fail_child(void) {
  rig_device *d = NULL;
  CHILD_CHECK(rig_device_open(conf_name(), &d) == RIG_OK);
  rig_device *a = NULL, *closed = NULL;
  CHILD_CHECK(rig_device_open("memory:conf-fail-a", &a) == RIG_OK);
  CHILD_CHECK(rig_device_open("memory:conf-fail-closed", &closed) == RIG_OK);
  CHILD_CHECK(rig_device_close(closed) == RIG_OK);
  rig_buffer *ab = NULL;
  CHILD_CHECK(rig_buffer_create(a, 64, &ab) == RIG_OK);
  CHILD_CHECK(rig_runtime_failure() == NULL);

  rig_runtime_fail("conf: failed on purpose");
  CHILD_CHECK(streq(rig_runtime_failure(), "conf: failed on purpose")); /* ERR-45 */
  /* ERR-39: every device but the host not yet lost is lost with why. */
  CHILD_CHECK(streq(rig_device_lost(a), "conf: failed on purpose"));
  CHILD_CHECK(rig_device_lost(rig_device_host()) == NULL);
  if (conf_is_host())
    CHILD_CHECK(rig_device_lost(d) == NULL);
  else /* the parent's device, inherited: lost by the fail, or by the fork */
    CHILD_CHECK(streq(rig_device_lost(d), "conf: failed on purpose") || streq(rig_device_lost(d), "forked"));
  /* ERR-40: one lost before keeps its reason. */
  CHILD_CHECK(streq(rig_device_lost(closed), "closed"));
  /* Its uses are Lost with the reason. */
  rig_point p;
  CHILD_CHECK(rig_buffer_submit_fill(ab, 1, 4, &p) == RIG_LOST);
  CHILD_CHECK(streq(rig_error_last()->message, "memory:conf-fail-a lost: conf: failed on purpose"));
  /* OPEN-4, ERR-41, OPEN-44: every open is Error why, new names and open
   * ones alike. */
  rig_device *x = NULL;
  CHILD_CHECK(rig_device_open("memory:conf-fail-new", &x) == RIG_UNAVAILABLE);
  CHILD_CHECK(streq(rig_error_last()->message, "conf: failed on purpose"));
  CHILD_CHECK(rig_device_open("memory:conf-fail-a", &x) == RIG_UNAVAILABLE);
  CHILD_CHECK(rig_device_open_memory("conf-fail-new", &x) == RIG_UNAVAILABLE);
  CHILD_CHECK(streq(rig_error_last()->message, "conf: failed on purpose"));
  CHILD_CHECK(rig_device_open("CPU", &x) == RIG_UNAVAILABLE); /* OPEN-4: every open */
  CHILD_CHECK(rig_device_host() != NULL && rig_device_lost(rig_device_host()) == NULL);
  CHILD_CHECK(rig_device_open("conf-no-such-driver:0", &x) == RIG_UNAVAILABLE);
  CHILD_CHECK(x == NULL);
  /* ERR-44: only the first fail acts. */
  rig_runtime_fail("conf: second");
  CHILD_CHECK(streq(rig_runtime_failure(), "conf: failed on purpose"));
  CHILD_CHECK(streq(rig_device_lost(a), "conf: failed on purpose"));
  /* The host goes on. */
  rig_buffer *h1 = NULL, *h2 = NULL;
  CHILD_CHECK(rig_buffer_create(rig_device_host(), 64, &h1) == RIG_OK);
  CHILD_CHECK(rig_buffer_create(rig_device_host(), 64, &h2) == RIG_OK);
  CHILD_CHECK(rig_buffer_fill(h1, 9, 4) == RIG_OK);
  CHILD_CHECK(rig_buffer_copy(h1, h2) == RIG_OK);
  /* A close after the fail runs the stop and keeps the reason. */
  CHILD_CHECK(rig_device_close(a) == RIG_OK);
  CHILD_CHECK(streq(rig_device_lost(a), "conf: failed on purpose"));
  CHILD_CHECK(streq(rig_runtime_failure(), "conf: failed on purpose"));
  _exit(0);
}

/* OPEN-4, ERR-39, ERR-40, ERR-41, ERR-44, ERR-45, OPEN-44: rig_runtime_fail, in a
 * forked child since it fails the whole process; the parent only waits. */
static void err_39_41_44_open_4_fail_in_child(void **state) {
  (void)state;
  run_in_child(fail_child); /* asserts the parent has not failed */
  rig_device *d = dut();
  assert_null(rig_device_lost(d));
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dev_1_open_30_prop_10_one_device_per_name),
      cmocka_unit_test(dev_3_4_host_is_cpu_and_its_memory_the_process),
      cmocka_unit_test(open_1_2_44_unopenable_and_misuse),
      cmocka_unit_test(open_31_first_open_makes_a_device),
      cmocka_unit_test(open_38_39_40_41_memory_device),
      cmocka_unit_test(open_39_memory_is_private_and_host_addressed),
      cmocka_unit_test(open_45_46_48_close_waits_then_loses_closed),
      cmocka_unit_test(open_57_interrupted_close_finished_by_next_close),
      cmocka_unit_test(open_49_close_returns_memory),
      cmocka_unit_test(open_51_close_ends_device_for_every_holder),
      cmocka_unit_test(open_55_close_of_closed_device),
      cmocka_unit_test(open_58_close_keeps_failure_unset),
      cmocka_unit_test(open_59_close_host_invalid),
      cmocka_unit_test(open_17_18_prop_11_reopen_is_a_new_device),
      cmocka_unit_test(prop_1_2_3_properties_kept_after_close),
      cmocka_unit_test(prop_4_point_device_of_live_device),
      cmocka_unit_test(prop_8_name_is_the_openers),
      cmocka_unit_test(prop_13_14_18_host_arch),
      cmocka_unit_test(prop_20_23_arch_and_instruction_set),
      cmocka_unit_test(prop_25_26_bus_and_runs_on_host),
      cmocka_unit_test(prop_28_29_30_alignment),
      cmocka_unit_test(prop_32_36_cache_bytes),
      cmocka_unit_test(prop_39_no_capability_is_null),
      cmocka_unit_test(tl_1_5_16_submit_takes_the_next_value),
      cmocka_unit_test(tl_2_copies_and_fills_take_values),
      cmocka_unit_test(tl_3_host_copy_takes_host_value),
      cmocka_unit_test(tl_4_values_follow_acceptance_across_threads),
      cmocka_unit_test(tl_18_submitted_is_monotone),
      cmocka_unit_test(tl_19_20_signaled_reached_and_visible),
      cmocka_unit_test(tl_24_27_signaled_never_blocks),
      cmocka_unit_test(err_39_41_44_open_4_fail_in_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
