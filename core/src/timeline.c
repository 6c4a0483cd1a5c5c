/* SPDX-License-Identifier: MIT */
/* timeline.c: values in acceptance order, and the hand-off of work to a
 * driver (TL-1..5, ORDER-18..22, SUBMIT-6, SUBMIT-22, SUBMIT-29..32).
 *
 * The device's submit lock makes the assignment of a value, the driver's
 * submit and the stamps' update one step, so values follow acceptance order
 * whichever thread submits (TL-4) and no other submit slips between a value
 * and its stamps. Points to wait for are waited for before the lock is
 * taken (DOM-3); on a synchronous device the work itself runs under it, so
 * other submits wait for that work before they take a value (DOM-6).
 */
#include "waits.h"

/* Removes point i from the set: the host has waited for it. */
static void drop_point(rig__waits *w, uint32_t i) {
  w->points[i] = w->points[--w->n];
}

/* Gathers what the work must follow and waits on the host for what d's
 * queue will not wait for (waits.c). A set larger than one submit holds is
 * waited for on the host and gathered again. */
static rig_status follow(rig__waits *w, rig_device *d, const rig__use *uses, size_t nuses,
                         const rig_point *waits, size_t nwaits) {
  rig_status st;
  do {
    if ((st = rig__waits_gather(w, d, uses, nuses, waits, nwaits)))
      return st;
    if (w->n && (st = rig__waits_on_host(w, d)))
      return st;
  } while (w->overflow);
  return RIG_OK;
}

/* VALID-20: work the driver says it cannot run is refused before a value
 * is taken, so nothing runs and nothing is lost (edge.h's check, ABI 1.1). */
static rig_status check_work(rig_device *d, const rig_edge_work *work) {
  const rig_edge_driver *t = d->drv;
  if (t->size < offsetof(rig_edge_driver, check) + sizeof t->check || !t->check)
    return RIG_OK;
  rig_edge_error err = {0};
  int r = RIG__DRIVER_OF(d, t->check(d->h, work, &err));
  if (r == RIG_EDGE_OK)
    return RIG_OK;
  return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: %s", err.message);
}

/* Adds p to the stamps of the memory the work used. A write replaces the
 * points the work followed: those it waited for (w), and those reached. */
static void stamp(rig_device *d, const rig__use *uses, size_t nuses, const rig__waits *w,
                  rig_point p) {
  if (d->is_host)
    return;                                            /* ORDER-21 */
  for (size_t i = 0; i < nuses; i++)
    if (uses[i].unordered)
      rig__stamps_add_unordered(uses[i].alloc, p);     /* ORDER-23, 24 */
    else
      rig__stamps_add(uses[i].alloc, p, uses[i].write, w->points, w->n);
}

/* The bytes work takes on a driver's queues, for its grow. */
static uint64_t work_bytes(const rig_edge_work *work) {
  return (uint64_t)work->nparts * sizeof(rig_edge_part) +
         (uint64_t)work->nwaits * sizeof(rig_edge_wait);
}

/* Grows d's queues for work that exceeds them even when idle
 * (SUBMIT-19); a driver with no memory for it reclaims as an allocation
 * does, against d's budget and the host's (RECLAIM-64, SUBMIT-28). Called
 * without the submit lock. */
static rig_status grow(rig_device *d, const rig_edge_work *work) {
  rig_edge_error err = {0};
  if (!d->drv->grow)
    return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: the work exceeds %s's queues",
                     d->name);                                   /* VALID-21 */
  int r = RIG__DRIVER_OF(d, d->drv->grow(d->h, work_bytes(work), &err));
  for (int round = 1; r == RIG_EDGE_NO_ROOM && round <= 3; round++) {
    rig__reclaim_round(d, round);
    rig__reclaim_round(rig__host_device(), round);
    r = RIG__DRIVER_OF(d, d->drv->grow(d->h, work_bytes(work), &err));
  }
  if (r == RIG_EDGE_OK)
    return RIG_OK;
  if (r == RIG_EDGE_NO_ROOM)
    return rig__fail(RIG_OUT_OF_MEMORY, d, work_bytes(work),
                     "%s: no memory to grow its queues: %s", d->name, err.message);
  rig__lose(d, err.message);
  return rig__lost_error(d);
}

/* Takes the submit lock with room for work: waits one value at a time
 * without the lock (SUBMIT-4, SUBMIT-16), and grows queues that an idle
 * device still has no room in. */
static rig_status lock_with_room(rig_device *d, const rig_edge_work *work) {
  for (;;) {
    rig__lock(&d->locks.submit);
    bool room = true;
    if (!d->drv->room || RIG__DRIVER_OF(d, d->drv->room(d->h, work, &room)) != RIG_EDGE_OK || room)
      return RIG_OK;
    uint64_t reached = rig__read_signaled(d), submitted = atomic_load(&d->tl.submitted);
    rig__unlock(&d->locks.submit);
    rig_status st = reached >= submitted ? grow(d, work)
                                         : rig__point_wait(rig_point_make(d->slot, reached + 1));
    if (st != RIG_OK)
      return st;
  }
}

/* Takes the submit lock with room on the queues and the queue's waits
 * mapped; a point whose word cannot be mapped is waited for on the host,
 * without the lock, first. */
static rig_status lock_for(rig_device *d, rig_edge_work *work, rig__waits *w) {
  for (;;) {
    rig_status st = lock_with_room(d, work);
    if (st != RIG_OK)
      return st;
    int failed = w->n ? rig__waits_to_queue(w, d, work) : -1;
    if (failed < 0)
      return RIG_OK;
    rig_point p = w->points[failed];
    rig__unlock(&d->locks.submit);
    atomic_fetch_add(&d->waits.host_waits, 1);
    if ((st = rig__point_wait(p)) != RIG_OK)
      return st;
    drop_point(w, (uint32_t)failed);
  }
}

/* Whether a use's memory was freed since the caller checked it. Read
 * under the submit lock: rig_buffer_free marks the memory dead, then takes
 * and drops every device's submit lock before the memory can go (buffer.c),
 * so a submit either sees the mark here, or stamps its point (or, on a
 * synchronous device, finishes its work) before the free's memory moves. */
static bool freed_meanwhile(const rig__use *uses, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (atomic_load_explicit(&uses[i].alloc->dead, memory_order_relaxed))
      return true;
  return false;
}

/* Sends the values submitted up to upto to the device; submit lock held.
 * A driver that fails to commit loses its device (LOSS-3). */
static void commit_locked(rig_device *d, uint64_t upto) {
  rig_edge_error err = {0};
  if (RIG__DRIVER(d->drv->commit(d->h, upto, &err)) == RIG_EDGE_OK)
    atomic_store(&d->tl.committed, upto);
  else
    rig__lose(d, err.message);                         /* LOSS-3 */
}

/* Whether d commits v at its submit (RIG_EDGE_COMMIT_IDLE): where every
 * value committed before is known reached, the device is idle, and work
 * held back would leave it so until a wait commits it, a second hold of
 * ERR-9's mask (2 system calls per round trip, bench P7). Here the commit
 * runs inside the submit's hold. */
static bool commits_at_submit(const rig_device *d) {
  return (d->facts.flags & RIG_EDGE_COMMIT_IDLE) && !rig__is_lost(d) &&
         atomic_load_explicit(&d->tl.committed, memory_order_relaxed) <=
             atomic_load_explicit(&d->tl.signaled, memory_order_acquire);
}

/* The driver took value v; submit lock held. */
static void driver_took(rig_device *d, uint64_t v) {
  if (!d->drv->commit)
    atomic_store_explicit(&d->tl.committed, v, memory_order_release); /* its submit commits */
  else if (commits_at_submit(d))
    commit_locked(d, v);
  atomic_store_explicit(&d->tl.taken, v, memory_order_release);
}

/* A SYNCHRONOUS device ran work v before its submit returned (DOM-6), so
 * the word core keeps for it holds v; one that does not would leave every
 * wait for v waiting for good where hang_ms is 0. A driver fault: false,
 * with the message in err. Not checked where the driver keeps its own word
 * (a call to signaled per submit), nor in a forked child, whose parent's
 * word it is. */
static bool synchronous_kept(const rig_device *d, uint64_t v, rig_edge_error *err) {
  if (!(d->facts.flags & RIG_EDGE_SYNCHRONOUS) || (d->facts.flags & RIG_EDGE_OWN_WORD) ||
      d->life.forked)
    return true;
  uint64_t w = rig_edge_word_load(&d->tl.word);
  if (w >= v)
    return true;
  rig_edge_fail(err, RIG_EDGE_FAULT,
                "%s: a SYNCHRONOUS driver's submit returned with its word at %llu, below the "
                "work's value %llu: a synchronous driver stores the value in its word "
                "(rig_edge_word_store) before submit returns (<rig/edge.h>)",
                d->name, (unsigned long long)w, (unsigned long long)v);
  return false;
}

/* Assigns the next value to work, hands it to d's driver and stamps its
 * uses; entered with the submit lock held, which it drops. */
static rig_status assign(rig_device *d, rig_edge_work *work, const rig__use *uses, size_t nuses,
                         rig__waits *w, rig_point *out) {
  if (rig__is_lost(d)) {
    rig__unlock(&d->locks.submit);
    return rig__lost_error(d);                         /* SUBMIT-29 */
  }
  if (freed_meanwhile(uses, nuses)) {
    rig__unlock(&d->locks.submit);
    return rig__fail(RIG_INVALID, d, 0, "the buffer is dead: freed by another thread");
  }
  uint64_t v = atomic_load(&d->tl.submitted) + 1;
  if (v > RIG_POINT_VALUE_MAX) {
    rig__lose(d, "timeline exhausted");                /* SUBMIT-32 */
    rig__unlock(&d->locks.submit);
    return rig__lost_error(d);
  }
  work->value = v;
  /* Release, not seq_cst: readers load with acquire, and the submit lock
   * orders writers; a locked store per value is a submit's largest cost. */
  atomic_store_explicit(&d->tl.submitted, v, memory_order_release);
  rig__assigned = true;                                /* DOM-10: no interruption now */
  if (rig__profile_due(d))
    rig__profile_ready(d);                             /* may allocate: profiling */
  rig_edge_error err;
  rig__edge_error_clear(&err);
  /* The host's work runs with the thread's mask as the program set it. */
  int r = RIG__DRIVER_OF(d, d->drv->submit(d->h, work, &err));
  if (r == RIG_EDGE_OK && !synchronous_kept(d, v, &err))
    r = RIG_EDGE_FAULT;
  if (r == RIG_EDGE_OK)
    driver_took(d, v); /* first: a commit made here overlaps the stamps */
  rig_point p = rig_point_make(d->slot, v);
  rig__waits_used(w, d, v);
  stamp(d, uses, nuses, w, p);                         /* ORDER-18, ORDER-19 */
  if (r != RIG_EDGE_OK)
    rig__lose(d, err.message);                         /* SUBMIT-30, LOSS-2 */
  rig__unlock(&d->locks.submit);
  if (r != RIG_EDGE_OK)
    return rig__lost_error(d);
  *out = p;
  return RIG_OK;
}

static rig_status submit_held(rig_device *d, rig_edge_work *work, const rig__use *uses,
                              size_t nuses, const rig_point *waits, size_t nwaits,
                              rig_point *out) {
  rig__waits w;
  rig_status st = check_work(d, work);
  if (st != RIG_OK)
    return st;
  st = follow(&w, d, uses, nuses, waits, nwaits);
  if (st == RIG_OK)
    st = lock_for(d, work, &w);
  if (st != RIG_OK)
    return st;
  return assign(d, work, uses, nuses, &w, out);
}

/* A submit enters its driver up to three times (check, room, submit), and
 * more to map words: the mask is held once around them all, and its waits
 * on the host give the thread its own mask meanwhile (ERR-9, ERR-11). */
rig_status rig__timeline_submit(rig_device *d, rig_edge_work *work, const rig__use *uses,
                                size_t nuses, const rig_point *waits, size_t nwaits,
                                rig_point *out) {
  if (d->own_code)
    return submit_held(d, work, uses, nuses, waits, nwaits, out);
  rig__mask_hold();
  rig_status st = submit_held(d, work, uses, nuses, waits, nwaits, out);
  rig__mask_drop();
  return st;
}

/* ---- the submit that never waits (rig_run_submit_try) ---------------------- */

static rig_status busy(const rig_device *d, const char *why) {
  return rig__fail(RIG_BUSY, d, 0, "rig_run_submit_try: the submit on %s would block: %s",
                   d->name, why);
}

/* Whether the work follows a point not reached of another device: its own
 * device's it follows in device order (ORDER-2), with no wait. The looks
 * commit as a lock-free call's do, only trying the other device's lock. */
static bool follows_other(rig__waits *w, const rig_device *d) {
  for (uint32_t i = 0; i < w->n; i++)
    if (rig_point_slot(w->points[i]) != d->slot)
      return true;
  return w->overflow;
}

/* What the blocking submit does before the value, for a caller that must
 * not wait: RIG_BUSY, having taken nothing, wherever that submit would
 * wait (a driver that may block, a host launch over the pool, a point to
 * follow, a profile to start, another submit's lock, no room); returns
 * with the submit lock held otherwise. Only assign's stamps may then
 * wait, for room among an allocation's stamps that more devices' pending
 * points than it keeps hold in a race with their submits (stamps.c), as
 * the blocking submit's do; the host stamps nothing (docs/decisions.md). */
static rig_status lock_at_once(rig_device *d, rig_edge_work *work, const rig__use *uses,
                               size_t nuses, const rig_point *waits, size_t nwaits,
                               rig__waits *w) {
  if (d->facts.flags & RIG_EDGE_MAY_BLOCK)
    return busy(d, "its driver may block");
  if (d->is_host && rig__host_work_spreads(work))
    return busy(d, "a launch of several groups waits for the pool's workers");
  rig_status st = check_work(d, work);
  if (st == RIG_OK)
    st = rig__waits_gather(w, d, uses, nuses, waits, nwaits);
  if (st != RIG_OK)
    return st;
  if (follows_other(w, d))
    return busy(d, "the work follows a point of another device not reached");
  w->n = 0;
  if (rig__profile_due(d))
    return busy(d, "a profile starts");
  if (!rig__trylock(&d->locks.submit))
    return busy(d, "another submit holds its lock");
  bool room = true;
  if (d->drv->room && RIG__DRIVER_OF(d, d->drv->room(d->h, work, &room)) == RIG_EDGE_OK && !room) {
    rig__unlock(&d->locks.submit);
    return busy(d, "its queues have no room");
  }
  return RIG_OK;
}

rig_status rig__timeline_submit_try(rig_device *d, rig_edge_work *work, const rig__use *uses,
                                    size_t nuses, const rig_point *waits, size_t nwaits,
                                    rig_point *out) {
  rig__waits w;
  if (!d->own_code)
    rig__mask_hold();
  rig_status st = lock_at_once(d, work, uses, nuses, waits, nwaits, &w);
  if (st == RIG_OK)
    st = assign(d, work, uses, nuses, &w, out);
  if (!d->own_code)
    rig__mask_drop();
  return st;
}

/* Commits every value submitted so far, under the submit lock, since
 * commits and submits on a device follow one another (DOM-5). A driver
 * that fails to commit loses its device (LOSS-3). A lock-free caller only
 * tries the lock: a submit or commit under way will commit in its turn, or
 * the driver itself within k values (TL-10). */
void rig__commit(rig_device *d, uint64_t v, bool block) {
  if (!d->drv->commit || atomic_load(&d->tl.committed) >= v || rig__is_lost(d))
    return;
  if (rig__inside_lock() || (block ? pthread_mutex_lock(&d->locks.submit)
                                   : pthread_mutex_trylock(&d->locks.submit)) != 0)
    return;
  uint64_t upto = atomic_load(&d->tl.submitted);
  if (atomic_load(&d->tl.committed) < upto && !rig__is_lost(d))
    commit_locked(d, upto);
  pthread_mutex_unlock(&d->locks.submit);
}
