#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *conf_name(void) {
  const char *n = getenv("RIG_CONF_DEVICE");
  return n && *n ? n : "memory:conformance";
}

bool conf_is_host(void) { return strcmp(conf_name(), "CPU") == 0; }

rig_device *conf_open(void) {
  rig_device *d = NULL;
  if (rig_open(conf_name(), &d) != RIG_OK) {
    printf("skip: %s does not open here: %s\n", conf_name(), rig_last_error()->message);
    exit(77);
  }
  return d;
}
