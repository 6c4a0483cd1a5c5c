/* test_cuda.c: the CUDA driver's own tests (suite driver-cuda).
 *
 * Without a GPU (exit 77 with the reason where cuda:0 does not open) but
 * for the paths a machine without one has: `test-cuda paths WANT` checks
 * that cuda:0 does not open, RIG_UNAVAILABLE with WANT in the message
 * ("no library" with RIG_CUDA_LIBRARY naming no file, "no device" with
 * the toolkit's stub libcuda), and that bad arguments are RIG_INVALID
 * before any library is looked for.
 *
 * On a GPU (`test-cuda`, on "cuda:0" or RIG_CUDA_DEVICE): its facts and
 * capability record, fills of each pattern and alignment, copies both ways
 * and between two opens, the seed's add example from PTX, a JIT failure's
 * log, parameter blocks over 4 KiB, queue waits (SUBMIT-2) on another
 * open's word and on core's words of a test, memory, host and io device,
 * host waits on a Vulkan device's point (SUBMIT-3), a faulting kernel
 * that loses both opens of its context
 * (LOSS-14), and a kernel that never ends, lost by the hang bound
 * (HANG-6). Kernels: $RIG_CUDA_KERNELS (drivers/cuda/kernels), NAME.ptx.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include "check.h"
#include <rig/drivers/rig-cuda.h>

static void close_dev(rig_device *d) {
  rig_status st = rig_device_close(d); /* a lost device's close may say why: */
  if (st != RIG_OK)                    /* both end it */
    printf("close %s: %s\n", rig_device_name(d), rig_error_last()->message);
  rig_device_release(d);
}

static rig_function *load_fn(rig_device *d, const char *kernel, const char *fn, rig_image **im) {
  size_t n;
  const char *text = ptx_text(kernel, &n);
  ok(rig_image_load(d, text, n, im));
  return resolve_ok(*im, fn);
}

/* ---- facts ------------------------------------------------------------------------ */

static void facts(void **st) {
  rig_device *d = open_under_test("");
  assert_true(rig_device_computes(d));
  assert_false(rig_device_runs_on_host(d));
  assert_memory_equal(rig_device_arch(d), "sm_", 3);              /* sm_XY */
  assert_int_equal(rig_device_alignment(d), 256);
  assert_true(rig_device_budget(d) > 0);
  const char *bus = rig_device_bus(d);
  if (bus)
    assert_int_equal(strlen(bus), 12);
  const rig_cuda_device *c = rig_device_capability(d, RIG_CUDA_DEVICE);
  assert_non_null(c);
  assert_int_equal(c->size, sizeof *c);
  assert_true(c->sm_count > 0 && c->memory_bytes > 0 && c->driver_version > 0);
  print_message("%s: %s, sm_%d%d, %d SMs, %llu MiB, driver %d, stream memory operations: %s\n",
                device_under_test(""), c->name, c->cc_major, c->cc_minor, c->sm_count,
                (unsigned long long)(c->memory_bytes >> 20), c->driver_version,
                c->stream_mem_ops ? "yes" : "no (host functions)");
  close_dev(d);
}

/* ---- copies and fills ---------------------------------------------------------- */

/* Fills of patterns of 1, 2 and 4 bytes over views at each offset 0..3,
 * read back through staging, against the same fill on the host. */
static void fills_of_every_pattern_and_alignment(void **st) {
  rig_device *d = open_under_test("");
  enum { N = 4096 };
  rig_buffer *b, *want;
  ok(rig_buffer_create(d, N, &b));
  ok(rig_buffer_create(rig_device_host(), N, &want));
  uint8_t got[N], exp[N];
  for (uint32_t size = 1; size <= 4; size *= 2)
    for (uint64_t off = 0; off < 4; off++) {
      rig_buffer *v, *hv;
      uint64_t len = (N - 8) / size * size;
      ok(rig_buffer_fill(b, 0, 1));
      ok(rig_buffer_fill(want, 0, 1));
      ok(rig_buffer_view(b, off, len, RIG_READ_WRITE, &v));
      ok(rig_buffer_view(want, off, len, RIG_READ_WRITE, &hv));
      ok(rig_buffer_fill(v, 0x81c2e3f4u, size));
      ok(rig_buffer_fill(hv, 0x81c2e3f4u, size));
      ok(rig_buffer_get(b, 0, got, N));
      ok(rig_buffer_get(want, 0, exp, N));
      if (memcmp(got, exp, N) != 0)
        fail_msg("fill of %u bytes at offset %llu differs", size, (unsigned long long)off);
      rig_buffer_release(v);
      rig_buffer_release(hv);
    }
  rig_buffer_release(want);
  rig_buffer_release(b);
  close_dev(d);
}

/* Bytes go up and back through staging, between two opens of one GPU
 * (peers: one context), and from a borrow of host memory. */
static void copies_both_ways_and_between_opens(void **st) {
  rig_device *a = open_under_test(""), *b = open_under_test(",stream=1");
  enum { N = 1 << 20 };
  uint8_t *src = malloc(N), *got = malloc(N);
  for (size_t i = 0; i < N; i++)
    src[i] = (uint8_t)(i * 7 + 3);
  rig_buffer *x, *y, *h, *hb;
  ok(rig_buffer_create(a, N, &x));
  ok(rig_buffer_create(b, N, &y));
  ok(rig_buffer_put(x, 0, src, N));
  ok(rig_buffer_copy(x, y));                                   /* a's memory to b's */
  ok(rig_buffer_get(y, 0, got, N));
  assert_memory_equal(got, src, N);
  ok(rig_buffer_create(rig_device_host(), N, &h));
  ok(rig_buffer_borrow(a, h, &hb));                            /* MAPS_HOST */
  ok(rig_buffer_copy(y, hb));
  ok(rig_buffer_get(h, 0, got, N));
  assert_memory_equal(got, src, N);
  rig_buffer *all[] = {hb, h, y, x};
  for (size_t i = 0; i < 4; i++)
    rig_buffer_release(all[i]);
  free(src);
  free(got);
  close_dev(b);
  close_dev(a);
}

/* ---- code ------------------------------------------------------------------------ */

/* OBJ-3..6: the seed's add example from add.ptx: z = x + y over n floats. */
static void the_add_example(void **st) {
  rig_device *d = open_under_test("");
  rig_image *im;
  rig_function *add = load_fn(d, "add", "add", &im);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(add, refs, 3, 32);
  rig_submission *s;
  ok(rig_submission_make(d, &launch, 1, &s));
  rig_image_release(im);
  enum { N = 5000 };
  static float xs[N], ys[N], zs[N];
  add_example_inputs(xs, ys, zs, N);
  rig_buffer *x, *y, *z;
  ok(rig_buffer_create(d, sizeof xs, &x));
  ok(rig_buffer_create(d, sizeof ys, &y));
  ok(rig_buffer_create(d, sizeof zs, &z));
  ok(rig_buffer_put(x, 0, xs, sizeof xs));
  ok(rig_buffer_put(y, 0, ys, sizeof ys));
  rig_run *run;
  uint32_t k;
  ok(rig_submission_take(s, &run));
  ok(rig_submission_block(s, 0, &k));
  ok(rig_run_groups(run, k, (N + 127) / 128, 1, 1));
  ok(rig_run_threads(run, k, 128, 1, 1));
  ok(rig_run_int64(run, k, 24, N));
  rig_buffer *bufs[3] = {x, y, z};
  rig_point p;
  ok(rig_run_submit(run, bufs, 3, NULL, 0, &p));
  ok(rig_buffer_get(z, 0, zs, sizeof zs));
  add_example_expect(zs, N, device_under_test(""));
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  rig_submission_release(s);
  close_dev(d);
}

/* A PTX the JIT refuses is an Error with its log; nothing is lost; a
 * name the image lacks is None. */
static void a_jit_failure_carries_its_log(void **st) {
  rig_device *d = open_under_test("");
  static const char bad[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
                            ".visible .entry broken() { not_an_instruction; }\n";
  rig_image *im = NULL;
  assert_int_equal(rig_image_load(d, bad, sizeof bad - 1, &im), RIG_UNAVAILABLE);
  print_message("%s\n", rig_error_last()->message);
  assert_non_null(strstr(rig_error_last()->message, "cuModuleLoadDataEx"));
  assert_null(rig_device_lost(d));
  rig_function *f = NULL;
  size_t n;
  const char *text = ptx_text("add", &n);
  ok(rig_image_load(d, text, n, &im));
  ok(rig_image_resolve(im, "no_such_kernel", &f));
  assert_null(f);
  rig_image_release(im);
  close_dev(d);
}

/* A parameter block over the 4 KiB CUDA takes by value goes through the
 * driver's buffer; the kernel (params.ptx) takes its device address. Two
 * such launches a submission, 400 runs in flight: 6.4 MiB of blocks, so
 * the driver's 2 MiB ring comes round three times, each run reading its
 * own block. */
static void launch_params_over_4_kib_through_a_buffer(void **st) {
  rig_device *d = open_under_test("");
  rig_image *im;
  rig_function *f = load_fn(d, "params", "sum", &im);
  enum { BLOCK = 8192, N = 1021, RUNS = 400 };
  rig_ref ref = rig_ref_write(0, 0);
  rig_part parts[2] = {rig_part_launch(f, &ref, 1, BLOCK), rig_part_launch(f, &ref, 1, BLOCK)};
  rig_submission *s;
  ok(rig_submission_make(d, parts, 2, &s));
  rig_image_release(im);
  rig_buffer *out;
  ok(rig_buffer_create(d, 2 * RUNS * 8, &out));
  for (int r = 0; r < RUNS; r++) {
    rig_run *run;
    ok(rig_submission_take(s, &run));
    for (uint32_t k = 0; k < 2; k++) {
      ok(rig_run_groups(run, k, 1, 1, 1));
      ok(rig_run_threads(run, k, 1, 1, 1));
      ok(rig_run_int64(run, k, 8, N));
      ok(rig_run_int64(run, k, 16, 2 * r + (int64_t)k));
      for (int i = 0; i < N; i++)
        ok(rig_run_int64(run, k, 24 + 8 * i, (int64_t)(1000 * r + 100 * k + i)));
    }
    rig_point p;
    ok(rig_run_submit(run, &out, 1, NULL, 0, &p));
  }
  static int64_t got[2 * RUNS];
  ok(rig_buffer_get(out, 0, got, sizeof got));
  for (int r = 0; r < RUNS; r++)
    for (int k = 0; k < 2; k++)
      if (got[2 * r + k] != (int64_t)N * (1000 * r + 100 * k) + (int64_t)N * (N - 1) / 2)
        fail_msg("run %d launch %d read another block: %lld", r, k, (long long)got[2 * r + k]);
  rig_buffer_release(out);
  rig_submission_release(s);
  close_dev(d);
}

/* VALID-20: work whose large blocks are more than the driver's buffer of
 * them holds (three blocks of 1 MiB, the most core takes) is refused
 * before anything runs, RIG_INVALID naming the buffer; nothing is lost. */
static void large_blocks_over_the_buffer_refused(void **st) {
  rig_device *d = open_under_test("");
  rig_image *im;
  rig_function *f = load_fn(d, "params", "sum", &im);
  rig_ref ref = rig_ref_write(0, 0);
  rig_part big = rig_part_launch(f, &ref, 1, 1u << 20);
  rig_part parts[3] = {big, big, big};
  rig_submission *s;
  ok(rig_submission_make(d, parts, 3, &s));
  rig_image_release(im);
  rig_buffer *out;
  ok(rig_buffer_create(d, 8, &out));
  rig_run *run;
  ok(rig_submission_take(s, &run));
  for (uint32_t k = 0; k < 3; k++) {
    ok(rig_run_groups(run, k, 1, 1, 1));
    ok(rig_run_threads(run, k, 1, 1, 1));
  }
  rig_point p = 0;
  assert_int_equal(rig_run_submit(run, &out, 1, NULL, 0, &p), RIG_INVALID);
  print_message("%s\n", rig_error_last()->message);
  assert_non_null(strstr(rig_error_last()->message, "split the work"));
  assert_null(rig_device_lost(d));
  rig_buffer_release(out);
  rig_submission_release(s);
  close_dev(d);
}

/* ---- waits ------------------------------------------------------------------------ */

/* A pending point of b: a fill of 64 MiB of its memory (for an io device
 * a copy of 64 MiB into it), or, where spin is
 * set, 100 million rounds of spin.ptx on one thread of b (a cuda device),
 * which runs for a good part of a second. */
static rig_point pending_on(rig_device *b, bool spin, rig_buffer **x) {
  rig_point p;
  ok(rig_buffer_create(b, spin ? 4096 : 64u << 20, x));
  if (!spin && rig_device_is_io(b)) { /* io memory is written by copies */
    rig_buffer *h;
    ok(rig_buffer_create(rig_device_host(), 64u << 20, &h));
    ok(rig_buffer_submit_copy(h, *x, &p));
    rig_buffer_release(h);
    return p;
  }
  if (!spin) {
    ok(rig_buffer_submit_fill(*x, 0x5a, 1, &p));
    return p;
  }
  rig_image *im;
  rig_function *f = load_fn(b, "spin", "spin", &im);
  rig_ref ref = rig_ref_write(0, 0);
  rig_part launch = rig_part_launch(f, &ref, 1, 16);
  rig_submission *s;
  rig_run *run;
  ok(rig_submission_make(b, &launch, 1, &s));
  rig_image_release(im);
  ok(rig_submission_take(s, &run));
  ok(rig_run_groups(run, 0, 1, 1, 1));
  ok(rig_run_threads(run, 0, 1, 1, 1));
  ok(rig_run_int64(run, 0, 8, 100000000)); /* rounds; seed 0 */
  ok(rig_run_submit(run, x, 1, NULL, 0, &p));
  rig_submission_release(s);
  return p;
}

enum expect { QUEUE, QUEUE_IF_PENDING, HOST_IF_PENDING };

/* SUBMIT-2, SUBMIT-3: a submit on cuda:0 after a point of b. Where the
 * GPU has 64-bit stream memory operations, a point of a device whose word
 * is core's (host, memory, io, test) or of another cuda open is a wait
 * in the stream, never one of the host: QUEUE where the point is pending
 * for sure, QUEUE_IF_PENDING where it may be reached before the submit
 * (then no wait at all). A Vulkan device keeps its own word, a semaphore
 * CUDA cannot wait on: the host waits (HOST_IF_PENDING). */
static void waits_after(rig_device *b, bool spin, enum expect e) {
  rig_device *a = open_under_test("");
  const rig_cuda_device *c = rig_device_capability(a, RIG_CUDA_DEVICE);
  rig_buffer *x, *y;
  rig_point pb = pending_on(b, spin, &x), pa;
  ok(rig_buffer_create(a, 4096, &y));
  rig_stats before, after;
  rig_device_stats(a, &before);
  rig_part part = rig_part_fill(0, 0x33, 1);
  rig_submission *s;
  rig_run *run;
  ok(rig_submission_make(a, &part, 1, &s));
  ok(rig_submission_take(s, &run));
  ok(rig_run_submit(run, &y, 1, &pb, 1, &pa));
  rig_device_stats(a, &after);
  uint64_t dq = after.queue_waits - before.queue_waits, dh = after.host_waits - before.host_waits;
  print_message("%s after %s: %llu queue waits, %llu host waits\n", device_under_test(""), rig_device_name(b),
                (unsigned long long)dq, (unsigned long long)dh);
  assert_true(dq + dh <= 1);
  if (e == HOST_IF_PENDING)
    assert_int_equal(dq, 0);
  else if (c->stream_mem_ops) {
    assert_int_equal(dh, 0);
    if (e == QUEUE)
      assert_int_equal(dq, 1);
  }
  ok(rig_point_wait(pa));
  rig_submission_release(s);
  rig_buffer_release(x);
  rig_buffer_release(y);
  close_dev(a);
}

static void waits_after_named(const char *other, bool spin, enum expect e) {
  rig_device *b = NULL;
  rig_status st = rig_device_open(other, &b);
  if (st != RIG_OK && strncmp(other, "vulkan", 6) == 0) {
    print_message("%s does not open here (%s): its case is not run\n", other,
                  rig_error_last()->message);
    return;
  }
  ok(st);
  waits_after(b, spin, e);
  close_dev(b);
}

static void submit_2_queue_waits_on_another_open(void **st) {
  waits_after_named("cuda:0,stream=1", true, QUEUE);
}
static void submit_2_queue_waits_on_a_test_device(void **st) {
  waits_after_named("test:cudawaits,delay_us=300000", false, QUEUE);
}
static void submit_2_queue_waits_on_the_memory_device(void **st) {
  waits_after_named("memory:m", false, QUEUE_IF_PENDING);
}
static void submit_2_queue_waits_on_the_host(void **st) {
  waits_after(rig_device_host(), false, QUEUE_IF_PENDING);
}
static void submit_2_queue_waits_on_an_io_device(void **st) {
  char path[128];
  const char *t = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/rig-cuda-io-%d", t && *t ? t : "/tmp", (int)getpid());
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_CREATE, .size = 128u << 20};
  rig_device *io = NULL;
  ok(rig_device_open_io(&o, &io));
  waits_after(io, false, QUEUE_IF_PENDING);
  close_dev(io);
  unlink(path);
}
static void submit_3_host_waits_on_a_vulkan_device(void **st) {
  waits_after_named("vulkan:0", false, HOST_IF_PENDING);
}

/* ---- loss and hangs ---------------------------------------------------------------- */

/* fault.ptx's kernel fn with arg as its pointer, or address 16 where arg
 * is NULL. */
static rig_point launch_bad(rig_device *d, const char *fn, rig_buffer *arg) {
  rig_image *im;
  rig_function *f = load_fn(d, "fault", fn, &im);
  rig_ref ref = rig_ref_write(0, 0);
  rig_part launch = rig_part_launch(f, arg ? &ref : NULL, arg ? 1 : 0, 8);
  rig_submission *s;
  rig_run *run;
  rig_point p;
  ok(rig_submission_make(d, &launch, 1, &s));
  rig_image_release(im);
  ok(rig_submission_take(s, &run));
  ok(rig_run_groups(run, 0, 1, 1, 1));
  ok(rig_run_threads(run, 0, 1, 1, 1));
  if (!arg)
    ok(rig_run_int64(run, 0, 0, 16));
  ok(rig_run_submit(run, arg ? &arg : NULL, arg ? 1 : 0, NULL, 0, &p));
  rig_submission_release(s);
  return p;
}

/* LOSS-14: a kernel that writes through address 16 faults; the sticky
 * CUDA_ERROR_ILLEGAL_ADDRESS loses both opens of the context. */
static void loss_14_a_fault_loses_the_context(void **st) {
  rig_device *a = open_under_test(",stream=7"), *b = open_under_test(",stream=8");
  rig_buffer *x;
  ok(rig_buffer_create(a, 4096, &x));
  rig_point p = launch_bad(a, "fault", NULL);
  assert_int_not_equal(rig_point_wait(p), RIG_OK);
  assert_non_null(rig_device_lost(a));
  print_message("lost: %s\n", rig_device_lost(a));
  rig_buffer *y;
  rig_status s = rig_buffer_create(b, 4096, &y);
  if (s == RIG_OK)
    rig_buffer_release(y);
  assert_non_null(rig_device_lost(b));
  rig_buffer_release(x);
  close_dev(b);
  close_dev(a);
}

/* HANG-6: a kernel that never ends; hang_ms=500 loses the device. */
static void hang_6_a_kernel_that_never_ends(void **st) {
  rig_device *d = open_under_test(",stream=9,hang_ms=500");
  rig_buffer *flag;
  ok(rig_buffer_create(d, 4, &flag));
  ok(rig_buffer_fill(flag, 0, 4));
  rig_point p = launch_bad(d, "hang", flag);
  assert_int_not_equal(rig_point_wait(p), RIG_OK);
  assert_non_null(strstr(rig_device_lost(d), "no progress"));
  rig_buffer_release(flag);
  close_dev(d);
}

/* ---- without a GPU ------------------------------------------------------------------- */

static int paths(const char *want) {
  static const char *bad[] = {"cuda:", "cuda:x", "cuda:0,stream=256", "cuda:0,colour=1",
                              "cuda:0,hang_ms=-1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_device *d = NULL;
    rig_status s = rig_device_open(bad[i], &d);
    printf("%s: %s: %s\n", bad[i], rig_status_name(s), rig_error_last()->message);
    if (s != RIG_INVALID)
      return 1;
  }
  rig_device *d = NULL;
  rig_status s = rig_device_open("cuda:0", &d);
  printf("cuda:0: %s: %s\n", rig_status_name(s), rig_error_last()->message);
  if (s == RIG_OK) {
    close_dev(d);
    printf("skip: cuda:0 opened: this machine has a GPU\n");
    return 77;
  }
  return s == RIG_UNAVAILABLE && strstr(rig_error_last()->message, want) ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "paths") == 0)
    return paths(argv[2]);
  device_under_test_from("RIG_CUDA_DEVICE", "cuda:0");
  const char *base = device_under_test("");
  rig_device *d = NULL;
  if (rig_device_open(base, &d) != RIG_OK) {
    printf("skip: %s does not open here: %s\n", base, rig_error_last()->message);
    return 77;
  }
  close_dev(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(facts),
      cmocka_unit_test(fills_of_every_pattern_and_alignment),
      cmocka_unit_test(copies_both_ways_and_between_opens),
      cmocka_unit_test(the_add_example),
      cmocka_unit_test(a_jit_failure_carries_its_log),
      cmocka_unit_test(launch_params_over_4_kib_through_a_buffer),
      cmocka_unit_test(large_blocks_over_the_buffer_refused),
      cmocka_unit_test(submit_2_queue_waits_on_another_open),
      cmocka_unit_test(submit_2_queue_waits_on_a_test_device),
      cmocka_unit_test(submit_2_queue_waits_on_the_memory_device),
      cmocka_unit_test(submit_2_queue_waits_on_the_host),
      cmocka_unit_test(submit_2_queue_waits_on_an_io_device),
      cmocka_unit_test(submit_3_host_waits_on_a_vulkan_device),
      cmocka_unit_test(loss_14_a_fault_loses_the_context),
      cmocka_unit_test(hang_6_a_kernel_that_never_ends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
