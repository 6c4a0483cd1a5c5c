/* SPDX-License-Identifier: MIT */
/* code.c: code on another machine (code.h, docs/remote.md). The object's
 * bytes travel and that machine's `rig serve` loads them with its own
 * librig-core, whose linker links them there; a launch is one request
 * whose reply comes once the launch has run. */
#include "code.h"

#include <string.h>

static uint64_t number_of(const void *handle) { return (uint64_t)(uintptr_t)handle; }

/* The one u64 of a reply, or a fault for a reply of another size. */
static int reply_u64(rig_link *l, const char *what, int r, const uint8_t reply[8], size_t got,
                     uint64_t *out, rig_edge_error *err) {
  if (r == RIG_EDGE_OK && got != 8)
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: a %s reply of %zu bytes", rig_link_machine(l),
                      what, got);
  if (r == RIG_EDGE_OK) {
    rig_wire_reader rd = {reply, 8, false};
    *out = rig_wire_read(&rd, 8);
  }
  return r;
}

int rig_remote_load(rig_link *l, uint32_t dev, const void *bytes, size_t n, void **out_image,
                    uint64_t *out_code_bytes, rig_edge_error *err) {
  uint8_t reply[8];
  size_t got = 0;
  uint64_t image = 0;
  if (n == 0 || n > RIG_WIRE_CHUNK)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: an object of %zu bytes; one of another machine is 1 byte to %u MiB",
                         rig_link_machine(l), n, RIG_WIRE_CHUNK >> 20);
  rig_wire_msg m = {.type = RIG_WIRE_LOAD, .dev = dev};
  int r = rig_link_call(l, &m, bytes, n, reply, sizeof reply, &got, err);
  r = reply_u64(l, "LOAD", r, reply, got, &image, err);
  if (r == RIG_EDGE_OK && image == 0)
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: a LOAD reply of image 0", rig_link_machine(l));
  if (r != RIG_EDGE_OK)
    return r;
  *out_image = (void *)(uintptr_t)image;
  *out_code_bytes = 0; /* counted there, where the code's memory is */
  return RIG_EDGE_OK;
}

int rig_remote_resolve(rig_link *l, void *image, const char *name, void **out_function,
                       rig_edge_error *err) {
  uint8_t reply[8];
  size_t got = 0, n = strlen(name);
  uint64_t entry = 0;
  if (n == 0 || n > RIG_WIRE_NAME_MAX)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: a function name of %zu bytes; one of another machine is 1 to %u",
                         rig_link_machine(l), n, RIG_WIRE_NAME_MAX);
  rig_wire_msg m = {.type = RIG_WIRE_RESOLVE, .image = number_of(image)};
  int r = rig_link_call(l, &m, name, n, reply, sizeof reply, &got, err);
  r = reply_u64(l, "RESOLVE", r, reply, got, &entry, err);
  if (r == RIG_EDGE_OK)
    *out_function = (void *)(uintptr_t)entry;
  return r;
}

int rig_remote_unload(rig_link *l, void *image, rig_edge_error *err) {
  rig_wire_msg m = {.type = RIG_WIRE_UNLOAD, .image = number_of(image)};
  int r = rig_link_call(l, &m, NULL, 0, NULL, 0, NULL, err);
  return r == RIG_EDGE_FAULT ? RIG_EDGE_OK : r;
}

rig_wire_msg rig_remote_launch_msg(uint32_t dev, const rig_edge_part *p) {
  rig_wire_msg m = {.type = RIG_WIRE_LAUNCH, .dev = dev,
                    .entry = number_of(p->u.launch.function),
                    .shared_bytes = p->u.launch.shared_bytes};
  memcpy(m.groups, p->u.launch.groups, sizeof m.groups);
  memcpy(m.threads, p->u.launch.threads, sizeof m.threads);
  return m;
}

int rig_remote_launch(rig_link *l, uint32_t dev, const rig_edge_part *p, rig_edge_error *err) {
  rig_wire_msg m = rig_remote_launch_msg(dev, p);
  return rig_link_call(l, &m, p->u.launch.params, p->u.launch.params_bytes, NULL, 0, NULL, err);
}
