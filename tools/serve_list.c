/* SPDX-License-Identifier: MIT */
/* serve_list.c: LIST, the devices of this machine as rig_device_list
 * names them, for `rig info --machine` on another (docs/remote.md). */
#include "serve_private.h"

#include <stdio.h>
#include <string.h>

int serve_list(serve_reply *out) {
  static rig_device_entry e[RIG_WIRE_ENTRIES_MAX]; /* the loop runs one request at a time */
  size_t n = 0;
  rig_status st = rig_device_list(e, RIG_WIRE_ENTRIES_MAX, &n);
  if (st != RIG_OK) {
    out->status = RIG_EDGE_FAULT;
    snprintf(out->text, sizeof out->text, "%.200s", rig_error_last()->message);
    return out->status;
  }
  n = n < RIG_WIRE_ENTRIES_MAX ? n : RIG_WIRE_ENTRIES_MAX;
  for (size_t i = 0; i < n; i++) {
    rig_wire_entry w = {.type = (uint32_t)e[i].type, .opens = e[i].opens};
    snprintf(w.name, sizeof w.name, "%.63s", e[i].name);
    snprintf(w.driver, sizeof w.driver, "%.31s", e[i].driver);
    snprintf(w.why, sizeof w.why, "%.127s", e[i].why);
    rig_wire_entry_put(&w, out->body + i * RIG_WIRE_ENTRY_BYTES);
  }
  out->body_n = n * RIG_WIRE_ENTRY_BYTES;
  return 0;
}
