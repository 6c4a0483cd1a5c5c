/* magazine.c: each thread's small queue of its collected buffers, which its
 * next create of the same size on the same device reuses with no lock
 * (RECLAIM-7, RECLAIM-8).
 *
 * The last release of a buffer whose allocation has no other buffer queues
 * the record, allocation and all, in the releasing thread's magazine, as a
 * release queues any collected memory (RECLAIM-2). A create takes from it
 * memory whose points are reached, as it would from the cache. The memory
 * still counts in its budget, as cached memory does. Every call that needs
 * a device's cache whole, free_cache, set_budget, a reclamation round and a
 * stop, first drains every thread's magazine of that device into the
 * device's collected memory; a thread's own slow create drains its own.
 *
 * A magazine's busy flag is taken by its thread, and by a drainer from
 * another thread, for a handful of loads and stores: never while waiting.
 */
#include <sched.h>
#include <stdlib.h>

#include "internal.h"

#define MAG 16
#define HOST_KEEP_MIN (64u * 1024u)

typedef struct rig__mag {
  _Atomic int busy;
  uint32_t n;
  rig_buffer *b[MAG];           /* each the only record of its allocation */
  struct rig__mag *next;
} rig__mag;

static pthread_mutex_t mags_lock = PTHREAD_MUTEX_INITIALIZER;
static rig__mag *mags;
static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Thread_local rig__mag *mine __attribute__((tls_model("initial-exec")));

static void enter(rig__mag *m) {
  while (atomic_exchange_explicit(&m->busy, 1, memory_order_acquire))
    sched_yield();
}

static void leave(rig__mag *m) { atomic_store_explicit(&m->busy, 0, memory_order_release); }

/* Gives entry i of m back as collected memory; m entered. */
static void give_up(rig__mag *m, uint32_t i) {
  rig_buffer *b = m->b[i];
  m->b[i] = m->b[--m->n];
  rig__buffer_unrecord(b);
  rig__alloc_release(b->alloc);
}

static void drain(rig__mag *m, const rig_device *d) {
  enter(m);
  for (uint32_t i = m->n; i-- > 0;)
    if (!d || m->b[i]->alloc->dev == d)
      give_up(m, i);
  leave(m);
}

/* A thread's end gives its magazine back. */
static void at_exit(void *p) {
  rig__mag *m = p;
  drain(m, NULL);
  pthread_mutex_lock(&mags_lock);
  for (rig__mag **q = &mags; *q; q = &(*q)->next)
    if (*q == m) {
      *q = m->next;
      break;
    }
  pthread_mutex_unlock(&mags_lock);
  free(m);
}

static void make_key(void) { pthread_key_create(&key, at_exit); }

static rig__mag *magazine(void) {
  if (mine)
    return mine;
  pthread_once(&once, make_key);
  rig__mag *m = calloc(1, sizeof *m);
  if (!m || pthread_setspecific(key, m) != 0) {
    free(m);
    return NULL;
  }
  pthread_mutex_lock(&mags_lock);
  m->next = mags;
  mags = m;
  pthread_mutex_unlock(&mags_lock);
  return mine = m;
}

/* Whether the collected allocation of b may wait in a magazine: memory the
 * cache would keep (RECLAIM-11, RECLAIM-12, RECLAIM-47). */
static bool eligible(const rig_buffer *b) {
  const rig__alloc *a = b->alloc;
  const rig_device *d = a->dev;
  if (b->borrow || a->early || atomic_load(&a->dead) || d->stopped || rig__is_lost(d) ||
      d->drv->io || a->kind != RIG_KIND_DEVICE)
    return false;
  if (d->is_host && a->charge < HOST_KEEP_MIN)
    return false;
  return atomic_load(&d->allocated) <= atomic_load(&d->budget);
}

bool rig__mag_put(rig_buffer *b) {
  rig__mag *m;
  if (atomic_load(&b->alloc->refs) != 1 || !eligible(b) || !(m = magazine()))
    return false;
  enter(m);
  bool room = m->n < MAG;
  if (room)
    m->b[m->n++] = b;
  leave(m);
  if (room)
    rig__note_collection();
  return room;
}

/* Whether a's points are all reached or dropped, without its lock when it
 * has none, as memory no device used has (RECLAIM-5). */
static bool done(rig__alloc *a) {
  for (int i = 0; i < RIG__STAMPS; i++)
    if (__atomic_load_n(&a->stamps[i].use, __ATOMIC_ACQUIRE) || a->unordered[i])
      return rig__stamps_done(a);
  return true;
}

rig_buffer *rig__mag_take(rig_device *d, uint64_t bytes, rig_kind kind) {
  rig__mag *m = mine;
  rig_buffer *b = NULL;
  if (!m || !m->n)
    return NULL;
  enter(m);
  for (uint32_t i = m->n; i-- > 0;) {
    rig__alloc *a = m->b[i]->alloc;
    if (a->dev == d && a->bytes == bytes && a->kind == kind && done(a)) {
      b = m->b[i];
      m->b[i] = m->b[--m->n];
      break;
    }
  }
  leave(m);
  return b;
}

void rig__mags_drain_mine(const rig_device *d) {
  if (mine && mine->n)
    drain(mine, d);
}

void rig__mags_drain(const rig_device *d) {
  pthread_mutex_lock(&mags_lock);
  for (rig__mag *m = mags; m; m = m->next)
    drain(m, d);
  pthread_mutex_unlock(&mags_lock);
}
