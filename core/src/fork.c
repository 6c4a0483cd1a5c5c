/* SPDX-License-Identifier: MIT */
/* fork.c: a child of fork (LOSS-9, STOP-18..26, ERR-34; docs/fork.md).
 *
 * In the child, every driver's device inherited from the parent is lost
 * with "forked", unless it was lost before, and its points count as never
 * reached: its queues and memory are the parent's, and a child that touched
 * them through the driver could corrupt the parent's work. The child never
 * calls those devices' drivers again: their stops, memory releases and
 * mappings are skipped, and their memory is left for the parent
 * (STOP-20). A value a submission on such a device keeps goes at the
 * child's next move of memory, without waiting for the work (STOP-21).
 * Devices the child opens are its own (STOP-26).
 *
 * Only the forking thread goes on in the child: a lock another thread held
 * at the fork would stay held there for good. So the prepare handler takes
 * every lock of core that the child may need, in the lock order of
 * internal.h, then each driver's through its fork hook (edge ABI 1.4), and
 * the parent and child handlers give them back; the child first mends what
 * the other threads left half done (each file's rig__*_fork says what).
 * Locks the prepare handler does not take are those the child never
 * needs: internal.h lists every lock and why.
 */
#include <stddef.h>
#include <stdio.h>

#include "device.h"

/* The driver tables with a fork hook, noted at their first open; the
 * registry guards them. 64 tables of drivers are more than a process
 * loads. */
#define MAX_DRIVERS 64
static const rig_edge_driver *drivers[MAX_DRIVERS];
static unsigned ndrivers;

void rig__fork_note_driver(const rig_edge_driver *t) {
  if (t->size < offsetof(rig_edge_driver, fork) + sizeof t->fork || !t->fork)
    return;
  for (unsigned i = 0; i < ndrivers; i++)
    if (drivers[i] == t)
      return;
  if (ndrivers < MAX_DRIVERS)
    drivers[ndrivers++] = t;
}

/* Drivers' locks come last: core calls drivers holding its own (ERR-9:
 * with signals blocked, as any driver call). */
static void drivers_fork(rig__fork_phase ph) {
  uint32_t phase = ph == RIG__FORK_PREPARE  ? RIG_EDGE_FORK_PREPARE
                   : ph == RIG__FORK_CHILD ? RIG_EDGE_FORK_CHILD
                                           : RIG_EDGE_FORK_PARENT;
  sigset_t old;
  rig__signals_block(&old);
  for (unsigned i = 0; i < ndrivers; i++)
    drivers[i]->fork(phase);
  rig__signals_restore(&old);
}

static void submit_locks(rig__fork_phase ph) {
  rig__devices_fork(ph, offsetof(rig_device, locks.submit));
}
static void memory_locks(rig__fork_phase ph) {
  rig__devices_fork(ph, offsetof(rig_device, locks.mem));
}

/* The lock order of internal.h, outer first: prepare takes them in it,
 * parent and child give them back the other way. */
static void (*const order[])(rig__fork_phase) = {
    rig__records_list_fork, submit_locks,      rig__stopped_fork, rig__registry_fork,
    rig__plugins_fork,      rig__locals_fork,  memory_locks,      rig__pool_fork,
    rig__mags_fork,         rig__buffers_fork, rig__records_fork, rig__losses_fork, rig__objects_fork,
    rig__profile_fork,      drivers_fork,
};
#define STEPS (sizeof order / sizeof order[0])

static void prepare(void) {
  for (size_t i = 0; i < STEPS; i++)
    order[i](RIG__FORK_PREPARE);
}

static void release(rig__fork_phase ph) {
  for (size_t i = STEPS; i-- > 0;)
    order[i](ph);
}

static void parent(void) { release(RIG__FORK_PARENT); }

/* The inherited devices, whose kept values the child's moves let go. */
#define MAX_FORKED 256
static rig_device *inherited[MAX_FORKED];
static _Atomic unsigned ninherited;

static void forked(rig_device *d) {
  /* A live io device is its library's to keep or not, as an open file is
   * (STOP-23), and so is one whose stop returned; one lost whose stop had
   * not returned, owed or under way, stays lost, and its stop and memory
   * are the parent's (STOP-24). */
  if (d->drv->io && (!rig__is_lost(d) || d->life.stop_returned))
    return;
  d->life.forked = true;                                        /* STOP-20 */
  unsigned n = atomic_load(&ninherited);
  if (n < MAX_FORKED) {
    inherited[n] = rig_device_retain(d);
    atomic_store(&ninherited, n + 1);
  }
  if (rig__is_lost(d))
    return;                                                /* STOP-18: its own reason */
  snprintf(d->life.lost_buf, sizeof d->life.lost_buf, "forked");     /* ERR-34 */
  d->life.lost_at = d->start;                                   /* STOP-19 */
  atomic_store(&d->mem.mag_ok, false);
  atomic_store(&d->life.lost, d->life.lost_buf);
}

static void child(void) {
  rig__registry_each(forked); /* the registry is held */
  release(RIG__FORK_CHILD);
}

void rig__fork_handlers(void) { pthread_atfork(prepare, parent, child); }

/* A move of memory in a child of fork lets go of the values that
 * submissions on inherited devices keep, without waiting for their work
 * (STOP-21). */
void rig__fork_release_kept(void) {
  unsigned n = atomic_load(&ninherited);
  for (unsigned i = 0; i < n; i++)
    rig__keep_release(inherited[i], true);
}
