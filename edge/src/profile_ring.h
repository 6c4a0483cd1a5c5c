/* SPDX-License-Identifier: MIT */
/* profile_ring.h: the ring a device's timings go into (edge.h's
 * rig_edge_profile), shared by librig-edge, whose rig_edge_profile_record
 * writes it, and librig-core, which makes it and takes its records
 * (core/src/profile.c). Private to the two libraries, which are built
 * and installed together: no driver sees the layout.
 *
 * A bounded queue of many writers and one reader (the profile's taker,
 * under its lock), after Dmitry Vyukov's: each cell carries a sequence
 * number that says whose turn it is. A writer claims a position with one
 * compare-exchange on head, writes its cell, then publishes it by storing
 * the sequence; the reader takes cells in order while they are published
 * and hands each back to the writers a lap later. No writer waits for
 * another or for the reader: a full ring drops the record and counts it.
 */
#ifndef RIG_EDGE_PROFILE_RING_H
#define RIG_EDGE_PROFILE_RING_H

#include <stdatomic.h>

#include <rig/edge.h>

typedef struct rig__ring_cell {
  _Atomic uint64_t seq; /* pos: free for the writer of pos; pos + 1: written */
  rig_edge_span span;
} rig__ring_cell;

struct rig_edge_profile {
  const _Atomic bool *on;     /* core's switch: a profile is being taken */
  uint64_t mask;              /* cells - 1, cells a power of two */
  _Alignas(64) _Atomic uint64_t head; /* the next position a writer claims */
  _Atomic uint64_t dropped;   /* records a full ring dropped */
  _Atomic uint64_t clock_error_ns; /* rig_edge_profile_clock_error's bound */
  _Alignas(64) uint64_t tail; /* the reader's next position */
  rig__ring_cell cells[];
};

/* Takes the next record into *out; false when none is published. One
 * reader at a time. */
static inline bool rig__ring_take(rig_edge_profile *r, rig_edge_span *out) {
  rig__ring_cell *c = &r->cells[r->tail & r->mask];
  if (atomic_load_explicit(&c->seq, memory_order_acquire) != r->tail + 1)
    return false;
  *out = c->span;
  atomic_store_explicit(&c->seq, r->tail + r->mask + 1, memory_order_release);
  r->tail++;
  return true;
}

#endif
