#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *conf_name(void) {
  const char *n = getenv("RIG_CONF_DEVICE");
  return n && *n ? n : "memory:conformance";
}

bool conf_is_host(void) { return strcmp(conf_name(), "CPU") == 0; }

/* Devices this machine may lack: a GPU driver's, which skip where they
 * do not open for want of a plugin, library or device (RIG_UNAVAILABLE).
 * Every other device must open: the memory device, the host and the test
 * device always exist, so their failure to open fails the test. */
static bool may_be_absent(const char *name) { return strncmp(name, "vulkan:", 7) == 0; }

rig_device *conf_open(void) {
  rig_device *d = NULL;
  if (rig_open(conf_name(), &d) != RIG_OK) {
    const rig_error *e = rig_last_error();
    if (e->status == RIG_UNAVAILABLE && may_be_absent(conf_name())) {
      printf("skip: %s does not open here: %s\n", conf_name(), e->message);
      exit(77);
    }
    printf("error: %s does not open: %s: %s\n", conf_name(), rig_status_name(e->status),
           e->message);
    exit(1);
  }
  return d;
}
