/* plugin.c: librig-driver-setuid.so, the plugin a setuid program must not
 * load from its caller's RIG_DRIVER_PATH (tests/setuid/run.py). It links
 * nothing but the C library, so that a load cannot fail for want of a
 * library a setuid program does not look for, and says on stdout that it
 * was loaded as soon as the dynamic loader runs its constructor: before
 * rig could check anything of it. */
#include <unistd.h>

__attribute__((constructor)) static void loaded(void) {
  static const char msg[] = "PLUGIN LOADED\n";
  (void)!write(1, msg, sizeof msg - 1);
}
