/* fork.c: a child of fork (LOSS-9, STOP-18..26, ERR-34).
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
 * The handlers run around fork with the registry held, so that the child
 * finds the name table whole; the child sets each device's reason
 * directly, and makes each inherited device's submit lock anew, since a
 * lock another parent thread held at the fork stays held in the child.
 */
#include <stdio.h>

#include "internal.h"

static void prepare(void) { rig__registry_lock(); }
static void parent(void) { rig__registry_unlock(); }

/* The inherited devices, whose kept values the child's moves let go. */
#define MAX_FORKED 256
static rig_device *inherited[MAX_FORKED];
static _Atomic unsigned ninherited;

static void forked(rig_device *d) {
  /* A live io device is its library's to keep or not, as an open file is
   * (STOP-23), and so is one whose stop returned; one lost whose stop had
   * not returned, owed or under way, stays lost, and its stop and memory
   * are the parent's (STOP-24). */
  if (d->drv->io && (!rig__is_lost(d) || d->stop_returned))
    return;
  d->forked = true;                                        /* STOP-20 */
  /* A parent thread inside a submit at the fork holds the lock for good
   * here; the child is single-threaded and submits nothing to d, and its
   * close and mappings' release take the lock. */
  pthread_mutex_init(&d->submit_lock, NULL);
  unsigned n = atomic_load(&ninherited);
  if (n < MAX_FORKED) {
    inherited[n] = rig_device_retain(d);
    atomic_store(&ninherited, n + 1);
  }
  if (rig__is_lost(d))
    return;                                                /* STOP-18: its own reason */
  snprintf(d->lost_buf, sizeof d->lost_buf, "forked");     /* ERR-34 */
  d->lost_at = d->start;                                   /* STOP-19 */
  atomic_store(&d->mag_ok, false);
  atomic_store(&d->lost, d->lost_buf);
}

static void child(void) {
  rig__registry_each(forked);
  rig__registry_unlock();
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
