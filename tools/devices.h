/* SPDX-License-Identifier: MIT */
/* devices.h: what rig info lists, and each device's type. */
#ifndef RIG_TOOLS_DEVICES_H
#define RIG_TOOLS_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

#include <rig/rig.h>

/* A device that opens here, or a driver (or one of its devices) that does
 * not, with why. name opens with rig_device_open, but for driver "io",
 * whose devices are files (rig_device_open_io). */
typedef struct rig_cli_entry {
  char name[64];
  char driver[32];
  char path[256]; /* the plugin's file, or "" where unknown */
  bool opens;
  char why[RIG_MESSAGE_BYTES]; /* the open's message where it does not open */
} rig_cli_entry;

/* Fills out with up to cap entries: every device that opens here, each
 * driver that does not, and io; never the host. Returns their count. Opens
 * and closes each device, so it may block and lock. */
size_t rig_cli_devices(rig_cli_entry *out, size_t cap);

/* d's type: "cpu", "gpu", "memory", "io" or "remote". */
const char *rig_cli_type(const rig_device *d);

/* Why an open failed, in a word, from its message: "no plugin", "no
 * library" (one the plugin needs) or "no device". */
const char *rig_cli_why_word(const char *message);

#endif
