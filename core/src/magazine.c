/* SPDX-License-Identifier: MIT */
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
 * A magazine's busy flag is held by its thread, and by a drainer from
 * another thread, for a handful of loads and stores: never while waiting.
 * Its thread takes it with a plain store and no locked instruction, so that
 * a cache hit costs less than malloc+free (bench/create.c): drainers are
 * rare and pay instead, with one membarrier(2) that orders every thread's
 * store of its flag before the drainer reads it (an asymmetric Dekker
 * handshake, as userspace RCU does). Where membarrier is refused, and under
 * ThreadSanitizer, which does not model it, the owner exchanges the flag.
 */
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "magazine.h"

static pthread_mutex_t mags_lock = PTHREAD_MUTEX_INITIALIZER;
static rig__mag *mags;
static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
_Thread_local rig__mag *rig__mine __attribute__((tls_model("initial-exec")));
#define mine rig__mine
bool rig__mag_asym;
#define asym rig__mag_asym

static void decide_asym(void) {
#if !defined(__SANITIZE_THREAD__)
  asym = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

void rig__mag_enter(rig__mag *m) {
  while (atomic_exchange_explicit(&m->busy, 1, memory_order_acquire))
    sched_yield();
}
#define enter rig__mag_enter
#define leave rig__mag_leave
#define enter_own rig__mag_enter_own

/* A drainer from another thread: announces itself, makes every thread's
 * flag visible, then waits out an owner that entered first. */
static void enter_other(rig__mag *m) {
  if (!asym) {
    enter(m);
    return;
  }
  atomic_store(&m->drain, 1);
  syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  enter(m);
}

static void leave_other(rig__mag *m) {
  leave(m);
  if (asym)
    atomic_store_explicit(&m->drain, 0, memory_order_release);
}

/* Gives entry i of m back as collected memory; m entered. */
static void give_up(rig__mag *m, uint32_t i) {
  rig_buffer *b = m->b[i];
  uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed) - 1;
  m->b[i] = m->b[n];
  m->dev[i] = m->dev[n];
  m->size[i] = m->size[n];
  atomic_store_explicit(&m->n, n, memory_order_relaxed);
  rig__alloc *a = b->alloc; /* the record is another thread's once unrecorded */
  rig__buffer_unrecord(b);
  rig__alloc_release(a);
}

static void give_up_all(rig__mag *m, const rig_device *d) {
  for (uint32_t i = atomic_load_explicit(&m->n, memory_order_relaxed); i-- > 0;)
    if (!d || m->dev[i] == d)
      give_up(m, i);
}

/* A thread's end gives its magazine back, once no drainer holds it. */
static void at_exit(void *p) {
  rig__mag *m = p;
  while (!enter_own(m))
    sched_yield();
  give_up_all(m, NULL);
  leave(m);
  pthread_mutex_lock(&mags_lock);
  for (rig__mag **q = &mags; *q; q = &(*q)->next)
    if (*q == m) {
      *q = m->next;
      break;
    }
  pthread_mutex_unlock(&mags_lock);
  free(m);
}

static void make_key(void) {
  decide_asym();
  pthread_key_create(&key, at_exit);
}

/* The slow half of the fast path's magazine lookup: a thread's first. */
rig__mag *rig__mag_new(void) {
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

/* Whether a's points are all reached or dropped (RECLAIM-5), without its
 * lock when it has none, as memory no device used has; its stamps are then
 * cleared (RECLAIM-7). No thread but the magazine's reaches a, so its
 * stamps hold still. */
static bool done(rig__alloc *a) {
  if (rig__stamps_empty(a))
    return true;
  if (!rig__stamps_done(a))
    return false;
  rig__stamps_clear(a);
  return true;
}

/* Every entry, newest first; m entered. */
rig_buffer *rig__mag_scan(rig__mag *m, const rig_device *d, uint64_t want) {
  uint32_t n = atomic_load_explicit(&m->n, memory_order_relaxed);
  for (uint32_t i = n; i-- > 0;) {
    if (m->dev[i] == d && m->size[i] == want && done(m->b[i]->alloc)) {
      rig_buffer *b = m->b[i];
      m->b[i] = m->b[n - 1];
      m->dev[i] = m->dev[n - 1];
      m->size[i] = m->size[n - 1];
      atomic_store_explicit(&m->n, n - 1, memory_order_relaxed);
      return b;
    }
  }
  return NULL;
}

/* A drainer that another drainer holds off leaves the magazine: that one
 * gives it back. */
void rig__mags_drain_mine(const rig_device *d) {
  rig__mag *m = mine;
  if (!m || !atomic_load_explicit(&m->n, memory_order_relaxed) || !enter_own(m))
    return;
  give_up_all(m, d);
  leave(m);
}

/* A fork holds every magazine, as a drainer does, with one membarrier for
 * all: no thread is inside one at the fork, and the child finds each whole
 * and free, those of the parent's other threads included, whose buffers
 * its drains give back. Their owners skip them meanwhile, or wait. */
void rig__mags_fork(rig__fork_phase ph) {
  if (ph == RIG__FORK_PREPARE) {
    pthread_mutex_lock(&mags_lock);
    if (asym) {
      for (rig__mag *m = mags; m; m = m->next)
        atomic_store(&m->drain, 1);
      syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    }
    for (rig__mag *m = mags; m; m = m->next)
      enter(m);
    return;
  }
  for (rig__mag *m = mags; m; m = m->next)
    leave_other(m);
  pthread_mutex_unlock(&mags_lock);
}

/* A magazine seen empty is skipped: a buffer queued in it meanwhile was
 * released after this drain, as far as any caller can tell. */
void rig__mags_drain(const rig_device *d) {
  pthread_mutex_lock(&mags_lock);
  for (rig__mag *m = mags; m; m = m->next) {
    if (!atomic_load_explicit(&m->n, memory_order_relaxed))
      continue;
    if (m == mine) {
      rig__mags_drain_mine(d);
      continue;
    }
    enter_other(m);
    give_up_all(m, d);
    leave_other(m);
  }
  pthread_mutex_unlock(&mags_lock);
}
