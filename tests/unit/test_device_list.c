/* test_device_list.c: rig_device_list and the device types
 * (docs/finding-devices.md). RIG_DRIVER_PATH names this build's driver
 * folders and tests/driver, whose bad plugins each fail in one way; the
 * list must show each of them with why, and the devices that open here
 * with their types: the host, memory, vulkan:0 where a Vulkan device (Mesa's
 * lavapipe) is installed, cuda with why where no GPU is.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "keep_env.h"

#define MAX 256
static rig_device_entry list[MAX];
static size_t count;

static void list_ok(void) {
  ok(rig_device_list(list, MAX, &count));
  assert_true(count <= MAX);
}

/* The entry named name, or NULL. */
static const rig_device_entry *entry(const char *name) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(list[i].name, name) == 0)
      return &list[i];
  return NULL;
}

static const rig_device_entry *entry_ok(const char *name) {
  const rig_device_entry *e = entry(name);
  if (!e)
    fail_msg("no entry %s among %zu", name, count);
  return e;
}

static void expect_opens(const char *name, rig_device_type type) {
  const rig_device_entry *e = entry_ok(name);
  if (!e->opens)
    fail_msg("%s does not open: %s", name, e->why);
  assert_string_equal(e->why, "");
  assert_int_equal(e->type, type);
}

static void expect_refused(const char *name, const char *why) {
  const rig_device_entry *e = entry_ok(name);
  assert_false(e->opens);
  if (!strstr(e->why, why))
    fail_msg("%s: why is '%s', not '%s'", name, e->why, why);
}

/* How often the good plugin's stop ran: the list closes what it opened. */
static int good_stops(void) { return plugin_stops(entry_ok("good:0")->path); }

/* The host first, then each plugin's devices with their types and paths. */
static void lists_host_and_plugins(void **state) {
  list_ok();
  assert_string_equal(list[0].name, "CPU");
  assert_string_equal(list[0].driver, "host");
  assert_string_equal(list[0].path, "");
  assert_true(list[0].opens);
  assert_int_equal(list[0].type, RIG_DEVICE_TYPE_CPU);
  expect_opens("memory:0", RIG_DEVICE_TYPE_MEMORY);
  const rig_device_entry *m = entry_ok("memory:0");
  assert_string_equal(m->driver, "memory");
  assert_non_null(strstr(m->path, "/librig-driver-memory.so"));
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "sample:%d", i);
    expect_opens(name, RIG_DEVICE_TYPE_GPU);
  }
  expect_opens("test:0", RIG_DEVICE_TYPE_GPU);
  /* The io library needs a target: listed by its name, with why. */
  expect_refused("io", "rig_device_open_io");
  assert_int_equal(entry_ok("io")->type, RIG_DEVICE_TYPE_IO);
}

/* Plugins that do not load or open are listed with why; a driver without
 * devices() (the bad plugins leave it NULL) is probed as DRIVER:0. */
static void lists_bad_plugins_with_why(void **state) {
  list_ok();
  expect_refused("abi2", "ABI 2.");
  expect_refused("noentry", "rig_edge_entry_v1");
  expect_refused("novendor", "librig-absent-vendor.so");
  expect_refused("openerr:0", "openerr: no device 0");
  expect_refused("badfacts:0", "alignment is not a power of two");
  expect_opens("good:0", RIG_DEVICE_TYPE_UNKNOWN);
}

/* Vulkan's first device opens where a Vulkan device is installed; lavapipe
 * runs on the host's processors and says so. Where none is, the entry says
 * why. */
static void lists_vulkan(void **state) {
  list_ok();
  const rig_device_entry *e = entry("vulkan:0");
  if (!e) {
    const rig_device_entry *v = entry("vulkan");
    if (!v)
      skip(); /* the Vulkan driver is not built here */
    assert_false(v->opens);
    assert_true(v->why[0] != '\0');
    printf("vulkan: %s\n", v->why);
    skip();
  }
  if (!e->opens)
    fail_msg("vulkan:0 is listed but does not open: %s", e->why);
  assert_true(e->type == RIG_DEVICE_TYPE_CPU || e->type == RIG_DEVICE_TYPE_GPU);
  rig_device *d = open_ok("vulkan:0");
  assert_int_equal(rig_device_type_of(d), e->type);
  close_release(d);
}

/* CUDA without a GPU: listed as the driver, with why ("no library" on a
 * machine without libcuda); with one, cuda:0 opens as a GPU. */
static void lists_cuda(void **state) {
  list_ok();
  const rig_device_entry *e = entry("cuda:0");
  if (e) {
    expect_opens("cuda:0", RIG_DEVICE_TYPE_GPU);
    return;
  }
  e = entry("cuda");
  if (!e)
    skip(); /* built with -Dcuda=disabled */
  assert_false(e->opens);
  if (!strstr(e->why, "no library") && !strstr(e->why, "no device"))
    fail_msg("cuda: why is '%s'", e->why);
}

/* A plugin of a third party, in a folder of its own on RIG_DRIVER_PATH,
 * is listed as any other (here the good test plugin under another name). */
static void lists_third_party_plugin(void **state) {
  list_ok();
  const char *good = entry_ok("good:0")->path;
  char dir[] = "/tmp/rig-list-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[512], cmd[2048];
  snprintf(path, sizeof path, "%s/librig-driver-thirdparty.so", dir);
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", good, path);
  assert_int_equal(system(cmd), 0);
  char *saved = strdup(getenv("RIG_DRIVER_PATH"));
  char *more = malloc(strlen(saved) + strlen(dir) + 2);
  sprintf(more, "%s:%s", saved, dir);
  setenv("RIG_DRIVER_PATH", more, 1);
  list_ok();
  setenv("RIG_DRIVER_PATH", saved, 1);
  expect_opens("thirdparty:0", RIG_DEVICE_TYPE_UNKNOWN);
  assert_string_equal(entry_ok("thirdparty:0")->path, path);
  assert_string_equal(entry_ok("thirdparty:0")->driver, "thirdparty");
  unlink(path);
  rmdir(dir);
  free(more);
  free(saved);
}

/* The list closes a device it opened, and leaves open one the program
 * holds: its probe reuses it. */
static void closes_only_what_it_opened(void **state) {
  list_ok();
  int before = good_stops();
  list_ok();
  assert_int_equal(good_stops(), before + 1);
  rig_device *d = open_ok("good:0");
  list_ok();
  assert_int_equal(good_stops(), before + 1);
  assert_null(rig_device_lost(d));
  expect_opens("good:0", RIG_DEVICE_TYPE_UNKNOWN);
  close_release(d);
  assert_int_equal(good_stops(), before + 2);
}

/* NULL n, NULL out with room: RIG_INVALID. cap 0 counts; a short cap
 * writes only what fits and still counts all. */
static void bad_arguments_and_short_caps(void **state) {
  size_t n = 0, all = 0;
  assert_int_equal(rig_device_list(list, MAX, NULL), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "n is NULL"));
  assert_int_equal(rig_device_list(NULL, 3, &n), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "out is NULL"));
  ok(rig_device_list(NULL, 0, &all));
  assert_true(all > 2);
  rig_device_entry two[3];
  memset(two, 0x5a, sizeof two);
  ok(rig_device_list(two, 2, &n));
  assert_int_equal(n, all);
  assert_string_equal(two[0].name, "CPU");
  assert_int_equal((unsigned char)two[2].name[0], 0x5a); /* untouched */
}

/* The types' names, and the type of devices open here. */
static void type_names_and_types(void **state) {
  assert_string_equal(rig_device_type_name(RIG_DEVICE_TYPE_UNKNOWN), "unknown");
  assert_string_equal(rig_device_type_name(RIG_DEVICE_TYPE_CPU), "cpu");
  assert_string_equal(rig_device_type_name(RIG_DEVICE_TYPE_GPU), "gpu");
  assert_string_equal(rig_device_type_name(RIG_DEVICE_TYPE_MEMORY), "memory");
  assert_string_equal(rig_device_type_name(RIG_DEVICE_TYPE_IO), "io");
  assert_string_equal(rig_device_type_name(RIG_DEVICE_TYPE_REMOTE), "remote");
  assert_string_equal(rig_device_type_name((rig_device_type)99), "unknown");
  assert_string_equal(rig_device_type_name((rig_device_type)-1), "unknown");
  assert_int_equal(rig_device_type_of(NULL), RIG_DEVICE_TYPE_UNKNOWN);
  assert_int_equal(rig_device_type_of(rig_device_host()), RIG_DEVICE_TYPE_CPU);
  rig_device *m = open_ok("memory:types");
  assert_int_equal(rig_device_type_of(m), RIG_DEVICE_TYPE_MEMORY);
  close_release(m);
  char file[] = "/tmp/rig-types-XXXXXX";
  int fd = mkstemp(file);
  assert_true(fd >= 0);
  close(fd);
  rig_io_opener o = {.library = "io", .target = file, .flags = RIG_IO_CREATE, .size = 4096};
  rig_device *io;
  ok(rig_device_open_io(&o, &io));
  assert_int_equal(rig_device_type_of(io), RIG_DEVICE_TYPE_IO);
  close_release(io);
  unlink(file);
}

/* RIG_DRIVER_PATH_ONLY=1 stands for a machine with only the drivers on
 * RIG_DRIVER_PATH: none beside core or in the install folder is found. */
static void driver_path_only(void **state) {
  setenv("RIG_DRIVER_PATH", "/nonexistent-rig-folder", 1);
  /* Without it, the build tree's drivers are found beside core. */
  list_ok();
  const char *memory = entry_ok("memory:0")->path;
  if (!strstr(memory, "/drivers/memory/librig-driver-memory.so"))
    fail_msg("memory:0 from %s, not beside core in the build tree", memory);
  setenv("RIG_DRIVER_PATH_ONLY", "1", 1);
  list_ok();
  assert_int_equal(count, 1); /* the host alone */
  rig_device *d;
  assert_int_equal(rig_device_open("nosuchdriver2:0", &d), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "RIG_DRIVER_PATH_ONLY"));
} /* keep_env puts RIG_DRIVER_PATH back and unsets RIG_DRIVER_PATH_ONLY */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lists_host_and_plugins),
      cmocka_unit_test(lists_bad_plugins_with_why),
      cmocka_unit_test(lists_vulkan),
      cmocka_unit_test(lists_cuda),
      keep_env_test(lists_third_party_plugin),
      cmocka_unit_test(closes_only_what_it_opened),
      cmocka_unit_test(bad_arguments_and_short_caps),
      cmocka_unit_test(type_names_and_types),
      keep_env_test(driver_path_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
