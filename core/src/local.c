/* SPDX-License-Identifier: MIT */
/* local.c: values per device (LOCAL-1..7, DOM-12, DOM-23).
 *
 * A key's value on a device is made by the key's init at the first get of
 * the key on that device, under the device's local lock, so two threads'
 * first gets make one value (LOCAL-3). init therefore runs inside a lock:
 * a call that may lock made from it returns RIG_INVALID (DOM-12..14). A get
 * that finds its value takes no lock (DOM-23). Values are dropped, through
 * the key's release, once the device's driver's stop has returned, before
 * rig_device_close returns (LOCAL-5, LOCAL-6).
 *
 * The drop starts under the locals lock too: an init under way when the
 * device closes ends first and its value is dropped with the others, and
 * no value is made once the drop has begun. Every close of the device,
 * whichever holder's (OPEN-51), returns only once the releases ran.
 */
#include <stdlib.h>

#include "device.h"

#define MAX_KEYS 256

struct rig_local_key {
  uint32_t index;
  rig_local_init init;
  rig_local_release release;
  void *ctx;
};

static _Atomic uint32_t nkeys;
static rig_local_key *keys[MAX_KEYS];
static pthread_mutex_t locals_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t locals_dropped = PTHREAD_COND_INITIALIZER;

RIG_API rig_status rig_local_new_key(rig_local_init init, rig_local_release release, void *ctx,
                                     rig_local_key **out) {
  if (!init || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_local_new_key: %s is NULL", init ? "out" : "init");
  rig_local_key *k = malloc(sizeof *k);
  uint32_t i = atomic_fetch_add(&nkeys, 1);
  if (!k || i >= MAX_KEYS) {
    free(k);
    return rig__fail(RIG_OUT_OF_MEMORY, rig_device_host(), sizeof *k,
                     "rig_local_new_key: no room for key %u of %u", i, MAX_KEYS);
  }
  *k = (rig_local_key){i, init, release, ctx};
  keys[i] = k;
  *out = k;
  return RIG_OK;
}

/* d's table of values, made at its first get. */
static _Atomic(void *) *table(rig_device *d) {
  _Atomic(void *) *t = atomic_load(&d->locals.values);
  if (t)
    return t;
  _Atomic(void *) *fresh = calloc(MAX_KEYS, sizeof *fresh);
  if (!fresh)
    return NULL;
  if (!atomic_compare_exchange_strong(&d->locals.values, &t, fresh)) {
    free(fresh);
    return t;
  }
  return fresh;
}

/* Runs init under the locals lock, counted as a lock held (DOM-12). The
 * table is made under it too, and nothing once the device's values are
 * being dropped: a value made then would never be released (LOCAL-5), and
 * a table made then would be lost. */
static rig_status make(rig_local_key *k, rig_device *d, void **out) {
  rig_status st = RIG_OK;
  void *v = NULL;
  _Atomic(void *) *t;
  rig__lock(&locals_lock);
  if (d->locals.dropping)
    st = rig__lost_error(d);                         /* closed meanwhile */
  else if (!(t = table(d)))
    st = rig__fail(RIG_OUT_OF_MEMORY, d, MAX_KEYS * sizeof *t, "rig_local_get: out of memory");
  else if (!(v = atomic_load(&t[k->index]))) {
    v = k->init(d, k->ctx);
    atomic_store(&t[k->index], v);
  }
  rig__unlock(&locals_lock);
  if (st == RIG_OK && !v)
    st = rig__fail(RIG_INVALID, d, 0, "rig_local_get: init made no value");
  if (st == RIG_OK)
    *out = v;
  return st;
}

RIG_API rig_status rig_local_get(rig_local_key *k, rig_device *d, void **out) {
  if (!k || !d || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_local_get: NULL argument");
  _Atomic(void *) *t = atomic_load(&d->locals.values);
  void *v = t ? atomic_load(&t[k->index]) : NULL;
  if (v) {
    *out = v;                                        /* DOM-23: no lock */
    return RIG_OK;
  }
  rig_status st = rig__may_lock("rig_local_get");
  if (st)
    return st;
  if (rig__is_lost(d))
    return rig__lost_error(d);
  return make(k, d, out);
}

/* A drop another thread of the parent had begun and not ended at the fork:
 * no one ends it in the child, whose close would wait for it for good. Its
 * values are that thread's to release, so the child leaves them. */
static void drop_ended(rig_device *d) {
  if (d->locals.dropping)
    d->locals.dropped = true;
}

void rig__locals_fork(rig__fork_phase ph) {
  if (ph == RIG__FORK_CHILD) {
    rig__devices_each(drop_ended);
    pthread_cond_init(&locals_dropped, NULL); /* its waiters are not in the child */
  }
  rig__fork_mutex(&locals_lock, ph);
}

void rig__locals_drop(rig_device *d) {
  /* Taking the lock waits for an init under way on any device: its value
   * is in the table by then, and none is made after (LOCAL-5). */
  pthread_mutex_lock(&locals_lock);
  bool first = !d->locals.dropping;
  d->locals.dropping = true;
  _Atomic(void *) *t = first ? atomic_exchange(&d->locals.values, NULL) : NULL;
  /* Another holder's close drops them: return once it has (LOCAL-6,
   * OPEN-51). */
  while (!first && !d->locals.dropped)
    pthread_cond_wait(&locals_dropped, &locals_lock);
  pthread_mutex_unlock(&locals_lock);
  if (!first)
    return;
  if (t) {
    uint32_t n = atomic_load(&nkeys);
    for (uint32_t i = 0; i < n && i < MAX_KEYS; i++) {
      void *v = atomic_load(&t[i]);
      if (v && keys[i]->release)
        keys[i]->release(v, keys[i]->ctx);          /* LOCAL-5 */
    }
    free(t);
  }
  pthread_mutex_lock(&locals_lock);
  d->locals.dropped = true;
  pthread_cond_broadcast(&locals_dropped);
  pthread_mutex_unlock(&locals_lock);
}
