/* test_amdgpu.c: the amdgpu driver through rig's API (suite driver-amdgpu).
 *
 * `test-amdgpu paths WANT` runs where no AMD GPU opens, as on every machine
 * of ours: arguments the driver refuses are RIG_INVALID before any library
 * or node is looked for; amdgpu:0 is RIG_UNAVAILABLE with WANT in its
 * message ("no library" with RIG_AMDGPU_LIBRARY naming no file, "no
 * device" with no render node, "is not a DRM device" with RIG_AMDGPU_NODE
 * naming /dev/null); and rig_device_list lists amdgpu as not opening, with
 * the same reason.
 *
 * `test-amdgpu` (on "amdgpu:0" or RIG_AMDGPU_DEVICE): the facts of a GPU;
 * 77 with the reason where it does not open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/rig.h>

static int fail(const char *what, const char *detail) {
  printf("FAIL: %s: %s\n", what, detail);
  return 1;
}

/* The list's entry of the amdgpu driver: not opening, with want in why. */
static int listed(const char *want) {
  rig_device_entry e[64];
  size_t n = 0;
  if (rig_device_list(e, 64, &n) != RIG_OK)
    return fail("rig_device_list", rig_error_last()->message);
  for (size_t i = 0; i < n && i < 64; i++) {
    if (strcmp(e[i].driver, "amdgpu") != 0)
      continue;
    printf("listed %s: opens %d: %s\n", e[i].name, e[i].opens, e[i].why);
    if (e[i].opens)
      return 77;
    return strstr(e[i].why, want) ? 0 : fail("list's why", e[i].why);
  }
  return fail("rig_device_list", "no entry of the amdgpu driver (is the plugin on the path?)");
}

static int paths(const char *want) {
  static const char *bad[] = {"amdgpu:", "amdgpu:x", "amdgpu:64", "amdgpu:0,colour=1",
                              "amdgpu:0,hang_ms=-1", "amdgpu:0,hang_ms=1,hang_ms=2"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_device *d = NULL;
    rig_status s = rig_device_open(bad[i], &d);
    printf("%s: %s: %s\n", bad[i], rig_status_name(s), rig_error_last()->message);
    if (s != RIG_INVALID)
      return fail(bad[i], "not RIG_INVALID");
  }
  rig_device *d = NULL;
  rig_status s = rig_device_open("amdgpu:0", &d);
  printf("amdgpu:0: %s: %s\n", rig_status_name(s), rig_error_last()->message);
  if (s == RIG_OK) {
    rig_device_close(d);
    rig_device_release(d);
    printf("skip: amdgpu:0 opened: this machine has an AMD GPU\n");
    return 77;
  }
  if (s != RIG_UNAVAILABLE || !strstr(rig_error_last()->message, want))
    return fail("amdgpu:0", "not RIG_UNAVAILABLE with the reason wanted");
  /* A second open says the same: the first one's result is kept. */
  s = rig_device_open("amdgpu:0", &d);
  if (s != RIG_UNAVAILABLE || !strstr(rig_error_last()->message, want))
    return fail("amdgpu:0 again", rig_error_last()->message);
  return listed(want);
}

static int facts(const char *name) {
  rig_device *d = NULL;
  if (rig_device_open(name, &d) != RIG_OK) {
    printf("skip: %s does not open here: %s\n", name, rig_error_last()->message);
    return 77;
  }
  int bad = 0;
  const char *arch = rig_device_arch(d);
  printf("%s: arch %s bus %s budget %llu\n", name, arch, rig_device_bus(d) ? rig_device_bus(d) : "",
         (unsigned long long)rig_device_budget(d));
  if (strncmp(arch, "gfx", 3) != 0)
    bad |= fail("arch", arch);
  if (rig_device_type_of(d) != RIG_DEVICE_TYPE_GPU)
    bad |= fail("type", "not gpu");
  if (rig_device_budget(d) == 0)
    bad |= fail("budget", "0");
  if (!rig_device_computes(d) || rig_device_runs_on_host(d))
    bad |= fail("flags", "computes / runs on host");
  rig_device_close(d);
  rig_device_release(d);
  return bad;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "paths") == 0)
    return paths(argv[2]);
  const char *name = getenv("RIG_AMDGPU_DEVICE");
  return facts(name && *name ? name : "amdgpu:0");
}
