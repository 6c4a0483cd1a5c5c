/* test_vulkan.c: the Vulkan driver's own tests (suite driver-vulkan), on
 * "vulkan:0" (RIG_VK_DEVICE names another): its facts, fills of every
 * alignment and pattern, copies through staging (host=0), the memory
 * kinds, borrows of host memory, its commits every k values (TL-8, TL-10),
 * loss and the stop, launches of SPIR-V kernels (tests/kernels/vulkan), and
 * no validation errors where the layer runs.
 *
 * Rules: RUN-1..8 OBJ-3..6 ORDER-3 LAUNCH-6..8 LAUNCH-13 LAUNCH-14 ERR-26
 * TL-8..10 LOSS-1 STOP-1 SUBMIT-2 SUBMIT-3 ORDER-8 ORDER-10 SUBS-1 SUBMIT-7
 * TL-9 OPEN-20..23 LOSS-6 LOSS-14
 *
 * A machine with no Vulkan device skips (exit 77) and says why.
 * RIG_TEST_FILTER=NAME runs only the tests whose names match (cmocka's
 * filter), e.g. to find which one a leak report comes from.
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
#include <stdatomic.h>

#include <rig/rig.h>

#include "check.h"
#include "child.h"
#include <rig/drivers/rig-vulkan.h>
#include "test_vk.h"

/* Groups of 64 threads of spin.comp: about 0.5 s on lavapipe with two
 * cores, so that a submit returns well before the launch ends. */
#ifndef SPIN_GROUPS
#define SPIN_GROUPS 256u
#endif

/* The rounds of a spin that takes native rounds here: a tenth of them
 * under an emulator (the arm64 run under qemu-aarch64, docs/arm64.md),
 * where lavapipe's code runs emulated and 60000 rounds took 44 s: a tenth
 * still outlasts a submit many times over. */
static uint32_t spin_rounds(uint32_t native) {
  return child_emulator() ? native / 10 : native;
}

/* ---- facts and opening ----------------------------------------------------- */

static void facts(void **st) {
  rig_device *d = open_under_test("");
  assert_true(rig_device_computes(d));
  assert_false(rig_device_runs_on_host(d));
  assert_true(rig_device_arch(d)[0] != 0);
  uint64_t a = rig_device_alignment(d);
  assert_true(a >= RIG_WORD && (a & (a - 1)) == 0);
  assert_true(rig_device_budget(d) > 0);
  assert_false(rig_device_cache_bytes(d, NULL));              /* Vulkan states none */
  const char *bus = rig_device_bus(d);
  if (bus)
    assert_int_equal(strlen(bus), 12);
  uint64_t s = 1;
  ok(rig_device_signaled(d, &s));
  assert_int_equal(s, rig_device_submitted(d));
  const rig_vulkan_validation *v = rig_device_capability(d, RIG_VULKAN_VALIDATION);
  assert_non_null(v);
  const char *want = getenv("RIG_VULKAN_VALIDATE");
  if (want && strcmp(want, "0") != 0 && !v->active)
    print_message("validation asked for, but the layer is not installed\n");
  vk_close_dev(d);
}

static void open_refusals(void **st) {
  rig_device *d = NULL;
  assert_int_equal(rig_device_open("vulkan:99", &d), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "no Vulkan device 99"));
  assert_null(d);
  assert_int_equal(rig_device_open("vulkan:zero", &d), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "is not N"));
  assert_int_equal(rig_device_open("vulkan:0,colour=blue", &d), RIG_INVALID);
  assert_null(d);
}

/* The device's arguments are read strictly, by librig-edge's parser: each
 * bad one is RIG_INVALID with a message naming its key, and opens nothing
 * (k=abc was k=1, validate=yes 0 and host=2 1 before). */
static void arguments_are_strict(void **st) {
  static const struct { const char *name, *needle; } bad[] = {
      {"vulkan:0,k=abc", "k: 'abc' is not a decimal number"},
      {"vulkan:0,k=0", "k: 0 is out of range"},
      {"vulkan:0,k=99999999999", "k: 99999999999 is out of range"},
      {"vulkan:0,validate=yes", "validate: 'yes' is not one of 0|1|count"},
      {"vulkan:0,host=2", "host: '2' is not 0 or 1"},
      {"vulkan:0,share=", "share: empty value"},
      {"vulkan:0,fault_nth=-1", "fault_nth: '-1'"},
      {"vulkan:0,k=2,k=2", "k: given twice"},
      {"vulkan:0,colour=blue", "unknown key 'colour'"},
      {"vulkan:0,host", "'host' is not key=value"},
      {"vulkan:1x", "'1x' is not N"},
      {"vulkan:+0", "'+0' is not N"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    rig_device *d = NULL;
    rig_status s = rig_device_open(bad[i].name, &d);
    if (s != RIG_INVALID || !strstr(rig_error_last()->message, bad[i].needle))
      fail_msg("%s: %s '%s', want RIG_INVALID '%s'", bad[i].name, rig_status_name(s),
               rig_error_last()->message, bad[i].needle);
    assert_null(d);
  }
  rig_device *d = NULL; /* and good ones still open */
  ok(rig_device_open("vulkan:0,k=1,host=0,share=1,fault_nth=0", &d));
  vk_close_dev(d);
}

/* ---- fills and copies ---------------------------------------------------------- */

#define LEN 40

/* Fills every range [off, off + len) of a 40-byte buffer with each pattern
 * size, and checks every byte: vkCmdFillBuffer takes whole words only. */
static void fills_on(const char *options) {
  rig_device *d = open_under_test(options);
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
            fail_msg("%s: pattern of %u at [%zu, +%zu): byte %zu is %02x, want %02x",
                     device_under_test(options), pb, off, len, i, got[i], want);
        }
        rig_buffer_release(v);
      }
  rig_buffer_release(b);
  vk_close_dev(d);
}

static void fills_every_alignment(void **st) { fills_on(""); }
static void fills_every_alignment_staged(void **st) { fills_on(",host=0"); }

/* One submission of many unaligned fills and copies: its parts run in
 * order, each after the one before (parts of one queue). */
static void parts_in_order(void **st) {
  rig_device *d = open_under_test(",host=0");
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
  ok(rig_run_submit(run, bufs, 4, NULL, 0, &p));
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
  vk_close_dev(d);
}

/* Copies of unaligned ranges between device buffers (vkCmdCopyBuffer),
 * and between the host and memory it does not address (staging). */
static void copies_unaligned(void **st) {
  rig_device *d = open_under_test(",host=0");
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
  vk_close_dev(d);
}

/* ---- memory kinds and borrows ----------------------------------------------------- */

static void kinds(void **st) {
  rig_device *d = open_under_test(",host=0");
  rig_buffer *dev, *mapped, *pinned;
  ok(rig_buffer_create_kind(d, 4096, RIG_KIND_DEVICE, &dev));
  ok(rig_buffer_create_kind(d, 4096, RIG_KIND_MAPPED, &mapped));
  ok(rig_buffer_create_kind(d, 4096, RIG_KIND_PINNED, &pinned));
  assert_null(rig_buffer_host_address(dev));
  uint8_t *m = rig_buffer_host_address(mapped), *p = rig_buffer_host_address(pinned);
  assert_non_null(m);
  assert_non_null(p);
  assert_int_equal((uintptr_t)m % rig_device_alignment(d), 0);
  ok(rig_buffer_fill(mapped, 0x31, 1));               /* the device writes, the host reads */
  ok(rig_buffer_wait(mapped, RIG_READ));
  for (int i = 0; i < 4096; i++)
    assert_int_equal(m[i], 0x31);
  ok(rig_buffer_copy(mapped, dev));
  ok(rig_buffer_copy(dev, pinned));
  ok(rig_buffer_wait(pinned, RIG_READ));
  for (int i = 0; i < 4096; i++)
    assert_int_equal(p[i], 0x31);
  uint64_t before = rig_device_allocated(d);
  rig_buffer_release(dev);
  rig_buffer_release(mapped);
  rig_buffer_release(pinned);
  ok(rig_device_free_cache(d));
  assert_true(rig_device_allocated(d) < before);
  vk_close_dev(d);
}

/* Host memory borrowed through VK_EXT_external_memory_host: the device's
 * fill lands in the host's buffer, with no copy. */
static void borrows(void **st) {
  rig_device *d = open_under_test(",host=0"), *m;
  if (!rig_device_reaches(d, rig_device_host())) {
    vk_close_dev(d);
    skip(); /* no VK_EXT_external_memory_host */
  }
  ok(rig_device_open_memory("vk-borrow", &m));
  rig_device *owners[2] = {rig_device_host(), m};
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
  ok(rig_device_close(m));
  rig_device_release(m);
  vk_close_dev(d);
}

/* ---- the timeline ---------------------------------------------------------------- */

/* TL-8, TL-10: held work does not run until k values wait; k values go to
 * the queue together; a wait commits what it waits for (TL-9). The first
 * value finds the device idle and goes at its submit (COMMIT_IDLE); the
 * next two, submitted while nothing has read it reached, are held. */
static void commits_every_k(void **st) {
  rig_device *d = open_under_test(",k=4");
  rig_buffer *b, *each[12];
  ok(rig_buffer_create(d, 256, &b));
  for (int i = 0; i < 12; i++) /* one each: no submit checks another's point */
    ok(rig_buffer_create(d, 256, &each[i]));
  uint64_t start = rig_device_submitted(d), seen = 0;
  rig_point p[12];
  for (int i = 0; i < 3; i++)
    ok(rig_buffer_submit_fill(each[i], (uint32_t)i, 1, &p[i]));
  sleep_ms(20);
  ok(rig_device_signaled(d, &seen));
  assert_int_equal(seen, start + 1);                   /* TL-8: 2 < k held */
  for (int i = 3; i < 12; i++)
    ok(rig_buffer_submit_fill(each[i], (uint32_t)i, 1, &p[i]));
  double deadline = now_s() + 60;                      /* a bound, not a measure */
  while (seen < start + 12 && now_s() < deadline) {
    ok(rig_device_signaled(d, &seen));                        /* commits nothing (TL-24) */
    sleep_ms(1);
  }
  assert_int_equal(seen, start + 12);                  /* 4 (idle), then 8, 12 (TL-10) */
  rig_point last;
  ok(rig_buffer_submit_fill(b, 0x5e, 1, &last));
  ok(rig_point_wait(last));                            /* TL-9 */
  uint8_t got[256];
  ok(rig_buffer_get(b, 0, got, 256));
  assert_int_equal(got[255], 0x5e);
  for (int i = 0; i < 12; i++)
    rig_buffer_release(each[i]);
  rig_buffer_release(b);
  vk_close_dev(d);
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
      w->failed = rig_error_last()->message;
    else if (got[0] != (uint8_t)(w->id * 16 + i) || got[999] != got[0])
      w->failed = "wrong bytes";
  }
  rig_buffer_release(a);
  rig_buffer_release(b);
  return NULL;
}

/* Submits and waits from 4 threads at once: values in acceptance order. */
static void threads(void **st) {
  rig_device *d = open_under_test(",host=0");
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
  vk_close_dev(d);
}

/* ---- loss and the stop ----------------------------------------------------------- */

/* A failed submit loses the device with the driver's message; its stop
 * ends the queue; its memory comes back; an open of the name opens a new
 * device that works (OPEN-3, LOSS-1, STOP-1). */
static void loss(void **st) {
  const char *n = device_under_test(",fault_nth=3,host=0");
  rig_device *d;
  ok(rig_device_open(n, &d));
  rig_buffer *a, *b;
  ok(rig_buffer_create(d, 4096, &a));
  ok(rig_buffer_create(d, 4096, &b));
  rig_point p1, p2, p3 = RIG_POINT_NONE;
  ok(rig_buffer_submit_fill(a, 1, 1, &p1));
  ok(rig_buffer_submit_fill(b, 2, 1, &p2));           /* held: not yet committed */
  assert_int_equal(rig_buffer_submit_copy(a, b, &p3), RIG_LOST);
  assert_non_null(strstr(rig_error_last()->message, "injected fault at"));
  assert_non_null(rig_device_lost(d));
  uint8_t byte;
  assert_int_equal(rig_buffer_get(a, 0, &byte, 1), RIG_LOST);
  rig_buffer_release(a);
  rig_buffer_release(b);
  ok(rig_device_close(d));                                   /* runs the owed stop */
  assert_int_equal(rig_device_allocated(d), 0);              /* its memory came back */
  rig_device_release(d);
  ok(rig_device_open(n, &d));                                /* a new device of the name */
  ok(rig_buffer_create(d, 64, &a));
  ok(rig_buffer_fill(a, 9, 1));
  ok(rig_buffer_get(a, 0, &byte, 1));
  assert_int_equal(byte, 9);
  rig_buffer_release(a);
  vk_close_dev(d);
}

/* A device closed with work held and memory out: close waits for the work,
 * the stop ends the queue, and the memory goes back to the driver. */
static void close_with_memory_out(void **st) {
  rig_device *d = open_under_test(",k=100");
  rig_buffer *a;
  ok(rig_buffer_create(d, 1 << 20, &a));
  rig_point p;
  ok(rig_buffer_submit_fill(a, 3, 1, &p));
  ok(rig_device_close(d));
  assert_true(rig_point_reached(p));                  /* close waited for it */
  rig_buffer_release(a);
  rig_device_release(d);
}

/* A buffer of no bytes costs nothing and takes no Vulkan object. */
static void empty_buffers(void **st) {
  rig_device *d = open_under_test("");
  ok(rig_device_free_cache(d));
  uint64_t before = rig_device_allocated(d);
  rig_buffer *b, *c;
  ok(rig_buffer_create(d, 0, &b));
  ok(rig_buffer_create(d, 0, &c));
  assert_int_equal(rig_device_allocated(d), before);
  ok(rig_buffer_copy(b, c));
  ok(rig_buffer_fill(b, 1, 1));
  rig_buffer_release(b);
  rig_buffer_release(c);
  vk_close_dev(d);
}

/* ---- launches ---------------------------------------------------------------------- */

/* The bytes of kernel NAME.spv, built from tests/kernels/vulkan/NAME.comp
 * into $RIG_KERNELS/kernels/vulkan; the caller frees them. */
static void *kernel_bytes(const char *kernel, size_t *n) {
  char file[128];
  snprintf(file, sizeof file, "kernels/vulkan/%s.spv", kernel);
  return kernel_file_ok(file, n);
}

static rig_image *load_kernel(rig_device *d, const char *kernel) {
  size_t n;
  void *b = kernel_bytes(kernel, &n);
  rig_image *im = NULL;
  ok(rig_image_load(d, b, n, &im));
  free(b);
  return im;
}

/* A submission on d of one launch of kernel NAME (its entry NAME) over
 * refs with a block of params bytes; the image goes, the submission holds
 * its code (RUN-8). */
static rig_submission *launch_of(rig_device *d, const char *kernel, const rig_ref *refs,
                                 uint32_t nrefs, uint32_t params) {
  rig_image *im = load_kernel(d, kernel);
  rig_submission *s = launch_make_ok(d, resolve_ok(im, kernel), refs, nrefs, params);
  rig_image_release(im);
  return s;
}

/* fill.comp's parameters in block k: word i of its buffer becomes
 * pattern + i * step for i < n. */
static void fill_params(rig_run *run, uint32_t k, uint32_t pattern, uint32_t step, uint32_t n) {
  ok(rig_run_int32(run, k, 8, (int32_t)pattern));
  ok(rig_run_int32(run, k, 12, (int32_t)step));
  ok(rig_run_int32(run, k, 16, (int32_t)n));
}

/* A launch of fill.comp: word i of slot `slot` becomes pattern + i * step
 * for i < n, in groups of 64. */
static rig_part fill_launch(rig_function *f, rig_ref *ref, uint32_t slot) {
  *ref = rig_ref_write(slot, 0);
  return rig_part_launch(f, ref, 1, 24);
}

static void fill_block(rig_run *run, uint32_t k, uint32_t pattern, uint32_t step, uint32_t n) {
  grid_ok(run, k, (n + 63) / 64, 64);
  fill_params(run, k, pattern, step, n);
}

/* The host's value of spin.comp's recurrence after `steps` steps of
 * x -> a x + c from x, by squaring the affine map. */
static uint32_t spin_value(uint32_t x, uint64_t steps) {
  uint32_t a = 1664525u, c = 1013904223u;
  for (; steps; steps >>= 1) {
    if (steps & 1)
      x = a * x + c;
    c = a * c + c; /* the map twice: a (a x + c) + c */
    a = a * a;
  }
  return x;
}

/* A run of s, spin.comp's, set for SPIN_GROUPS groups of 64 threads, each
 * running `rounds` steps from seed plus its number. */
static rig_run *spin_run(rig_submission *s, uint32_t seed, uint32_t rounds) {
  rig_run *run = take_ok(s);
  grid_ok(run, 0, SPIN_GROUPS, 64);
  ok(rig_run_int32(run, 0, 8, (int32_t)rounds));
  ok(rig_run_int32(run, 0, 12, (int32_t)seed));
  return run;
}

/* Asserts x holds what spin.comp's threads wrote from seed; where not,
 * fails saying which word, and what it means (why). */
static void expect_spin(rig_buffer *x, uint32_t threads, uint32_t seed, uint32_t rounds,
                        const char *why) {
  uint32_t *got = malloc(threads * 4);
  ok(rig_buffer_get(x, 0, got, threads * 4));
  for (uint32_t k = 0; k < threads; k++)
    if (got[k] != spin_value(seed + k, rounds))
      fail_msg("word %u is %08x, want %08x: %s", k, got[k], spin_value(seed + k, rounds), why);
  free(got);
}

/* OBJ-3..6, RUN-1..7: the seed's add example on the device, exactly as
 * tests/unit/test_launch.c runs it on the host: z = x + y over n floats in
 * 64 groups of (n + 63) / 64 threads, then a second run of the same
 * submission with a new n (and so a new group size: a pipeline of its own).
 * The puts of x and y come before the launch that reads them (ORDER-3), the
 * get of z after the launch that writes it. */
static void add_example_on(const char *options) {
  rig_device *d = open_under_test(options);
  rig_image *image = load_kernel(d, "add");                  /* RUN-1 */
  rig_function *add = resolve_ok(image, "add");              /* RUN-4 */
  assert_string_equal(rig_function_name(add), "add");
  assert_ptr_equal(rig_function_image(add), image);
  assert_ptr_equal(rig_image_device(image), d);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)}; /* OBJ-4 */
  rig_submission *s = launch_make_ok(d, add, refs, 3, 32);
  rig_image_release(image); /* the submission holds the code (RUN-8) */
  for (int64_t n = 1000; n <= 4096; n += 3096) {
    float *xs = malloc(n * 4), *ys = malloc(n * 4), *zs = malloc(n * 4);
    add_example_inputs(xs, ys, zs, n);
    rig_buffer *x = vk_buffer_of(d, xs, n * 4), *y = vk_buffer_of(d, ys, n * 4),
               *z = vk_buffer_of(d, zs, n * 4);
    rig_point p = add_example_run(s, x, y, z, n);
    ok(rig_buffer_get(z, 0, zs, n * 4));                     /* follows the launch */
    assert_true(rig_point_reached(p));
    add_example_expect(zs, n, device_under_test(options));
    rig_buffer_release(x);
    rig_buffer_release(y);
    rig_buffer_release(z);
    free(xs);
    free(ys);
    free(zs);
  }
  rig_submission_release(s);
  vk_close_dev(d);
}

static void obj_3_6_the_add_example(void **st) { add_example_on(""); }
/* The same where the host addresses none of the device's memory: the puts
 * and the get go through staging, the refs are the same device addresses. */
static void obj_3_6_the_add_example_staged(void **st) { add_example_on(",host=0"); }

/* RUN-1, RUN-4, ERR-26: what loads and resolves, and what not. A module
 * that is not SPIR-V is the text's Error (RIG_UNAVAILABLE) and loses
 * nothing; an entry point the module lacks is None (NULL); a function
 * resolves once, to the same record. */
static void run_1_4_load_and_resolve(void **st) {
  rig_device *d = open_under_test("");
  rig_image *im = load_kernel(d, "add");
  rig_function *f = NULL;
  ok(rig_image_resolve(im, "no_such_entry", &f));
  assert_null(f);                                            /* None */
  ok(rig_image_resolve(im, "main", &f));                     /* renamed "add" at build */
  assert_null(f);
  rig_function *a = resolve_ok(im, "add"), *b = resolve_ok(im, "add");
  assert_ptr_equal(a, b);
  rig_image_release(im);
  size_t n;
  uint32_t *words = kernel_bytes("add", &n);
  rig_image *none = NULL;
  assert_int_equal(rig_image_load(d, "hello", 5, &none), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "no whole number of words"));
  uint32_t zeros[8] = {0};
  assert_int_equal(rig_image_load(d, zeros, sizeof zeros, &none), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "magic is not 0x07230203"));
  assert_int_equal(rig_image_load(d, words, 4 * 8, &none), RIG_UNAVAILABLE); /* cut in an instruction */
  assert_non_null(strstr(rig_error_last()->message, "runs past the module"));
  assert_int_equal(rig_image_load(d, words, 4 * 7, &none), RIG_UNAVAILABLE); /* header, a capability */
  assert_non_null(strstr(rig_error_last()->message, "no OpMemoryModel"));
  assert_null(none);
  assert_null(rig_device_lost(d));                                  /* ERR-26: d still serves */
  free(words);
  im = load_kernel(d, "fill");
  resolve_ok(im, "fill");
  rig_image_release(im);
  vk_close_dev(d);
}

/* RUN-8, RECLAIM-17: the code counts in the budget while the image lives,
 * and goes (unload) once no submission holds it and its work is done. */
static void run_8_code_goes_when_its_work_is_done(void **st) {
  rig_device *d = open_under_test("");
  ok(rig_device_free_cache(d));
  uint64_t before = rig_device_allocated(d);
  size_t n;
  void *bytes = kernel_bytes("fill", &n);
  rig_image *im;
  ok(rig_image_load(d, bytes, n, &im));
  free(bytes);
  assert_int_equal(rig_device_allocated(d), before + n);
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_make_ok(d, resolve_ok(im, "fill"), &ref, 1, 24);
  rig_image_release(im);
  rig_buffer *b;
  ok(rig_buffer_create(d, 256, &b));
  rig_run *run = take_ok(s);
  fill_block(run, 0, 7, 1, 64);
  rig_point p;
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  rig_submission_release(s);
  ok(rig_point_wait(p));
  for (int i = 0; i < 3 && rig_device_allocated(d) > before + 256 * 2; i++)
    ok(rig_device_free_cache(d));                                   /* moves: the code goes */
  rig_buffer_release(b);
  ok(rig_device_free_cache(d));
  assert_int_equal(rig_device_allocated(d), before);
  vk_close_dev(d);
}

/* ORDER-3 with launches: in one submission a launch follows a fill of its
 * buffer and a copy follows the launch; across submissions a copy follows
 * a launch's writes and a launch follows a host put. */
static void order_3_launches_among_copies_and_fills(void **st) {
  rig_device *d = open_under_test(",host=0");
  enum { W = 300, N = 200 }; /* the launch writes words [0, N) of W */
  rig_image *im = load_kernel(d, "fill");
  rig_function *f = resolve_ok(im, "fill");
  rig_ref ref;
  rig_part parts[3] = {rig_part_fill(0, 0xab, 1), fill_launch(f, &ref, 0), rig_part_copy(0, 1)};
  rig_submission *s;
  ok(rig_submission_make(d, parts, 3, &s));
  rig_image_release(im);
  rig_buffer *a, *b, *c;
  ok(rig_buffer_create(d, W * 4, &a));
  ok(rig_buffer_create(d, W * 4, &b));
  ok(rig_buffer_create(d, W * 4, &c));
  ok(rig_buffer_fill(b, 0, 1));
  rig_run *run;
  uint32_t k;
  ok(rig_submission_take(s, &run));
  ok(rig_submission_block(s, 1, &k));
  fill_block(run, k, 1000, 3, N);
  rig_buffer *bufs[2] = {a, b};
  rig_point p;
  ok(rig_run_submit(run, bufs, 2, NULL, 0, &p));
  uint32_t got[W];
  ok(rig_buffer_get(b, 0, got, sizeof got));
  for (uint32_t i = 0; i < W; i++)
    if (got[i] != (i < N ? 1000 + 3 * i : 0xababababu))
      fail_msg("one submission: word %u is %08x", i, got[i]);
  /* Across submissions: the launch alone, then a copy of its buffer. */
  rig_part alone = fill_launch(f, &ref, 0);
  rig_submission *s2;
  ok(rig_submission_make(d, &alone, 1, &s2));
  ok(rig_submission_take(s2, &run));
  fill_block(run, 0, 7, 1, N);
  ok(rig_run_submit(run, &c, 1, NULL, 0, &p));
  ok(rig_buffer_copy(c, a));                                 /* follows the launch's writes */
  ok(rig_buffer_get(a, 0, got, sizeof got));
  for (uint32_t i = 0; i < N; i++)
    assert_int_equal(got[i], 7 + i);
  /* A put, then a launch that writes part of the same buffer. */
  uint32_t ones[W];
  for (uint32_t i = 0; i < W; i++)
    ones[i] = 1;
  ok(rig_buffer_put(c, 0, ones, sizeof ones));
  ok(rig_submission_take(s2, &run));
  fill_block(run, 0, 50, 0, N / 2);
  ok(rig_run_submit(run, &c, 1, NULL, 0, &p));
  ok(rig_buffer_get(c, 0, got, sizeof got));
  for (uint32_t i = 0; i < W; i++)
    assert_int_equal(got[i], i < N / 2 ? 50 : 1);
  rig_submission_release(s);
  rig_submission_release(s2);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_buffer_release(c);
  vk_close_dev(d);
}

/* LAUNCH-6..8: grids of one, two and three axes, groups of any shape (the
 * kernel's group size is specialization constants): each thread runs
 * once. 70000 groups on one axis are more than lavapipe's
 * maxComputeWorkGroupCount (65535): the driver splits the launch. */
static void launch_6_8_each_thread_once(void **st) {
  rig_device *d = open_under_test("");
  rig_ref ref = rig_ref_read_write(0, 0);
  rig_submission *s = launch_of(d, "ids", &ref, 1, 24);
  const uint32_t shapes[][6] = {
      {1, 1, 1, 1, 1, 1}, {3, 2, 2, 4, 2, 2}, {5, 1, 1, 64, 1, 1}, {2, 3, 1, 1, 8, 1},
      {70000, 1, 1, 1, 1, 1}, {1, 1, 3, 2, 2, 5},
  };
  for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
    const uint32_t *g = shapes[c], *t = shapes[c] + 3;
    uint32_t w = g[0] * t[0], h = g[1] * t[1], dz = g[2] * t[2], total = w * h * dz;
    rig_buffer *b;
    ok(rig_buffer_create(d, total * 4, &b));
    ok(rig_buffer_fill(b, 0, 1));
    rig_run *run = take_ok(s);
    ok(rig_run_groups(run, 0, g[0], g[1], g[2]));
    ok(rig_run_threads(run, 0, t[0], t[1], t[2]));
    ok(rig_run_int32(run, 0, 8, (int32_t)w));
    ok(rig_run_int32(run, 0, 12, (int32_t)h));
    ok(rig_run_int32(run, 0, 16, (int32_t)dz));
    rig_point p;
    ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
    uint32_t *got = malloc(total * 4);
    ok(rig_buffer_get(b, 0, got, total * 4));
    for (uint32_t i = 0; i < total; i++)
      if (got[i] != i + 1)
        fail_msg("shape %zu: word %u is %u (a thread ran %s)", c, i, got[i],
                 got[i] ? "more than once" : "never");
    free(got);
    rig_buffer_release(b);
  }
  rig_submission_release(s);
  vk_close_dev(d);
}

/* A parameter block over the 128 bytes of push constants: the driver puts
 * it in a buffer and pushes its address. Two such launches in one
 * submission, three runs of it held together (k = 8): each reads its own
 * block. */
static void launch_params_over_push_constants(void **st) {
  rig_device *d = open_under_test("");
  rig_image *im = load_kernel(d, "sum");
  rig_function *f = resolve_ok(im, "sum");
  enum { BLOCK = 16 + 32 * 8 };
  rig_ref refs[2] = {rig_ref_write(0, 0), rig_ref_write(1, 0)};
  rig_part parts[2] = {rig_part_launch(f, &refs[0], 1, BLOCK),
                       rig_part_launch(f, &refs[1], 1, BLOCK)};
  rig_submission *s;
  ok(rig_submission_make(d, parts, 2, &s));
  rig_image_release(im);
  rig_buffer *out[6];
  rig_point p[3];
  for (int r = 0; r < 3; r++) {
    ok(rig_buffer_create(d, 8, &out[2 * r]));
    ok(rig_buffer_create(d, 8, &out[2 * r + 1]));
    rig_run *run = take_ok(s);
    for (uint32_t k = 0; k < 2; k++) {
      grid_ok(run, k, 1, 1);
      ok(rig_run_int64(run, k, 8, 32));
      for (int i = 0; i < 32; i++)
        ok(rig_run_int64(run, k, 16 + 8 * i, (int64_t)(1000 * r + 100 * k + i)));
    }
    ok(rig_run_submit(run, &out[2 * r], 2, NULL, 0, &p[r]));
  }
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 2; k++) {
      int64_t got;
      ok(rig_buffer_get(out[2 * r + k], 0, &got, 8));
      assert_int_equal(got, 32 * (1000 * r + 100 * k) + 31 * 32 / 2);
      rig_buffer_release(out[2 * r + k]);
    }
  rig_submission_release(s);
  vk_close_dev(d);
}

/* LAUNCH-13, LAUNCH-14 on this device: core refuses a grid with an axis of
 * zero or over 2^62 threads before the driver sees it; the device serves
 * on. */
static void launch_13_14_refused_before_the_driver(void **st) {
  rig_device *d = open_under_test("");
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_of(d, "fill", &ref, 1, 24);
  rig_buffer *b;
  ok(rig_buffer_create(d, 256, &b));
  ok(rig_buffer_fill(b, 0, 1));
  const uint64_t cases[][6] = {{0, 1, 1, 64, 1, 1}, {1, 1, 1, 64, 0, 1}, {1ull << 62, 1, 1, 2, 1, 1}};
  for (size_t c = 0; c < 3; c++) {
    rig_run *run = take_ok(s);
    ok(rig_run_groups(run, 0, cases[c][0], cases[c][1], cases[c][2]));
    ok(rig_run_threads(run, 0, cases[c][3], cases[c][4], cases[c][5]));
    rig_point p = 0;
    assert_int_equal(rig_run_submit(run, &b, 1, NULL, 0, &p), RIG_INVALID);
  }
  assert_null(rig_device_lost(d));
  uint8_t got[256];
  ok(rig_buffer_get(b, 0, got, 256));
  for (int i = 0; i < 256; i++)
    assert_int_equal(got[i], 0);                             /* never ran */
  rig_buffer_release(b);
  rig_submission_release(s);
  vk_close_dev(d);
}

/* VALID-20: what the driver cannot run, a group shape other than a fixed
 * LocalSize, and shared memory asked of a launch (a Vulkan kernel declares
 * its own), is refused by the driver's check before core takes a value:
 * RIG_INVALID with the reason, nothing run, the device not lost. */
static void valid_20_launch_the_driver_cannot_run(void **st) {
  for (int c = 0; c < 2; c++) {
    rig_device *d = open_under_test("");
    rig_ref ref = rig_ref_write(0, 0);
    rig_submission *s = launch_of(d, c == 0 ? "fixed" : "fill", &ref, 1, c == 0 ? 16 : 24);
    rig_buffer *b;
    ok(rig_buffer_create(d, 256, &b));
    rig_run *run;
    rig_point p;
    if (c == 0) { /* LocalSize 64 runs in groups of 64 */
      run = take_ok(s);
      grid_ok(run, 0, 1, 64);
      ok(rig_run_int32(run, 0, 8, 64));
      ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
      uint32_t w;
      ok(rig_buffer_get(b, 252, &w, 4));
      assert_int_equal(w, 64);
    }
    run = take_ok(s);
    grid_ok(run, 0, 2, 32);
    ok(rig_run_int32(run, 0, 8, 64));
    if (c == 1)
      ok(rig_run_shared(run, 0, 1024));
    uint64_t before = rig_device_submitted(d);
    assert_int_equal(rig_run_submit(run, &b, 1, NULL, 0, &p), RIG_INVALID);
    assert_non_null(strstr(rig_error_last()->message, c == 0 ? "fixed LocalSize 64x1x1"
                                                             : "bytes of shared memory"));
    assert_int_equal(rig_device_submitted(d), before);         /* no value taken */
    assert_null(rig_device_lost(d));                           /* nothing lost */
    ok(rig_buffer_fill(b, 0, 1));                       /* and it serves */
    rig_buffer_release(b);
    rig_submission_release(s);
    ok(rig_device_close(d));
    rig_device_release(d);
  }
}

/* PRE-8: the device runs work while the host goes on: with k = 1 the submit of a
 * launch that runs for a while (spin.comp over SPIN_GROUPS groups of 64)
 * hands it to the queue and returns before it ends; a wait waits for it,
 * and the host then reads what every thread wrote. */
static void launch_runs_asynchronously(void **st) {
  rig_device *d = open_under_test(",k=1");
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_of(d, "spin", &ref, 1, 16);
  const uint32_t threads = SPIN_GROUPS * 64, rounds = spin_rounds(60000);
  rig_buffer *b;
  ok(rig_buffer_create(d, threads * 4, &b));
  ok(rig_buffer_fill(b, 0, 1));
  rig_run *run = spin_run(s, 12345, rounds);
  rig_point p;
  double t0 = now_s();
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  bool early = rig_point_reached(p);
  double t1 = now_s();
  ok(rig_point_wait(p));
  double t2 = now_s();
  print_message("spin over %u threads: submit %.3f ms, then %.3f s to its end\n", threads,
                (t1 - t0) * 1e3, t2 - t1);
  assert_false(early);                                       /* submit did not wait */
  assert_true(rig_point_reached(p));
  expect_spin(b, threads, 12345, rounds, "a thread wrote the wrong word");
  rig_buffer_release(b);
  rig_submission_release(s);
  vk_close_dev(d);
}

/* ---- recorded command buffers kept for work that comes again --------------------- */

/* Asserts each of the n words of b is want + i * step. */
static void expect_words(rig_buffer *b, uint32_t n, uint32_t want, uint32_t step) {
  uint32_t got[64];
  assert_true(n <= 64);
  ok(rig_buffer_get(b, 0, got, n * 4));
  for (uint32_t i = 0; i < n; i++)
    if (got[i] != want + i * step)
      fail_msg("word %u is %08x, want %08x", i, got[i], want + i * step);
}

/* One run of fill.comp over b (n words of pattern + i * step); waited for. */
static void fill_run(rig_submission *s, rig_buffer *b, uint32_t n, uint32_t pattern,
                     uint32_t step) {
  rig_run *run = take_ok(s);
  rig_point p;
  grid_ok(run, 0, 1, n);
  fill_params(run, 0, pattern, step, n);
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  ok(rig_point_wait(p));
}

/* SUBS-1, SUBMIT-7, RUN-6: the driver keeps the command buffer of work it
 * recorded and submits it again for the same work (README, "The
 * timeline"); each run still does what its own buffers and parameters
 * say: other buffers, other parameters, a new grid, and memory made after
 * a release (whose handle may be the old one's) each record afresh, and
 * the same work again replays. */
static void subs_1_runs_again_replay_only_the_same_work(void **st) {
  rig_device *d = open_under_test(",k=1");
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_of(d, "fill", &ref, 1, 24);
  rig_buffer *x, *y;
  ok(rig_buffer_create(d, 256, &x));
  ok(rig_buffer_create(d, 256, &y));
  ok(rig_buffer_fill(y, 0, 1));
  for (int round = 0; round < 3; round++) {
    ok(rig_buffer_fill(x, 0, 1));
    fill_run(s, x, 16, 0x100, 1);                            /* the same work each round */
    expect_words(x, 16, 0x100, 1);
    expect_words(y, 16, 0, 0);                               /* not y's */
  }
  fill_run(s, y, 16, 0x100, 1);                              /* another buffer */
  expect_words(y, 16, 0x100, 1);
  fill_run(s, x, 16, 0x200, 2);                              /* other parameters */
  expect_words(x, 16, 0x200, 2);
  fill_run(s, x, 32, 0x300, 1);                              /* another grid */
  expect_words(x, 32, 0x300, 1);
  fill_run(s, x, 16, 0x100, 1);                              /* the first work again */
  expect_words(x, 16, 0x100, 1);
  expect_words(y, 16, 0x100, 1);
  for (int i = 0; i < 4; i++) { /* memory of a new buffer, maybe at the old handle */
    rig_buffer_release(x);
    ok(rig_device_free_cache(d));
    ok(rig_buffer_create(d, 256, &x));
    ok(rig_buffer_fill(x, 0, 1));
    fill_run(s, x, 16, 0x100, 1);
    expect_words(x, 16, 0x100, 1);
  }
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_submission_release(s);
  vk_close_dev(d);
}

/* ---- waits on other Vulkan devices ------------------------------------------------- */

/* Submits spin.comp on d over SPIN_GROUPS groups of 64 threads, writing
 * out (threads * 4 bytes) from seed; returns its point. */
static rig_point spin_on(rig_device *d, rig_buffer *out, uint32_t seed, uint32_t rounds) {
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_of(d, "spin", &ref, 1, 16);
  rig_point p;
  ok(rig_run_submit(spin_run(s, seed, rounds), &out, 1, NULL, 0, &p));
  rig_submission_release(s);
  return p;
}

/* A's submit after B's point, B spinning into host memory both borrow:
 * through the stamps (ORDER-8: A copies what B writes) or a submit's
 * waits (ORDER-10: A fills y after B's point). Returns A's point, and
 * A's stats before and after in *before and *after. */
static rig_point after_spin(rig_device *a, rig_buffer *on_a, rig_buffer *x, rig_buffer *y,
                            rig_point spin, bool via_waits, rig_stats *before, rig_stats *after) {
  rig_point p;
  rig_device_stats(a, before);
  if (!via_waits) {
    ok(rig_buffer_submit_copy(on_a, x, &p));                   /* ORDER-8: follows B's write */
  } else {
    rig_part part = rig_part_fill(0, 1, 1);
    rig_submission *s;
    rig_run *run;
    ok(rig_submission_make(a, &part, 1, &s));
    ok(rig_submission_take(s, &run));
    ok(rig_run_submit(run, &y, 1, &spin, 1, &p));                  /* ORDER-10: a submit's wait */
    rig_submission_release(s);
  }
  rig_device_stats(a, after);
  return p;
}

/* Device A (options a_opts) after device B (b_opts), a second open of the
 * same Vulkan device: B runs a slow spin.comp into host memory that A and
 * B both borrow, then A copies it, and A submits work whose waits name
 * B's point. queue: whether A's queue waits (the opens share a VkDevice,
 * SUBMIT-2) or the host does (SUBMIT-3). */
static void waits_on_another_open(const char *a_opts, const char *b_opts, bool queue) {
  rig_device *a = open_under_test(a_opts), *b = open_under_test(b_opts);
  const uint32_t threads = SPIN_GROUPS * 64, rounds = spin_rounds(60000), bytes = threads * 4;
  rig_buffer *h, *on_a, *on_b, *x, *y;
  ok(rig_buffer_create(rig_device_host(), bytes, &h)); /* 64 KiB: starts on a page (MACH-23) */
  ok(rig_buffer_fill(h, 0, 1));
  ok(rig_buffer_borrow(a, h, &on_a));
  ok(rig_buffer_borrow(b, h, &on_b));
  ok(rig_buffer_create(a, bytes, &x));
  ok(rig_buffer_create(a, 4, &y));
  rig_stats before, after;
  for (int via_waits = 0; via_waits < 2; via_waits++) {
    uint32_t seed = 777 + (uint32_t)via_waits;
    rig_point spin = spin_on(b, on_b, seed, rounds);          /* B writes H, slowly */
    rig_point p = after_spin(a, on_a, x, y, spin, via_waits, &before, &after);
    if (queue) {
      assert_false(rig_point_reached(spin));  /* A's submit returned before B's point */
      assert_int_equal(after.queue_waits, before.queue_waits + 1); /* SUBMIT-2 */
      assert_int_equal(after.host_waits, before.host_waits);
      assert_int_equal(after.word_mappings, 1);   /* one mapping of B's word (OPEN-20) */
      assert_false(rig_point_reached(p));
    } else {
      assert_int_equal(after.host_waits, before.host_waits + 1); /* SUBMIT-3 */
      assert_int_equal(after.queue_waits, before.queue_waits);
      assert_true(rig_point_reached(spin)); /* the host waited before the submit returned */
    }
    ok(rig_point_wait(p));
    assert_true(rig_point_reached(spin)); /* A's work ended after B's (ORDER-8, ORDER-10) */
    if (!via_waits)
      expect_spin(x, threads, seed, rounds, "A's copy ran before B's launch ended");
  }
  rig_buffer *all[] = {y, x, on_b, on_a, h};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    rig_buffer_release(all[i]);
  vk_close_dev(b);
  vk_close_dev(a);
}

/* SUBMIT-2, ORDER-8, ORDER-10, TL-9, OPEN-20..23: two opens of vulkan:0
 * (A, and B with k=1) share one VkDevice, so A's queue waits on B's
 * timeline semaphore (map_peer, edge ABI 1.2): A's submit counts one queue
 * wait and no host wait, and returns while B's launch still runs; A's copy
 * still reads every word B's launch wrote. */
static void submit_2_queue_waits_on_an_open_of_the_same_vkdevice(void **st) {
  waits_on_another_open("", ",k=1", true);
}

/* SUBMIT-3: B opened with share=0 has a VkDevice of its own, whose
 * semaphore A's queue cannot wait on (lavapipe exports none): map_peer
 * says no, and A's submit waits for B's point on the host before it
 * returns, counted in host_waits; A's work reads what B wrote. */
static void submit_3_host_waits_on_another_vkdevice(void **st) {
  waits_on_another_open("", ",k=1,share=0", false);
}

/* LOSS-6: B is lost (an injected fault of its second submit) while A's
 * queue waits on B's launch, above the value B had reached: a wait on A
 * loses A "NAME lost" (unless the launch, about 1.4 s here, ended within
 * the wait's first 100 ms slice: then A's work ran after it, as ordered),
 * and both stops end, A's once B's launch, which was on the shared queue,
 * is done (no hang). */
static void loss_6_peer_lost_while_a_queue_waits(void **st) {
  rig_device *a = open_under_test(""), *b = open_under_test(",k=1,fault_nth=2");
  const uint32_t threads = SPIN_GROUPS * 64, bytes = threads * 4;
  rig_buffer *h, *on_a, *on_b, *x, *y;
  ok(rig_buffer_create(rig_device_host(), bytes, &h));
  ok(rig_buffer_borrow(a, h, &on_a));
  ok(rig_buffer_borrow(b, h, &on_b));
  ok(rig_buffer_create(a, bytes, &x));
  ok(rig_buffer_create(b, 4, &y));
  rig_stats before, after;
  rig_point spin = spin_on(b, on_b, 5, spin_rounds(60000));
  rig_point p = after_spin(a, on_a, x, NULL, spin, false, &before, &after);
  assert_int_equal(after.queue_waits, before.queue_waits + 1);
  rig_point q;
  assert_int_equal(rig_buffer_submit_fill(y, 1, 1, &q), RIG_LOST);   /* B's second submit */
  rig_status waited = rig_point_wait(p);
  if (waited == RIG_OK) { /* B's launch ended within the wait's first slice, before a watch */
    print_message("B's launch ended before a watch of A's wait: A not lost\n");
    expect_spin(x, threads, 5, spin_rounds(60000), "A's copy ran before B's launch ended");
  } else {
    assert_int_equal(waited, RIG_LOST);                                /* LOSS-6 */
    assert_non_null(rig_device_lost(a));
    assert_non_null(strstr(rig_device_lost(a), "fault_nth=2 lost"));
  }
  rig_buffer *all[] = {y, x, on_b, on_a, h};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    rig_buffer_release(all[i]);
  ok(rig_device_close(a)); /* its batch waits on B's launch, which ends */
  ok(rig_device_close(b));
  rig_device_release(a);
  rig_device_release(b);
}

/* LOSS-14: a VK_ERROR_DEVICE_LOST (injected: lose_nth) loses the VkDevice,
 * so every open that shares it: A, whose own calls would still succeed on
 * lavapipe, is lost at its next call with a message that names the VkDevice's
 * loss, and both close. An open of its own VkDevice (share=0) works on. */
static void loss_14_a_lost_vkdevice_loses_every_open_on_it(void **st) {
  rig_device *a = open_under_test(""), *b = open_under_test(",k=1,lose_nth=1"),
             *c = open_under_test(",share=0");
  rig_buffer *on_a, *on_b, *on_c;
  ok(rig_buffer_create(a, 64, &on_a));
  ok(rig_buffer_create(b, 64, &on_b));
  ok(rig_buffer_create(c, 64, &on_c));
  rig_point p;
  assert_int_equal(rig_buffer_submit_fill(on_b, 1, 1, &p), RIG_LOST);
  assert_non_null(strstr(rig_device_lost(b), "VK_ERROR_DEVICE_LOST"));
  assert_int_equal(rig_buffer_fill(on_a, 2, 1), RIG_LOST);
  assert_non_null(rig_device_lost(a));
  assert_non_null(strstr(rig_device_lost(a), "its VkDevice is lost"));
  ok(rig_buffer_fill(on_c, 3, 1));                 /* another VkDevice: not lost */
  uint8_t byte;
  ok(rig_buffer_get(on_c, 0, &byte, 1));
  assert_int_equal(byte, 3);
  /* An open after the loss, while a and b still hold the lost VkDevice,
   * shares none of it: it gets a VkDevice of its own, and works. */
  rig_device *e = open_under_test(",k=2");
  rig_buffer *on_e;
  ok(rig_buffer_create(e, 64, &on_e));
  ok(rig_buffer_fill(on_e, 4, 1));
  ok(rig_buffer_get(on_e, 0, &byte, 1));
  assert_int_equal(byte, 4);
  rig_buffer_release(on_e);
  vk_close_dev(e);
  rig_buffer_release(on_a);
  rig_buffer_release(on_b);
  rig_buffer_release(on_c);
  ok(rig_device_close(a));
  ok(rig_device_close(b));
  rig_device_release(a);
  rig_device_release(b);
  vk_close_dev(c);
}

/* SUBMIT-8, SUBMIT-11: the work takes its block from the run at submit, and
 * writes to the run after submit returns leave that work alone. Behind a
 * spin on the queue, a fill's run is submitted, freed, taken again (the
 * same run, from the submission's spare) and rewritten for a second fill:
 * the first fill, still held or queued, writes its own parameters. */
static void submit_8_11_writes_after_submit_leave_the_work(void **st) {
  rig_device *d = open_under_test("");
  rig_buffer *spun, *x, *y;
  ok(rig_buffer_create(d, SPIN_GROUPS * 64 * 4, &spun));
  ok(rig_buffer_create(d, 256, &x));
  ok(rig_buffer_create(d, 256, &y));
  ok(rig_buffer_fill(x, 0, 1));
  ok(rig_buffer_fill(y, 0, 1));
  rig_point spin = spin_on(d, spun, 7, spin_rounds(20000));
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_of(d, "fill", &ref, 1, 24);
  rig_run *first = take_ok(s), *again;
  rig_point px, py;
  fill_block(first, 0, 0xa00, 1, 16);
  ok(rig_run_submit(first, &x, 1, NULL, 0, &px));
  ok(rig_submission_take(s, &again));
  assert_ptr_equal(again, first);                         /* the same run, rewritten */
  fill_block(again, 0, 0xb00, 3, 16);
  ok(rig_run_submit(again, &y, 1, NULL, 0, &py));
  ok(rig_point_wait(py));
  assert_true(rig_point_reached(spin) && rig_point_reached(px));
  expect_words(x, 16, 0xa00, 1);                          /* SUBMIT-11 */
  expect_words(y, 16, 0xb00, 3);                          /* SUBMIT-8 */
  rig_submission_release(s);
  rig_buffer_release(spun);
  rig_buffer_release(x);
  rig_buffer_release(y);
  vk_close_dev(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(facts),
      cmocka_unit_test(open_refusals),
      cmocka_unit_test(arguments_are_strict),
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
      cmocka_unit_test(obj_3_6_the_add_example),
      cmocka_unit_test(obj_3_6_the_add_example_staged),
      cmocka_unit_test(run_1_4_load_and_resolve),
      cmocka_unit_test(run_8_code_goes_when_its_work_is_done),
      cmocka_unit_test(order_3_launches_among_copies_and_fills),
      cmocka_unit_test(launch_6_8_each_thread_once),
      cmocka_unit_test(launch_params_over_push_constants),
      cmocka_unit_test(launch_13_14_refused_before_the_driver),
      cmocka_unit_test(valid_20_launch_the_driver_cannot_run),
      cmocka_unit_test(launch_runs_asynchronously),
      cmocka_unit_test(subs_1_runs_again_replay_only_the_same_work),
      cmocka_unit_test(submit_8_11_writes_after_submit_leave_the_work),
      cmocka_unit_test(submit_2_queue_waits_on_an_open_of_the_same_vkdevice),
      cmocka_unit_test(submit_3_host_waits_on_another_vkdevice),
      cmocka_unit_test(loss_6_peer_lost_while_a_queue_waits),
      cmocka_unit_test(loss_14_a_lost_vkdevice_loses_every_open_on_it),
  };
  const char *only = getenv("RIG_TEST_FILTER"); /* one test's name, or a pattern */
  if (only && *only)
    cmocka_set_test_filter(only);
  return cmocka_run_group_tests(tests, vk_test_setup, NULL);
}
