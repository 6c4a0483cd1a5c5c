/* SPDX-License-Identifier: MIT */
/* waits.c: the points a submit's work follows on other devices, and where
 * each is waited for (SUBMIT-2, SUBMIT-3, ORDER-10, OPEN-20..23, TL-9).
 *
 * A point of the submitting device itself needs no wait: device order
 * covers it (ORDER-2). A point of another device goes to the submitting
 * device's queue where its driver waits on other devices' words
 * (QUEUE_WAITS) and the other device's word is core's, or where the other
 * device keeps its own word (OWN_WORD), is of the same driver, and the
 * driver maps it (map_peer, edge ABI 1.2: two opens of one Vulkan device
 * sharing a VkDevice). Otherwise, or where map_peer says no, submit waits
 * for it on the host, before it takes a value, holding no lock (SUBMIT-3).
 * Either way the waited work is committed first (TL-9).
 *
 * A device keeps one mapping of another device's word per slot it waits
 * on: that of the slot's device it waited on last (OPEN-20). One of an
 * earlier device of the slot retires, and goes back once the queue has
 * passed the waits that read it, at the first of: a submit that maps a
 * later device of a slot, a call that moves the device's memory, and its
 * stop (OPEN-21..23). A mapping holds a reference to the device whose word
 * it maps, so that the word outlives it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "waits.h"

struct rig__mapping {
  uint32_t slot;
  rig_device *dev;               /* whose word; a reference */
  void *mapping;                 /* the driver's */
  uint64_t last_use;             /* the last value that waited through it */
  uint64_t waited;               /* the highest value of dev it waited for */
  struct rig__mapping *next;
};

/* Adds p to the set, keeping the highest value per slot: values of one slot
 * grow across its devices, and device order covers the lower ones. */
static void add_point(rig__waits *w, rig_point p) {
  for (uint32_t i = 0; i < w->n; i++)
    if (rig_point_slot(w->points[i]) == rig_point_slot(p)) {
      if (p > w->points[i])
        w->points[i] = p;
      return;
    }
  if (w->n < RIG__MAX_WAITS)
    w->points[w->n++] = p;
  else
    w->overflow = true;
}

rig_status rig__waits_gather(rig__waits *w, rig_device *d, const rig__use *uses, size_t nuses,
                             const rig_point *waits, size_t nwaits) {
  rig_point need[2 * RIG__STAMPS + 1];
  w->n = 0;
  w->overflow = false;
  for (size_t i = 0; i < nwaits; i++) {
    bool stopped;
    rig_status st = rig__point_check(waits[i], "rig_run_submit: a wait");
    if (st)
      return st;                                           /* before any value */
    switch (rig__point_state(waits[i], &stopped)) {
    case RIG__DROPPED:
      return RIG_LOST;                                     /* SUBMIT-31 */
    case RIG__PENDING:
      add_point(w, waits[i]);
      break;
    case RIG__REACHED:
      break;
    }
  }
  for (size_t i = 0; i < nuses; i++) {
    if (uses[i].unordered)
      continue;                                            /* ORDER-23, LMEM-4 */
    int n = rig__stamps_needed_on(uses[i].alloc, uses[i].write, d, need, 2 * RIG__STAMPS + 1);
    if (n < 0)
      return RIG_LOST;                                     /* LMEM-10 */
    for (int k = 0; k < n; k++)
      add_point(w, need[k]);
  }
  return RIG_OK;
}

typedef int (*map_peer_fn)(void *h, void *peer, void **out_mapping, rig_edge_error *err);

/* The driver's map_peer where its table reaches it (edge ABI 1.2), else
 * NULL: a 1.0 or 1.1 table ends before it, and core never reads past a
 * table's size. */
static map_peer_fn peer_mapper(const rig_edge_driver *t) {
  if (t->size < offsetof(rig_edge_driver, map_peer) + sizeof t->map_peer)
    return NULL;
  return t->map_peer;
}

/* Whether d's queue may be asked to wait for a point of other itself: a
 * word of core's where d's queue waits on words (QUEUE_WAITS), or the own
 * word of a device of d's driver where the driver maps peers (map_peer,
 * which may still say no: then the host waits, SUBMIT-3). A forked child's
 * handles are its parent's (STOP-20): it maps nothing. */
static bool queue_can_wait(const rig_device *d, const rig_device *other) {
  if (other->facts.flags & RIG_EDGE_OWN_WORD)
    return other->drv == d->drv && peer_mapper(d->drv) && d->drv->unmap_word && !d->life.forked &&
           !other->life.forked;
  return d->facts.flags & RIG_EDGE_QUEUE_WAITS;
}

/* Whether d's queue ever waits on another device's word. */
static bool waits_in_queue(const rig_device *d) {
  return (d->facts.flags & RIG_EDGE_QUEUE_WAITS) || peer_mapper(d->drv);
}

/* The driver's mapping of o's word for d's queue (map_word, or map_peer
 * for a device that keeps its own word), or NULL where it has none. */
static void *map_of(rig_device *d, rig_device *o) {
  rig_edge_error err = {0};
  void *map = NULL;
  int r = !queue_can_wait(d, o) ? RIG_EDGE_UNSUPPORTED
          : (o->facts.flags & RIG_EDGE_OWN_WORD)
              ? RIG__DRIVER(peer_mapper(d->drv)(d->h, o->h, &map, &err))
              : RIG__DRIVER(d->drv->map_word(d->h, &o->tl.word, &map, &err));
  return r == RIG_EDGE_OK ? map : NULL;
}

rig_status rig__waits_on_host(rig__waits *w, rig_device *d) {
  uint32_t keep = 0;
  for (uint32_t i = 0; i < w->n; i++) {
    rig_point p = w->points[i];
    if (rig_point_slot(p) == d->slot)
      continue;                                            /* ORDER-2 */
    rig_device *o = rig_point_device(p);
    bool queued = o && queue_can_wait(d, o) && !w->overflow;
    if (o)
      rig__commit(o, rig_point_value(p), true);           /* TL-9 */
    rig_device_release(o);
    if (queued) {
      w->points[keep++] = p;
      continue;
    }
    atomic_fetch_add(&d->waits.host_waits, 1);                   /* SUBMIT-3 */
    rig_status st = rig__point_wait(p);
    if (st != RIG_OK)
      return st;
  }
  w->n = keep;
  return RIG_OK;
}

/* Moves mappings whose queue waits are passed from retired to freed. */
static void release_passed(rig_device *d) {
  uint64_t reached = rig__read_signaled(d);
  for (rig__mapping **p = &d->waits.retired; *p;) {
    rig__mapping *m = *p;
    if (m->last_use <= reached || rig__is_stopped(d)) {
      *p = m->next;
      if (d->drv->unmap_word && !d->life.forked) {
        rig__mask_hold();                                /* ERR-9 */
        d->drv->unmap_word(d->h, m->mapping);
        rig__mask_drop();
      }
      rig_device_release(m->dev);
      free(m);
      atomic_fetch_sub(&d->waits.word_mappings, 1);
    } else
      p = &m->next;
  }
}

/* The mapping of o's word for d's queue; submit lock held. */
static rig__mapping *mapping_for(rig_device *d, rig_device *o) {
  rig__mapping **p = &d->waits.mappings;
  for (; *p; p = &(*p)->next)
    if ((*p)->slot == o->slot)
      break;
  rig__mapping *m = *p;
  if (m && m->dev == o)
    return m;
  if (m) { /* a later device of the slot: the earlier one's retires (OPEN-21) */
    *p = m->next;
    m->next = d->waits.retired;
    d->waits.retired = m;
    release_passed(d);
  }
  void *map = NULL;
  if (!(m = calloc(1, sizeof *m)) || !(map = map_of(d, o))) {
    free(m);
    return NULL; /* the host waits for it (SUBMIT-3) */
  }
  m->slot = o->slot;
  m->dev = rig_device_retain(o);
  m->mapping = map;
  m->next = d->waits.mappings;
  d->waits.mappings = m;
  atomic_fetch_add(&d->waits.word_mappings, 1);
  return m;
}

int rig__waits_to_queue(rig__waits *w, rig_device *d, rig_edge_work *work) {
  for (uint32_t i = 0; i < w->n; i++) {
    rig_device *o = rig_point_device(w->points[i]);
    w->maps[i] = o ? mapping_for(d, o) : NULL;
    rig_device_release(o);
    if (!w->maps[i])
      return (int)i; /* no device or no mapping: the host waits for it */
    w->edge[i].mapping = w->maps[i]->mapping;
    w->edge[i].value = rig_point_value(w->points[i]);
  }
  work->waits = w->edge;
  work->nwaits = w->n;
  return -1;
}

void rig__waits_used(rig__waits *w, rig_device *d, uint64_t value) {
  for (uint32_t i = 0; i < w->n; i++) {
    w->maps[i]->last_use = value;
    uint64_t v = rig_point_value(w->points[i]);
    if (v > w->maps[i]->waited)
      w->maps[i]->waited = v;
  }
  if (w->n) /* a locked add per submit is a fifth of a host launch's cost */
    atomic_fetch_add(&d->waits.queue_waits, w->n);               /* SUBMIT-2 */
}

void rig__mappings_release(rig_device *d, bool all) {
  if (!d->waits.retired && !(all && d->waits.mappings))
    return;
  rig__lock(&d->locks.submit);
  if (all) {
    while (d->waits.mappings) {
      rig__mapping *m = d->waits.mappings;
      d->waits.mappings = m->next;
      m->next = d->waits.retired;
      d->waits.retired = m;
    }
  }
  release_passed(d);
  rig__unlock(&d->locks.submit);
}

RIG_API void rig_device_stats(const rig_device *d, rig_stats *out) {
  if (!out)
    return;
  out->queue_waits = d ? atomic_load(&d->waits.queue_waits) : 0;
  out->host_waits = d ? atomic_load(&d->waits.host_waits) : 0;
  out->word_mappings = d ? atomic_load(&d->waits.word_mappings) : 0;
  out->borrow_mappings = d ? atomic_load(&d->waits.borrow_mappings) : 0;
}

bool rig__waits_on_lost(rig_device *d, char *who, size_t n) {
  bool found = false;
  if (!waits_in_queue(d) || pthread_mutex_trylock(&d->locks.submit) != 0)
    return false; /* no queue waits, or a submit under way: the next slice looks */
  /* The value is read only where a mapping could name a lost device: a
   * driver's read costs (a Vulkan counter read takes lavapipe's lock). */
  uint64_t reached = d->waits.mappings ? rig__read_signaled(d) : 0;
  for (rig__mapping *m = d->waits.mappings; m && !found; m = m->next)
    if (rig__is_lost(m->dev) && m->waited > m->dev->life.lost_at && m->last_use > reached) {
      snprintf(who, n, "%s", m->dev->name);
      found = true;
    }
  pthread_mutex_unlock(&d->locks.submit);
  return found;
}
