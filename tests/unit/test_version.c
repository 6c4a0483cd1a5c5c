/* test_version.c: the version macros of <rig/version.h> and rig_version()
 * agree, and both are the project's version, which the suite passes as
 * argv[1] (meson.project_version()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

static const char *project_version;

static void macros_and_call_agree(void **state) {
  char built[32];
  snprintf(built, sizeof built, "%d.%d.%d", RIG_VERSION_MAJOR, RIG_VERSION_MINOR,
           RIG_VERSION_PATCH);
  assert_string_equal(built, RIG_VERSION_STRING);
  assert_string_equal(rig_version(), RIG_VERSION_STRING);
  assert_int_equal(rig_version_number(), RIG_VERSION_NUMBER);
  assert_int_equal(rig_version_number() >> 16, RIG_VERSION_MAJOR);
  assert_int_equal((rig_version_number() >> 8) & 0xff, RIG_VERSION_MINOR);
  assert_int_equal(rig_version_number() & 0xff, RIG_VERSION_PATCH);
}

static void is_the_project_version(void **state) {
  assert_non_null(project_version);
  assert_string_equal(rig_version(), project_version);
}

int main(int argc, char **argv) {
  project_version = argc > 1 ? argv[1] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(macros_and_call_agree),
      cmocka_unit_test(is_the_project_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
