/* local.c: values per device (LOCAL-1..7, DOM-12, DOM-23).
 *
 * A key's value on a device is made by the key's init at the first get of
 * the key on that device, under the device's local lock, so two threads'
 * first gets make one value (LOCAL-3). init therefore runs inside a lock:
 * a call that may lock made from it returns RIG_INVALID (DOM-12..14). A get
 * that finds its value takes no lock (DOM-23). Values are dropped, through
 * the key's release, once the device's driver's stop has returned, before
 * rig_close returns (LOCAL-5, LOCAL-6).
 */
#include <stdlib.h>

#include "internal.h"

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

RIG_API rig_status rig_local_new_key(rig_local_init init, rig_local_release release, void *ctx,
                                     rig_local_key **out) {
  if (!init || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_local_new_key: %s is NULL", init ? "out" : "init");
  rig_local_key *k = malloc(sizeof *k);
  uint32_t i = atomic_fetch_add(&nkeys, 1);
  if (!k || i >= MAX_KEYS) {
    free(k);
    return rig__fail(RIG_OUT_OF_MEMORY, rig_host(), sizeof *k,
                     "rig_local_new_key: no room for key %u of %u", i, MAX_KEYS);
  }
  *k = (rig_local_key){i, init, release, ctx};
  keys[i] = k;
  *out = k;
  return RIG_OK;
}

/* d's table of values, made at its first get. */
static _Atomic(void *) *table(rig_device *d) {
  _Atomic(void *) *t = atomic_load(&d->locals);
  if (t)
    return t;
  _Atomic(void *) *fresh = calloc(MAX_KEYS, sizeof *fresh);
  if (!fresh)
    return NULL;
  if (!atomic_compare_exchange_strong(&d->locals, &t, fresh)) {
    free(fresh);
    return t;
  }
  return fresh;
}

/* Runs init under the locals lock, counted as a lock held (DOM-12). */
static void *make(rig_local_key *k, rig_device *d, _Atomic(void *) *slot) {
  rig__lock(&locals_lock);
  void *v = atomic_load(slot);
  if (!v) {
    v = k->init(d, k->ctx);
    atomic_store(slot, v);
  }
  rig__unlock(&locals_lock);
  return v;
}

RIG_API rig_status rig_local_get(rig_local_key *k, rig_device *d, void **out) {
  if (!k || !d || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_local_get: NULL argument");
  _Atomic(void *) *t = atomic_load(&d->locals);
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
  if (!(t = table(d)))
    return rig__fail(RIG_OUT_OF_MEMORY, d, MAX_KEYS * sizeof *t, "rig_local_get: out of memory");
  if (!(v = make(k, d, &t[k->index])))
    return rig__fail(RIG_INVALID, d, 0, "rig_local_get: init made no value");
  *out = v;
  return RIG_OK;
}

void rig__locals_drop(rig_device *d) {
  _Atomic(void *) *t = atomic_exchange(&d->locals, NULL);
  if (!t)
    return;
  uint32_t n = atomic_load(&nkeys);
  for (uint32_t i = 0; i < n && i < MAX_KEYS; i++) {
    void *v = atomic_load(&t[i]);
    if (v && keys[i]->release)
      keys[i]->release(v, keys[i]->ctx);            /* LOCAL-5 */
  }
  free(t);
}
