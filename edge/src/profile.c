/* SPDX-License-Identifier: MIT */
/* profile.c: what a driver calls to time its work (edge.h, ABI 1.6):
 * the clock, and the writer of a device's ring (profile_ring.h). */
#include <time.h>

#include "profile_ring.h"

RIG_EDGE_API uint64_t rig_edge_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

RIG_EDGE_API void rig_edge_profile_clock_error(rig_edge_profile *ring, uint64_t ns) {
  if (ring)
    atomic_store_explicit(&ring->clock_error_ns, ns, memory_order_relaxed);
}

RIG_EDGE_API bool rig_edge_profile_on(const rig_edge_profile *ring) {
  return ring && atomic_load_explicit(ring->on, memory_order_relaxed);
}

/* Claims a position whose cell is free (its sequence equals it), or
 * answers that the ring is full (the cell still holds the record of a lap
 * ago, which the reader has not taken). */
RIG_EDGE_API void rig_edge_profile_record(rig_edge_profile *ring, const rig_edge_span *s) {
  uint64_t pos = atomic_load_explicit(&ring->head, memory_order_relaxed);
  rig__ring_cell *c;
  for (;;) {
    c = &ring->cells[pos & ring->mask];
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    int64_t diff = (int64_t)(seq - pos);
    if (diff == 0 && atomic_compare_exchange_weak_explicit(&ring->head, &pos, pos + 1,
                                                           memory_order_relaxed,
                                                           memory_order_relaxed))
      break;
    if (diff < 0) {
      atomic_fetch_add_explicit(&ring->dropped, 1, memory_order_relaxed);
      return;
    }
    if (diff > 0)
      pos = atomic_load_explicit(&ring->head, memory_order_relaxed);
  }
  c->span = *s;
  atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
}
