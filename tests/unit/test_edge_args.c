/* test_edge_args.c: librig-edge's parser of drivers' arguments,
 * rig_edge_args_parse (edge.h): strict numbers, booleans and words, and a
 * message naming the key for each refusal, with no key changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/edge.h>

enum { K, HOST, VALIDATE, NTH, NKEYS };

static void keys_of(rig_edge_arg *keys) {
  keys[K] = (rig_edge_arg){.key = "k", .type = RIG_EDGE_ARG_NUMBER, .min = 1, .max = 4096,
                           .value = 8};
  keys[HOST] = (rig_edge_arg){.key = "host", .type = RIG_EDGE_ARG_BOOL, .value = 1};
  keys[VALIDATE] = (rig_edge_arg){.key = "validate", .type = RIG_EDGE_ARG_WORD,
                                  .words = "0|1|count", .value = 0};
  keys[NTH] = (rig_edge_arg){.key = "fault_nth", .type = RIG_EDGE_ARG_NUMBER, .max = UINT64_MAX};
}

/* Parses args with the keys above; fails the test unless the result is want
 * and, for a refusal, the message holds needle and no key changed. */
static void expect(const char *args, int want, const char *needle) {
  rig_edge_arg keys[NKEYS], before[NKEYS];
  keys_of(keys);
  memcpy(before, keys, sizeof keys);
  rig_edge_error err = {0};
  size_t head = 99;
  int r = rig_edge_args_parse("drv", args, keys, NKEYS, &head, &err);
  if (r != want || (needle && !strstr(err.message, needle)))
    fail_msg("'%s': %d '%s', want %d '%s'", args, r, err.message, want, needle ? needle : "");
  if (want != RIG_EDGE_OK) {
    assert_memory_equal(keys, before, sizeof keys);
    assert_int_equal(head, 99);
    assert_true(strncmp(err.message, "drv: ", 5) == 0);
  }
}

static void good_arguments_set_the_keys_given(void **state) {
  rig_edge_arg keys[NKEYS];
  keys_of(keys);
  rig_edge_error err = {0};
  size_t head = 0;
  assert_int_equal(rig_edge_args_parse("drv", "0,k=1,validate=count,fault_nth=18446744073709551615",
                                       keys, NKEYS, &head, &err), RIG_EDGE_OK);
  assert_int_equal(head, 1);
  assert_true(keys[K].given && keys[K].value == 1);
  assert_true(!keys[HOST].given && keys[HOST].value == 1); /* its default */
  assert_true(keys[VALIDATE].given && keys[VALIDATE].value == 2);
  assert_true(keys[NTH].given && keys[NTH].value == UINT64_MAX);
  keys_of(keys);
  assert_int_equal(rig_edge_args_parse("drv", "name-3", keys, NKEYS, &head, &err), RIG_EDGE_OK);
  assert_int_equal(head, 6);
  assert_false(keys[K].given);
  assert_int_equal(rig_edge_args_parse("drv", "", keys, NKEYS, &head, &err), RIG_EDGE_OK);
  assert_int_equal(head, 0);
  assert_int_equal(rig_edge_args_parse("drv", ",host=0,k=4096", keys, NKEYS, &head, &err),
                   RIG_EDGE_OK);
  assert_true(head == 0 && keys[HOST].value == 0 && keys[K].value == 4096);
}

static void numbers_are_decimal_digits_in_range(void **state) {
  expect("0,k=abc", RIG_EDGE_UNSUPPORTED, "k: 'abc' is not a decimal number");
  expect("0,k=1x", RIG_EDGE_UNSUPPORTED, "k: '1x'");
  expect("0,k=-1", RIG_EDGE_UNSUPPORTED, "k: '-1'");
  expect("0,k=+1", RIG_EDGE_UNSUPPORTED, "k: '+1'");
  expect("0,k= 1", RIG_EDGE_UNSUPPORTED, "k: ' 1'");
  expect("0,k=0x10", RIG_EDGE_UNSUPPORTED, "k: '0x10'");
  expect("0,k=0", RIG_EDGE_UNSUPPORTED, "k: 0 is out of range [1, 4096]");
  expect("0,k=4097", RIG_EDGE_UNSUPPORTED, "k: 4097 is out of range");
  expect("0,fault_nth=18446744073709551616", RIG_EDGE_UNSUPPORTED, "fault_nth: '18446744073709551616'");
  expect("0,k=", RIG_EDGE_UNSUPPORTED, "k: empty value");
  uint64_t v = 7;
  assert_true(rig_edge_args_number("255", 3, 0, 255, &v) && v == 255);
  assert_false(rig_edge_args_number("256", 3, 0, 255, &v));
  assert_false(rig_edge_args_number("", 0, 0, 255, &v));
  assert_int_equal(v, 255);
}

static void booleans_are_0_or_1(void **state) {
  expect("0,host=2", RIG_EDGE_UNSUPPORTED, "host: '2' is not 0 or 1");
  expect("0,host=yes", RIG_EDGE_UNSUPPORTED, "host: 'yes'");
  expect("0,host=01", RIG_EDGE_UNSUPPORTED, "host: '01'");
  expect("0,host=", RIG_EDGE_UNSUPPORTED, "host: empty value");
}

static void words_are_one_of_the_list(void **state) {
  expect("0,validate=yes", RIG_EDGE_UNSUPPORTED, "validate: 'yes' is not one of 0|1|count");
  expect("0,validate=counting", RIG_EDGE_UNSUPPORTED, "validate: 'counting'");
  expect("0,validate=coun", RIG_EDGE_UNSUPPORTED, "validate: 'coun'");
}

static void unknown_twice_and_malformed_entries(void **state) {
  expect("0,colour=blue", RIG_EDGE_UNSUPPORTED, "unknown key 'colour' (keys: k, host, validate");
  expect("0,K=1", RIG_EDGE_UNSUPPORTED, "unknown key 'K'");
  expect("0,k=1,k=2", RIG_EDGE_UNSUPPORTED, "k: given twice");
  expect("0,k=1,host", RIG_EDGE_UNSUPPORTED, "'host' is not key=value");
  expect("0,,k=1", RIG_EDGE_UNSUPPORTED, "an empty argument");
  expect("0,k=1,", RIG_EDGE_UNSUPPORTED, "an empty argument");
  expect("0,=1", RIG_EDGE_UNSUPPORTED, "unknown key ''");
  /* A refusal after good entries changes none of them (expect checks). */
  expect("0,k=2,host=0,validate=1,host=7", RIG_EDGE_UNSUPPORTED, "host: given twice");
  rig_edge_error err = {0};
  assert_int_equal(rig_edge_args_parse("none", "x,a=1", NULL, 0, NULL, &err),
                   RIG_EDGE_UNSUPPORTED);
  assert_non_null(strstr(err.message, "none: unknown key 'a' (it takes none"));
}

/* The io library's argument, which rig_device_open_io makes: its numbers are read
 * as rig_edge_args_number reads them, so an overflow is refused, not
 * wrapped, and a flag no io library of this ABI knows is refused. */
static void io_arguments(void **state) {
  rig_edge_io_args a = {0};
  assert_int_equal(rig_edge_io_args_parse("rig-io1 5 4096 /a,b=c", &a), RIG_EDGE_OK);
  assert_true(a.flags == 5 && a.size == 4096 && strcmp(a.target, "/a,b=c") == 0);
  assert_int_equal(rig_edge_io_args_parse("rig-io1 8 0 /x", &a), RIG_EDGE_UNSUPPORTED);
  assert_int_equal(rig_edge_io_args_parse("rig-io1 0 18446744073709551616 /x", &a),
                   RIG_EDGE_UNSUPPORTED);
  assert_int_equal(rig_edge_io_args_parse("rig-io1 0 36893488147419103233 /x", &a),
                   RIG_EDGE_UNSUPPORTED);
  assert_int_equal(rig_edge_io_args_parse("rig-io1 0 1 ", &a), RIG_EDGE_UNSUPPORTED);
  assert_int_equal(rig_edge_io_args_parse("rig-io1 +0 1 /x", &a), RIG_EDGE_UNSUPPORTED);
  assert_int_equal(rig_edge_io_args_parse("rig-io1 0 1", &a), RIG_EDGE_UNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(good_arguments_set_the_keys_given),
      cmocka_unit_test(numbers_are_decimal_digits_in_range),
      cmocka_unit_test(booleans_are_0_or_1),
      cmocka_unit_test(words_are_one_of_the_list),
      cmocka_unit_test(unknown_twice_and_malformed_entries),
      cmocka_unit_test(io_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
