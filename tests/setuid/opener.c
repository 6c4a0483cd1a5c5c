/* opener.c: the program tests/setuid/run.py makes setuid. It opens
 * "setuid:0", the plugin of this folder, and prints the open's status and
 * message; the plugin prints "PLUGIN LOADED" if it was loaded. It links
 * rig's objects in, so that the dynamic loader of a setuid program, which
 * ignores $ORIGIN run paths, needs no library of the build. */
#include <stdio.h>

#include <rig/rig.h>

int main(void) {
  rig_device *d = NULL;
  rig_status st = rig_open("setuid:0", &d);
  printf("%s: %s\n", rig_status_name(st), st ? rig_last_error()->message : "opened");
  fflush(stdout);
  return 0;
}
