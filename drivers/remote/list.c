/* SPDX-License-Identifier: MIT */
/* list.c: the remote host's RIG_REMOTE_MACHINE record (rig-remote.h): the
 * other machine's device list, asked of its server once. */
#include "list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rig_remote_machine *rig_remote_list(rig_link *l) {
  size_t cap = RIG_WIRE_ENTRIES_MAX * RIG_WIRE_ENTRY_BYTES, got = 0;
  uint8_t *reply = malloc(cap);
  rig_remote_machine *m = calloc(1, sizeof *m);
  rig_edge_error err;
  rig_wire_msg req = {.type = RIG_WIRE_LIST};
  if (!reply || !m || rig_link_call(l, &req, NULL, 0, reply, cap, &got, &err) != RIG_EDGE_OK ||
      got % RIG_WIRE_ENTRY_BYTES != 0) {
    free(reply);
    free(m);
    return NULL;
  }
  m->size = sizeof *m;
  m->n = (uint32_t)(got / RIG_WIRE_ENTRY_BYTES);
  for (uint32_t i = 0; i < m->n; i++) {
    rig_wire_entry w;
    rig_wire_entry_get(reply + (size_t)i * RIG_WIRE_ENTRY_BYTES, &w);
    rig_remote_entry *e = &m->entries[i];
    snprintf(e->name, sizeof e->name, "%s", w.name);
    snprintf(e->driver, sizeof e->driver, "%s", w.driver);
    snprintf(e->why, sizeof e->why, "%s", w.why);
    e->type = (int32_t)w.type;
    e->opens = w.opens;
  }
  free(reply);
  return m;
}
