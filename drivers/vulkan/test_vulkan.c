/* test_vulkan.c: the Vulkan driver's own tests (suite driver-vulkan), on
 * "vulkan:0" (RIG_VK_DEVICE names another): its facts, fills of every
 * alignment and pattern, copies through staging (host=0), the memory
 * kinds, borrows of host memory, its commits every k values (TL-8, TL-10),
 * loss and the stop, and no validation errors where the layer runs.
 *
 * A machine with no Vulkan device skips (exit 77) and says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rig/rig.h>

#include "rig-vulkan.h"

#define ok(expr)                                                                   \
  do {                                                                             \
    rig_status st_ = (expr);                                                       \
    if (st_ != RIG_OK)                                                             \
      print_error("%s: %s: %s\n", #expr, rig_status_name(st_), rig_last_error()->message); \
    assert_int_equal(st_, RIG_OK);                                                 \
  } while (0)

static char base[64];  /* the device under test, "vulkan:0" */
static char name[128];

/* base with options appended. */
static const char *named(const char *options) {
  snprintf(name, sizeof name, "%s%s", base, options);
  return name;
}

static rig_device *open_dev(const char *options) {
  rig_device *d = NULL;
  ok(rig_open(named(options), &d));
  return d;
}

static void close_dev(rig_device *d) {
  const rig_vulkan_validation *v = rig_capability(d, RIG_VULKAN_VALIDATION);
  assert_non_null(v);
  assert_int_equal(atomic_load(&v->errors), 0); /* the layer found nothing */
  ok(rig_close(d));
  rig_device_release(d);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- facts and opening ----------------------------------------------------- */

static void facts(void **st) {
  rig_device *d = open_dev("");
  assert_true(rig_computes(d));
  assert_false(rig_runs_on_host(d));
  assert_true(rig_arch(d)[0] != 0);
  uint64_t a = rig_alignment(d);
  assert_true(a >= RIG_WORD && (a & (a - 1)) == 0);
  assert_true(rig_budget(d) > 0);
  assert_false(rig_cache_bytes(d, NULL));              /* Vulkan states none */
  const char *bus = rig_bus(d);
  if (bus)
    assert_int_equal(strlen(bus), 12);
  uint64_t s = 1;
  ok(rig_signaled(d, &s));
  assert_int_equal(s, rig_submitted(d));
  const rig_vulkan_validation *v = rig_capability(d, RIG_VULKAN_VALIDATION);
  assert_non_null(v);
  const char *want = getenv("RIG_VULKAN_VALIDATE");
  if (want && strcmp(want, "0") != 0 && !v->active)
    print_message("validation asked for, but the layer is not installed\n");
  close_dev(d);
}

static void open_refusals(void **st) {
  rig_device *d = NULL;
  assert_int_equal(rig_open("vulkan:99", &d), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_last_error()->message, "no Vulkan device 99"));
  assert_null(d);
  assert_int_equal(rig_open("vulkan:zero", &d), RIG_INVALID);
  assert_non_null(strstr(rig_last_error()->message, "is not N"));
  assert_int_equal(rig_open("vulkan:0,colour=blue", &d), RIG_INVALID);
  assert_null(d);
}

/* ---- fills and copies ---------------------------------------------------------- */

#define LEN 40

/* Fills every range [off, off + len) of a 40-byte buffer with each pattern
 * size, and checks every byte: vkCmdFillBuffer takes whole words only. */
static void fills_on(const char *options) {
  rig_device *d = open_dev(options);
  rig_buffer *b;
  ok(rig_buffer_create(d, LEN, &b));
  const uint32_t pattern = 0x44332211u;
  const uint8_t *pat = (const uint8_t *)&pattern;
  for (uint32_t pb = 1; pb <= 4; pb *= 2)
    for (size_t off = 0; off < 8; off++)
      for (size_t len = 0; off + len <= LEN; len += pb * (len < 12 ? 1 : 5)) {
        rig_buffer *v;
        uint8_t got[LEN];
        ok(rig_buffer_fill(b, 0xee, 1));
        ok(rig_buffer_view(b, off, len, RIG_READ_WRITE, &v));
        ok(rig_buffer_fill(v, pattern, pb));
        ok(rig_buffer_get(b, 0, got, LEN));
        for (size_t i = 0; i < LEN; i++) {
          uint8_t want = i >= off && i < off + len ? pat[(i - off) % pb] : 0xee;
          if (got[i] != want)
            fail_msg("%s: pattern of %u at [%zu, +%zu): byte %zu is %02x, want %02x", name,
                     pb, off, len, i, got[i], want);
        }
        rig_buffer_release(v);
      }
  rig_buffer_release(b);
  close_dev(d);
}

static void fills_every_alignment(void **st) { fills_on(""); }
static void fills_every_alignment_staged(void **st) { fills_on(",host=0"); }

/* One submission of many unaligned fills and copies: its parts run in
 * order, each after the one before (parts of one queue). */
static void parts_in_order(void **st) {
  rig_device *d = open_dev(",host=0");
  rig_buffer *a, *b, *v1, *v2;
  ok(rig_buffer_create(d, 64, &a));
  ok(rig_buffer_create(d, 64, &b));
  ok(rig_buffer_view(a, 1, 12, RIG_READ_WRITE, &v1));
  ok(rig_buffer_view(b, 3, 12, RIG_READ_WRITE, &v2));
  rig_part parts[5] = {
      rig_part_fill(1, 0xcc, 1),       /* b = 0xcc */
      rig_part_fill(0, 0, 1),          /* a = 0 */
      rig_part_fill(2, 0xa1b2, 2),     /* a[1..13) = b2 a1 b2 ... */
      rig_part_copy(2, 3),             /* b[3..15) = a[1..13) */
      rig_part_fill(2, 0x77, 1),       /* a[1..13) = 0x77, after the copy read it */
  };
  rig_submission *s;
  rig_run *run;
  rig_point p;
  ok(rig_submission_make(d, parts, 5, &s));
  ok(rig_submission_take(s, &run));
  rig_buffer *bufs[4] = {a, b, v1, v2};
  ok(rig_submit(run, bufs, 4, NULL, 0, &p));
  ok(rig_point_wait(p));
  uint8_t ga[64], gb[64];
  ok(rig_buffer_get(a, 0, ga, 64));
  ok(rig_buffer_get(b, 0, gb, 64));
  for (int i = 0; i < 64; i++) {
    assert_int_equal(ga[i], i >= 1 && i < 13 ? 0x77 : 0);
    uint8_t want = i >= 3 && i < 15 ? ((i - 3) % 2 ? 0xa1 : 0xb2) : 0xcc;
    if (gb[i] != want)
      fail_msg("b[%d] is %02x, want %02x", i, gb[i], want);
  }
  rig_submission_release(s);
  rig_buffer_release(v1);
  rig_buffer_release(v2);
  rig_buffer_release(a);
  rig_buffer_release(b);
  close_dev(d);
}

/* Copies of unaligned ranges between device buffers (vkCmdCopyBuffer),
 * and between the host and memory it does not address (staging). */
static void copies_unaligned(void **st) {
  rig_device *d = open_dev(",host=0");
  enum { N = 100003 };
  uint8_t *in = malloc(N), *out = malloc(N);
  for (size_t i = 0; i < N; i++)
    in[i] = (uint8_t)(i * 13 + i / 256);
  rig_buffer *a, *b, *va, *vb;
  ok(rig_buffer_create(d, N, &a));
  ok(rig_buffer_create(d, N, &b));
  assert_null(rig_buffer_host_address(a));           /* host=0: staging */
  ok(rig_buffer_put(a, 0, in, N));
  ok(rig_buffer_fill(b, 0, 1));
  ok(rig_buffer_view(a, 3, N - 10, RIG_READ, &va));
  ok(rig_buffer_view(b, 5, N - 10, RIG_READ_WRITE, &vb));
  ok(rig_buffer_copy(va, vb));
  ok(rig_buffer_get(b, 0, out, N));
  for (size_t i = 0; i < N; i++) {
    uint8_t want = i >= 5 && i < 5 + N - 10 ? in[i - 2] : 0;
    if (out[i] != want)
      fail_msg("byte %zu is %02x, want %02x", i, out[i], want);
  }
  ok(rig_buffer_get(va, 7, out, 11));
  assert_memory_equal(out, in + 10, 11);
  rig_buffer_release(va);
  rig_buffer_release(vb);
  rig_buffer_release(a);
  rig_buffer_release(b);
  free(in);
  free(out);
  close_dev(d);
}

/* ---- memory kinds and borrows ----------------------------------------------------- */

static void kinds(void **st) {
  rig_device *d = open_dev(",host=0");
  rig_buffer *dev, *mapped, *pinned;
  ok(rig_buffer_create_kind(d, 4096, RIG_KIND_DEVICE, &dev));
  ok(rig_buffer_create_kind(d, 4096, RIG_KIND_MAPPED, &mapped));
  ok(rig_buffer_create_kind(d, 4096, RIG_KIND_PINNED, &pinned));
  assert_null(rig_buffer_host_address(dev));
  uint8_t *m = rig_buffer_host_address(mapped), *p = rig_buffer_host_address(pinned);
  assert_non_null(m);
  assert_non_null(p);
  assert_int_equal((uintptr_t)m % rig_alignment(d), 0);
  ok(rig_buffer_fill(mapped, 0x31, 1));               /* the device writes, the host reads */
  ok(rig_buffer_wait(mapped, RIG_READ));
  for (int i = 0; i < 4096; i++)
    assert_int_equal(m[i], 0x31);
  ok(rig_buffer_copy(mapped, dev));
  ok(rig_buffer_copy(dev, pinned));
  ok(rig_buffer_wait(pinned, RIG_READ));
  for (int i = 0; i < 4096; i++)
    assert_int_equal(p[i], 0x31);
  uint64_t before = rig_allocated(d);
  rig_buffer_release(dev);
  rig_buffer_release(mapped);
  rig_buffer_release(pinned);
  ok(rig_free_cache(d));
  assert_true(rig_allocated(d) < before);
  close_dev(d);
}

/* Host memory borrowed through VK_EXT_external_memory_host: the device's
 * fill lands in the host's buffer, with no copy. */
static void borrows(void **st) {
  rig_device *d = open_dev(",host=0"), *m;
  if (!rig_reaches(d, rig_host())) {
    close_dev(d);
    skip(); /* no VK_EXT_external_memory_host */
  }
  ok(rig_memory_device("vk-borrow", &m));
  rig_device *owners[2] = {rig_host(), m};
  for (int k = 0; k < 2; k++) {
    rig_buffer *h, *on, *dev;
    ok(rig_buffer_create(owners[k], 65536 + 20, &h));  /* on a page */
    ok(rig_buffer_fill(h, 0x10, 1));
    ok(rig_buffer_borrow(d, h, &on));
    rig_buffer *v;
    ok(rig_buffer_view(on, 7, 30001, RIG_READ_WRITE, &v));
    ok(rig_buffer_fill(v, 0x6b, 1));
    rig_point p;
    ok(rig_buffer_create(d, 65536 + 20, &dev));
    ok(rig_buffer_submit_copy(on, dev, &p));           /* runs on d, from host memory */
    rig_device *runner = rig_point_device(p);
    assert_ptr_equal(runner, d);
    rig_device_release(runner);
    uint8_t *got = malloc(65536 + 20);
    ok(rig_buffer_get(h, 0, got, 65536 + 20));
    for (size_t i = 0; i < 65536 + 20; i++)
      if (got[i] != (i >= 7 && i < 7 + 30001 ? 0x6b : 0x10))
        fail_msg("host byte %zu is %02x", i, got[i]);
    memset(got, 0, 65536 + 20);
    ok(rig_buffer_get(dev, 0, got, 65536 + 20));
    assert_int_equal(got[6], 0x10);
    assert_int_equal(got[7], 0x6b);
    assert_int_equal(got[30007], 0x6b);
    assert_int_equal(got[30008], 0x10);
    free(got);
    rig_buffer_release(v);
    rig_buffer_release(on);
    rig_buffer_release(dev);
    rig_buffer_release(h);
  }
  ok(rig_close(m));
  rig_device_release(m);
  close_dev(d);
}

/* ---- the timeline ---------------------------------------------------------------- */

/* TL-8, TL-10: held work does not run until k values wait; k values go to
 * the queue together; a wait commits what it waits for (TL-9). */
static void commits_every_k(void **st) {
  rig_device *d = open_dev(",k=4");
  rig_buffer *b, *each[12];
  ok(rig_buffer_create(d, 256, &b));
  for (int i = 0; i < 12; i++) /* one each: no submit checks another's point */
    ok(rig_buffer_create(d, 256, &each[i]));
  uint64_t start = rig_submitted(d), seen = 0;
  rig_point p[12];
  for (int i = 0; i < 3; i++)
    ok(rig_buffer_submit_fill(each[i], (uint32_t)i, 1, &p[i]));
  sleep_ms(20);
  ok(rig_signaled(d, &seen));
  assert_int_equal(seen, start);                       /* TL-8: 3 < k held */
  for (int i = 3; i < 12; i++)
    ok(rig_buffer_submit_fill(each[i], (uint32_t)i, 1, &p[i]));
  double deadline = now_s() + 60;                      /* a bound, not a measure */
  while (seen < start + 12 && now_s() < deadline) {
    ok(rig_signaled(d, &seen));                        /* commits nothing (TL-24) */
    sleep_ms(1);
  }
  assert_int_equal(seen, start + 12);                  /* TL-10: 4, 8 and 12 sent */
  rig_point last;
  ok(rig_buffer_submit_fill(b, 0x5e, 1, &last));
  ok(rig_point_wait(last));                            /* TL-9 */
  uint8_t got[256];
  ok(rig_buffer_get(b, 0, got, 256));
  assert_int_equal(got[255], 0x5e);
  for (int i = 0; i < 12; i++)
    rig_buffer_release(each[i]);
  rig_buffer_release(b);
  close_dev(d);
}

struct worker {
  rig_device *d;
  int id;
  const char *failed;
};

static void *work(void *arg) {
  struct worker *w = arg;
  rig_buffer *a, *b;
  if (rig_buffer_create(w->d, 1000, &a) || rig_buffer_create(w->d, 1000, &b))
    return (w->failed = "create"), NULL;
  for (int i = 0; i < 150 && !w->failed; i++) {
    uint8_t got[1000];
    if (rig_buffer_fill(a, (uint32_t)(w->id * 16 + i), 1) || rig_buffer_copy(a, b) ||
        rig_buffer_get(b, 0, got, 1000))
      w->failed = rig_last_error()->message;
    else if (got[0] != (uint8_t)(w->id * 16 + i) || got[999] != got[0])
      w->failed = "wrong bytes";
  }
  rig_buffer_release(a);
  rig_buffer_release(b);
  return NULL;
}

/* Submits and waits from 4 threads at once: values in acceptance order. */
static void threads(void **st) {
  rig_device *d = open_dev(",host=0");
  pthread_t t[4];
  struct worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){d, i, NULL};
    pthread_create(&t[i], NULL, work, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    if (w[i].failed)
      fail_msg("thread %d: %s", i, w[i].failed);
  }
  close_dev(d);
}

/* ---- loss and the stop ----------------------------------------------------------- */

/* A failed submit loses the device with the driver's message; its stop
 * ends the queue; its memory comes back; an open of the name opens a new
 * device that works (OPEN-3, LOSS-1, STOP-1). */
static void loss(void **st) {
  const char *n = named(",fault_nth=3,host=0");
  rig_device *d;
  ok(rig_open(n, &d));
  rig_buffer *a, *b;
  ok(rig_buffer_create(d, 4096, &a));
  ok(rig_buffer_create(d, 4096, &b));
  rig_point p1, p2, p3 = RIG_POINT_NONE;
  ok(rig_buffer_submit_fill(a, 1, 1, &p1));
  ok(rig_buffer_submit_fill(b, 2, 1, &p2));           /* held: not yet committed */
  assert_int_equal(rig_buffer_submit_copy(a, b, &p3), RIG_LOST);
  assert_non_null(strstr(rig_last_error()->message, "injected fault at"));
  assert_non_null(rig_lost(d));
  uint8_t byte;
  assert_int_equal(rig_buffer_get(a, 0, &byte, 1), RIG_LOST);
  rig_buffer_release(a);
  rig_buffer_release(b);
  ok(rig_close(d));                                   /* runs the owed stop */
  assert_int_equal(rig_allocated(d), 0);              /* its memory came back */
  rig_device_release(d);
  ok(rig_open(n, &d));                                /* a new device of the name */
  ok(rig_buffer_create(d, 64, &a));
  ok(rig_buffer_fill(a, 9, 1));
  ok(rig_buffer_get(a, 0, &byte, 1));
  assert_int_equal(byte, 9);
  rig_buffer_release(a);
  close_dev(d);
}

/* A device closed with work held and memory out: close waits for the work,
 * the stop ends the queue, and the memory goes back to the driver. */
static void close_with_memory_out(void **st) {
  rig_device *d = open_dev(",k=100");
  rig_buffer *a;
  ok(rig_buffer_create(d, 1 << 20, &a));
  rig_point p;
  ok(rig_buffer_submit_fill(a, 3, 1, &p));
  ok(rig_close(d));
  assert_true(rig_point_reached(p));                  /* close waited for it */
  rig_buffer_release(a);
  rig_device_release(d);
}

/* A buffer of no bytes costs nothing and takes no Vulkan object. */
static void empty_buffers(void **st) {
  rig_device *d = open_dev("");
  ok(rig_free_cache(d));
  uint64_t before = rig_allocated(d);
  rig_buffer *b, *c;
  ok(rig_buffer_create(d, 0, &b));
  ok(rig_buffer_create(d, 0, &c));
  assert_int_equal(rig_allocated(d), before);
  ok(rig_buffer_copy(b, c));
  ok(rig_buffer_fill(b, 1, 1));
  rig_buffer_release(b);
  rig_buffer_release(c);
  close_dev(d);
}

static int setup(void **st) {
  const char *e = getenv("RIG_VK_DEVICE");
  snprintf(base, sizeof base, "%s", e && *e ? e : "vulkan:0");
  rig_device *d = NULL;
  if (rig_open(base, &d) != RIG_OK) {
    rig_status s = rig_last_error()->status;
    printf("%s %s does not open here: %s\n", s == RIG_UNAVAILABLE ? "skip:" : "error:", base,
           rig_last_error()->message);
    exit(s == RIG_UNAVAILABLE ? 77 : 1);
  }
  ok(rig_close(d));
  rig_device_release(d);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(facts),
      cmocka_unit_test(open_refusals),
      cmocka_unit_test(fills_every_alignment),
      cmocka_unit_test(fills_every_alignment_staged),
      cmocka_unit_test(parts_in_order),
      cmocka_unit_test(copies_unaligned),
      cmocka_unit_test(kinds),
      cmocka_unit_test(borrows),
      cmocka_unit_test(commits_every_k),
      cmocka_unit_test(threads),
      cmocka_unit_test(loss),
      cmocka_unit_test(close_with_memory_out),
      cmocka_unit_test(empty_buffers),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
