/* SPDX-License-Identifier: MIT */
/* magazine.h: the fast path of each thread's magazine (magazine.c), inline
 * in buffer.c's create and release so that a cache hit costs less than
 * malloc+free (bench/create.c). Only buffer.c and magazine.c include it. */
#ifndef RIG_MAGAZINE_H
#define RIG_MAGAZINE_H

#include "alloc.h"

#define RIG__MAG 16

typedef struct rig__mag {
  _Atomic int busy;             /* held by the owner or a drainer */
  _Atomic int drain;            /* a drainer from another thread is at work */
  _Atomic uint32_t n;
  rig_buffer *b[RIG__MAG];      /* each the only record of its allocation */
  /* Each entry's device and size, so that a take compares without
   * following b to its allocation. */
  const rig_device *dev[RIG__MAG];
  uint64_t size[RIG__MAG];      /* bytes << 2 | kind */
  struct rig__mag *next;
} rig__mag;

RIG__HIDDEN extern _Thread_local rig__mag *rig__mine __attribute__((tls_model("initial-exec")));
/* Whether membarrier(2) serves drainers from other threads. */
RIG__HIDDEN extern bool rig__mag_asym;
/* Takes m's flag with an exchange, yielding while another holds it. */
RIG__HIDDEN void rig__mag_enter(rig__mag *m);
/* Makes this thread's magazine; NULL when no memory. */
RIG__HIDDEN rig__mag *rig__mag_new(void);
/* The entry of d and want whose points are done, newest first; m entered. */
RIG__HIDDEN rig_buffer *rig__mag_scan(rig__mag *m, const rig_device *d, uint64_t want);

static inline void rig__mag_leave(rig__mag *m) {
  atomic_store_explicit(&m->busy, 0, memory_order_release);
}

/* The owner's entry: false while another thread drains m, which the owner
 * then leaves alone. The signal fence only keeps the compiler from moving
 * the load above the store; the drainer's membarrier does the rest. */
static inline bool rig__mag_enter_own(rig__mag *m) {
  if (__builtin_expect(!rig__mag_asym, 0)) {
    rig__mag_enter(m);
    return true;
  }
  atomic_store_explicit(&m->busy, 1, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  if (__builtin_expect(!atomic_load_explicit(&m->drain, memory_order_relaxed), 1))
    return true;
  rig__mag_leave(m);
  return false;
}

static inline uint64_t rig__mag_key(uint64_t bytes, rig_kind kind) {
  return bytes << 2 | (uint64_t)kind;
}

/* Queues b, the only record of its allocation, at its last release, where
 * the cache would keep its memory (RECLAIM-11, RECLAIM-12, RECLAIM-47):
 * no borrow, a device that is not lost, stopped or io, and its budget not
 * exceeded. False otherwise. The memory still counts in its budget. */
static inline bool rig__mag_put(rig_buffer *b) {
  rig__alloc *a = b->alloc;
  const rig_device *d = b->dev; /* a's own: b is no borrow */
  if (atomic_load_explicit(&a->refs, memory_order_relaxed) != 1 || b->borrow || !a->keepable ||
      !atomic_load_explicit(&d->mem.mag_ok, memory_order_relaxed) ||
      atomic_load_explicit(&d->mem.allocated, memory_order_relaxed) >
          atomic_load_explicit(&d->mem.budget, memory_order_relaxed))
    return false;
  rig__mag *m = rig__mine;
  if (__builtin_expect(!m, 0) && !(m = rig__mag_new()))
    return false;
  if (atomic_load_explicit(&m->n, memory_order_relaxed) >= RIG__MAG || !rig__mag_enter_own(m))
    return false;
  uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed); /* a drain only lowers it */
  m->b[n] = b;
  m->dev[n] = d;
  m->size[n] = rig__mag_key(a->bytes, a->kind);
  atomic_store_explicit(&m->n, n + 1, memory_order_relaxed);
  rig__mag_leave(m);
  rig__note_collection();
  return true;
}

/* A queued buffer of d of exactly bytes and kind whose points are done,
 * the newest first, as a create of the size just released takes it.
 * Entries change only by this thread or by a drain, which only removes:
 * a count unchanged once entered means the entry read before is there. */
static inline rig_buffer *rig__mag_take(rig_device *d, uint64_t bytes, rig_kind kind) {
  rig__mag *m = rig__mine;
  uint32_t n;
  if (!m || !(n = atomic_load_explicit(&m->n, memory_order_relaxed)) || !rig__mag_enter_own(m))
    return NULL;
  uint64_t want = rig__mag_key(bytes, kind);
  rig_buffer *b;
  if (__builtin_expect(atomic_load_explicit(&m->n, memory_order_relaxed) == n &&
                           m->dev[n - 1] == d && m->size[n - 1] == want &&
                           rig__stamps_empty(m->b[n - 1]->alloc),
                       1)) {
    b = m->b[n - 1];
    atomic_store_explicit(&m->n, n - 1, memory_order_relaxed);
  } else {
    b = rig__mag_scan(m, d, want);
  }
  rig__mag_leave(m);
  return b;
}

#endif
