/* test_remote_code.c: code on another machine, and order across machines
 * (docs/remote.md, "Code and launches" and "Order across machines"). Each
 * "machine" is a `rig serve` process on a loopback port of its own; the
 * kernels are tests/kernels' host objects, whose bytes travel to the
 * server, which links them there. Each test bounds its time through the
 * hang bound and the servers' start-up wait, and stops its servers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "kernel_file.h"
#include "server.h"
#include "wire.h"

static const char *key;

static void release_all(rig_buffer *const *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    rig_buffer_release(b[i]);
}

/* n floats of v[i] = i * scale into b. */
static void put_ramp(rig_buffer *b, int64_t n, float scale) {
  float *v = malloc((size_t)n * sizeof *v);
  assert_non_null(v);
  for (int64_t i = 0; i < n; i++)
    v[i] = scale * (float)i;
  ok(rig_buffer_put(b, 0, v, (size_t)n * sizeof *v));
  free(v);
}

/* Asserts b holds n floats of i * scale, byte for byte. */
static void expect_ramp(rig_buffer *b, int64_t n, float scale, const char *where) {
  size_t bytes = (size_t)n * sizeof(float);
  float *want = malloc(bytes), *got = malloc(bytes);
  assert_non_null(want);
  assert_non_null(got);
  for (int64_t i = 0; i < n; i++)
    want[i] = scale * (float)i;
  ok(rig_buffer_get(b, 0, got, bytes));
  if (memcmp(want, got, bytes) != 0)
    for (int64_t i = 0; i < n; i++)
      if (memcmp(&want[i], &got[i], sizeof *got) != 0)
        fail_msg("%s: float %lld is %g, want %g", where, (long long)i, (double)got[i],
                 (double)want[i]);
  free(want);
  free(got);
}

/* LAUNCH and RUN's parts through the wire's encoder and parser: every
 * field back as it went, and random bytes as RUN parts read nothing past
 * their body (ASan's run checks the reads) and fail with a reason. */
static void test_wire_code(void **state) {
  (void)state;
  uint8_t params[40], body[512];
  memset(params, 0x3c, sizeof params);
  rig_wire_msg in = {.type = RIG_WIRE_LAUNCH, .dev = 3, .entry = 0x7f0012345678ull,
                     .shared_bytes = 9, .groups = {1, 2, 3}, .threads = {4, 5, 6}};
  rig_wire_msg fill = {.type = RIG_WIRE_FILL, .buf = 2, .offset = 8, .bytes = 16,
                       .pattern = 0xab, .pattern_bytes = 1};
  size_t at = 0;
  assert_true(rig_wire_part_put(body, sizeof body, &at, &in, params, sizeof params));
  assert_true(rig_wire_part_put(body, sizeof body, &at, &fill, NULL, 0));
  assert_false(rig_wire_part_put(body, at + 10, &at, &fill, NULL, 0)); /* does not fit */
  rig_wire_reader r = {body, at, false};
  rig_wire_msg out;
  char why[200];
  assert_true(rig_wire_part_get(&r, &out, why, sizeof why));
  assert_int_equal(out.type, RIG_WIRE_LAUNCH);
  assert_int_equal(out.dev, 3);
  assert_int_equal(out.entry, in.entry);
  assert_int_equal(out.shared_bytes, 9);
  assert_memory_equal(out.groups, in.groups, sizeof in.groups);
  assert_memory_equal(out.threads, in.threads, sizeof in.threads);
  assert_int_equal(out.data_n, sizeof params);
  assert_memory_equal(out.data, params, sizeof params);
  assert_true(rig_wire_part_get(&r, &out, why, sizeof why));
  assert_int_equal(out.pattern, 0xab);
  assert_int_equal(r.n, 0);
  srand(15);
  for (int i = 0; i < 200000; i++) {
    size_t n = (size_t)rand() % 96;
    uint8_t *junk = malloc(n + 1);
    for (size_t k = 0; k < n; k++)
      junk[k] = (uint8_t)(k < 2 && i % 2 ? (k ? 0 : 1 + rand() % 24) : rand());
    rig_wire_reader jr = {junk, n, false};
    bool parsed = true;
    why[0] = 0;
    while (jr.n && (parsed = rig_wire_part_get(&jr, &out, why, sizeof why)))
      assert_true(out.data_n == 0 || (out.data >= junk && out.data + out.data_n <= junk + n));
    assert_true(parsed || why[0] != 0);
    free(junk);
  }
}

/* MACH-5: another machine's host loads code and runs submissions there.
 * The add kernel's object travels to m1, whose linker links it; a launch
 * on m1's host over buffers of m1's host and of its memory device (which
 * that host reaches there, MACH-21) writes z = x + y on m1, read back
 * here byte by byte. The function's entry is the address it has on m1. */
static void test_launch_on_remote_host(void **state) {
  (void)state;
  enum { N = (1 << 16) + 3 };
  test_server s;
  test_server_start(&s, key);
  rig_device *h = test_remote_host("m-code", &s, key, 0), *a = test_remote_on(h, "memory:a");
  rig_function *add = NULL;
  rig_image *im = kernel_load_on(h, "add.o", "add", &add);
  assert_ptr_equal(rig_image_device(im), h);
  assert_string_equal(rig_function_name(add), "add");
  assert_int_not_equal(rig_function_entry(add), 0);
  rig_function *none = add;
  ok(rig_image_resolve(im, "no_such_function", &none));
  assert_null(none);
  rig_buffer *x = create_ok(a, N * sizeof(float)), *y = create_ok(h, N * sizeof(float)),
             *z = create_ok(h, N * sizeof(float));
  put_ramp(x, N, 1.0f);
  put_ramp(y, N, 0.5f);
  ok(rig_buffer_fill(z, 0xff, 1));
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *sub = launch_make_ok(h, add, refs, 3, 32);
  rig_point p = add_example_run(sub, x, y, z, N);
  ok(rig_point_wait(p));
  expect_ramp(z, N, 1.5f, "z on m-code");
  rig_submission_release(sub);
  rig_image_release(im);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  close_release(a);
  close_release(h);
  test_server_stop(&s);
}

/* SYM-2 on another machine: an entry ref stores the address the callee
 * has there, so code of one image loaded on m1 calls code of another. */
static void test_entry_ref_on_remote_host(void **state) {
  (void)state;
  enum { N = 1000 };
  test_server s;
  test_server_start(&s, key);
  rig_device *h = test_remote_host("m-entry", &s, key, 0);
  rig_function *caller = NULL, *seven = NULL;
  rig_image *a = kernel_load_on(h, "launch_entry.o", "caller", &caller);
  rig_image *b = kernel_load_on(h, "launch_entry.o", "seven", &seven);
  rig_buffer *z = create_ok(h, N * sizeof(float));
  rig_ref refs[2] = {rig_ref_entry(seven, 0), rig_ref_write(0, 8)};
  rig_submission *sub = launch_make_ok(h, caller, refs, 2, 16);
  rig_run *run = take_ok(sub);
  grid_ok(run, 0, 10, N / 10);
  rig_point p;
  ok(rig_run_submit(run, &z, 1, NULL, 0, &p));
  ok(rig_point_wait(p));
  float got[N];
  ok(rig_buffer_get(z, 0, got, sizeof got));
  for (int i = 0; i < N; i++)
    if (got[i] != 7.0f + (float)i)
      fail_msg("z[%d] is %g, want %g", i, (double)got[i], 7.0 + i);
  rig_submission_release(sub);
  rig_image_release(a);
  rig_image_release(b);
  rig_buffer_release(z);
  close_release(h);
  test_server_stop(&s);
}

/* Sets launch part `part` of run to add's grid over n floats. */
static void add_grid(rig_submission *s, rig_run *run, uint32_t part, int64_t n) {
  uint32_t k = 0;
  ok(rig_submission_block(s, part, &k));
  grid_ok(run, k, 64, (uint64_t)(n + 63) / 64);
  ok(rig_run_int64(run, k, 24, n));
}

/* A machine for a test of add: its server, its host, its memory:a, and
 * add loaded on the host. */
typedef struct with_add {
  test_server s;
  rig_device *h, *a;
  rig_function *add;
  rig_image *im;
} with_add;

static void with_add_open(with_add *m, const char *machine) {
  test_server_start(&m->s, key);
  m->h = test_remote_host(machine, &m->s, key, 0);
  m->a = test_remote_on(m->h, "memory:a");
  m->im = kernel_load_on(m->h, "add.o", "add", &m->add);
}

/* Releases sub, the n buffers b and m, and stops m's server. */
static void with_add_close(with_add *m, rig_submission *sub, rig_buffer *const *b, size_t n) {
  release_all(b, n);
  rig_submission_release(sub);
  rig_image_release(m->im);
  close_release(m->a);
  close_release(m->h);
  test_server_stop(&m->s);
}

/* A submission of several parts on m1's host, whose parts read what the
 * earlier ones wrote: a fill, a launch, a launch whose parameter block is
 * too big to share a request, and a copy on m1. The parts that run there
 * travel together where they fit (RUN), and m1 runs them in order. */
static void test_parts_in_one_request(void **state) {
  (void)state;
  enum { N = 10000 };
  const size_t bytes = N * sizeof(float);
  with_add m;
  with_add_open(&m, "m-run");
  rig_device *h = m.h, *a = m.a;
  rig_function *add = m.add;
  rig_ref r1[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_ref r2[3] = {rig_ref_read(2, 0), rig_ref_read(1, 8), rig_ref_write(4, 16)};
  rig_part parts[4] = {rig_part_fill(2, 0xff, 1), rig_part_launch(add, r1, 3, 40000),
                       rig_part_launch(add, r2, 3, 70000), rig_part_copy(2, 3)};
  rig_submission *sub = NULL;
  ok(rig_submission_make(h, parts, 4, &sub));
  rig_buffer *b[5] = {create_ok(a, bytes), create_ok(h, bytes), create_ok(h, bytes),
                      create_ok(a, bytes), create_ok(h, bytes)};
  put_ramp(b[0], N, 1.0f);
  put_ramp(b[1], N, 0.5f);
  rig_run *run = take_ok(sub);
  add_grid(sub, run, 1, N);
  add_grid(sub, run, 2, N);
  rig_point p;
  ok(rig_run_submit(run, b, 5, NULL, 0, &p));
  ok(rig_point_wait(p));
  expect_ramp(b[2], N, 1.5f, "z, the first launch's");
  expect_ramp(b[4], N, 2.0f, "v, the second launch's, over z");
  expect_ramp(b[3], N, 1.5f, "w, z's copy");
  with_add_close(&m, sub, b, 5);
}

/* Asserts b holds n zero bytes. */
static void expect_zeros(rig_buffer *b, size_t n, const char *where) {
  unsigned char *got = malloc(n);
  assert_non_null(got);
  ok(rig_buffer_get(b, 0, got, n));
  for (size_t i = 0; i < n; i++)
    if (got[i] != 0)
      fail_msg("%s: byte %zu is %#x, want 0", where, i, got[i]);
  free(got);
}

/* Copies between this machine and m1 inside one submission on m1's host:
 * two copies in from this host's buffers, a fill and a launch on m1, a
 * copy out to this host, a fill of the launch's result and a second copy
 * out. Each copy of this machine's bytes splits the parts that run there
 * (RUN) and runs in its place, so the first copy out holds the launch's
 * result and the second the fill that followed it, byte by byte. */
static void test_copies_with_this_host(void **state) {
  (void)state;
  enum { N = 30000 };
  const size_t bytes = N * sizeof(float);
  with_add m;
  with_add_open(&m, "m-copies");
  rig_device *h = m.h, *a = m.a, *here = rig_device_host();
  rig_ref refs[3] = {rig_ref_read(2, 0), rig_ref_read(3, 8), rig_ref_write(4, 16)};
  rig_part parts[7] = {rig_part_copy(0, 2),          rig_part_copy(1, 3),
                       rig_part_fill(4, 0xff, 1),     rig_part_launch(m.add, refs, 3, 32),
                       rig_part_copy(4, 5),          rig_part_fill(4, 0, 1),
                       rig_part_copy(4, 6)};
  rig_submission *sub = NULL;
  ok(rig_submission_make(h, parts, 7, &sub));
  rig_buffer *b[7] = {create_ok(here, bytes), create_ok(here, bytes), create_ok(a, bytes),
                      create_ok(h, bytes),    create_ok(h, bytes),    create_ok(here, bytes),
                      create_ok(here, bytes)};
  ok(rig_buffer_fill(b[6], 0xee, 1));
  for (int round = 1; round <= 2; round++) { /* the second over the first's results */
    float k = (float)round;
    put_ramp(b[0], N, 1.0f * k);
    put_ramp(b[1], N, 0.5f * k);
    rig_run *run = take_ok(sub);
    add_grid(sub, run, 3, N);
    rig_point p;
    ok(rig_run_submit(run, b, 7, NULL, 0, &p));
    ok(rig_point_wait(p));
    expect_ramp(b[2], N, 1.0f * k, "x on m1, copied in");
    expect_ramp(b[3], N, 0.5f * k, "y on m1, copied in");
    expect_ramp(b[5], N, 1.5f * k, "z copied out after the launch");
    expect_zeros(b[6], bytes, "z copied out after the fill");
    expect_zeros(b[4], bytes, "z on m1");
  }
  assert_null(rig_device_lost(h));
  with_add_close(&m, sub, b, 7);
}

/* A submit of add on m1's host over the given buffers, which must be
 * refused (RIG_INVALID) with a message holding text. */
static void launch_refused(rig_submission *sub, rig_buffer *x, rig_buffer *y, rig_buffer *z,
                           const char *text) {
  rig_run *run = take_ok(sub);
  grid_ok(run, 0, 1, 64);
  rig_buffer *bufs[3] = {x, y, z};
  rig_point p;
  assert_int_equal(rig_run_submit(run, bufs, 3, NULL, 0, &p), RIG_INVALID);
  if (!strstr(rig_error_last()->message, text))
    fail_msg("'%s' does not say '%s'", rig_error_last()->message, text);
}

/* What code on another machine refuses, each with a clear status and
 * message and nothing lost: a launch whose refs name memory of another
 * machine or of this one (MACH-18: no device of m1 reaches them), a
 * function name too long for the wire, an object its linker refuses, code
 * on a device that loads none, words, and shared memory on a host. m1 then still runs a launch. */
static void test_refusals(void **state) {
  (void)state;
  test_server s1, s2;
  test_server_start(&s1, key);
  test_server_start(&s2, key);
  rig_device *h1 = test_remote_host("m-ref1", &s1, key, 0), *h2 = test_remote_host("m-ref2", &s2, key, 0);
  rig_device *a1 = test_remote_on(h1, "memory:a");
  rig_function *add = NULL;
  rig_image *im = kernel_load_on(h1, "add.o", "add", &add);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *sub = launch_make_ok(h1, add, refs, 3, 32);
  rig_buffer *x = create_ok(h1, 256), *y = create_ok(h1, 256), *z = create_ok(h1, 256);
  rig_buffer *there = create_ok(h2, 256), *here = create_ok(rig_device_host(), 256);
  launch_refused(sub, x, y, there, "which CPU@m-ref1 does not reach");
  launch_refused(sub, here, y, z, "which CPU@m-ref1 does not reach");
  char long_name[300];
  memset(long_name, 'f', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = 0;
  rig_function *f = NULL;
  assert_int_equal(rig_image_resolve(im, long_name, &f), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "a function name of 299 bytes"));
  rig_image *bad = NULL;
  assert_int_equal(rig_image_load(h1, "not an object", 13, &bad), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "m-ref1"));
  assert_int_equal(rig_image_load(a1, "not an object", 13, &bad), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "loads no code"));
  uint32_t w = 0;
  rig_part words = rig_part_words(&w, 1);
  rig_submission *ws = NULL;
  assert_int_equal(rig_submission_make(h1, &words, 1, &ws), RIG_INVALID);
  rig_submission *shared = launch_make_ok(h1, add, refs, 3, 32); /* a run keeps its block */
  rig_run *run = take_ok(shared);
  grid_ok(run, 0, 1, 64);
  ok(rig_run_shared(run, 0, 1024));
  rig_buffer *bufs[3] = {x, y, z};
  rig_point p;
  assert_int_equal(rig_run_submit(run, bufs, 3, NULL, 0, &p), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "shared memory"));
  rig_submission_release(shared);
  assert_null(rig_device_lost(h1));
  put_ramp(x, 64, 1.0f);
  put_ramp(y, 64, 0.5f);
  ok(rig_point_wait(add_example_run(sub, x, y, z, 64)));
  expect_ramp(z, 64, 1.5f, "z on m-ref1 after the refusals");
  rig_submission_release(sub);
  rig_image_release(im);
  rig_buffer *all[5] = {x, y, z, there, here};
  release_all(all, 5);
  close_release(a1);
  close_release(h1);
  close_release(h2);
  test_server_stop(&s1);
  test_server_stop(&s2);
}

/* A submission on d of one part, slots as the part names them. */
static rig_submission *one_part(rig_device *d, rig_part part) {
  rig_submission *s = NULL;
  check_ok(rig_submission_make(d, &part, 1, &s), "rig_submission_make");
  return s;
}

/* Submits s once over n buffers after the given points; returns its point. */
static rig_point submit_ok(rig_submission *s, rig_buffer **bufs, size_t n, const rig_point *waits,
                           size_t nwaits) {
  rig_run *run = take_ok(s);
  rig_point p;
  check_ok(rig_run_submit(run, bufs, n, waits, nwaits, &p), "rig_run_submit");
  return p;
}

/* Order across this host, m1 and m2 with an asynchronous local device in
 * the chain: the test device's copy (in its memory, which the host
 * addresses), which ends 300 ms after its submit, feeds m1 (a copy that
 * must follow it), m1's launch feeds m2's, and m2's result goes back
 * through the test device's copy again to a host buffer; every result is
 * checked byte by byte. Each step follows the last through the memory it
 * reads. */
static void test_order_through_memory(void **state) {
  (void)state;
  enum { N = 4096 };
  const size_t bytes = N * sizeof(float);
  test_server s1, s2;
  test_server_start(&s1, key);
  test_server_start(&s2, key);
  rig_device *h1 = test_remote_host("m-ord1", &s1, key, 0), *h2 = test_remote_host("m-ord2", &s2, key, 0);
  rig_device *a1 = test_remote_on(h1, "memory:a"), *t = open_ok("test:remote-order,delay_us=300000");
  rig_function *add1 = NULL, *add2 = NULL;
  rig_image *im1 = kernel_load_on(h1, "add.o", "add", &add1);
  rig_image *im2 = kernel_load_on(h2, "add.o", "add", &add2);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *l1 = launch_make_ok(h1, add1, refs, 3, 32);
  rig_submission *l2 = launch_make_ok(h2, add2, refs, 3, 32);
  rig_submission *tcopy = one_part(t, rig_part_copy(0, 1));
  rig_buffer *in = create_ok(t, bytes), *ta = create_ok(t, bytes), *tb = create_ok(t, bytes),
             *tc = create_ok(t, bytes), *hc = create_ok(rig_device_host(), bytes);
  rig_buffer *x1 = create_ok(a1, bytes), *y1 = create_ok(h1, bytes), *z1 = create_ok(h1, bytes);
  rig_buffer *x2 = create_ok(h2, bytes), *y2 = create_ok(h2, bytes), *z2 = create_ok(h2, bytes);
  put_ramp(in, N, 1.0f);
  put_ramp(y1, N, 0.5f);
  put_ramp(y2, N, 0.5f);
  rig_buffer *step1[2] = {in, ta};
  (void)submit_ok(tcopy, step1, 2, NULL, 0); /* here, done 300 ms later */
  ok(rig_buffer_copy(ta, x1));               /* follows the test device's write */
  (void)add_example_run(l1, x1, y1, z1, N);  /* on m1: 1.5 i */
  ok(rig_buffer_copy(z1, x2));               /* m1 to m2 */
  (void)add_example_run(l2, x2, y2, z2, N);  /* on m2: 2 i */
  ok(rig_buffer_copy(z2, tb));               /* back here */
  rig_buffer *step2[2] = {tb, tc};
  (void)submit_ok(tcopy, step2, 2, NULL, 0); /* the test device again */
  ok(rig_buffer_copy(tc, hc));               /* follows it */
  expect_ramp(z1, N, 1.5f, "z1 on m-ord1");
  expect_ramp(z2, N, 2.0f, "z2 on m-ord2");
  expect_ramp(hc, N, 2.0f, "hc here");
  rig_buffer *all[11] = {in, ta, tb, tc, hc, x1, y1, z1, x2, y2, z2};
  release_all(all, 11);
  rig_submission_release(l1);
  rig_submission_release(l2);
  rig_submission_release(tcopy);
  rig_image_release(im1);
  rig_image_release(im2);
  close_release(t);
  close_release(a1);
  close_release(h1);
  close_release(h2);
  test_server_stop(&s1);
  test_server_stop(&s2);
}

/* Whether every byte of b, read as it is with no wait, is v. */
static bool holds_now(rig_buffer *b, uint8_t v) {
  const uint8_t *p = rig_buffer_host_address(b);
  for (size_t i = 0; i < rig_buffer_length(b); i++)
    if (p[i] != v)
      return false;
  return true;
}

/* SUBMIT-3, SUBMIT-9: a submit on a device of another machine that waits
 * for a point of this machine's asynchronous device, whose queue that
 * machine cannot wait on, waits on this host: once the remote submit
 * returns, the test device's fill (in its memory, which the host
 * addresses), which ends 300 ms after its submit, is in place. The other way, the test device's submit that waits for m1's
 * and m2's points finds them reached (the remote driver's work is done
 * when its submit returns), and the chain's last fill lands. */
static void test_order_through_waits(void **state) {
  (void)state;
  enum { N = 1 << 16 };
  test_server s1, s2;
  test_server_start(&s1, key);
  test_server_start(&s2, key);
  rig_device *h1 = test_remote_host("m-wait1", &s1, key, 0), *h2 = test_remote_host("m-wait2", &s2, key, 0);
  rig_device *t = open_ok("test:remote-waits,delay_us=300000");
  rig_buffer *ta = create_ok(t, N), *tb = create_ok(t, N), *r1 = create_ok(h1, N),
             *r2 = create_ok(h2, N);
  ok(rig_buffer_fill(ta, 0, 1));
  ok(rig_buffer_fill(tb, 0, 1));
  rig_submission *tfill = one_part(t, rig_part_fill(0, 0x5a, 1));
  rig_submission *fill1 = one_part(h1, rig_part_fill(0, 0x11, 1));
  rig_submission *fill2 = one_part(h2, rig_part_fill(0, 0x22, 1));
  rig_point pt = submit_ok(tfill, &ta, 1, NULL, 0);
  rig_point p1 = submit_ok(fill1, &r1, 1, &pt, 1);
  assert_true(holds_now(ta, 0x5a)); /* m1's submit waited for it here */
  rig_point p2 = submit_ok(fill2, &r2, 1, &p1, 1);
  rig_point both[2] = {p1, p2};
  rig_point last = submit_ok(tfill, &tb, 1, both, 2);
  ok(rig_point_wait(last));
  assert_true(holds_now(tb, 0x5a));
  expect_bytes(r1, 0, N, 0x11);
  expect_bytes(r2, 0, N, 0x22);
  rig_buffer *all[4] = {ta, tb, r1, r2};
  release_all(all, 4);
  rig_submission_release(tfill);
  rig_submission_release(fill1);
  rig_submission_release(fill2);
  close_release(t);
  close_release(h1);
  close_release(h2);
  test_server_stop(&s1);
  test_server_stop(&s2);
}

int main(void) {
  key = test_key_file("the shared secret of the remote code tests");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wire_code),
      cmocka_unit_test(test_launch_on_remote_host),
      cmocka_unit_test(test_entry_ref_on_remote_host),
      cmocka_unit_test(test_parts_in_one_request),
      cmocka_unit_test(test_copies_with_this_host),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_order_through_memory),
      cmocka_unit_test(test_order_through_waits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
