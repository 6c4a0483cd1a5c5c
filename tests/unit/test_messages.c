/* test_messages.c: a message longer than its field (rig_error.message,
 * rig_edge_error.message) keeps what it tells the user to do: the paths it
 * names are cut in their middles, the words after them stay
 * (edge/src/message_fit.h, docs/decisions.md "Long messages"). The suite
 * runs this test, with the loader's, from a build under a 200-character
 * folder too (check-long-path.py).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "message_fit.h"
#include "util.h"

/* A path of about n bytes under dir: /dir/aaaa.../bbbb.../leaf. */
static void long_path(char *out, size_t n, const char *dir, const char *leaf) {
  size_t at = (size_t)snprintf(out, n, "%s/", dir);
  while (at + 60 + strlen(leaf) < n) {
    memset(out + at, 'a' + (int)(at % 26), 49);
    out[at + 49] = '/';
    at += 50;
  }
  snprintf(out + at, n - at, "%s", leaf);
}

/* A message that fits is written as it is. */
static void a_short_message_is_whole(void **state) {
  char out[64];
  rig__message_fit(out, sizeof out, "io: /tmp/x: No such file or directory");
  assert_string_equal(out, "io: /tmp/x: No such file or directory");
}

/* Two long paths and the advice after them: the paths are cut in their
 * middles, evenly, each keeping its start and its end, and every word stays. */
static void paths_give_way_to_the_advice(void **state) {
  char a[400], b[400], full[1200], out[RIG_MESSAGE_BYTES];
  long_path(a, sizeof a, "/work/ci", "build/drivers/memory");
  long_path(b, sizeof b, "/opt/prefix", "lib/rig/drivers");
  snprintf(full, sizeof full,
           "no driver 'x': nor beside librig-core (%s), nor in %s; relative entries of "
           "RIG_DRIVER_PATH are ignored ('drivers')",
           a, b);
  rig__message_fit(out, sizeof out, full);
  assert_true(strlen(out) < sizeof out);
  assert_non_null(strstr(out, "no driver 'x': nor beside librig-core (/work/ci/"));
  assert_non_null(strstr(out, "memory), nor in /opt/prefix"));
  assert_non_null(strstr(out, "drivers; relative entries of RIG_DRIVER_PATH are ignored "
                              "('drivers')"));
  /* each path kept the same room: two "..." and no path over the other */
  char *first = strstr(out, "..."), *second = first ? strstr(first + 3, "...") : NULL;
  assert_non_null(second);
  char *close = strchr(out, ')');
  assert_non_null(close);
  size_t kept_a = (size_t)(close - strstr(out, "/work/ci"));
  size_t kept_b = (size_t)(strchr(out, ';') - strstr(out, "/opt/prefix"));
  assert_true(kept_a >= RIG__FIT_PATH_MIN && kept_b >= RIG__FIT_PATH_MIN);
  assert_true(kept_a <= kept_b + 1 && kept_b <= kept_a + 1);
}

/* Words alone longer than the field: the end is cut, within the field. */
static void words_alone_are_cut_at_the_end(void **state) {
  char full[600], out[32];
  memset(full, 'w', sizeof full - 1);
  full[sizeof full - 1] = 0;
  rig__message_fit(out, sizeof out, full);
  assert_int_equal(strlen(out), sizeof out - 1);
}

/* A path is not cut below RIG__FIT_PATH_MIN: the words after twenty long
 * paths, which no cut makes fit, are then cut at the end, and out stays
 * within its field. */
static void many_paths_keep_their_least(void **state) {
  char full[RIG__FIT_SCRATCH] = "", path[120], out[RIG_MESSAGE_BYTES];
  long_path(path, sizeof path, "/p", "leaf");
  for (int i = 0; i < 20; i++)
    snprintf(full + strlen(full), sizeof full - strlen(full), "%s ", path);
  rig__message_fit(out, sizeof out, full);
  assert_true(strlen(out) < sizeof out);
  assert_non_null(strstr(out, "..."));
}

/* Through the API: an io file under a 1000-byte path that does not open
 * says why (the driver's rig_edge_fail, then core's rig__fail); a folder
 * opened as a file says it is not a regular file. */
static void an_open_of_a_long_path_says_why(void **state) {
  char dir[1100];
  long_path(dir, sizeof dir, "/nonexistent-rig", "file");
  rig_io_opener o = {"io", dir, RIG_IO_READ_ONLY, 0};
  rig_device *d = (rig_device *)0x1;
  assert_int_equal(rig_device_open_io(&o, &d), RIG_UNAVAILABLE);
  const char *m = rig_error_last()->message;
  if (!strstr(m, strerror(ENOENT)) || !strstr(m, "/nonexistent-rig/"))
    fail_msg("the reason was cut: %s", m);
  assert_ptr_equal(d, (rig_device *)0x1);

  char here[4096];
  assert_non_null(getcwd(here, sizeof here));
  o.target = here; /* a folder: long wherever the build is */
  assert_int_equal(rig_device_open_io(&o, &d), RIG_UNAVAILABLE);
  if (!strstr(rig_error_last()->message, "not a regular file"))
    fail_msg("the reason was cut: %s", rig_error_last()->message);
}

/* A driver's name whose plugin is nowhere: whatever the folders' lengths
 * (here the build's, 200 characters and more under check-long-path.py),
 * the message names the plugin's file and says where it looked. */
static void a_missing_driver_names_its_file(void **state) {
  expect_open("nosuchdriver:0", RIG_UNAVAILABLE, "librig-driver-nosuchdriver.so is in no");
  const char *m = rig_error_last()->message;
  if (!strstr(m, "nor beside librig-core (/") || !strstr(m, "), nor in /"))
    fail_msg("a folder was lost: %s", m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_short_message_is_whole),
      cmocka_unit_test(paths_give_way_to_the_advice),
      cmocka_unit_test(words_alone_are_cut_at_the_end),
      cmocka_unit_test(many_paths_keep_their_least),
      cmocka_unit_test(an_open_of_a_long_path_says_why),
      cmocka_unit_test(a_missing_driver_names_its_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
