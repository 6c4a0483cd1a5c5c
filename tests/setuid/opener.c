/* opener.c: the program tests/setuid/run.py makes setuid. It opens
 * "setuid:0", the plugin of this folder, and prints the open's status and
 * message; the plugin prints "PLUGIN LOADED" if it was loaded. It links
 * rig's objects in, so that the dynamic loader of a setuid program, which
 * ignores $ORIGIN run paths, needs no library of the build. */
#include <stdio.h>

#include <rig/rig.h>

/* Under AddressSanitizer: LeakSanitizer cannot trace a setuid process,
 * and a leak is not what this test looks for. Set here, since the
 * sanitizer may not read ASAN_OPTIONS in a setuid process. */
#define DEFAULT_VISIBLE __attribute__((visibility("default"), used))
DEFAULT_VISIBLE const char *__asan_default_options(void);
DEFAULT_VISIBLE const char *__asan_default_options(void) { return "detect_leaks=0"; }
DEFAULT_VISIBLE const char *__lsan_default_options(void);
DEFAULT_VISIBLE const char *__lsan_default_options(void) { return "detect_leaks=0"; }

int main(void) {
  rig_device *d = NULL;
  rig_status st = rig_device_open("setuid:0", &d);
  printf("%s: %s\n", rig_status_name(st), st ? rig_error_last()->message : "opened");
  fflush(stdout);
  return 0;
}
