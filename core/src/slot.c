/* SPDX-License-Identifier: MIT */
/* slot.c: the process's 65,535 device slots and the points they give
 * (OPEN-9..26, PROP-4, PROP-5, TL).
 *
 * Slot s (1..65535) is the point's top 16 bits. A device that opens takes a
 * free slot and its values start after every value the slot's earlier
 * devices were given (OPEN-17), so a point names one device for good and the
 * number of opens has no bound (OPEN-18). The table is static: 65,536 small
 * records, touched only where used. Slot records are written under the
 * registry lock (open.c) and read lock-free.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

/* A range of values an earlier device of a slot never reached (OPEN-26). */
struct rig__dropped {
  uint64_t lo, hi;                /* (lo, hi] */
  char *name, *why;
  struct rig__dropped *next;
};

static rig__slot slots[RIG_SLOTS + 1];
static uint32_t free_slots[RIG_SLOTS];
static uint32_t nfree;
static uint32_t next_unused = 1;

rig__slot *rig__slot_of(uint32_t slot) {
  return slot >= 1 && slot <= RIG_SLOTS ? &slots[slot] : NULL;
}

/* The host's slot: 1, taken once before any other (host.c). */
void rig__slot_take_first(rig_device *host) {
  host->slot = next_unused++;
  slots[host->slot].taken = true;
  slots[host->slot].retired = true;
  atomic_store(&slots[host->slot].dev, host);
}

/* Devices that left their slots with their driver handle live, linked by
 * life.next_left, under the registry (OPEN-24). left_ready: one of them
 * may be held by its slot alone now; set by its linking and by the
 * release that leaves only the slot's reference (device.c), so that a
 * move pays one load, not the registry lock, while every one left is
 * still held elsewhere (a closed device the program keeps). */
static rig_device *left;
static atomic_bool left_ready;

static void left_unlink(rig_device *d) {
  for (rig_device **p = &left; *p; p = &(*p)->life.next_left)
    if (*p == d) {
      *p = d->life.next_left;
      atomic_store(&d->life.left_live, false);
      return;
    }
}

bool rig__left_waiting(void) {
  return atomic_load_explicit(&left_ready, memory_order_relaxed) &&
         atomic_exchange(&left_ready, false);
}

void rig__left_ready(void) { atomic_store(&left_ready, true); }

rig_device *rig__left_next(void) {
  for (rig_device *d = left; d; d = d->life.next_left)
    if (atomic_load(&d->refs) == 1) { /* the slot's alone */
      left_unlink(d);
      return rig_device_retain(d);
    }
  return NULL;
}

/* Under the registry. */
static void left_link(rig_device *d) {
  d->life.next_left = left;
  left = d;
  atomic_store(&d->life.left_live, true);
  atomic_store(&left_ready, true);
}

void rig__left_relink(rig_device *d) {
  if (!atomic_load(&d->life.left_live) && atomic_load(&rig__slot_of(d->slot)->dev) == d)
    left_link(d); /* not where a later device took the slot meanwhile */
}

rig_status rig__slot_take(rig_device *d) {
  (void)rig__host_device(); /* the host has slot 1 */
  uint32_t s;
  if (nfree > 0)
    s = free_slots[--nfree];
  else if (next_unused <= RIG_SLOTS)
    s = next_unused++;
  else
    return rig__fail(RIG_UNAVAILABLE, NULL, 0,
                     "all %u device slots are held", RIG_SLOTS); /* OPEN-7 */
  rig__slot *r = &slots[s];
  rig_device *old = atomic_load(&r->dev);
  d->slot = s;
  d->start = r->high;                                          /* OPEN-17 */
  atomic_store(&d->tl.submitted, d->start);
  atomic_store(&d->tl.signaled, d->start);
  d->tl.word = d->start;
  d->life.lost_at = d->start;
  r->taken = true;
  atomic_store(&r->dev, rig_device_retain(d));
  if (old && atomic_load(&old->life.left_live))
    left_unlink(old);
  if (old)
    rig_device_release(old); /* its points no longer name it (PROP-4) */
  return RIG_OK;
}

/* Records the values d never reached, so that its points answer for good
 * once a later device has its slot (PROP-5, OPEN-26). */
static void remember_dropped(rig__slot *r, rig_device *d, uint64_t submitted) {
  if (!rig__is_lost(d) || d->life.lost_at >= submitted)
    return;
  struct rig__dropped *x = calloc(1, sizeof *x);
  if (!x) {
    r->retired = true; /* keep the device's record itself instead */
    return;
  }
  x->lo = d->life.lost_at;
  x->hi = submitted;
  x->name = strdup(d->name);
  x->why = strdup(atomic_load(&d->life.lost));
  if (!x->name) {
    free(x->why);
    free(x);
    r->retired = true;
    return;
  }
  if (!x->why)
    x->why = (char *)"out of memory"; /* no room for the reason (ERR-35); never freed */
  x->next = r->dropped;
  r->dropped = x;
}

void rig__slot_leave(rig_device *d) {
  rig__slot *r = &slots[d->slot];
  uint64_t submitted = atomic_load(&d->tl.submitted);
  remember_dropped(r, d, submitted);
  r->high = submitted;
  r->taken = false;
  /* A timeline past 2^46 keeps its slot for good (OPEN-15). */
  if (!r->retired && submitted <= (UINT64_C(1) << 46))
    free_slots[nfree++] = d->slot;
  else
    r->retired = true;
  if (d->h && !d->life.forked && !atomic_load(&d->life.left_live))
    left_link(d); /* its handle goes at a move (OPEN-24) */
}

/* Retains the device that was given value v of slot s, or NULL. Lock-free:
 * device records are type-stable (device.c), so a racing reuse is caught by
 * the checks after the reference is taken. */
static rig_device *device_of(uint32_t s, uint64_t v) {
  rig__slot *r = rig__slot_of(s);
  if (!r || v == 0)
    return NULL;
  rig_device *d = atomic_load(&r->dev);
  if (!d)
    return NULL;
  if (d->is_host)
    return d; /* never released, never counted */
  uint32_t n = atomic_load(&d->refs);
  do {
    if (n == 0)
      return NULL;
  } while (!atomic_compare_exchange_weak(&d->refs, &n, n + 1));
  if (atomic_load(&r->dev) != d || d->slot != s || v <= d->start) {
    rig_device_release(d);
    return NULL;
  }
  return d;
}

RIG_API rig_device *rig_point_device(rig_point p) {
  return device_of(rig_point_slot(p), rig_point_value(p));
}

static const struct rig__dropped *dropped_of(const rig__slot *r, uint64_t v) {
  for (const struct rig__dropped *x = r->dropped; x; x = x->next)
    if (v > x->lo && v <= x->hi)
      return x;
  return NULL;
}

/* Whether v of d (held by the caller) is reached; commit: release d's
 * submitted work first where it is not (TL-15). One lookup of d serves a
 * caller's every question about it: each lookup takes and drops a
 * reference, two locked instructions. */
static bool reached_on(rig_device *d, uint64_t v, bool commit) {
  if (rig__is_lost(d))
    return v <= d->life.lost_at;                        /* LMEM-11 */
  /* The last value read only grows: a point at or below it needs no
   * call into the driver (a Vulkan counter read takes lavapipe's lock). */
  if (v <= atomic_load_explicit(&d->tl.signaled, memory_order_acquire) ||
      v <= rig__read_signaled(d))
    return true;
  if (!commit)
    return false;
  rig__commit(d, v, false);                             /* TL-15 */
  return v <= rig__read_signaled(d);
}

bool rig__point_reached(rig_point p, bool commit) {
  uint32_t s = rig_point_slot(p);
  uint64_t v = rig_point_value(p);
  rig__slot *r = rig__slot_of(s);
  if (!r)
    return false;
  rig_device *d = device_of(s, v);
  if (!d) /* an earlier device's value: reached unless dropped (PROP-5) */
    return v <= r->high && !dropped_of(r, v);
  bool reached = reached_on(d, v, commit);
  rig_device_release(d);
  return reached;
}

RIG_API bool rig_point_reached(rig_point p) { return rig__point_reached(p, true); }

/* The wait of one slice: the driver's own wait where it has one, else a poll
 * of the word. */
static void wait_slice(rig_device *d, uint64_t v) {
  rig_edge_error err;
  rig__edge_error_clear(&err);
  int r = d->drv->wait ? d->drv->wait(d->h, v, 100, &err)
                       : rig_edge_word_wait(&d->tl.word, v, 100);
  if (r == RIG_EDGE_OK)
    rig__signaled_raise(d, v); /* the wait says v is reached: no read to learn it again */
}

/* The device of point p, retained in *out, or *out NULL where the point
 * needs no wait: a value reached before its device's slot was reused. A
 * point of a device dropped lost is RIG_LOST for a wait and reached for a
 * check; a value the device was never given is RIG_INVALID. */
static rig_status point_device(rig_point p, const char *fn, bool wait, rig_device **out) {
  uint32_t s = rig_point_slot(p);
  uint64_t v = rig_point_value(p);
  rig__slot *r = rig__slot_of(s);
  *out = NULL;
  if (!r)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: point of no device", fn);
  rig_device *d = device_of(s, v);
  if (!d) {
    const struct rig__dropped *x = dropped_of(r, v);
    if (x && wait)
      return rig__fail(RIG_LOST, NULL, 0, "%s lost: %s", x->name, x->why);
    if (!x && v > r->high)
      return rig__fail(RIG_INVALID, NULL, 0, "%s: point of no device", fn);
    return RIG_OK;
  }
  if (v > atomic_load(&d->tl.submitted)) {
    rig_status st = rig__fail(RIG_INVALID, d, 0, "%s: %s has not been given value %llu", fn,
                              d->name, (unsigned long long)v);
    rig_device_release(d);
    return st;
  }
  *out = d;
  return RIG_OK;
}

rig_status rig__point_check(rig_point p, const char *fn) {
  rig_device *d;
  rig_status st = point_device(p, fn, false, &d);
  if (d)
    rig_device_release(d);
  return st;
}

/* Whether point p (value v of d) is reached, for a wait: before its first
 * slice by what d's record says, with no call into its driver, unless d
 * is lost (the full check knows what the loss left reached). */
static bool wait_reached(rig_device *d, uint64_t v, bool first) {
  if (first && !rig__is_lost(d))
    return v <= atomic_load_explicit(&d->tl.signaled, memory_order_acquire);
  return reached_on(d, v, false);
}

/* Before the first slice a wait reads only what d's record says is
 * reached (wait_reached): the driver's wait returns at once where v is
 * reached, so reading its counter first would be one more call into the
 * driver. A wait the hook would end reads the driver's value all the same
 * before it answers RIG_INTERRUPTED (DOM-10): a point reached but not yet
 * read is done, not interrupted. */
rig_status rig__point_wait(rig_point p) {
  rig_device *d;
  rig_status st = point_device(p, "rig_point_wait", true, &d);
  if (!d)
    return st;
  uint64_t v = rig_point_value(p);
  rig__commit(d, v, true); /* TL-9 */
  unsigned held = 0;
  bool opened = false;
  bool first = true, sliced = false;
  while (st == RIG_OK && !wait_reached(d, v, first)) {
    first = false;
    if (!opened) { /* a wait inside a held mask waits with the thread's own (ERR-11) */
      held = rig__mask_open();
      opened = true;
    }
    if (rig__is_lost(d))
      st = rig__lost_error(d);                 /* LMEM-11 */
    else if (rig__interrupted()) {
      if (!sliced && reached_on(d, v, false))
        break;                                 /* reached: the wait is done */
      st = rig__fail(RIG_INTERRUPTED, d, 0, "wait interrupted"); /* DOM-10 */
    }
    else {
      wait_slice(d, v);
      rig__watch(d);                           /* HANG-2, LOSS-6 */
      sliced = true;
    }
  }
  if (opened)
    rig__mask_close(held);
  rig_device_release(d);
  return st;
}

rig_status rig__point_wait_of(rig_device *d, rig_point p) {
  uint64_t v = rig_point_value(p);
  if (rig_point_slot(p) == d->slot && v > d->start && !rig__is_lost(d) &&
      v <= rig__read_signaled(d))
    return RIG_OK;
  return rig__point_wait(p);
}

RIG_API rig_status rig_point_wait(rig_point p) {
  rig_status st = rig__may_lock("rig_point_wait");
  return st ? st : rig__point_wait(p);
}

RIG_API size_t rig_point_format(rig_point p, char *out, size_t n) {
  uint32_t s = rig_point_slot(p);
  unsigned long long v = (unsigned long long)rig_point_value(p);
  rig_device *d = device_of(s, v);
  int len = d ? snprintf(out, n, "%s:%llu", d->name, v)
              : snprintf(out, n, "#%u:%llu", s, v);
  if (d)
    rig_device_release(d);
  return len < 0 ? 0 : (size_t)len;
}

/* The state of a point for memory after a loss (LMEM-10..14): reached,
 * pending, or never to be reached. For the last, *why_stopped says whether
 * its device has stopped, after which its unreached reads count as done
 * (LMEM-14), and the thread's last error holds its Lost. */
rig__pstate rig__point_state(rig_point p, bool *stopped) {
  uint32_t s = rig_point_slot(p);
  uint64_t v = rig_point_value(p);
  rig__slot *r = rig__slot_of(s);
  *stopped = false;
  if (!r || v == 0)
    return RIG__REACHED;
  rig_device *d = device_of(s, v);
  if (!d) {
    const struct rig__dropped *x = dropped_of(r, v);
    if (!x)
      return RIG__REACHED;
    *stopped = true;
    rig__fail(RIG_LOST, NULL, 0, "%s lost: %s", x->name, x->why);
    return RIG__DROPPED;
  }
  rig__pstate st = RIG__PENDING;
  if (rig__is_lost(d) && v > d->life.lost_at) {
    *stopped = rig__is_stopped(d);
    rig__lost_error(d);
    st = RIG__DROPPED;
  } else if (reached_on(d, v, true))
    st = RIG__REACHED;
  rig_device_release(d);
  return st;
}
