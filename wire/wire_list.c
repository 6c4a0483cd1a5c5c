/* SPDX-License-Identifier: MIT */
/* wire_list.c: the entries of a LIST reply (wire.h, docs/remote.md): each
 * a fixed RIG_WIRE_ENTRY_BYTES record, texts NUL-padded. */
#include "wire.h"

#include <string.h>

static uint8_t *text_put(uint8_t *p, const char *s, size_t n) {
  memset(p, 0, n);
  memcpy(p, s, strnlen(s, n - 1));
  return p + n;
}

static const uint8_t *text_get(const uint8_t *p, char *s, size_t n) {
  memcpy(s, p, n - 1);
  s[n - 1] = 0;
  return p + n;
}

void rig_wire_entry_put(const rig_wire_entry *e, uint8_t out[RIG_WIRE_ENTRY_BYTES]) {
  uint8_t *p = text_put(out, e->name, sizeof e->name);
  p = text_put(p, e->driver, sizeof e->driver);
  p = rig_wire_write(p, e->type, 4);
  p = rig_wire_write(p, e->opens, 4);
  text_put(p, e->why, sizeof e->why);
}

void rig_wire_entry_get(const uint8_t in[RIG_WIRE_ENTRY_BYTES], rig_wire_entry *e) {
  const uint8_t *p = text_get(in, e->name, sizeof e->name);
  p = text_get(p, e->driver, sizeof e->driver);
  rig_wire_reader r = {p, 8, false};
  e->type = (uint32_t)rig_wire_read(&r, 4);
  e->opens = rig_wire_read(&r, 4) != 0;
  text_get(p + 8, e->why, sizeof e->why);
}
