/* test_sample.c: what the sample driver (drivers/sample) chooses for
 * itself, beyond what the conformance suite checks on every device: its
 * arguments, its fixed rings (work past them is refused, work that fills
 * them waits for room), and parts split over its two queues. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

/* An index past its devices is no device; a bad key is a bad argument. */
static void sample_refuses_bad_names(void **state) {
  expect_open("sample:4", RIG_UNAVAILABLE, "sample: no device '4' (0..3)");
  expect_open("sample:x", RIG_UNAVAILABLE, "sample: no device 'x'");
  expect_open("sample:", RIG_UNAVAILABLE, "sample: no device ''");
  expect_open("sample:0,k=8", RIG_INVALID, "budget");
  expect_open("sample:0,budget=0", RIG_INVALID, "budget");
  expect_open("sample:0,budget=1,budget=2", RIG_INVALID, "given twice");
}

/* budget=N is the device's budget; its facts are those the driver states. */
static void sample_states_its_facts(void **state) {
  rig_device *d = NULL;
  assert_int_equal(rig_device_open("sample:1,budget=65536", &d), RIG_OK);
  assert_int_equal(rig_device_budget(d), 65536);
  assert_string_equal(rig_device_arch(d), "sample");
  assert_int_equal(rig_device_alignment(d), 256);
  assert_true(rig_device_computes(d));
  assert_false(rig_device_runs_on_host(d));
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* rig_device_launches: the host runs launches; the sample and memory
 * devices, which give launch parts no queue, do not, though both compute
 * (copies, fills); NULL neither. */
static void launches_says_which_devices_load_code(void **state) {
  rig_device *d = NULL, *m = NULL;
  assert_int_equal(rig_device_open("sample:2", &d), RIG_OK);
  assert_int_equal(rig_device_open("memory:launches", &m), RIG_OK);
  assert_true(rig_device_launches(rig_device_host()));
  assert_false(rig_device_launches(d));
  assert_true(rig_device_computes(d));
  assert_false(rig_device_launches(m));
  assert_false(rig_device_launches(NULL));
  assert_int_equal(rig_device_close(d), RIG_OK);
  assert_int_equal(rig_device_close(m), RIG_OK);
  rig_device_release(d);
  rig_device_release(m);
}

/* A submission of more parts than the rings hold is refused; one that
 * fits runs, its fills (queue 0) and copies (queue 1) in the order their
 * memory asks. */
static void sample_rings_bound_a_submission(void **state) {
  enum { PARTS = 300 }; /* past the rings' 256 */
  static rig_part parts[PARTS];
  rig_device *d = NULL;
  rig_buffer *a, *b;
  rig_submission *s;
  rig_run *r;
  rig_point p;
  assert_int_equal(rig_device_open("sample:2", &d), RIG_OK);
  assert_int_equal(rig_buffer_create(d, 4096, &a), RIG_OK);
  assert_int_equal(rig_buffer_create(d, 4096, &b), RIG_OK);
  for (uint32_t i = 0; i < PARTS; i++)
    parts[i] = i % 2 ? rig_part_copy(0, 1) : rig_part_fill(0, i / 2 + 1, 4);
  rig_buffer *bufs[2] = {a, b};
  for (size_t n = PARTS; n >= 200; n -= 100) {
    assert_int_equal(rig_submission_make(d, parts, n, &s), RIG_OK);
    assert_int_equal(rig_submission_take(s, &r), RIG_OK);
    rig_status st = rig_run_submit(r, bufs, 2, NULL, 0, &p);
    assert_int_equal(st, n > 256 ? RIG_INVALID : RIG_OK);
    if (st == RIG_OK)
      assert_int_equal(rig_point_wait(p), RIG_OK);
    rig_submission_release(s);
  }
  uint32_t w = 0;
  assert_int_equal(rig_buffer_get(b, 4092, &w, 4), RIG_OK);
  assert_int_equal(w, 100); /* the last fill, copied: part 198's */
  assert_false(rig_device_lost(d));
  rig_buffer_release(a);
  rig_buffer_release(b);
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* More pieces of work than the rings hold at once: submits wait for room
 * and every piece runs, in order. */
static void sample_waits_for_room(void **state) {
  rig_device *d = NULL;
  rig_buffer *a, *b;
  rig_point p = RIG_POINT_NONE;
  assert_int_equal(rig_device_open("sample:3", &d), RIG_OK);
  assert_int_equal(rig_buffer_create(d, 1 << 16, &a), RIG_OK);
  assert_int_equal(rig_buffer_create(d, 1 << 16, &b), RIG_OK);
  for (uint32_t i = 1; i <= 500; i++) {
    assert_int_equal(rig_buffer_submit_fill(i % 2 ? a : b, i, 4, &p), RIG_OK);
    assert_int_equal(rig_buffer_submit_copy(i % 2 ? a : b, i % 2 ? b : a, &p), RIG_OK);
  }
  assert_int_equal(rig_point_wait(p), RIG_OK);
  uint32_t w = 0;
  assert_int_equal(rig_buffer_get(a, 0, &w, 4), RIG_OK);
  assert_int_equal(w, 500); /* b's last fill, copied into a */
  rig_buffer_release(a);
  rig_buffer_release(b);
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sample_refuses_bad_names),
      cmocka_unit_test(sample_states_its_facts),
      cmocka_unit_test(launches_says_which_devices_load_code),
      cmocka_unit_test(sample_rings_bound_a_submission),
      cmocka_unit_test(sample_waits_for_room),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
