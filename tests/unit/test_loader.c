/* test_loader.c: the plugin loader and the errors of an open (OPEN-1,
 * OPEN-2, OPEN-29, OPEN-32..36, DOM-4, ERR-4). The bad plugins are built in
 * tests/driver, one way of failing each, and found through RIG_DRIVER_PATH.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/edge.h>
#include <rig/rig.h>

#include "keep_env.h"
#include "util.h"

/* OPEN-1: an unknown driver is Error (RIG_UNAVAILABLE) naming the file. */
static void open_1_unknown_driver(void **state) {
  expect_open("nosuchdriver:0", RIG_UNAVAILABLE, "librig-driver-nosuchdriver.so");
}

/* OPEN-1: a plugin whose vendor library is missing is RIG_UNAVAILABLE, and
 * the message names the missing library. */
static void open_1_missing_vendor_library(void **state) {
  expect_open("novendor", RIG_UNAVAILABLE, "librig-absent-vendor.so");
}

/* OPEN-2: a driver of another ABI major is misuse, named by its file. */
static void open_2_wrong_abi_major(void **state) {
  expect_open("abi2", RIG_INVALID, "librig-driver-abi2.so");
  expect_open("abi2", RIG_INVALID, "ABI 2.");
}

/* OPEN-2: a plugin without the entry symbol. */
static void open_2_no_entry_symbol(void **state) {
  expect_open("noentry", RIG_INVALID, "rig_edge_entry_v1");
}

/* OPEN-2: names that could leave the driver folders are refused. */
static void open_2_name_with_slash_or_dots(void **state) {
  expect_open("../memory:x", RIG_INVALID, "'/' or '..'");
  expect_open("a/b:x", RIG_INVALID, "'/' or '..'");
  expect_open("..:x", RIG_INVALID, "'/' or '..'");
  expect_open(":x", RIG_INVALID, "bad driver name");
  rig_device *d;
  assert_int_equal(rig_device_open(NULL, &d), RIG_INVALID);
  assert_int_equal(rig_device_open("memory:x", NULL), RIG_INVALID);
  assert_int_equal(rig_device_open("", &d), RIG_INVALID);
}

/* How often a plugin's stop ran (OPEN-29). */
static int stops_of(const char *driver) {
  char path[1024];
  const char *dirs = getenv("RIG_DRIVER_PATH");
  assert_non_null(dirs);
  char copy[4096];
  snprintf(copy, sizeof copy, "%s", dirs);
  for (char *save, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, sizeof path, "%s/librig-driver-%s.so", dir, driver);
    if (access(path, F_OK) == 0)
      return plugin_stops(path);
  }
  fail_msg("no plugin %s", driver);
  return -1;
}

/* OPEN-33, OPEN-29: a fault while reading facts is Error "NAME: reason",
 * and the handle make returned is stopped once. */
static void open_33_29_fault_in_facts(void **state) {
  expect_open("faultfacts:0", RIG_UNAVAILABLE, "faultfacts:0: no firmware");
  assert_int_equal(stops_of("faultfacts"), 1);
  expect_open("faultfacts:0", RIG_UNAVAILABLE, "faultfacts:0: no firmware");
  assert_int_equal(stops_of("faultfacts"), 2); /* ERR-4: not stuck opening */
}

/* OPEN-35, OPEN-29: facts that break a rule are misuse; the handle is
 * stopped once. */
static void open_35_29_facts_break_a_rule(void **state) {
  expect_open("badfacts", RIG_INVALID, "alignment is not a power of two");
  assert_int_equal(stops_of("badfacts"), 1);
}

/* OPEN-32: make's Error why comes back unchanged. */
static void open_32_make_error_unchanged(void **state) {
  rig_device *d;
  assert_int_equal(rig_device_open("openerr:7", &d), RIG_UNAVAILABLE);
  assert_string_equal(rig_error_last()->message, "openerr: no device 7");
}

/* A plugin that loads and opens: its device has the facts it stated. */
static void open_31_good_plugin_opens(void **state) {
  rig_device *d, *e;
  assert_int_equal(rig_device_open("good:1", &d), RIG_OK);
  assert_string_equal(rig_device_name(d), "good:1");
  assert_int_equal(rig_device_alignment(d), 64);
  assert_int_equal(rig_device_budget(d), 1 << 20);
  assert_int_equal(rig_device_open("good:1", &e), RIG_OK); /* OPEN-30 */
  assert_ptr_equal(d, e);
  rig_device_release(e);
  assert_int_equal(rig_device_close(d), RIG_OK);
  assert_int_equal(stops_of("good"), 1);
  rig_device_release(d);
}

/* A driver linked into the program, for OPEN-34 and OPEN-36. */
static rig_status reentrant_status = RIG_OK;
static int static_open(const char *args, void **out, rig_edge_error *err);
static int static_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  strcpy(f->arch, "static");
  f->alignment = 16;
  f->budget = 1 << 20;
  for (int k = 0; k < RIG_EDGE_PART_KINDS; k++)
    f->part_queue[k] = RIG_EDGE_NO_QUEUE;
  return RIG_EDGE_OK;
}
static int static_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                           rig_edge_error *err) {
  return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "none");
}
static int static_release(void *h, rig_edge_alloc *a, rig_edge_error *err) { return 0; }
static const rig_edge_driver static_driver = {
    RIG_EDGE_DRIVER_INIT("static"),
    .open = static_open,
    .facts = static_facts,
    .allocate = static_allocate,
    .release = static_release,
};

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, in_open;

static int static_open(const char *args, void **out, rig_edge_error *err) {
  static int handle;
  *out = &handle;
  if (strcmp(args, "reenter") == 0) {
    rig_device *d;
    reentrant_status = rig_device_open_driver("static:reenter", &static_driver, "reenter", &d);
  }
  if (strcmp(args, "slow") == 0) { /* blocks until the test opens the gate */
    pthread_mutex_lock(&gate_lock);
    in_open = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
      pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
  }
  return RIG_EDGE_OK;
}

/* OPEN-36: an open of a name from inside its own open is misuse. */
static void open_36_reentrant_open_is_invalid(void **state) {
  rig_device *d;
  assert_int_equal(rig_device_open_driver("static:reenter", &static_driver, "reenter", &d), RIG_OK);
  assert_int_equal(reentrant_status, RIG_INVALID);
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* OPEN-34: a name open under another driver is misuse. */
static void open_34_name_of_another_driver(void **state) {
  rig_device *m, *d = NULL;
  assert_int_equal(rig_device_open_memory("shared-name", &m), RIG_OK);
  assert_int_equal(rig_device_open_driver("memory:shared-name", &static_driver, "", &d), RIG_INVALID);
  assert_null(d);
  assert_int_equal(rig_device_close(m), RIG_OK);
  rig_device_release(m);
}

static void *open_slow(void *arg) {
  rig_device *d;
  *(rig_status *)arg = rig_device_open_driver("static:slow", &static_driver, "slow", &d);
  if (*(rig_status *)arg != RIG_OK)
    return NULL; /* d was not written (ERR-1) */
  if (rig_device_close(d) != RIG_OK)
    *(rig_status *)arg = rig_error_last()->status;
  rig_device_release(d);
  return NULL;
}

/* DOM-4: while one name's opener runs, opens of other names go on. */
static void dom_4_opens_of_other_names_go_on(void **state) {
  pthread_t t;
  rig_status slow = RIG_INVALID;
  assert_int_equal(pthread_create(&t, NULL, open_slow, &slow), 0);
  pthread_mutex_lock(&gate_lock);
  while (!in_open)
    pthread_cond_wait(&gate_cond, &gate_lock);
  pthread_mutex_unlock(&gate_lock);
  rig_device *m; /* the slow opener is still inside its open */
  assert_int_equal(rig_device_open_memory("meanwhile", &m), RIG_OK);
  assert_int_equal(gate_open, 0);
  pthread_mutex_lock(&gate_lock);
  gate_open = 1;
  pthread_cond_broadcast(&gate_cond);
  pthread_mutex_unlock(&gate_lock);
  pthread_join(t, NULL);
  assert_int_equal(slow, RIG_OK);
  assert_int_equal(rig_device_close(m), RIG_OK);
  rig_device_release(m);
}

/* The table check of a static driver (OPEN-2). */
static void open_2_static_table_checked(void **state) {
  rig_edge_driver t = static_driver;
  t.abi_major = 3;
  rig_device *d;
  assert_int_equal(rig_device_open_driver("static:t", &t, "", &d), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "ABI 3"));
  t = static_driver;
  t.size = 16;
  assert_int_equal(rig_device_open_driver("static:t", &t, "", &d), RIG_INVALID);
  assert_int_equal(rig_device_open_driver("static:t", NULL, "", &d), RIG_INVALID);
}

/* Every driver reads its arguments with librig-edge's strict parser: a key
 * it does not take, a malformed value or a key given twice is RIG_INVALID
 * naming the key, where the memory driver ignored its arguments and the
 * test driver read "abc" as 0 and "yes" as false. */
static void driver_arguments_are_strict(void **state) {
  expect_open("memory:args,k=1", RIG_INVALID, "memory: unknown key 'k' (it takes none");
  expect_open("memory:args,b", RIG_INVALID, "memory: 'b' is not key=value");
  expect_open("test:args,delay_us=abc", RIG_INVALID, "test: delay_us: 'abc' is not a decimal");
  expect_open("test:args,delay_us=4294967296", RIG_INVALID, "delay_us: 4294967296 is out of range");
  expect_open("test:args,queues=3", RIG_INVALID, "queues: 3 is out of range [1, 2]");
  expect_open("test:args,waits=yes", RIG_INVALID, "waits: 'yes' is not 0 or 1");
  expect_open("test:args,host=2", RIG_INVALID, "host: '2' is not 0 or 1");
  expect_open("test:args,shared=16", RIG_INVALID, "shared: 16 is out of range");
  expect_open("test:args,budget=1,budget=2", RIG_INVALID, "budget: given twice");
  expect_open("test:args,colour=blue", RIG_INVALID, "unknown key 'colour'");
  rig_device *d;
  assert_int_equal(rig_device_open("test:args,delay_us=0,queues=2,waits=0", &d), RIG_OK);
  assert_int_equal(rig_device_close(d), RIG_OK);
  rig_device_release(d);
}

/* rig_device_open_io refuses a flag rig_io_flag does not name, naming its bits,
 * where it passed it to the library, which ignored it. */
static void open_io_refuses_unknown_flags(void **state) {
  rig_io_opener o = {"io", "/nonexistent/rig-flags", RIG_IO_READ_ONLY | (1u << 5), 0};
  rig_device *d = (rig_device *)0x1;
  assert_int_equal(rig_device_open_io(&o, &d), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "unknown flags 0x20"));
  assert_ptr_equal(d, (rig_device *)0x1);
}

/* The absolute folder of RIG_DRIVER_PATH that holds driver's plugin. */
static void folder_of(const char *driver, char *out, size_t n) {
  char copy[4096], path[1024];
  snprintf(copy, sizeof copy, "%s", getenv("RIG_DRIVER_PATH"));
  for (char *save, *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    snprintf(path, sizeof path, "%s/librig-driver-%s.so", dir, driver);
    if (dir[0] == '/' && access(path, F_OK) == 0) {
      snprintf(out, n, "%s", dir);
      return;
    }
  }
  fail_msg("no plugin %s", driver);
}

/* A relative entry of RIG_DRIVER_PATH would name another folder at each
 * open, as the current directory changes: the loader skips it, and an open
 * that finds the plugin nowhere says that relative entries were ignored.
 * abi2 never stays loaded (its ABI is refused), so each open looks again. */
static void relative_driver_path_entries_are_ignored(void **state) {
  char dir[1024];
  folder_of("abi2", dir, sizeof dir);
  char *slash = strrchr(dir, '/');
  *slash = 0;
  assert_int_equal(chdir(dir[0] ? dir : "/"), 0); /* the plugin is in ./<slash + 1> */
  char rel[1200];
  snprintf(rel, sizeof rel, "%s", slash + 1);
  setenv("RIG_DRIVER_PATH", rel, 1);
  expect_open("abi2", RIG_UNAVAILABLE, "relative entries of RIG_DRIVER_PATH are ignored");
  snprintf(rel, sizeof rel, "./%s:", slash + 1);
  setenv("RIG_DRIVER_PATH", rel, 1);
  expect_open("abi2", RIG_UNAVAILABLE, "relative entries of RIG_DRIVER_PATH are ignored");
  *slash = '/';
  snprintf(rel, sizeof rel, "%s:%s", slash + 1, dir);   /* an absolute one still counts */
  setenv("RIG_DRIVER_PATH", rel, 1);
  expect_open("abi2", RIG_INVALID, "ABI 2."); /* keep_env puts the path and folder back */
}

/* A misspelt driver: the message lists the drivers the folders do hold, so
 * that the user sees the right name; with RIG_DRIVER_PATH_ONLY=1 it names
 * only the folders it searched (not core's nor the install folder). */
static void missing_driver_names_those_found_and_only_folders_searched(void **state) {
  rig_device *d = NULL;
  assert_int_equal(rig_device_open("memroy:0", &d), RIG_UNAVAILABLE);
  assert_null(d);
  const char *m = rig_error_last()->message, *found = strstr(m, "(drivers found: ");
  if (!found || !strstr(found, "memory") || strstr(found, "memory") > strstr(found, "):"))
    fail_msg("no list of the drivers found, memory among them: %s", m);
  assert_non_null(strstr(m, "beside librig-core"));
  setenv("RIG_DRIVER_PATH_ONLY", "1", 1);
  assert_int_equal(rig_device_open("memroy:0", &d), RIG_UNAVAILABLE);
  unsetenv("RIG_DRIVER_PATH_ONLY");
  m = rig_error_last()->message;
  if (strstr(m, "beside librig-core") || strstr(m, "nor in ") || !strstr(m, "RIG_DRIVER_PATH_ONLY"))
    fail_msg("RIG_DRIVER_PATH_ONLY: names a folder it did not search: %s", m);
  if (!strstr(m, "(drivers found: ") || !strstr(m, "memory"))
    fail_msg("RIG_DRIVER_PATH_ONLY: no list of RIG_DRIVER_PATH's drivers: %s", m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(open_1_unknown_driver),
      cmocka_unit_test(open_1_missing_vendor_library),
      cmocka_unit_test(open_2_wrong_abi_major),
      cmocka_unit_test(open_2_no_entry_symbol),
      cmocka_unit_test(open_2_name_with_slash_or_dots),
      cmocka_unit_test(open_33_29_fault_in_facts),
      cmocka_unit_test(open_35_29_facts_break_a_rule),
      cmocka_unit_test(open_32_make_error_unchanged),
      cmocka_unit_test(open_31_good_plugin_opens),
      cmocka_unit_test(open_36_reentrant_open_is_invalid),
      cmocka_unit_test(open_34_name_of_another_driver),
      cmocka_unit_test(dom_4_opens_of_other_names_go_on),
      cmocka_unit_test(open_2_static_table_checked),
      keep_env_test(relative_driver_path_entries_are_ignored),
      keep_env_test(missing_driver_names_those_found_and_only_folders_searched),
      cmocka_unit_test(driver_arguments_are_strict),
      cmocka_unit_test(open_io_refuses_unknown_flags),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
