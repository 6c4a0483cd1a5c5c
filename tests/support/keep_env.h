/* keep_env.h: a cmocka setup and teardown for the tests that change the
 * process's environment or working folder (RIG_DRIVER_PATH and the like, a
 * chdir). The teardown puts both back, and cmocka runs it even when an
 * assertion of the test failed, so the next test starts as the suite set it
 * up, not in a folder and with a path that one failure left behind. */
#ifndef RIG_TEST_KEEP_ENV_H
#define RIG_TEST_KEEP_ENV_H

/* Notes the working folder and the variables rig reads (RIG_DRIVER_PATH,
 * RIG_DRIVER_PATH_ONLY, RIG_CGROUP_ROOT). Returns 0, or -1 where the
 * working folder cannot be read. */
int keep_env_setup(void **state);
/* Puts back what keep_env_setup noted: each variable set again, or unset
 * where it was unset, and the working folder. Returns 0, -1 where one
 * cannot be put back. */
int keep_env_teardown(void **state);

/* cmocka_unit_test for a test that changes them. */
#define keep_env_test(f) cmocka_unit_test_setup_teardown(f, keep_env_setup, keep_env_teardown)

#endif
