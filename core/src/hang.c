/* SPDX-License-Identifier: MIT */
/* hang.c: the hang clock, and losses that spread along queue waits
 * (HANG-1..7, LOSS-5, LOSS-6, LOSS-19, ERR-30, ERR-31).
 *
 * Only a wait looks at a device's progress, so a device nothing waits for
 * is never lost to a hang (HANG-7). Each slice of a wait calls
 * rig__watch(d): it restarts the device's clock when the device reached a
 * later value or has no committed work unreached (HANG-3..5), and loses
 * the device with "no progress for N ms" once the clock passes the hang
 * bound its driver stated (HANG-6). It also loses the device when its
 * queue waits for a point of a lost device that the lost device never
 * reached, with "NAME lost" (LOSS-6, ERR-31): such work can never start.
 */
#include <stdio.h>
#include <time.h>

#include "waits.h"

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The hang clock of d; the clock fields are touched only by waits, under
 * d's hang lock. A fork leaves it (docs/fork.md): a child never watches an
 * inherited device, which is lost there, or io or the host, whose facts
 * state no hang bound. */
static void clock_check(rig_device *d) {
  uint32_t bound = d->facts.hang_ms;
  if (!bound)
    return;                                        /* HANG-1 */
  uint64_t reached = rig__read_signaled(d), now = now_ms();
  uint64_t committed = atomic_load(&d->tl.committed);
  pthread_mutex_lock(&d->locks.hang);
  if (reached >= committed)
    d->hang.since = 0;                             /* HANG-5: idle, no clock */
  else if (!d->hang.since || reached != d->hang.value)
    d->hang.since = now;                           /* HANG-3, HANG-4 */
  d->hang.value = reached;
  bool hung = d->hang.since && now - d->hang.since > bound;
  pthread_mutex_unlock(&d->locks.hang);
  if (hung) {
    char why[64];
    snprintf(why, sizeof why, "no progress for %u ms", bound);
    rig__lose(d, why);                             /* HANG-6, ERR-30 */
  }
}

void rig__watch(rig_device *d) {
  clock_check(d);
  char who[RIG_MESSAGE_BYTES];
  if (!rig__is_lost(d) && rig__waits_on_lost(d, who, sizeof who)) {
    char why[RIG_MESSAGE_BYTES + 8];
    snprintf(why, sizeof why, "%s lost", who);
    rig__lose(d, why);                             /* LOSS-6, LOSS-19 */
  }
}
