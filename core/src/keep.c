/* SPDX-License-Identifier: MIT */
/* keep.c: the values collected submissions keep (Submission.make's keep;
 * RECLAIM-17, RECLAIM-18, RECLAIM-58, RUN-8, STOP-2).
 *
 * A submission may keep a value, such as the workspace its work reads,
 * until it is released and the work on its device is done. Its release
 * only queues the value on the device. The first call that moves the
 * device's memory afterwards notes the device's last submitted value, and
 * a later such call, once that value is reached, lets the value go through
 * its release function. A lost device's kept values go at its stop. The
 * release function runs as a callback, inside a lock (DOM-12).
 */
#include <stdlib.h>

#include "alloc.h"

#define NOT_NOTED UINT64_MAX /* above every value (2^47 - 1 at most) */

struct rig__kept {
  void *value;
  rig_keep_release release;
  uint64_t after;            /* the value to wait for; NOT_NOTED until a move notes it */
  struct rig__kept *next;
};

static void let_go(rig__kept *k) {
  rig__enter_callback();
  if (k->release)
    k->release(k->value);
  rig__leave_callback();
  rig__note_collection(); /* memory may have become collectable (RECLAIM-58) */
  free(k);
}

/* Values kept on a device that had stopped (its stop returned and it
 * reported its last value) when they were queued: a submission or image
 * released after its device's close. No work of it remains and its own
 * list may never be read again, once it left the stopped list, so the next
 * move on any device lets them go (RECLAIM-21). */
static _Atomic(rig__kept *) stopped_kept;

static void push(_Atomic(rig__kept *) *list, rig__kept *k) {
  rig__kept *head = atomic_load(list);
  do
    k->next = head;
  while (!atomic_compare_exchange_weak(list, &head, k));
}

rig__kept *rig__keep_new(void) { return malloc(sizeof(rig__kept)); }

void rig__keep_push(rig_device *d, rig__kept *k, void *value, rig_keep_release release) {
  *k = (rig__kept){value, release, NOT_NOTED, NULL};
  push(&d->mem.kept, k);
  /* Checked after the push: a stop that completes meanwhile takes the
   * value with rig__return_all's exchange, or this one takes it. */
  if (rig__is_stopped(d))
    for (rig__kept *l = atomic_exchange(&d->mem.kept, NULL), *n; l; l = n) {
      n = l->next;
      push(&stopped_kept, l);
    }
}

rig_status rig__keep_queue(rig_device *d, void *value, rig_keep_release release) {
  rig__kept *k = rig__keep_new();
  if (!k)
    return RIG_OUT_OF_MEMORY;
  rig__keep_push(d, k, value, release);
  return RIG_OK;
}

void rig__keep_release_stopped(void) {
  if (!atomic_load_explicit(&stopped_kept, memory_order_relaxed))
    return;
  for (rig__kept *l = atomic_exchange(&stopped_kept, NULL), *n; l; l = n) {
    n = l->next;
    let_go(l);
  }
}


void rig__keep_release(rig_device *d, bool all) {
  /* Every copy moves its devices' memory: an empty list costs a load, not
   * a locked exchange. */
  if (!atomic_load_explicit(&d->mem.kept, memory_order_relaxed))
    return;
  rig__kept *list = atomic_exchange(&d->mem.kept, NULL), *wait = NULL;
  if (!list)
    return;
  uint64_t reached = rig__read_signaled(d), submitted = atomic_load(&d->tl.submitted);
  while (list) {
    rig__kept *k = list;
    list = list->next;
    if (k->after == NOT_NOTED)
      k->after = submitted; /* RECLAIM-17; a device that took no work waits for none */
    if (all || d->life.forked || (!rig__is_lost(d) && reached >= k->after)) { /* STOP-21 */
      let_go(k);
      continue;
    }
    k->next = wait;
    wait = k;
  }
  while (wait) { /* back for a later move */
    rig__kept *k = wait;
    wait = wait->next;
    rig__kept *head = atomic_load(&d->mem.kept);
    do
      k->next = head;
    while (!atomic_compare_exchange_weak(&d->mem.kept, &head, k));
  }
}
