/* test_edge_mistakes.c: what a driver's author meets (issue 37), in
 * process, under the sanitizers: tests/outside/xor.c, a driver written
 * outside the tree, linked here (XOR_LINKED) and opened through its table,
 * with each mistake its argument chooses; and the same table stating an
 * older minor. tests/outside/check-outside.py builds the same source as a
 * plugin against an installed rig. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/edge.h>
#include <rig/rig.h>
#include <rig/submission.h>

#define XOR_LINKED
#include "../outside/xor.c"

/* Opens "xor:ARGS" through the table; *out NULL where it fails. */
static rig_status open_xor(const rig_edge_driver *t, const char *args, rig_device **out) {
  char name[96];
  snprintf(name, sizeof name, "xor:%s", args);
  *out = NULL;
  return rig_device_open_driver(name, t, args, out);
}

static void expect_refused(const char *args, const char *field) {
  rig_device *d;
  assert_int_equal(open_xor(&xor_table, args, &d), RIG_INVALID);
  const char *m = rig_error_last()->message;
  if (!strstr(m, "facts break a rule (OPEN-35)") || !strstr(m, field))
    fail_msg("open xor:%s: %s; want OPEN-35 and %s", args, m, field);
}

/* OPEN-35: each fact at fault is named, with the rule. */
static void open_35_facts_name_the_field(void **state) {
  expect_refused("0,mistake=pastqueue", "facts.part_queue[RIG_EDGE_PART_WORDS] is queue 1");
  expect_refused("0,mistake=launch", "facts.part_queue[RIG_EDGE_PART_LAUNCH]");
  expect_refused("0,mistake=launch", "no load");
  expect_refused("0,mistake=nocomputes", "COMPUTES");
}

/* ABI 1.9: the kinds xor leaves unset have no queue, so a words part is
 * refused at make, naming the device, and the device serves on. */
static void unset_part_queue_is_no_queue(void **state) {
  rig_device *d;
  assert_int_equal(open_xor(&xor_table, "0", &d), RIG_OK);
  static const uint32_t words[2] = {1, 2};
  rig_part part = rig_part_words(words, 2);
  rig_submission *s = NULL;
  assert_int_equal(rig_submission_make(d, &part, 1, &s), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "has no queue for part"));
  assert_null(rig_device_lost(d));
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* A driver of minor 8 keeps what zeroed facts meant: queue 0, for words
 * and launches alike, and opens as it did before 1.9. */
static void before_1_9_unset_is_queue_0(void **state) {
  static rig_edge_driver old; /* core keeps the table while the record lives */
  old = xor_table;
  old.abi_minor = 8;
  rig_device *d;
  assert_int_equal(open_xor(&old, "1", &d), RIG_OK);
  static const uint32_t words[2] = {1, 2};
  rig_part part = rig_part_words(words, 2);
  rig_submission *s = NULL;
  if (rig_submission_make(d, &part, 1, &s) != RIG_OK)
    fail_msg("%s", rig_error_last()->message);
  rig_submission_release(s);
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* DOM-6: a SYNCHRONOUS submit that returns with its word below the value
 * loses the device, saying so, where it used to leave every wait for the
 * value waiting for good (hang_ms 0). */
static void synchronous_submit_that_stores_nothing_is_a_fault(void **state) {
  rig_device *d;
  rig_buffer *a, *b;
  assert_int_equal(open_xor(&xor_table, "2,mistake=nostore", &d), RIG_OK);
  assert_int_equal(rig_buffer_create(d, 64, &a), RIG_OK);
  assert_int_equal(rig_buffer_create(d, 64, &b), RIG_OK);
  assert_int_equal(rig_buffer_copy(a, b), RIG_LOST);
  const char *m = rig_error_last()->message;
  if (!strstr(m, "SYNCHRONOUS driver's submit returned with its word at 0, below the work's "
                 "value 1"))
    fail_msg("%s", m);
  assert_non_null(rig_device_lost(d));
  rig_buffer_release(a);
  rig_buffer_release(b);
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* ABI 1.9: the model and version a driver states. */
static void model_and_version_are_the_drivers(void **state) {
  rig_device *d;
  assert_int_equal(open_xor(&xor_table, "3", &d), RIG_OK);
  assert_string_equal(rig_device_model(d), "xor host memory");
  assert_string_equal(rig_device_driver_version(d), "xor 0.3");
  assert_false(rig_device_queue_waits(d));
  assert_string_equal(rig_device_model(rig_device_host()), "");
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(open_35_facts_name_the_field),
      cmocka_unit_test(unset_part_queue_is_no_queue),
      cmocka_unit_test(before_1_9_unset_is_queue_0),
      cmocka_unit_test(synchronous_submit_that_stores_nothing_is_a_fault),
      cmocka_unit_test(model_and_version_are_the_drivers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
