/* SPDX-License-Identifier: MIT */
/* stamps.c: each allocation's stamps, per device the point of its last
 * write and of its last use (PRE-17, ORDER-8, ORDER-9, ORDER-18..22).
 *
 * An entry belongs to the device of its points' slot. Entries whose points
 * are all reached order nothing, so a new device's point takes the place of
 * such an entry. A write follows every use it saw (ORDER-9), so after it
 * its point stands for all of those; a point another thread stamped
 * meanwhile stays (ORDER-26). A read that finds every entry held by other
 * devices' unreached reads waits for the oldest one on the host: the one
 * case where a submit waits under its device's lock, for work that waits
 * on nothing of that device. Views and borrows share their allocation's
 * stamps (LIFE-2).
 *
 * Writers, rig__stamps_add and rig__stamps_add_unordered, take the
 * allocation's lock, its sequence made odd, and only under the submit
 * lock of the device whose point they store. Readers take no lock: they
 * copy the stamps between two reads of the sequence, and copy again if a
 * writer was at work. So every thread that holds an allocation's lock
 * holds a submit lock too, which a fork's prepare handler takes (fork.c):
 * no child of fork finds one held.
 */
#include <sched.h>
#include <string.h>

#include "alloc.h"

static bool reached(rig_point p) {
  bool stopped;
  return p == 0 || rig__point_state(p, &stopped) == RIG__REACHED;
}

/* The entry for p's device, or a free or spent one it may take; NULL when
 * four other devices hold unreached points. */
static rig__stamp *entry_for(rig__alloc *a, rig_point p) {
  rig__stamp *spent = NULL;
  for (int i = 0; i < RIG__STAMPS; i++) {
    rig__stamp *e = &a->stamps[i];
    if (e->use && rig_point_slot(e->use) == rig_point_slot(p))
      return e;
    if (!spent && (e->use == 0 || reached(e->use)))
      spent = e;
  }
  return spent;
}

/* A writer's change, between two steps of the sequence, which is the
 * allocation's lock: a writer takes it from even to odd with one locked
 * instruction, where a mutex took two more (a copy stamps two memories).
 * Writers meet only where two devices stamp one memory at once; one that
 * finds another at work yields to it, as a reader does. Its stores are
 * releases, so a reader that sees one sees the odd step before it; a
 * reader's loads are acquires, so its second read of the sequence comes
 * after them (no fence: TSan models none). */
static uint32_t write_begin(rig__alloc *a) {
  uint32_t s = atomic_load_explicit(&a->seq, memory_order_relaxed);
  for (;;) {
    if (s & 1) {
      sched_yield(); /* another writer, maybe preempted */
      s = atomic_load_explicit(&a->seq, memory_order_relaxed);
    } else if (atomic_compare_exchange_weak_explicit(&a->seq, &s, s + 1, memory_order_acquire,
                                                     memory_order_relaxed))
      return s;
  }
}

static void write_end(rig__alloc *a, uint32_t s) {
  atomic_store_explicit(&a->seq, s + 2, memory_order_release);
}

/* What a reader copies: one writer's state, whole. */
typedef struct snapshot {
  rig__stamp stamps[RIG__STAMPS];
  rig_point unordered[RIG__STAMPS];
} snapshot;

static void read_stamps(const rig__alloc *a, snapshot *out) {
  for (;;) {
    uint32_t s = atomic_load_explicit(&a->seq, memory_order_acquire);
    if (!(s & 1)) {
      for (int i = 0; i < RIG__STAMPS; i++) {
        out->stamps[i].write = __atomic_load_n(&a->stamps[i].write, __ATOMIC_ACQUIRE);
        out->stamps[i].use = __atomic_load_n(&a->stamps[i].use, __ATOMIC_ACQUIRE);
        out->unordered[i] = __atomic_load_n(&a->unordered[i], __ATOMIC_ACQUIRE);
      }
      if (atomic_load_explicit(&a->seq, memory_order_relaxed) == s)
        return;
    } else
      sched_yield(); /* a writer between two stores, maybe preempted */
  }
}

/* Entries are written under the allocation's lock and read without it, so
 * their fields are stored atomically. */
static void set(rig__stamp *e, rig_point write, rig_point use) {
  __atomic_store_n(&e->write, write, __ATOMIC_RELEASE);
  __atomic_store_n(&e->use, use, __ATOMIC_RELEASE);
}

/* Whether the work at p followed e's points: they are p's device's own
 * (device order), reached, or among the points it waited for. Another
 * thread may have stamped a point after this work gathered its own, and
 * that point it does not follow (ORDER-26). */
static bool followed(const rig__stamp *e, rig_point p, const rig_point *waited, uint32_t n) {
  if (!e->use || rig_point_slot(e->use) == rig_point_slot(p) || reached(e->use))
    return true;
  for (uint32_t i = 0; i < n; i++)
    if (rig_point_slot(waited[i]) == rig_point_slot(e->use) && waited[i] >= e->use)
      return true;
  return false;
}

void rig__stamps_add(rig__alloc *a, rig_point p, bool write, const rig_point *waited,
                     uint32_t nwaited) {
  /* One change: a reader sees the entries a write follows go only with
   * the write's own point there, but where the write waits for room. */
  uint32_t s = write_begin(a);
  if (write) /* a write follows every use it waited for: their entries go */
    for (int i = 0; i < RIG__STAMPS; i++)
      if (followed(&a->stamps[i], p, waited, nwaited))
        set(&a->stamps[i], 0, 0);
  rig__stamp *e;
  while (!(e = entry_for(a, p))) {
    rig_point oldest = a->stamps[0].use;
    write_end(a, s);
    (void)rig__point_wait(oldest);
    s = write_begin(a);
  }
  bool same = e->use && rig_point_slot(e->use) == rig_point_slot(p);
  set(e, write ? p : same ? e->write : 0, p);
  __atomic_store_n(&a->stamped, true, __ATOMIC_RELEASE);
  write_end(a, s);
}

/* The unordered entry of p's device, or a free or reached one. */
static rig_point *unordered_for(rig__alloc *a, rig_point p) {
  rig_point *spent = NULL;
  for (int i = 0; i < RIG__STAMPS; i++) {
    rig_point *u = &a->unordered[i];
    if (*u && rig_point_slot(*u) == rig_point_slot(p))
      return u;
    if (!spent && reached(*u))
      spent = u;
  }
  return spent;
}

void rig__stamps_add_unordered(rig__alloc *a, rig_point p) {
  rig_point *u;
  uint32_t s = write_begin(a);
  while (!(u = unordered_for(a, p))) { /* as rig__stamps_add: the oldest first */
    rig_point oldest = a->unordered[0];
    write_end(a, s);
    (void)rig__point_wait(oldest);
    s = write_begin(a);
  }
  __atomic_store_n(u, p, __ATOMIC_RELEASE);
  __atomic_store_n(&a->stamped, true, __ATOMIC_RELEASE);
  write_end(a, s);
}

/* A point a use must follow: pending ones are written to out; a dropped one
 * makes the use Lost, unless it is a read of a stopped device (LMEM-14). */
static int consider(rig_point p, bool is_write_point, rig_point *out, int *n, int cap) {
  bool stopped;
  if (p == 0)
    return 0;
  switch (rig__point_state(p, &stopped)) {
  case RIG__REACHED:
    return 0;
  case RIG__DROPPED:
    if (!is_write_point && stopped)
      return 0;
    return RIG_LOST;                                   /* LMEM-10, LMEM-12 */
  case RIG__PENDING:
    if (*n < cap)
      out[(*n)++] = p;
    return 0;
  }
  return 0;
}

/* Whether p is a value of own's: work on own follows it in device order
 * (ORDER-2), so it needs no look at its state, which costs a lookup of
 * its device (slot.c). An earlier device of own's slot gave the values up
 * to own's start. */
static bool own_point(const rig_device *own, rig_point p) {
  return own && rig_point_slot(p) == own->slot && rig_point_value(p) > own->start;
}

/* rig__stamps_needed of stamped memory, on a copy of its stamps. */
int rig__stamps_scan(rig__alloc *a, bool write, const rig_device *own, rig_point *out,
                     int cap) {
  int n = 0, st = 0;
  snapshot c;
  read_stamps(a, &c);
  for (int i = 0; i < RIG__STAMPS && st == 0; i++) {
    const rig__stamp *e = &c.stamps[i];
    if (!own_point(own, e->write))
      st = consider(e->write, true, out, &n, cap);     /* LMEM-2: reads */
    if (write && st == 0 && e->use != e->write && !own_point(own, e->use))
      st = consider(e->use, false, out, &n, cap);      /* LMEM-5: writes */
  }
  return st ? st : n;
}

/* Whether p holds memory back no more (RECLAIM-5): reached, or dropped
 * once its work is over. A lost device's values past its cut are never
 * reached, but its work may run on until its stop (STOP-12): they count
 * for the return of memory as it reports them (LOSS-18, RECLAIM-23), and
 * all of them once it has stopped. A child of fork's inherited device
 * runs nothing of the child's. */
static bool spent(rig_point p) {
  bool stopped;
  switch (rig__point_state(p, &stopped)) {
  case RIG__REACHED:
    return true;
  case RIG__PENDING:
    return false;
  case RIG__DROPPED:
    break;
  }
  rig_device *d = stopped ? NULL : rig_point_device(p);
  bool over = !d || d->life.forked || rig__read_signaled(d) >= rig_point_value(p);
  rig_device_release(d);
  return over;
}

bool rig__stamps_done(rig__alloc *a) {
  bool done = true;
  snapshot c;
  read_stamps(a, &c);
  for (int i = 0; i < RIG__STAMPS && done; i++) {
    rig_point p = c.stamps[i].use, u = c.unordered[i];
    done = (p == 0 || spent(p)) && (u == 0 || spent(u)); /* RECLAIM-5 */
  }
  return done;
}

void rig__stamps_clear(rig__alloc *a) {
  memset(a->stamps, 0, sizeof a->stamps);             /* RECLAIM-7 */
  memset(a->unordered, 0, sizeof a->unordered);
  __atomic_store_n(&a->stamped, false, __ATOMIC_RELAXED);
}

rig_status rig__stamps_wait(rig__alloc *a, bool write) {
  rig_point need[2 * RIG__STAMPS + 1];
  int n;
  while ((n = rig__stamps_needed(a, write, need, 2 * RIG__STAMPS + 1)) > 0)
    for (int i = 0; i < n; i++) {
      rig_status st = rig__point_wait(need[i]);
      if (st != RIG_OK)
        return st;
    }
  return n < 0 ? RIG_LOST : RIG_OK;
}

RIG_API void rig_buffer_stamps(const rig_buffer *b, const rig_device *d, rig_point *out_write,
                               rig_point *out_use) {
  rig_point w = RIG_POINT_NONE, u = RIG_POINT_NONE;
  for (int i = 0; b && d && i < RIG__STAMPS; i++) {
    const rig__stamp *e = &b->alloc->stamps[i];
    rig_point use = __atomic_load_n(&e->use, __ATOMIC_ACQUIRE);
    if (use && rig_point_slot(use) == d->slot && rig_point_value(use) > d->start) {
      u = use;
      w = __atomic_load_n(&e->write, __ATOMIC_ACQUIRE);
    }
  }
  if (out_write)
    *out_write = w;
  if (out_use)
    *out_use = u;
}
