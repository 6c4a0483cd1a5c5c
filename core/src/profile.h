/* SPDX-License-Identifier: MIT */
/* profile.h: what profile.c (the switch, the rings, the take) and
 * profile_chrome.c (the trace writer) share, and the calls of core's
 * other files into profile.c. Internal to librig-core. */
#ifndef RIG_CORE_PROFILE_H
#define RIG_CORE_PROFILE_H

#include "device.h"

struct rig_profile {
  rig_profile_record *records; /* sorted by start */
  size_t n;
  char **devices;              /* distinct device names, owned */
  uint64_t *clock_error; /* per device: its spans' bound, ns */
  uint32_t ndevices;
  uint64_t dropped;
};

#endif
