/* SPDX-License-Identifier: MIT */
/* profile.c: the open's work timed by CUDA events (edge ABI 1.6,
 * docs/profiling.md). Not run on this project's CI machine (no GPU): it
 * is built and its symbols checked against cuda.h (check-api.py).
 *
 * While a profile is being taken, submit records an event before and
 * after each part on the stream, from a ring of PAIRS pairs made when
 * core hands the ring over; a pair is free again once its end event
 * completed and its record was written. Times are cuEventElapsedTime from
 * an anchor event, recorded on the idle stream and synchronized when the
 * ring was handed over, whose host time is read right after: rig's clock
 * (rig_edge_now_ns) is the anchor's plus the elapsed time, off by the
 * synchronize's return (microseconds), with the events' half-microsecond
 * resolution.
 */
#include <stdlib.h>

#include "cuda_private.h"

#define PAIRS 512u

typedef struct pair {
  CUevent start, end;
  uint64_t value;
  uint32_t part, kind, queue, label;
} pair;

struct cuprof {
  rig_edge_profile *ring;
  pthread_mutex_t lock;     /* the pairs: submit, and harvests beside it */
  CUevent anchor;
  uint64_t anchor_ns;
  uint64_t head, tail;      /* pairs recorded, pairs written: both only grow */
  pair pairs[PAIRS];
};

static void events_free(cuprof *p) {
  for (uint32_t i = 0; i < PAIRS; i++) {
    if (p->pairs[i].start)
      cu.EventDestroy(p->pairs[i].start);
    if (p->pairs[i].end)
      cu.EventDestroy(p->pairs[i].end);
  }
  if (p->anchor)
    cu.EventDestroy(p->anchor);
}

/* The events and the anchor; the stream is idle (core's first submit
 * while profiling comes before this one's parts). */
static CUresult events_make(cudev *d, cuprof *p) {
  CUresult r = cu.EventCreate(&p->anchor, 0);
  for (uint32_t i = 0; i < PAIRS && r == CUDA_SUCCESS; i++) {
    r = cu.EventCreate(&p->pairs[i].start, 0);
    if (r == CUDA_SUCCESS)
      r = cu.EventCreate(&p->pairs[i].end, 0);
  }
  if (r == CUDA_SUCCESS)
    r = cu.EventRecord(p->anchor, d->stream);
  if (r == CUDA_SUCCESS)
    r = cu.EventSynchronize(p->anchor);
  p->anchor_ns = rig_edge_now_ns();
  return r;
}

int profile_hand(void *h, rig_edge_profile *ring, rig_edge_error *err) {
  cudev *d = h;
  if (!cu.EventCreate || !cu.EventElapsedTime || !cu.EventQuery || !cu.EventSynchronize ||
      !cu.EventRecord || !cu.EventDestroy)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: libcuda has no events", d->name);
  if (d->prof || d->stopped || gpu_bind(d->g) != CUDA_SUCCESS)
    return RIG_EDGE_OK;
  cuprof *p = calloc(1, sizeof *p);
  if (!p)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory to time work", d->name);
  p->ring = ring;
  CUresult r = events_make(d, p);
  if (r != CUDA_SUCCESS) {
    char why[160];
    events_free(p);
    free(p);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: its events: %s", d->name,
                         library_error(r, why, sizeof why));
  }
  pthread_mutex_init(&p->lock, NULL);
  __atomic_store_n(&d->prof, p, __ATOMIC_RELEASE);
  return RIG_EDGE_OK;
}

/* The record of pair e, whose end event completed. */
static void write_pair(cuprof *p, const pair *e) {
  float a = 0, b = 0;
  if (cu.EventElapsedTime(&a, p->anchor, e->start) != CUDA_SUCCESS ||
      cu.EventElapsedTime(&b, p->anchor, e->end) != CUDA_SUCCESS)
    return;
  rig_edge_span s = {.value = e->value, .part = e->part, .kind = e->kind, .queue = e->queue,
                     .label = e->label};
  s.start_ns = p->anchor_ns + (uint64_t)((double)a * 1e6);
  s.end_ns = p->anchor_ns + (uint64_t)((double)b * 1e6);
  rig_edge_profile_record(p->ring, &s);
}

/* Writes the completed pairs in order. p->lock held. */
static void harvest_locked(cuprof *p) {
  for (; p->tail < p->head; p->tail++) {
    const pair *e = &p->pairs[p->tail % PAIRS];
    if (cu.EventQuery(e->end) != CUDA_SUCCESS)
      break; /* not yet, or a loss: it stays until the stop */
    write_pair(p, e);
  }
}

void profile_harvest(cudev *d, bool trylock) {
  cuprof *p = __atomic_load_n(&d->prof, __ATOMIC_ACQUIRE);
  if (!p || (trylock ? pthread_mutex_trylock(&p->lock) != 0 : pthread_mutex_lock(&p->lock) != 0))
    return;
  harvest_locked(p);
  pthread_mutex_unlock(&p->lock);
}

bool profile_before(cudev *d, const rig_edge_work *w, uint32_t i) {
  cuprof *p = d->prof; /* submit set it; submits are serialised */
  if (!p || !rig_edge_profile_on(p->ring))
    return false;
  pthread_mutex_lock(&p->lock);
  if (p->head - p->tail == PAIRS)
    harvest_locked(p);
  bool room = p->head - p->tail < PAIRS;
  pair *e = &p->pairs[p->head % PAIRS];
  if (room && cu.EventRecord(e->start, d->stream) == CUDA_SUCCESS) {
    e->value = w->value;
    e->part = i;
    e->kind = w->parts[i].kind;
    e->queue = w->parts[i].queue;
    e->label = rig_edge_work_label(w, i);
  } else {
    room = false;
  }
  pthread_mutex_unlock(&p->lock);
  return room; /* no room: the part runs untimed */
}

void profile_after(cudev *d) {
  cuprof *p = d->prof;
  pthread_mutex_lock(&p->lock);
  if (cu.EventRecord(p->pairs[p->head % PAIRS].end, d->stream) == CUDA_SUCCESS)
    p->head++;
  pthread_mutex_unlock(&p->lock);
}

void profile_end(cudev *d) {
  cuprof *p = d->prof;
  if (!p)
    return;
  profile_harvest(d, false);
  __atomic_store_n(&d->prof, NULL, __ATOMIC_RELEASE);
  events_free(p);
  pthread_mutex_destroy(&p->lock);
  free(p);
}
