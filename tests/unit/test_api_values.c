/* test_api_values.c: public functions that no other test called, each
 * checked for what its header says it returns: rig_image_retain,
 * rig_function_params and rig_function_threads on the host,
 * rig_run_float and rig_run_double, rig_ref_unordered (ORDER-24), and
 * rig_profile_active and rig_profile_devices. The host runs the launches
 * (tests/kernels/scalars.c and fill_bytes.c), but for ORDER-24's, which
 * need a device whose work stamps memory: Vulkan's fill.spv, where
 * vulkan:0 opens (skipped elsewhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "kernels.h"
#include "util.h"

/* A retained image outlives the loader's release: its functions resolve
 * and run until the last reference goes. */
static void image_retain_keeps_the_image(void **state) {
  rig_image *im = kernel_load("scalars");
  assert_ptr_equal(rig_image_retain(im), im);
  assert_null(rig_image_retain(NULL));
  rig_image_release(im);
  rig_function *f = resolve_ok(im, "scalars");
  assert_ptr_equal(rig_function_image(f), im);
  assert_true(rig_device_equal(rig_image_device(im), rig_device_host()));
  rig_image_release(im);
}

/* The host's linked code states no parameter bytes, and a group of it
 * may have any number of threads. */
static void function_params_and_threads_on_host(void **state) {
  rig_image *im = kernel_load("scalars");
  rig_function *f = resolve_ok(im, "scalars");
  assert_int_equal(rig_function_params(f), 0);
  assert_true(rig_function_threads(f) == UINT64_MAX);
  assert_int_equal(rig_function_params(NULL), 0);
  assert_true(rig_function_threads(NULL) == 0);
  rig_image_release(im);
}

/* What rig_run_float and rig_run_double store is what the kernel reads;
 * a range out of the block or a block that is not is RIG_INVALID. */
static void run_float_and_double(void **state) {
  rig_image *im = kernel_load("scalars");
  rig_function *f = resolve_ok(im, "scalars");
  rig_ref ref = rig_ref_write(0, offsetof(struct scalars, out));
  rig_submission *s = launch_make_ok(rig_device_host(), f, &ref, 1, sizeof(struct scalars));
  rig_buffer *out = create_ok(rig_device_host(), 2 * sizeof(double));
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 1, 1);
  ok(rig_run_float(run, 0, offsetof(struct scalars, f), 1.25f));
  ok(rig_run_double(run, 0, offsetof(struct scalars, d), -3.5e300));
  assert_int_equal(rig_run_double(run, 0, sizeof(struct scalars) - 4, 1.0), RIG_INVALID);
  assert_int_equal(rig_run_float(run, 0, sizeof(struct scalars) - 2, 1.0f), RIG_INVALID);
  assert_int_equal(rig_run_float(run, 1, 0, 1.0f), RIG_INVALID);
  assert_int_equal(rig_run_double(run, 1, 0, 1.0), RIG_INVALID);
  rig_point p;
  ok(rig_run_submit(run, &out, 1, NULL, 0, &p));
  double got[2];
  ok(rig_buffer_get(out, 0, got, sizeof got));
  assert_true(got[0] == 1.25);
  assert_true(got[1] == -3.5e300);
  rig_buffer_release(out);
  rig_submission_release(s);
  rig_image_release(im);
}

/* Submits a launch of fill_bytes over b through ref, filling it with
 * byte: its point. */
static rig_point fill_through(rig_function *f, rig_ref ref, rig_buffer *b, uint8_t byte) {
  rig_submission *s = launch_make_ok(rig_device_host(), f, &ref, 1, sizeof(struct fill_bytes));
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 1, 64);
  ok(rig_run_int64(run, 0, offsetof(struct fill_bytes, n), 64));
  ok(rig_run_int32(run, 0, offsetof(struct fill_bytes, pattern), byte));
  ok(rig_run_int32(run, 0, offsetof(struct fill_bytes, size), 1));
  rig_point p;
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  rig_submission_release(s);
  return p;
}

/* Submits one launch of fill.spv (tests/kernels/vulkan/fill.comp) on d
 * over b (64 words) through ref: its point. */
static rig_point vk_fill_through(rig_device *d, rig_function *f, rig_ref ref, rig_buffer *b) {
  rig_submission *s = launch_make_ok(d, f, &ref, 1, 24);
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 1, 64);
  ok(rig_run_int32(run, 0, 8, 7));
  ok(rig_run_int32(run, 0, 12, 0));
  ok(rig_run_int32(run, 0, 16, 64));
  rig_point p;
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  rig_submission_release(s);
  return p;
}

/* ORDER-24: nothing later follows work done through an unordered ref:
 * its point enters no stamp that later work and host access follow,
 * where the same launch through an ordered ref stamps its write. On the
 * first Vulkan device, where one opens: the host's own work stamps
 * nothing in any case (ORDER-21). The constructor keeps the ref and marks
 * it. */
static void order_24_an_unordered_ref_stamps_nothing(void **state) {
  rig_ref w = rig_ref_write(0, 0);
  rig_ref u = rig_ref_unordered(w);
  assert_int_equal(u.kind, RIG_REF_WRITE);
  assert_int_equal(u.at, w.at);
  assert_int_equal(u.slot, 0);
  assert_true(u.flags & RIG_PART_UNORDERED);
  assert_false(w.flags & RIG_PART_UNORDERED);
  rig_device *d = open_or_skip("vulkan:0");
  rig_function *f;
  rig_image *im = kernel_load_on(d, "kernels/vulkan/fill.spv", "fill", &f);
  rig_buffer *a = create_ok(d, 256), *b = create_ok(d, 256);
  rig_point pu = vk_fill_through(d, f, u, a), po = vk_fill_through(d, f, w, b);
  rig_point write, use;
  rig_buffer_stamps(a, d, &write, &use);
  assert_true(write == RIG_POINT_NONE && use == RIG_POINT_NONE);
  rig_buffer_stamps(b, d, &write, &use);
  assert_true(write == po && use == po);
  ok(rig_point_wait(pu)); /* the program orders its unordered work itself */
  expect_bytes(a, 0, 1, 7);
  expect_bytes(b, 0, 1, 7);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_image_release(im);
  close_release(d);
}

/* rig_profile_active follows start and stop; a profile of host launches
 * names the host among its devices, and no device past its count. */
static void profile_active_and_devices(void **state) {
  assert_false(rig_profile_active());
  rig_profile_start(64);
  assert_true(rig_profile_active());
  rig_image *im = kernel_load("fill_bytes");
  rig_function *f = resolve_ok(im, "fill_bytes");
  rig_buffer *b = create_ok(rig_device_host(), 64);
  (void)fill_through(f, rig_ref_write(0, offsetof(struct fill_bytes, dst)), b, 1);
  rig_profile_stop();
  assert_false(rig_profile_active());
  rig_profile *p = NULL;
  ok(rig_profile_take(&p));
  uint32_t n = rig_profile_devices(p);
  assert_true(n >= 1);
  bool host = false;
  for (uint32_t i = 0; i < n; i++)
    host = host || strcmp(rig_profile_device(p, i), "CPU") == 0;
  assert_true(host);
  assert_null(rig_profile_device(p, n));
  size_t nrec;
  const rig_profile_record *r = rig_profile_records(p, &nrec);
  assert_true(nrec >= 1);
  for (size_t i = 0; i < nrec; i++)
    assert_true(r[i].device < n);
  rig_profile_free(p);
  rig_buffer_release(b);
  rig_image_release(im);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(image_retain_keeps_the_image),
      cmocka_unit_test(function_params_and_threads_on_host),
      cmocka_unit_test(run_float_and_double),
      cmocka_unit_test(order_24_an_unordered_ref_stamps_nothing),
      cmocka_unit_test(profile_active_and_devices),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
