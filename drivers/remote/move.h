/* SPDX-License-Identifier: MIT */
/* move.h: bytes between machines (move.c; docs/remote.md, "How work runs",
 * "Bulk bytes by RMA", "Copies between two machines"). */
#ifndef RIG_REMOTE_MOVE_H
#define RIG_REMOTE_MOVE_H

#include <rig/edge.h>

#include "link.h"

/* A remote allocation: the server's buffer on this handle's link, and
 * where it is large and in the server's host memory, its exposure for
 * RMA (rma.rkey not NULL; link_rma.c). */
typedef struct rig_remote_buf {
  uint64_t id;
  rig_link *link;
  rig_link_rma rma;
} rig_remote_buf;

/* Allocations from this size on are exposed for RMA: below it a chunk's
 * one round trip costs less than the EXPOSE. */
#define RIG_REMOTE_RMA_MIN ((uint64_t)256 << 10)

/* Host bytes (src: an allocation with a host address) into the remote
 * range dst of l's machine: by RMA where dst is exposed, else PUT chunks.
 * rig_remote_get: the reverse. Both count the bytes in
 * rig_remote_bytes_here. Return RIG_EDGE_OK, or the link's failure.
 * Block; lock the link. */
int rig_remote_put(rig_link *l, const rig_edge_range *src, const rig_edge_range *dst,
                   rig_edge_error *err);
int rig_remote_get(rig_link *l, const rig_edge_range *src, const rig_edge_range *dst,
                   rig_edge_error *err);
/* A copy from a buffer of one machine into one of another: the source's
 * server puts the bytes straight into the destination (PUSH) where it
 * can; else they pass through this host, a piece at a time. A failure
 * names the machine lost: "SRC lost: CAUSE" where the source's link broke,
 * "DST lost: CAUSE" where the destination's did (its server then answers
 * no PING either). Blocks; locks both links in turn, never together. */
int rig_remote_copy_across(const rig_edge_range *src, const rig_edge_range *dst,
                           rig_edge_error *err);

/* Bytes the driver moved between this host's memory and other machines'
 * (the capability RIG_REMOTE_BYTES of rig-remote.h). */
extern _Atomic uint64_t rig_remote_bytes_here;

#endif
