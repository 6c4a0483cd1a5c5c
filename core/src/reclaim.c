/* SPDX-License-Identifier: MIT */
/* reclaim.c: the life of an allocation after its use: collection, waiting
 * on its stamps, the device's cache and release to the driver; budgets and
 * the rounds of reclamation (RECLAIM, LIFE, GRECL).
 *
 * The last release of an allocation only pushes it on its device's
 * collected stack, lock-free, so it is cheap and safe from any thread and
 * from inside a callback (RECLAIM-2). Collected memory moves on only inside
 * the calls that move memory (RECLAIM-15, 16): it waits until its stamps'
 * points are reached or dropped (RECLAIM-5), then enters the cache, or goes
 * back to the driver when the device is over budget (RECLAIM-11), stopped,
 * or the host's buffer is under 64 KiB (RECLAIM-47). A create takes an exact
 * fit from the cache without allocating (RECLAIM-7).
 *
 * Lock order: internal.h; a move reads stamps with no lock (stamps.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "waits.h"

#define HOST_KEEP_MIN (64u * 1024u)          /* RECLAIM-47 */
#define HOST_KEEP_ALWAYS (32u * 1024u * 1024u) /* RECLAIM-48 */

static unsigned bucket(uint64_t bytes) {
  return (unsigned)((bytes * 0x9E3779B97F4A7C15ull) >> 58); /* 64 buckets */
}

/* The device whose budget an allocation of kind on d counts in: the
 * host's for Pinned memory (RECLAIM-26), else d's. */
static rig_device *budget_of(rig_device *d, rig_kind kind) {
  return kind == RIG_KIND_PINNED ? rig__host_device() : d;
}

/* The batch of regions the calling thread gives back now: move_locked and
 * trim_locked open and close it, so that signals stay blocked from the
 * first region on and come back every 64 (ERR-14, ERR-15). */
static _Thread_local rig__batch *batch;

/* Opens one batch over a whole call's regions, unless one is open. */
static bool regions_begin(rig__batch *b) {
  if (batch)
    return false;
  *b = (rig__batch){.on = false};
  batch = b;
  return true;
}

static void regions_end(rig__batch *b, bool opened) {
  if (!opened)
    return;
  rig__batch_end(b);
  batch = NULL;
}

/* Gives a's memory back to its driver, keeping its record; mem_lock held. */
static void give_back_memory(rig_device *d, rig__alloc *a) {
  rig_edge_error err = {0};
  if (batch)
    rig__batch_step(batch);
  else
    rig__mask_hold();
  if (d->life.forked)
    ; /* the parent's memory: a child of fork leaves it (STOP-20) */
  else if (a->adopted) { /* never the driver's to give: the program's own
                            (rig_buffer_of_host) goes back to it */
    if (a->host_release)
      a->host_release(a->host_ctx);
  } else if (d->drv->release(d->h, &a->mem, &err) != RIG_EDGE_OK)
    rig__lose(d, err.message);                      /* ERR-23 */
  if (!batch)
    rig__mask_drop();
  atomic_fetch_sub(&budget_of(d, a->kind)->mem.allocated, a->charge);
  if (atomic_fetch_sub(&d->mem.live_allocs, 1) == 1 && rig__is_stopped(d))
    d->life.drained = true;
}

static void destroy_record(rig__alloc *a) { free(a); }

/* Gives a's memory and record back; mem_lock held. */
static void give_back(rig_device *d, rig__alloc *a) {
  give_back_memory(d, a);
  destroy_record(a);
}

/* The peak of the host's live buffers over the current and the previous
 * epoch, an epoch being one second (docs/reclamation.md; RECLAIM-49). The
 * host's mem_lock guards it. */
#define EPOCH_NS 1000000000ull
static struct {
  uint64_t current, previous, start_ns;
  uint64_t last_live; /* at the last note */
} host_peak;
/* Whether the host's cache holds more than HOST_KEEP_ALWAYS (set under its
 * mem_lock); while it does, a move of host memory checks, at most every
 * quarter epoch (host_checked_ns), that what it keeps is still within the
 * peak, so that memory kept for a past peak goes back (RECLAIM-49). */
static atomic_bool host_over;
static _Atomic uint64_t host_checked_ns;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Records live bytes of host buffers, starting a new epoch when one is
 * over; returns the peak over this epoch and the last. mem_lock held. */
static uint64_t host_peak_note(uint64_t live) {
  uint64_t now = now_ns();
  if (now - host_peak.start_ns > EPOCH_NS) {
    /* After epochs with no note, the last one saw the live bytes of the
     * last note, or fewer (a release notes nothing): not the old peak. */
    bool gap = now - host_peak.start_ns > 2 * EPOCH_NS;
    host_peak.previous =
        gap ? (host_peak.last_live > live ? host_peak.last_live : live) : host_peak.current;
    host_peak.current = 0;
    host_peak.start_ns = now;
  }
  if (live > host_peak.current)
    host_peak.current = live;
  host_peak.last_live = live;
  return host_peak.current > host_peak.previous ? host_peak.current : host_peak.previous;
}

/* The host keeps collected buffers of 64 KiB or more: 32 MiB of them
 * always, more while its kept and live buffers stay within the peak of its
 * live buffers (RECLAIM-47..49). Its live bytes are the allocated ones not
 * cached; once this buffer is kept, kept and live together are all that
 * the host holds. */
static bool host_keeps(rig_device *d, rig__alloc *a) {
  if (a->charge < HOST_KEEP_MIN)
    return false;
  if (d->mem.cached_bytes + a->charge <= HOST_KEEP_ALWAYS)
    return true;
  uint64_t held = atomic_load(&d->mem.allocated);
  bool keeps = held <= host_peak_note(held - d->mem.cached_bytes - a->charge);
  if (keeps)
    atomic_store_explicit(&host_over, true, memory_order_relaxed);
  return keeps;
}

static bool keeps(rig_device *d, rig__alloc *a) {
  if (rig__is_stopped(d) || atomic_load(&a->dead) || d->drv->io || a->adopted)
    return false;                                   /* RECLAIM-12, STOP-2 */
  if (atomic_load(&d->mem.allocated) > atomic_load(&d->mem.budget))
    return false;                                   /* RECLAIM-11 */
  return d->is_host ? host_keeps(d, a) : true;
}

/* Puts a collected allocation whose points are done in the cache or gives
 * it back (RECLAIM-6, RECLAIM-11); mem_lock held. */
static void place(rig_device *d, rig__alloc *a) {
  if (a->early) { /* freed while buffers remain: only the memory goes (RECLAIM-4) */
    give_back_memory(d, a);
    atomic_store(&a->memory_gone, true);
    rig__alloc_release(a);                          /* the free's hold */
    return;
  }
  if (!keeps(d, a)) {
    give_back(d, a);
    return;
  }
  unsigned b = bucket(a->bytes);
  a->next = d->mem.cache[b];
  d->mem.cache[b] = a;
  d->mem.cached_bytes += a->charge;
}

/* Moves d's collected memory on; mem_lock held. */
static void move_locked(rig_device *d) {
  rig__batch regions = {.on = false};
  rig__batch *outer = batch;
  batch = outer ? outer : &regions;
  rig__alloc *in = atomic_exchange(&d->mem.collected, NULL);
  while (in) {
    rig__alloc *a = in;
    in = in->next;
    a->next = d->mem.waiting;
    d->mem.waiting = a;
  }
  bool held = rig__is_lost(d) && !rig__is_stopped(d); /* STOP-2: until its stop */
  for (rig__alloc **p = &d->mem.waiting; *p && !held;) {
    rig__alloc *a = *p;
    /* RECLAIM-5; and no host access in flight (buffer.c's free), nor a
     * driver's mapping of the program's memory (borrow.c) */
    if (!atomic_load(&a->hosts) && !atomic_load(&a->maps) &&
        (rig__is_stopped(d) || rig__stamps_done(a))) {
      *p = a->next;
      place(d, a);
    } else
      p = &a->next;
  }
  atomic_store_explicit(&d->mem.any_waiting, d->mem.waiting != NULL, memory_order_relaxed);
  if (!outer) {
    rig__batch_end(&regions);
    batch = NULL;
  }
}

/* What every call that moves d's memory does last: a stopped d whose
 * last memory came back leaves its slot, and devices that left theirs,
 * d included, give up their driver handles (OPEN-24). */
static void after_move(rig_device *d) {
  /* One exchange: of the threads that moved d's memory, one leaves its
   * slot; a load then a store raced a close's give_back, which sets it. */
  if (atomic_load_explicit(&d->life.drained, memory_order_relaxed) &&
      atomic_exchange(&d->life.drained, false))
    rig__device_drained(d);
  rig__left_handles_release();
}

static void host_trim_check(rig_device *d);

/* What every call that moves d's memory does first: gives back what the
 * host keeps past its peak (RECLAIM-49), releases collected holds
 * (RECLAIM-20), moves stopped devices' memory (RECLAIM-21) and gives back
 * d's passed mappings of other words (OPEN-22). */
static void before_move(rig_device *d) {
  if (d->is_host && atomic_load_explicit(&host_over, memory_order_relaxed))
    host_trim_check(d); /* RECLAIM-49 */
  rig__holds_release();
  rig__move_stopped();
  rig__mappings_release(d, false);
  rig__borrows_release(d, false);                     /* STAMP-17, STOP-4 */
  rig__keep_release(d, false);                        /* RECLAIM-17 */
  rig__keep_release_stopped();                        /* RECLAIM-21 */
  rig__fork_release_kept();                           /* STOP-21 */
}

void rig__move_collected(rig_device *d) {
  before_move(d);
  /* Nothing collected and nothing waiting: no lock to take (a copy moves
   * both its devices' memory, two locks of its largest costs). A release
   * that collects meanwhile is moved by the next move, as if it had come
   * after this one. */
  if (atomic_load_explicit(&d->mem.collected, memory_order_acquire) ||
      atomic_load_explicit(&d->mem.any_waiting, memory_order_relaxed)) {
    rig__lock(&d->locks.mem);
    move_locked(d);
    rig__unlock(&d->locks.mem);
  }
  after_move(d);
}

/* Gives back cached memory until d holds at most keep bytes; mem_lock held
 * (RECLAIM-9, RECLAIM-69). */
static void trim_locked(rig_device *d, uint64_t keep) {
  rig__batch regions = {.on = false};
  rig__batch *outer = batch;
  batch = outer ? outer : &regions;
  for (unsigned b = 0; b < 64 && (!rig__is_lost(d) || rig__is_stopped(d)); b++) /* STOP-2 */
    while (d->mem.cache[b] && (keep == 0 || atomic_load(&d->mem.allocated) > keep)) {
      rig__alloc *a = d->mem.cache[b];
      d->mem.cache[b] = a->next;
      d->mem.cached_bytes -= a->charge;
      give_back(d, a);
    }
  if (!outer) {
    rig__batch_end(&regions);
    batch = NULL;
  }
}

/* RECLAIM-49: what the host's cache keeps beyond HOST_KEEP_ALWAYS goes
 * back where the host would hold more than the peak of its live bytes over
 * this epoch and the last. At most every quarter epoch, by one thread. */
static void host_trim_check(rig_device *d) {
  uint64_t now = now_ns(), last = atomic_load(&host_checked_ns);
  if (now - last < EPOCH_NS / 4 || !atomic_compare_exchange_strong(&host_checked_ns, &last, now))
    return;
  rig__lock(&d->locks.mem);
  uint64_t held = atomic_load(&d->mem.allocated), live = held - d->mem.cached_bytes;
  uint64_t peak = host_peak_note(live), floor = live + HOST_KEEP_ALWAYS;
  if (held > (peak > floor ? peak : floor))
    trim_locked(d, peak > floor ? peak : floor);
  atomic_store_explicit(&host_over, d->mem.cached_bytes > HOST_KEEP_ALWAYS, memory_order_relaxed);
  rig__unlock(&d->locks.mem);
}

void rig__return_all(rig_device *d) {
  rig__mags_drain(d);
  rig__keep_release(d, true);                         /* STOP-2 */
  rig__staging_release(d, true);
  rig__borrows_release(d, true);                      /* STOP-3 */
  rig__lock(&d->locks.mem);
  move_locked(d);
  trim_locked(d, 0);                                  /* RECLAIM-75 */
  if (atomic_load(&d->mem.live_allocs) == 0)
    d->life.drained = false;
  rig__unlock(&d->locks.mem);
}

/* Takes an exact fit from the cache, with empty stamps (RECLAIM-7). */
static rig__alloc *from_cache(rig_device *d, uint64_t bytes, rig_kind kind) {
  rig__alloc *a = NULL;
  rig__mags_drain_mine(d);
  before_move(d);
  rig__lock(&d->locks.mem);
  move_locked(d);
  for (rig__alloc **p = &d->mem.cache[bucket(bytes)]; *p; p = &(*p)->next)
    if ((*p)->bytes == bytes && (*p)->kind == kind) {
      a = *p;
      *p = a->next;
      d->mem.cached_bytes -= a->charge;
      break;
    }
  rig__unlock(&d->locks.mem);
  after_move(d);
  return a;
}

/* Returns the idle staging of every device: it is host memory, charged to
 * the host's budget whichever device keeps it (RECLAIM-26). */
static void staging_release_everywhere(void) {
  rig_device *list[64];
  size_t n = rig__devices_retain(list, 64);
  for (size_t i = 0; i < n; i++) {
    rig__staging_release(list[i], false);
    rig_device_release(list[i]);
  }
}

/* One round of reclamation (RECLAIM-53, 54): gives back the cache, waits
 * for the work that holds collected memory back, and moves it. */
static bool reclaim_round(rig_device *d, int round) {
  rig__mags_drain(d);
  if (round >= 2 && d->is_host)
    staging_release_everywhere();                     /* RECLAIM-55 */
  rig__lock(&d->locks.mem);
  move_locked(d);
  trim_locked(d, 0);
  rig_point wait = 0;
  if (d->mem.waiting) {
    rig_point need[2 * RIG__STAMPS + 1];
    if (rig__stamps_needed(d->mem.waiting, true, need, 2 * RIG__STAMPS + 1) > 0)
      wait = need[0];
  }
  rig__unlock(&d->locks.mem);
  rig_status st = wait ? rig__point_wait(wait) : RIG_OK;
  rig__move_everywhere();                             /* RECLAIM-19 */
  return st == RIG_INTERRUPTED;                       /* the wait hook's (DOM-9) */
}

/* Gives back d's cached Pinned memory; mem_lock held. */
static void trim_pinned_locked(rig_device *d) {
  if (rig__is_lost(d) && !rig__is_stopped(d))
    return;                                           /* STOP-2 */
  rig__batch regions = {.on = false};
  rig__batch *outer = batch;
  batch = outer ? outer : &regions;
  for (unsigned b = 0; b < 64; b++)
    for (rig__alloc **p = &d->mem.cache[b]; *p;) {
      rig__alloc *a = *p;
      if (a->kind != RIG_KIND_PINNED) {
        p = &a->next;
        continue;
      }
      *p = a->next;
      d->mem.cached_bytes -= a->charge;
      give_back(d, a);
    }
  if (!outer) {
    rig__batch_end(&regions);
    batch = NULL;
  }
}

/* d's part of a mapping's freeing: mappings of ended borrows, staging no
 * copy holds and cached Pinned memory, and no other cache (RECLAIM-62). */
static void return_mappings(rig_device *d) {
  rig__borrows_release(d, false);
  rig__staging_release(d, false);
  rig__lock(&d->locks.mem);
  trim_pinned_locked(d);
  rig__unlock(&d->locks.mem);
}

static void collect(void);

/* RECLAIM-60, 61: the collector hook, a wait for each device's unfinished
 * work, then each device's return_mappings. Mapping limits (locked memory,
 * a count of mappings) may be the process's, so every device gives back. */
rig_status rig__reclaim_mappings(void) {
  collect();
  rig_device *list[64];
  size_t n = rig__devices_retain(list, 64);
  rig_status st = RIG_OK;
  for (size_t i = 0; i < n; i++) {
    uint64_t v = atomic_load(&list[i]->tl.submitted);
    if (st != RIG_INTERRUPTED && !rig__is_lost(list[i]) && v > list[i]->start)
      st = rig__point_wait(rig_point_make(list[i]->slot, v)); /* a loss: its memory stays */
  }
  return_mappings(rig__host_device());
  for (size_t i = 0; i < n; i++) {
    return_mappings(list[i]);
    rig_device_release(list[i]);
  }
  return st == RIG_INTERRUPTED ? st : RIG_OK;
}

/* The collector hook a garbage-collected binding sets (ARCHITECTURE.md):
 * rounds 2 and 3 run it, as the text runs the GC. It runs as a callback,
 * inside a lock: it may release buffers, and may not call what locks. */
static _Atomic(rig_collector) collector;
static _Atomic(void *) collector_ctx;
/* Allocations collected so far: round 3 runs the collector again only if
 * one was since round 2 ran it, as only then can it find more (RECLAIM-58). */
static _Atomic uint64_t collections;

_Atomic bool rig__collecting;

RIG_API void rig_runtime_set_collector(rig_collector hook, void *ctx) {
  atomic_store(&collector_ctx, ctx);
  atomic_store(&collector, hook);
  atomic_store(&rig__collecting, hook != NULL);
}

/* Counted only while a collector is set: only its third round reads it. */
void rig__count_collection(void) { atomic_fetch_add_explicit(&collections, 1, memory_order_relaxed); }

static void collect(void) {
  rig_collector hook = atomic_load(&collector);
  if (!hook)
    return;
  sigset_t old;
  rig__signals_block(&old); /* it runs between reclamation's regions (ERR-16) */
  rig__enter_callback();
  hook(atomic_load(&collector_ctx));
  rig__leave_callback();
  rig__signals_restore(&old);
}

static rig_status oom(rig_device *d, uint64_t n) {
  return rig__fail(RIG_OUT_OF_MEMORY, d, n, "%s: out of memory for %llu bytes",
                   d->name, (unsigned long long)n);   /* RECLAIM-77 */
}

/* The budget, not the driver, refused: saying so tells a user to raise the
 * budget (rig_device_set_budget) rather than look for a real exhaustion.
 * b is the device whose budget counts (the host's for Pinned, RECLAIM-78). */
static rig_status over_budget(rig_device *d, rig_device *b, uint64_t n) {
  return rig__fail(RIG_OUT_OF_MEMORY, d, n,
                   "%s: out of memory for %llu bytes: over %s budget of %llu bytes "
                   "(%llu in use)",
                   d->name, (unsigned long long)n, b == d ? "its" : "the host's",
                   (unsigned long long)atomic_load(&b->mem.budget),
                   (unsigned long long)atomic_load(&b->mem.allocated));
}

/* Asks the driver for memory within the budget; *budget tells whether the
 * budget (true) or the driver (false) refused with NO_ROOM. */
static int try_allocate(rig_device *d, uint64_t bytes, rig_kind kind, rig_edge_alloc *mem,
                        rig_edge_error *err, bool *budget) {
  rig_device *b = budget_of(d, kind);
  *budget = atomic_load(&b->mem.allocated) + bytes > atomic_load(&b->mem.budget);
  if (*budget)
    return RIG_EDGE_NO_ROOM;                          /* RECLAIM-52 */
  int r = RIG__DRIVER_OF(d, d->drv->allocate(d->h, (uint32_t)kind, bytes, mem, err));
  if (r == RIG_EDGE_OK) {
    mem->bytes = (mem->bytes + RIG_WORD - 1) / RIG_WORD * RIG_WORD; /* RECLAIM-25 */
    uint64_t held = atomic_fetch_add(&b->mem.allocated, mem->bytes) + mem->bytes;
    if (d->is_host && mem->bytes >= HOST_KEEP_MIN) {
      rig__lock(&d->locks.mem);
      host_peak_note(held - d->mem.cached_bytes);
      rig__unlock(&d->locks.mem);
    }
  }
  return r;
}

/* Allocates bytes (n rounded to words) with up to three rounds of
 * reclamation (RECLAIM-52..59). Out_of_memory names n, the bytes the caller
 * asked for (RECLAIM-77, GRECL-5), not their rounding. */
static rig_status allocate(rig_device *d, uint64_t n, uint64_t bytes, rig_kind kind,
                           rig_edge_alloc *mem) {
  rig_edge_error err = {0};
  bool budget = false;
  if (!d->is_host && bytes > atomic_load(&budget_of(d, kind)->mem.budget))
    return over_budget(d, budget_of(d, kind), n); /* RECLAIM-51, RECLAIM-78 */
  int r = try_allocate(d, bytes, kind, mem, &err, &budget);
  uint64_t since = 0;
  for (int round = 1; r == RIG_EDGE_NO_ROOM && round <= 3; round++) {
    if (round == 2 || (round == 3 && atomic_load(&collections) != since)) {
      since = atomic_load(&collections);
      collect();                                      /* RECLAIM-57, RECLAIM-58 */
    }
    if (reclaim_round(d, round))                      /* RECLAIM-53..55 */
      return rig__fail(RIG_INTERRUPTED, d, n, "%s: reclamation interrupted", d->name); /* ERR-25 */
    r = try_allocate(d, bytes, kind, mem, &err, &budget);
  }
  if (r == RIG_EDGE_OK)
    return RIG_OK;
  if (r == RIG_EDGE_NO_ROOM) /* RECLAIM-59 */
    return budget ? over_budget(d, budget_of(d, kind), n) : oom(d, n);
  if (r == RIG_EDGE_UNSUPPORTED)
    return rig__fail(RIG_INVALID, d, 0, "%s: %s", d->name, err.message);
  if (r == RIG_EDGE_IO)                               /* ERR-26: no loss */
    return rig__fail(RIG_IO, d, n, "%s: %s", d->name, err.message);
  rig__lose_for(d, r, err.message);                   /* ERR-23, LOSS-1 */
  return rig__lost_error(d);
}

/* A close (or a loss) of d came between the check of rig__alloc_create and
 * its count of a: the close's return of d's memory may have counted none
 * and let d leave, and a released later would wait on a list no one moves.
 * a goes back at once, and the create answers d's loss. Counted first,
 * checked after: either the close sees a or this sees the loss. */
static rig_status lost_meanwhile(rig_device *d, rig__alloc *a) {
  rig__lock(&d->locks.mem);
  give_back(d, a);
  rig__unlock(&d->locks.mem);
  after_move(d);
  return rig__lost_error(d);
}

rig_status rig__alloc_create(rig_device *d, uint64_t n, rig_kind kind, rig__alloc **out) {
  if (rig__is_lost(d)) {
    rig__move_collected(d);                           /* RECLAIM-16, RECLAIM-18 */
    return rig__lost_error(d);
  }
  uint64_t bytes = (n + RIG_WORD - 1) / RIG_WORD * RIG_WORD; /* WORD-6 */
  rig__alloc *a = from_cache(d, bytes, kind);
  if (!a) {
    rig_edge_alloc mem = {0};
    if (!(a = calloc(1, sizeof *a)))
      return oom(d, n);
    rig_status st = allocate(d, n, bytes, kind, &mem);
    if (st != RIG_OK) {
      free(a);
      return st;
    }
    a->dev = d;
    a->kind = kind;
    a->bytes = bytes;
    a->mem = mem;
    a->charge = mem.bytes;
    atomic_fetch_add(&d->mem.live_allocs, 1);
    if (rig__is_lost(d))
      return lost_meanwhile(d, a);
  }
  rig__stamps_clear(a);
  a->length = n;
  a->keepable = kind == RIG_KIND_DEVICE && !d->drv->io &&
                !(d->is_host && a->charge < RIG__HOST_KEEP_MIN); /* RECLAIM-11, 12, 47 */
  atomic_store(&a->refs, 1);
  atomic_store(&a->dead, false);
  atomic_store(&a->claims, 0);
  atomic_store(&a->owner, 0);
  a->early = false;
  atomic_store(&a->memory_gone, false);
  a->next = NULL;
  *out = a;
  return RIG_OK;
}

rig_status rig__alloc_adopt(rig_device *d, uint64_t address, uint64_t n, rig__alloc **out) {
  rig__alloc *a = calloc(1, sizeof *a);
  if (!a)
    return oom(rig__host_device(), sizeof *a);
  a->dev = d;
  a->kind = RIG_KIND_DEVICE;
  a->bytes = n;
  a->length = n;
  a->mem.address = address;
  a->adopted = true;                                  /* charge 0, not keepable */
  atomic_store(&a->refs, 1);
  atomic_fetch_add(&d->mem.live_allocs, 1);
  *out = a;
  return RIG_OK;
}

void rig__alloc_release(rig__alloc *a) {
  if (atomic_fetch_sub(&a->refs, 1) != 1)
    return;
  if (atomic_load(&a->memory_gone)) { /* rig_buffer_free gave the memory back */
    destroy_record(a);
    return;
  }
  rig__note_collection();
  rig_device *d = a->dev;                             /* RECLAIM-2: collected */
  rig__alloc *head = atomic_load(&d->mem.collected);
  do
    a->next = head;
  while (!atomic_compare_exchange_weak(&d->mem.collected, &head, a));
}

/* ---- budgets (RECLAIM-24, 65..76) ---- */

RIG_API uint64_t rig_device_budget(const rig_device *d) { return d ? atomic_load(&d->mem.budget) : 0; }
RIG_API uint64_t rig_device_allocated(const rig_device *d) {
  return d ? atomic_load(&d->mem.allocated) : 0;
}

RIG_API rig_status rig_device_set_budget(rig_device *d, uint64_t n) {
  rig_status st = rig__may_lock("rig_device_set_budget");
  if (st)
    return st;
  if (!d || n > INT64_MAX)
    return rig__fail(RIG_INVALID, d, 0, "rig_device_set_budget: %s",
                     d ? "budget is negative as an int64" : "device is NULL"); /* RECLAIM-71 */
  if (rig__is_lost(d))        /* closed or lost: a use of it (OPEN-48, LMEM-7) */
    return rig__lost_error(d);
  atomic_store(&d->mem.budget, n);
  rig__mags_drain(d);
  rig__staging_release(d, false);                     /* RECLAIM-10 */
  rig__batch regions;
  bool opened = regions_begin(&regions);
  rig__lock(&d->locks.mem);
  move_locked(d);
  trim_locked(d, n);                                  /* RECLAIM-69, 70 */
  rig__unlock(&d->locks.mem);
  regions_end(&regions, opened);
  after_move(d);
  return RIG_OK;
}

RIG_API rig_status rig_device_free_cache(rig_device *d) {
  rig_status st = rig__may_lock("rig_device_free_cache");
  if (st)
    return st;
  if (!d)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_free_cache: device is NULL");
  /* Holds first (RECLAIM-20): memory a released hold frees then drains
   * with the rest, in this call, not the next. */
  rig__holds_release();
  rig__mags_drain(d);
  before_move(d);
  rig__staging_release(d, false);                     /* RECLAIM-72 */
  rig__batch regions;
  bool opened = regions_begin(&regions);
  rig__lock(&d->locks.mem);
  move_locked(d);                                     /* RECLAIM-73 */
  trim_locked(d, 0);                                  /* RECLAIM-74, 76 */
  rig__unlock(&d->locks.mem);
  regions_end(&regions, opened);
  after_move(d);
  return RIG_OK;
}

/* ---- stopped devices (RECLAIM-21) ---- */

/* Devices whose stop returned while memory of theirs was still out. Every
 * call that moves memory also moves theirs, so their slots come back. The
 * list has no bound: a device left off it would keep its memory and its
 * slot for good (OPEN-11, RECLAIM-21). Each holds a reference. */
static pthread_mutex_t stopped_lock = PTHREAD_MUTEX_INITIALIZER;
static rig_device *stopped_list;
static _Atomic unsigned nstopped;

void rig__stopped_add(rig_device *d) {
  pthread_mutex_lock(&stopped_lock);
  d->life.next_stopped = stopped_list;
  stopped_list = rig_device_retain(d);
  atomic_fetch_add(&nstopped, 1);
  pthread_mutex_unlock(&stopped_lock);
}

void rig__stopped_fork(rig__fork_phase ph) { rig__fork_mutex(&stopped_lock, ph); }

void rig__move_stopped(void) {
  if (atomic_load(&nstopped) == 0)
    return;
  pthread_mutex_lock(&stopped_lock);
  for (rig_device **p = &stopped_list; *p;) {
    rig_device *d = *p;
    if (!rig__check_stopped(d)) { /* its last value not reported yet (STOP-7) */
      p = &d->life.next_stopped;
      continue;
    }
    rig__return_all(d);
    if (atomic_load(&d->mem.live_allocs) == 0) {
      *p = d->life.next_stopped;
      atomic_fetch_sub(&nstopped, 1);
      rig__device_drained(d);
      rig_device_release(d);
    } else
      p = &d->life.next_stopped;
  }
  pthread_mutex_unlock(&stopped_lock);
}

/* rig_buffer_free: the allocation is collected now, though buffers remain
 * over it, holding one more reference of its own until its memory has gone
 * back; the last buffer's release then frees its record (RECLAIM-4). */
void rig__alloc_free_early(rig__alloc *a) {
  atomic_fetch_add(&a->refs, 1);
  a->early = true;
  a->keepable = false;
  rig_device *d = a->dev;
  rig__alloc *head = atomic_load(&d->mem.collected);
  do
    a->next = head;
  while (!atomic_compare_exchange_weak(&d->mem.collected, &head, a));
  rig__move_collected(d);
}

void rig__reclaim_round(rig_device *d, int round) { (void)reclaim_round(d, round); }
