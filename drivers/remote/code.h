/* SPDX-License-Identifier: MIT */
/* code.h: code on another machine (docs/remote.md, "Code and launches"):
 * the remote driver's load, resolve and unload, and its launch parts, each
 * one request on the machine's link. An image is the server's number for
 * it, a function the entry address the server's linker gave it there, so
 * that an entry ref (SYM-2) stores the address that machine's code calls. */
#ifndef RIG_REMOTE_CODE_H
#define RIG_REMOTE_CODE_H

#include <rig/edge.h>

#include "link.h"

/* Sends the object (at most RIG_WIRE_CHUNK bytes) to be loaded on device
 * dev of l's machine, whose linker links it there. *out_image is the
 * server's image; *out_code_bytes 0: the code's memory is counted on that
 * machine, by its own core. The linker's refusal is RIG_EDGE_UNAVAILABLE
 * with its message. Blocks up to the hang bound; locks the link. */
int rig_remote_load(rig_link *l, uint32_t dev, const void *bytes, size_t n, void **out_image,
                    uint64_t *out_code_bytes, rig_edge_error *err);
/* The function name of image, or *out_function NULL where it has none;
 * RIG_EDGE_UNSUPPORTED for a name that is empty or over RIG_WIRE_NAME_MAX
 * bytes. Blocks up to the hang bound; locks the link. */
int rig_remote_resolve(rig_link *l, void *image, const char *name, void **out_function,
                       rig_edge_error *err);
/* Gives the server's image back; on a broken link it went with the
 * connection. Blocks up to the hang bound; locks the link. */
int rig_remote_unload(rig_link *l, void *image, rig_edge_error *err);
/* Runs launch part p on device dev of l's machine: its parameter block,
 * refs stored as that machine's addresses, travels with the grid, and the
 * reply comes once the launch has run there. Blocks; locks the link;
 * allocates nothing. */
int rig_remote_launch(rig_link *l, uint32_t dev, const rig_edge_part *p, rig_edge_error *err);
/* The LAUNCH request of p on dev, its parameter block not included. */
rig_wire_msg rig_remote_launch_msg(uint32_t dev, const rig_edge_part *p);

#endif
