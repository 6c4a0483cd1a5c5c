/* test_remote_vulkan.c: launches on another machine's GPU (docs/remote.md,
 * "Launches on another machine's GPU"): vulkan:0@m1, a `rig serve` on a
 * loopback port whose vulkan:0 is lavapipe here. The add kernel's SPIR-V
 * travels to m1 and loads there; a launch's refs store the device
 * addresses of m1's buffers there, which ALLOC returns, and m1's Vulkan
 * driver reads and writes them. Exits 77 with the reason where the
 * server opens no vulkan:0. Bounds its time through the hang bound and
 * stops its server. */
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

enum { N = 4096 };

static const char *key;
static test_server server;
static rig_device *host, *gpu;

/* n floats of base + i * scale into b. */
static void put_floats(rig_buffer *b, size_t at, int64_t n, float base, float scale) {
  float *v = malloc((size_t)n * sizeof *v);
  assert_non_null(v);
  for (int64_t i = 0; i < n; i++)
    v[i] = base + scale * (float)i;
  ok(rig_buffer_put(b, at, v, (size_t)n * sizeof *v));
  free(v);
}

/* Asserts b holds, from byte at, n floats of base + i * scale, byte for byte. */
static void expect_floats(rig_buffer *b, size_t at, int64_t n, float base, float scale,
                          const char *where) {
  float *got = malloc((size_t)n * sizeof *got);
  assert_non_null(got);
  ok(rig_buffer_get(b, at, got, (size_t)n * sizeof *got));
  for (int64_t i = 0; i < n; i++) {
    float want = base + scale * (float)i;
    if (memcmp(&want, &got[i], sizeof want) != 0)
      fail_msg("%s: float %lld is %g, want %g", where, (long long)i, (double)got[i],
               (double)want);
  }
  free(got);
}

/* z = x + y on vulkan:0@m1 over buffers of that device, read back here,
 * twice over the same buffers with new inputs; then over views (the refs
 * store each view's address there, its offset included). */
static void test_launch_on_remote_gpu(void **state) {
  (void)state;
  rig_function *add = NULL;
  rig_image *im = kernel_load_on(gpu, "kernels/vulkan/add.spv", "add", &add);
  assert_ptr_equal(rig_image_device(im), gpu);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *sub = launch_make_ok(gpu, add, refs, 3, 32);
  rig_buffer *x = create_ok(gpu, N * sizeof(float)), *y = create_ok(gpu, N * sizeof(float)),
             *z = create_ok(gpu, N * sizeof(float));
  uint64_t at = 0;
  ok(rig_submission_address(sub, z, &at));
  assert_int_not_equal(at, 0); /* the address it has there */
  for (int round = 1; round <= 2; round++) {
    put_floats(x, 0, N, 0.0f, 1.0f * (float)round);
    put_floats(y, 0, N, 0.0f, 0.5f * (float)round);
    ok(rig_buffer_fill(z, 0xff, 1));
    ok(rig_point_wait(add_example_run(sub, x, y, z, N)));
    expect_floats(z, 0, N, 0.0f, 1.5f * (float)round, "z on vulkan:0@m1");
  }
  enum { H = N / 2 };
  rig_buffer *xv = NULL, *yv = NULL, *zv = NULL; /* the upper halves */
  ok(rig_buffer_view(x, H * sizeof(float), H * sizeof(float), RIG_READ_WRITE, &xv));
  ok(rig_buffer_view(y, H * sizeof(float), H * sizeof(float), RIG_READ_WRITE, &yv));
  ok(rig_buffer_view(z, H * sizeof(float), H * sizeof(float), RIG_READ_WRITE, &zv));
  ok(rig_buffer_fill(z, 0, 1));
  ok(rig_point_wait(add_example_run(sub, xv, yv, zv, H)));
  expect_floats(z, H * sizeof(float), H, 1.5f * 2 * H, 1.5f * 2, "z's upper half from views");
  float lower[H];
  ok(rig_buffer_get(z, 0, lower, sizeof lower));
  for (int i = 0; i < H; i++)
    assert_true(lower[i] == 0.0f);
  rig_buffer *all[6] = {xv, yv, zv, x, y, z};
  for (int i = 0; i < 6; i++)
    rig_buffer_release(all[i]);
  rig_submission_release(sub);
  rig_image_release(im);
}

/* A submission on vulkan:0@m1 with copies of this machine's bytes in it:
 * the inputs in from this host, the launch there, the result out to this
 * host, checked byte by byte here. A ref to a buffer of m1's host, which
 * the GPU does not reach, is refused before anything runs. */
static void test_copies_and_refusal(void **state) {
  (void)state;
  rig_function *add = NULL;
  rig_image *im = kernel_load_on(gpu, "kernels/vulkan/add.spv", "add", &add);
  rig_ref refs[3] = {rig_ref_read(2, 0), rig_ref_read(3, 8), rig_ref_write(4, 16)};
  rig_part parts[4] = {rig_part_copy(0, 2), rig_part_copy(1, 3), rig_part_launch(add, refs, 3, 32),
                       rig_part_copy(4, 5)};
  rig_submission *sub = NULL;
  ok(rig_submission_make(gpu, parts, 4, &sub));
  const size_t bytes = N * sizeof(float);
  rig_device *here = rig_device_host();
  rig_buffer *b[6] = {create_ok(here, bytes), create_ok(here, bytes), create_ok(gpu, bytes),
                      create_ok(gpu, bytes),  create_ok(gpu, bytes),  create_ok(here, bytes)};
  put_floats(b[0], 0, N, 3.0f, 1.0f);
  put_floats(b[1], 0, N, 1.0f, 0.5f);
  rig_run *run = take_ok(sub);
  uint32_t k = 0;
  ok(rig_submission_block(sub, 2, &k));
  grid_ok(run, k, 64, N / 64);
  ok(rig_run_int64(run, k, 24, N));
  rig_point p;
  ok(rig_run_submit(run, b, 6, NULL, 0, &p));
  ok(rig_point_wait(p));
  expect_floats(b[5], 0, N, 4.0f, 1.5f, "z copied to this host");
  rig_ref r3[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *lone = launch_make_ok(gpu, add, r3, 3, 32);
  rig_buffer *on_host = create_ok(host, bytes);
  run = take_ok(lone);
  grid_ok(run, 0, 64, N / 64);
  rig_buffer *bufs[3] = {b[2], on_host, b[4]};
  assert_int_equal(rig_run_submit(run, bufs, 3, NULL, 0, &p), RIG_INVALID);
  print_message("refused: %s\n", rig_error_last()->message);
  assert_null(rig_device_lost(gpu));
  rig_submission_release(lone);
  rig_buffer_release(on_host);
  for (int i = 0; i < 6; i++)
    rig_buffer_release(b[i]);
  rig_submission_release(sub);
  rig_image_release(im);
}

int main(void) {
  key = test_key_file("the shared secret of the remote GPU tests");
  test_server_start(&server, key);
  host = test_remote_host("m-gpu", &server, key, 0);
  if (rig_device_open_on(host, "vulkan:0", &gpu) != RIG_OK) {
    printf("skipped: vulkan:0@m-gpu does not open: %s\n", rig_error_last()->message);
    close_release(host);
    test_server_stop(&server);
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_launch_on_remote_gpu),
      cmocka_unit_test(test_copies_and_refusal),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  close_release(gpu);
  close_release(host);
  test_server_stop(&server);
  return failed;
}
