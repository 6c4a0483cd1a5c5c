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
#include "internal.h"

#define NEED_CAP (2 * RIG__STAMPS + 1)

/* Waits on the host for every point the uses and waits[] must follow
 * (SUBMIT-3). RIG_LOST for a point its lost device never reached
 * (SUBMIT-31, LMEM-10). */
static rig_status follow(const rig__use *uses, size_t nuses, const rig_point *waits,
                         size_t nwaits) {
  for (size_t i = 0; i < nwaits; i++) {
    bool stopped;
    if (rig__point_state(waits[i], &stopped) == RIG__DROPPED)
      return RIG_LOST;
    rig_status st = rig__point_wait(waits[i]);
    if (st != RIG_OK)
      return st;
  }
  for (size_t i = 0; i < nuses; i++) {
    rig_status st = rig__stamps_wait(uses[i].alloc, uses[i].write);
    if (st != RIG_OK)
      return st;
  }
  return RIG_OK;
}

static void stamp(rig_device *d, const rig__use *uses, size_t nuses, rig_point p) {
  if (d->is_host)
    return;                                            /* ORDER-21 */
  for (size_t i = 0; i < nuses; i++)
    rig__stamps_add(uses[i].alloc, p, uses[i].write);
}

/* Asks the driver for room, waiting one value at a time without the lock
 * (SUBMIT-4). Returns with the submit lock held. */
static void lock_with_room(rig_device *d, const rig_edge_work *work) {
  for (;;) {
    rig__lock(&d->submit_lock);
    bool room = true;
    if (!d->drv->room || d->drv->room(d->h, work, &room) != RIG_EDGE_OK || room)
      return;
    uint64_t next = rig__read_signaled(d) + 1;
    rig__unlock(&d->submit_lock);
    (void)rig__point_wait(rig_point_make(d->slot, next));
  }
}

rig_status rig__timeline_submit(rig_device *d, rig_edge_work *work, const rig__use *uses,
                                size_t nuses, const rig_point *waits, size_t nwaits,
                                rig_point *out) {
  rig_status st = follow(uses, nuses, waits, nwaits);
  if (st != RIG_OK)
    return st;
  lock_with_room(d, work);
  if (rig__is_lost(d)) {
    rig__unlock(&d->submit_lock);
    return rig__lost_error(d);                         /* SUBMIT-29 */
  }
  uint64_t v = atomic_load(&d->submitted) + 1;
  if (v > RIG_POINT_VALUE_MAX) {
    rig__lose(d, "timeline exhausted");                /* SUBMIT-32 */
    rig__unlock(&d->submit_lock);
    return rig__lost_error(d);
  }
  work->value = v;
  atomic_store(&d->submitted, v);
  rig_edge_error err = {0};
  int r = d->drv->submit(d->h, work, &err);
  rig_point p = rig_point_make(d->slot, v);
  stamp(d, uses, nuses, p);                            /* ORDER-18, ORDER-19 */
  if (r != RIG_EDGE_OK)
    rig__lose(d, err.message);                         /* SUBMIT-30, LOSS-2 */
  else if (!d->drv->commit)
    atomic_store(&d->committed, v);                    /* its submit commits */
  rig__unlock(&d->submit_lock);
  if (r != RIG_EDGE_OK)
    return rig__lost_error(d);
  *out = p;
  return RIG_OK;
}

/* Commits every value submitted so far, under the submit lock, since
 * commits and submits on a device follow one another (DOM-5). A driver
 * that fails to commit loses its device (LOSS-3). A lock-free caller only
 * tries the lock: a submit or commit under way will commit in its turn, or
 * the driver itself within k values (TL-10). */
void rig__commit(rig_device *d, uint64_t v, bool block) {
  if (!d->drv->commit || atomic_load(&d->committed) >= v || rig__is_lost(d))
    return;
  if (rig__inside_lock() || (block ? pthread_mutex_lock(&d->submit_lock)
                                   : pthread_mutex_trylock(&d->submit_lock)) != 0)
    return;
  uint64_t upto = atomic_load(&d->submitted);
  if (atomic_load(&d->committed) < upto && !rig__is_lost(d)) {
    rig_edge_error err = {0};
    if (d->drv->commit(d->h, upto, &err) == RIG_EDGE_OK)
      atomic_store(&d->committed, upto);
    else
      rig__lose(d, err.message);                       /* LOSS-3 */
  }
  pthread_mutex_unlock(&d->submit_lock);
}
