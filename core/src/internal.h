/* SPDX-License-Identifier: MIT */
/* internal.h: what every file of core shares: errors, locks, signals,
 * slots and points, and the lock order below. rig__ names are internal to
 * librig-core (hidden visibility); nothing here is ABI. Above it, each
 * including the one before: device.h (the device record), alloc.h
 * (allocations, buffers, stamps, staging) and waits.h (what a submit
 * follows, the timeline). A file includes the highest it needs.
 *
 * Lock order (outer first): a thread that holds one of these takes only
 * those below it. TSan checks it in CI, and a fork's prepare handler takes
 * them in this order (fork.c), all but the two marked "not at a fork":
 *   the list of device records (device.c: a new record joins it)
 *   every device's submit lock (timeline.c: values in acceptance order),
 *     the host's first, then every device record's; no thread holds two.
 *     The host's runs the program's kernels, whose chunks on the pool's
 *     workers run with no lock held, so it comes before any other.
 *     > an allocation's lock (stamps.c: its sequence, odd while held),
 *       which only the stamps' writers take, each under the submit lock
 *       of the device it stamps (not at a fork)
 *   the stopped list (reclaim.c)
 *   registry (open.c: names and slots)
 *   plugins (loader.c)
 *   locals (local.c: keys' init runs under it)
 *   every device's memory lock (reclaim.c, staging.c: cache, collected,
 *     budget, staging)
 *   a device's hang lock (hang.c: its clock; not at a fork)
 *   the launch pool (pool.c)
 *   the magazines' list (magazine.c), then each magazine's busy flag
 *   buffer records (buffer.c), device records (device.c), losses (loss.c)
 *   objects' locks (lock.c: a submission's run pool)
 *   the profiles' take (profile.c), then their labels (a leaf)
 *   each driver's own locks: drivers never call core
 * The open mark of a name (open.c, held while a driver opens, DOM-4) is
 * a condition on the registry, not a lock: a submit or a stop may run under
 * it, and no fork handler waits for it.
 * No lock is held while waiting for a point (DOM-3): waits happen before the
 * submit lock is taken or after it is dropped, except on a synchronous device
 * (DOM-6), whose work runs under its submit lock.
 *
 * Fork (docs/fork.md): only the forking thread goes on in the child, so a
 * lock another thread held at the fork would stay held there. Every lock
 * of core is therefore taken by the prepare handler in the order above and
 * given back after the fork, or no child needs it: the allocations' locks
 * are never held at a fork (only under a submit lock), and devices' hang
 * locks (hang.c), a leaf under a submit lock or none, are taken only to
 * watch a live device with a hang bound, which a child's inherited devices
 * are not (lost, or io, or the host: no bound). A lock added to core joins
 * the order and its file's rig__*_fork, or says why no child needs it.
 * Condition variables and state that other threads leave half done are
 * made anew in the child (the registry's openings, the launch pool, the
 * locals' drops); pthread_once needs nothing (glibc restarts one left
 * under way). Readers that must never wait on a writer take no lock:
 * stamps (a sequence), an image's functions (a list that only grows).
 * Drivers take theirs in their fork hook (edge ABI 1.4), after core's.
 */
#ifndef RIG_CORE_INTERNAL_H
#define RIG_CORE_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rig/edge.h>
#include <rig/rig.h>

#define RIG__HIDDEN __attribute__((visibility("hidden")))

/* The page core rounds host memory to: staging, borrows of io pages, a
 * copy's mapping of the caller's bytes, the host's alignment. */
#define RIG__PAGE 4096u

/* ---- errors (error.c) ---- */
RIG__HIDDEN rig_status rig__fail(rig_status s, const rig_device *d, uint64_t bytes,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#ifdef __clang_analyzer__
/* The analyzer reads one file at a time and cannot see that rig__fail
 * returns its s: spelled out, so that `return rig__fail(RIG_INVALID, ...)`
 * is known non-zero and paths past a failed check are not explored. */
#define rig__fail(s, ...) ((void)rig__fail((s), __VA_ARGS__), (s))
#endif
/* RIG_LOST with "NAME lost: why" (ERR-36). */
RIG__HIDDEN rig_status rig__lost_error(const rig_device *d);
#ifdef __clang_analyzer__
#define rig__lost_error(d) ((void)rig__lost_error(d), RIG_LOST)
#endif

/* ---- locks and waits (lock.c) ---- */
/* Locks that count toward the thread's inside-a-lock check (DOM-13). */
RIG__HIDDEN void rig__lock(pthread_mutex_t *m);
RIG__HIDDEN void rig__unlock(pthread_mutex_t *m);
/* rig__lock where m is free; false, with nothing held, where another
 * thread holds it (rig_run_submit_try). */
RIG__HIDDEN bool rig__trylock(pthread_mutex_t *m);
RIG__HIDDEN bool rig__inside_lock(void);
/* RIG_INVALID when called inside a lock (DOM-14); every may-lock call
 * starts with it. */
RIG__HIDDEN extern _Thread_local int rig__held __attribute__((tls_model("initial-exec")));
RIG__HIDDEN rig_status rig__inside_lock_fail(const char *fn);
/* Set once this thread's call has assigned a value (timeline.c): from
 * then on the call is not interruptible (rig__interrupted, DOM-10). Every
 * call that may wait starts with rig__may_lock, which clears it. */
RIG__HIDDEN extern _Thread_local bool rig__assigned __attribute__((tls_model("initial-exec")));
static inline rig_status rig__may_lock(const char *fn) {
  rig__assigned = false;
  return __builtin_expect(rig__held == 0, 1) ? RIG_OK : rig__inside_lock_fail(fn);
}
/* The lock of an object (a submission's run pool), from a table a fork
 * takes whole; a leaf. */
RIG__HIDDEN pthread_mutex_t *rig__object_lock(const void *p);
/* Run by a driver callback or hook: counts as holding a lock (DOM-12). */
RIG__HIDDEN void rig__enter_callback(void);
RIG__HIDDEN void rig__leave_callback(void);
/* Whether the wait hook asks to stop; call at least every 200 ms. */
RIG__HIDDEN bool rig__interrupted(void);

/* ---- signals (signals.c) ---- */
RIG__HIDDEN void rig__signals_block(sigset_t *old);
RIG__HIDDEN void rig__signals_restore(const sigset_t *old);
/* How many holds of the driver mask the thread is inside (0: its own mask
 * is on). */
RIG__HIDDEN extern _Thread_local unsigned rig__mask_depth __attribute__((tls_model("initial-exec")));
RIG__HIDDEN void rig__mask_block_own(void);
RIG__HIDDEN void rig__mask_restore_own(void);
/* Holds every signal but the fault ones blocked until the matching drop
 * (ERR-9); only the outermost hold and drop change the mask. */
static inline void rig__mask_hold(void) {
  if (rig__mask_depth++ == 0)
    rig__mask_block_own();
}
static inline void rig__mask_drop(void) {
  if (--rig__mask_depth == 0)
    rig__mask_restore_own();
}
/* Gives the thread its own mask inside holds, for a wait (ERR-11, ERR-13),
 * and returns the depth for rig__mask_close, which blocks again. */
RIG__HIDDEN unsigned rig__mask_open(void);
RIG__HIDDEN void rig__mask_close(unsigned depth);
/* A call into a driver, with every signal but the fault ones blocked
 * across it (ERR-9); inside a hold, only the call. */
#define RIG__DRIVER(call)                                                        \
  __extension__({                                                                \
    rig__mask_hold();                                                            \
    __auto_type rig__r_ = (call);                                                \
    rig__mask_drop();                                                            \
    rig__r_;                                                                     \
  })
/* RIG__DRIVER for d's driver, but for rig's own code: the host's (its own
 * code and librig-link), the memory driver's and the io driver's, which
 * leave nothing half-done that a handler could see and whose mask changes
 * would cost more than their work (docs/decisions.md). The host's submits
 * run the program's kernels with the thread's own mask. */
#define RIG__DRIVER_OF(d, call) ((d)->own_code ? (call) : RIG__DRIVER(call))
/* Region-by-region reclamation's signal blocking (ERR-14, ERR-15). */
typedef struct rig__batch {
  sigset_t old;
  unsigned regions;
  bool on;
} rig__batch;
RIG__HIDDEN void rig__batch_step(rig__batch *b);
RIG__HIDDEN void rig__batch_end(rig__batch *b);

/* ---- slots and points (slot.c) ---- */
typedef struct rig__slot {
  _Atomic(rig_device *) dev; /* latest occupant; holds a reference */
  uint64_t high;             /* highest value earlier occupants were given */
  struct rig__dropped *dropped; /* values earlier occupants never reached */
  bool taken;                /* an occupant holds the slot now */
  bool retired;              /* never reused (OPEN-13..15) */
} rig__slot;
RIG__HIDDEN rig_status rig__slot_take(rig_device *d);   /* under registry */
RIG__HIDDEN void rig__slot_leave(rig_device *d);        /* under registry */
/* Destroys the driver handles of devices that left their slots and that
 * nothing but the slot holds any longer (OPEN-24); every call that moves
 * memory makes it. Takes the registry lock where one is waiting. */
RIG__HIDDEN void rig__left_handles_release(void);
/* slot.c's list of them: whether one may be ready (lock-free; the answer
 * true is given once), that one may be, and, under the registry, the next
 * that only its slot holds, unlinked and retained, and one put back whose
 * handle another still held. */
RIG__HIDDEN bool rig__left_waiting(void);
RIG__HIDDEN void rig__left_ready(void);
RIG__HIDDEN rig_device *rig__left_next(void);
RIG__HIDDEN void rig__left_relink(rig_device *d);
RIG__HIDDEN rig__slot *rig__slot_of(uint32_t slot);
RIG__HIDDEN void rig__slot_take_first(rig_device *host);
/* Whether p is reached, reading the device's word; false for a point a
 * lost device never reached. */
RIG__HIDDEN bool rig__point_reached(rig_point p, bool commit);
typedef enum { RIG__REACHED, RIG__PENDING, RIG__DROPPED } rig__pstate;
RIG__HIDDEN rig__pstate rig__point_state(rig_point p, bool *stopped);
/* Releases d's submitted work to the device before a wait for value v
 * (TL-9, TL-15); block=false only tries, as a lock-free call must. */
RIG__HIDDEN void rig__commit(rig_device *d, uint64_t v, bool block);
/* RIG_INVALID, as fn, for a point no device was given: a slot out of
 * range, or a value its device has not been given yet (a wait on it would
 * never end, or end at some later unrelated work). */
RIG__HIDDEN rig_status rig__point_check(rig_point p, const char *fn);
/* Waits for p on the host (no lock held). */
RIG__HIDDEN rig_status rig__point_wait(rig_point p);
/* rig__point_wait for a caller that holds d, the device of p where it
 * is: p already reached costs a read of d's word and no lookup of its
 * slot (a lookup takes and drops a reference). */
RIG__HIDDEN rig_status rig__point_wait_of(rig_device *d, rig_point p);

/* ---- launches (image.c, pool.c, submit.c) ---- */
/* The driver's handle of f. */
RIG__HIDDEN void *rig__function_handle(const rig_function *f);
/* The label f's launches are named by in a profile (profile.c). */
RIG__HIDDEN uint32_t rig__function_label(const rig_function *f);
/* The label of a name, interned for the process; 0 without memory. */
RIG__HIDDEN uint32_t rig__profile_label(const char *name);
/* The last name the calling thread's rig_image_resolve found no function
 * for (NULL: none yet), and in *device its device's name (image.c). */
RIG__HIDDEN const char *rig__missing_function(const char **device);
/* The host's performance cores, counted once (PERF-1..5). */
RIG__HIDDEN unsigned rig__perf_cores(void);
/* Runs fn(params, first, end) over groups * per_group threads, in whole
 * groups, on this thread and the pool; returns once all ran (LAUNCH-1..10). */
RIG__HIDDEN void rig__pool_launch(void *fn, const void *params, uint64_t groups,
                                  uint64_t per_group);
/* Whether a launch of that many groups spreads over the pool's workers,
 * whom the submitting thread then waits for; else it runs on that thread
 * alone. */
RIG__HIDDEN bool rig__pool_spreads(uint64_t groups);

#endif
