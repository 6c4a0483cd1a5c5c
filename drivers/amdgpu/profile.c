/* SPDX-License-Identifier: MIT */
/* profile.c: the open's work timed by the GPU's own clock (edge ABI 1.6,
 * docs/profiling.md). While a profile is being taken, each part of a value
 * is bracketed by two RELEASE_MEMs that write the GPU's 64-bit clock
 * counter at bottom of pipe (encode.c) into a pair of the stamp area, one
 * of STAMPS; a pair is written as a record once its value is reached, and
 * is free again. The counter runs at gpu_counter_freq kHz (the kernel's
 * amdgpu_gpu_info); rig's clock is an anchor's: the counter read through
 * AMDGPU_INFO_TIMESTAMP and rig_edge_now_ns() right after it, at the hand.
 */
#include <stdlib.h>
#include <string.h>

#include "amdgpu_private.h"

typedef struct entry {
  uint64_t value;
  uint32_t part, kind, queue, label;
} entry;

struct amdprof {
  rig_edge_profile *ring;
  pthread_mutex_t lock; /* the entries: submit, and harvests beside it */
  uint64_t anchor_ticks, anchor_ns, khz;
  uint64_t head, tail; /* pairs begun, pairs written: both only grow */
  entry entries[STAMPS];
};

int profile_hand(void *h, rig_edge_profile *ring, rig_edge_error *err) {
  amddev *d = h;
  uint64_t ticks = 0;
  if (d->prof || d->stopped)
    return RIG_EDGE_OK;
  if (!d->node.gpu.gpu_counter_freq ||
      drm.amdgpu_query_info(d->node.dev, AMDGPU_INFO_TIMESTAMP, sizeof ticks, &ticks) != 0)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no GPU clock to read", d->name);
  amdprof *p = calloc(1, sizeof *p);
  if (!p)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory to time work", d->name);
  p->anchor_ns = rig_edge_now_ns();
  p->anchor_ticks = ticks;
  p->khz = d->node.gpu.gpu_counter_freq;
  p->ring = ring;
  pthread_mutex_init(&p->lock, NULL);
  __atomic_store_n(&d->prof, p, __ATOMIC_RELEASE);
  return RIG_EDGE_OK;
}

bool profile_begin(amddev *d, const rig_edge_work *w, uint32_t i, uint32_t *slot) {
  amdprof *p = __atomic_load_n(&d->prof, __ATOMIC_ACQUIRE);
  if (!p || !rig_edge_profile_on(p->ring))
    return false;
  pthread_mutex_lock(&p->lock);
  bool room = p->head - p->tail < STAMPS;
  if (room) {
    *slot = (uint32_t)(p->head % STAMPS);
    p->entries[*slot] = (entry){.value = w->value,
                                .part = i,
                                .kind = w->parts[i].kind,
                                .queue = w->parts[i].queue,
                                .label = rig_edge_work_label(w, i)};
    p->head++;
  }
  pthread_mutex_unlock(&p->lock);
  return room; /* a full area leaves the part untimed */
}

static uint64_t ns_of(const amdprof *p, uint64_t ticks) {
  int64_t dt = (int64_t)(ticks - p->anchor_ticks);
  return p->anchor_ns + (uint64_t)(dt * 1000000 / (int64_t)p->khz);
}

void profile_harvest(amddev *d, uint64_t reached) {
  amdprof *p = __atomic_load_n(&d->prof, __ATOMIC_ACQUIRE);
  if (!p || pthread_mutex_trylock(&p->lock) != 0)
    return;
  const volatile uint64_t *stamps = (const volatile uint64_t *)((const char *)d->word + 4096);
  while (p->tail < p->head && p->entries[p->tail % STAMPS].value <= reached) {
    uint32_t slot = (uint32_t)(p->tail % STAMPS);
    const entry *e = &p->entries[slot];
    uint64_t start = ns_of(p, stamps[2 * slot]), end = ns_of(p, stamps[2 * slot + 1]);
    rig_edge_span s = {.value = e->value,
                       .start_ns = start,
                       .end_ns = end < start ? start : end,
                       .part = e->part,
                       .kind = e->kind,
                       .queue = e->queue,
                       .label = e->label};
    rig_edge_profile_record(p->ring, &s);
    p->tail++;
  }
  pthread_mutex_unlock(&p->lock);
}

void profile_free(amddev *d) {
  amdprof *p = d->prof;
  if (!p)
    return;
  pthread_mutex_destroy(&p->lock);
  free(p);
  d->prof = NULL;
}
