/* SPDX-License-Identifier: MIT */
/* loss.c: a device's loss (LOSS-10, LOSS-15, ERR-28, ERR-29) and the
 * process's failure (ERR-37..45): after rig_runtime_fail every open device
 * is lost and every open fails with its reason.
 */
#include <stdio.h>

#include "device.h"

static _Atomic(const char *) failure;
static char failure_buf[RIG_MESSAGE_BYTES];
static atomic_flag failed = ATOMIC_FLAG_INIT;

/* ---- loss ---- */

RIG_API const char *rig_device_lost(const rig_device *d) { return d ? atomic_load(&d->life.lost) : NULL; }

/* One loss at a time: a leaf lock, taken under any other. */
static pthread_mutex_t losing = PTHREAD_MUTEX_INITIALIZER;

void rig__lose(rig_device *d, const char *why) {
  if (d->is_host || rig__is_lost(d))
    return;
  pthread_mutex_lock(&losing);
  if (!rig__is_lost(d)) {
    d->life.lost_at = rig_edge_word_load(&d->tl.word) > atomic_load(&d->tl.signaled)
                     ? rig_edge_word_load(&d->tl.word)
                     : atomic_load(&d->tl.signaled);    /* LOSS-15 */
    snprintf(d->life.lost_buf, sizeof d->life.lost_buf, "%s", why && *why ? why : "fault");
    atomic_store(&d->mem.mag_ok, false);
    atomic_store(&d->life.lost, d->life.lost_buf);             /* LOSS-10 */
  }
  pthread_mutex_unlock(&losing);
  if (d->machine)
    rig__machine_lost(d, d->life.lost_buf);
}

RIG_API void rig_runtime_fail(const char *why) {
  if (atomic_flag_test_and_set(&failed))
    return;                                          /* ERR-44 */
  /* The reason is every later open's message and the lost devices' reason:
   * never empty, so that no call fails saying nothing. */
  snprintf(failure_buf, sizeof failure_buf, "%s", why && *why ? why : RIG_FAIL_NO_REASON);
  atomic_store(&failure, failure_buf);
  rig__registry_lose(failure_buf);                   /* ERR-39, ERR-40 */
}

RIG_API const char *rig_runtime_failure(void) { return atomic_load(&failure); }

void rig__lose_for(rig_device *d, int result, const char *message) {
  char why[RIG_MESSAGE_BYTES];
  if (result == RIG_EDGE_HALF) /* ERR-29: the status's name and its message */
    snprintf(why, sizeof why, "RIG_EDGE_HALF(\"%s\")", message);
  else
    snprintf(why, sizeof why, "%s", message);              /* ERR-28 */
  rig__lose(d, why);
}


void rig__losses_fork(rig__fork_phase ph) { rig__fork_mutex(&losing, ph); }
