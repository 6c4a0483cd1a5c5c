/* SPDX-License-Identifier: MIT */
/* buffer.c: buffers, views and their properties (PRE-14..16, LIFE-1, LIFE-2,
 * WORD-3, WORD-5, WORD-6).
 *
 * A buffer is a range of an allocation, on a device. Buffer records come
 * from a pool so that a create from the cache allocates nothing: releases
 * push them on a lock-free stack, and a create takes the whole stack at
 * once under a mutex, which keeps the pop free of ABA.
 */
#include <stdlib.h>

#include "alloc.h"
#include "magazine.h"

static _Atomic(rig_buffer *) returned;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static rig_buffer *pool;

static rig_buffer *record(void) {
  pthread_mutex_lock(&pool_lock);
  if (!pool)
    pool = atomic_exchange(&returned, NULL);
  rig_buffer *b = pool;
  if (b)
    pool = b->next;
  pthread_mutex_unlock(&pool_lock);
  return b ? b : malloc(sizeof *b);
}

void rig__buffers_fork(rig__fork_phase ph) { rig__fork_mutex(&pool_lock, ph); }

void rig__buffer_unrecord(rig_buffer *b) {
  rig_buffer *head = atomic_load(&returned);
  do
    b->next = head;
  while (!atomic_compare_exchange_weak(&returned, &head, b));
}

rig_buffer *rig__buffer_new(rig__alloc *a, rig_device *on, uint64_t off, uint64_t len,
                            rig_access access) {
  rig_buffer *b = record();
  if (!b)
    return NULL;
  atomic_store(&b->refs, 1);
  b->alloc = a;
  b->dev = on;
  b->offset = off;
  b->length = len;
  b->access = access;
  b->gen = atomic_load(&a->gen);
  b->mem = &a->mem;
  b->borrow = NULL;
  b->next = NULL;
  return b;
}

rig_status rig__buffer_check(const rig_buffer *b, const char *fn) {
  if (rig__buffer_is_dead(b))
    return rig__fail(RIG_INVALID, b->dev, 0, "%s: the buffer is dead", fn); /* PRE-28 */
  uint64_t owner = atomic_load(&b->alloc->owner);
  if (owner && owner != rig__thread_id())
    return rig__fail(RIG_INVALID, b->dev, 0, "%s: the memory is held exclusive by a claim",
                     fn);                                                /* VALID-5, 14 */
  if (rig__is_lost(b->alloc->dev))
    return rig__lost_error(b->alloc->dev);                               /* LMEM-8 */
  if (rig__is_lost(b->dev))
    return rig__lost_error(b->dev);                                      /* LMEM-9 */
  return RIG_OK;
}

/* A buffer from this thread's magazine, as new: empty stamps (RECLAIM-7)
 * and no claim; its allocation's only reference is the record's. No other
 * thread sees the record until the caller passes it on, which orders these
 * stores, so they are relaxed: a cache hit then costs less than malloc. */
static inline __attribute__((always_inline)) rig_buffer *reuse(rig_buffer *b, rig_device *d,
                                                                size_t n) {
  rig__alloc *a = b->alloc;
  atomic_store_explicit(&a->claims, 0, memory_order_relaxed);
  atomic_store_explicit(&a->owner, 0, memory_order_relaxed);
  atomic_store_explicit(&b->refs, 1, memory_order_relaxed);
  b->dev = d;
  b->offset = 0;
  b->length = n;
  a->length = n;
  b->access = RIG_READ_WRITE;
  b->gen = atomic_load_explicit(&a->gen, memory_order_relaxed);
  b->mem = &a->mem;
  b->borrow = NULL;
  return b;
}

static rig_status create_slow(rig_device *d, size_t n, rig_kind kind, rig_buffer **out) {
  rig_status st = rig__may_lock("rig_buffer_create");
  if (st)
    return st;
  if (!d || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_create: %s",
                     d ? "out is NULL" : "device is NULL");
  if (n > INT64_MAX)
    return rig__fail(RIG_OUT_OF_MEMORY, d, n, "%s: out of memory for %zu bytes", d->name, n);
  rig__alloc *a;
  st = rig__alloc_create(d, n, kind, &a);
  if (st != RIG_OK)
    return st;
  rig_buffer *b = rig__buffer_new(a, d, 0, n, RIG_READ_WRITE);
  if (!b) {
    rig__alloc_release(a);
    return rig__fail(RIG_OUT_OF_MEMORY, d, n, "%s: no memory for a buffer record", d->name);
  }
  *out = b;
  return RIG_OK;
}

/* The cache hit: this thread's magazine (RECLAIM-7), whose memory create
 * may take with no lock (RECLAIM-15: it moves none); NULL for none. A lost
 * device takes nothing from it (LMEM-8). */
static inline __attribute__((always_inline)) rig_buffer *cache_hit(rig_device *d, size_t n,
                                                                    rig_kind kind) {
  if (__builtin_expect(rig__held == 0 && d && n <= INT64_MAX, 1) &&
      atomic_load_explicit(&d->mem.mag_ok, memory_order_relaxed)) {
    rig_buffer *hit = rig__mag_take(d, (n + RIG_WORD - 1) / RIG_WORD * RIG_WORD, kind);
    if (hit)
      return reuse(hit, d, n);
  }
  return NULL;
}

static inline __attribute__((always_inline)) rig_status create(rig_device *d, size_t n,
                                                                rig_kind kind, rig_buffer **out) {
  rig_buffer *hit = out ? cache_hit(d, n, kind) : NULL;
  if (hit) {
    *out = hit;
    return RIG_OK;
  }
  return create_slow(d, n, kind, out);
}

RIG_API rig_status rig_buffer_create(rig_device *d, size_t n, rig_buffer **out) {
  return create(d, n, RIG_KIND_DEVICE, out);
}

RIG_API rig_status rig_buffer_create_kind(rig_device *d, size_t n, rig_kind kind,
                                          rig_buffer **out) {
  if (kind != RIG_KIND_DEVICE && kind != RIG_KIND_PINNED && kind != RIG_KIND_MAPPED)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_create_kind: no kind %d", (int)kind);
  return create(d, n, kind, out);
}

/* For a binding that calls rig_buffer_create only where it may block: the
 * hit alone never does, so the binding keeps its runtime lock for it. */
RIG_API rig_buffer *rig_buffer_create_cached(rig_device *d, size_t n, rig_kind kind) {
  if (kind != RIG_KIND_DEVICE && kind != RIG_KIND_PINNED && kind != RIG_KIND_MAPPED)
    return NULL;
  return cache_hit(d, n, kind);
}

RIG_API rig_status rig_buffer_of_io(rig_device *d, uint64_t offset, size_t length,
                                    rig_buffer **out) {
  rig_status st = rig__may_lock("rig_buffer_of_io");
  if (st)
    return st;
  if (!d || !out || !d->drv->io)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_of_io: %s",
                     !d ? "device is NULL" : !out ? "out is NULL" : "not an io device");
  if (offset > INT64_MAX || length > INT64_MAX - offset)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_of_io: [%llu, +%zu) is past 2^63",
                     (unsigned long long)offset, length);
  rig__move_collected(d);                                         /* RECLAIM-16 */
  if (rig__is_lost(d))
    return rig__lost_error(d);
  rig__alloc *a;
  if ((st = rig__alloc_adopt(d, offset, length, &a)) != RIG_OK)
    return st;
  rig_buffer *b = rig__buffer_new(a, d, 0, length, RIG_READ_WRITE);
  if (!b) {
    rig__alloc_release(a);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), 0,
                     "rig_buffer_of_io: no memory for a buffer record");
  }
  *out = b;
  return RIG_OK;
}

RIG_API rig_status rig_buffer_view(rig_buffer *b, size_t offset, size_t length,
                                   rig_access access, rig_buffer **out) {
  if (!b || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_view: %s is NULL", b ? "out" : "buffer");
  if (rig__buffer_is_dead(b))
    return rig__fail(RIG_INVALID, b->dev, 0, "rig_buffer_view: the buffer is dead");
  if (offset > b->length || length > b->length - offset)
    return rig__fail(RIG_INVALID, b->dev, 0,
                     "rig_buffer_view: [%zu, +%zu) is out of a buffer of %llu bytes", offset,
                     length, (unsigned long long)b->length);
  if ((access != RIG_READ && access != RIG_READ_WRITE) || (access & ~b->access))
    return rig__fail(RIG_INVALID, b->dev, 0, "rig_buffer_view: access wider than the buffer's");
  rig_buffer *v = rig__buffer_new(b->alloc, b->dev, b->offset + offset, length, access);
  if (!v)
    return rig__fail(RIG_OUT_OF_MEMORY, b->dev, 0, "rig_buffer_view: no memory for a record");
  if (b->borrow) { /* a view of a borrow is a borrow too */
    rig__borrow_retain(b->borrow);
    v->borrow = b->borrow;
    v->mem = b->mem;
  }
  atomic_fetch_add(&b->alloc->refs, 1);
  *out = v;
  return RIG_OK;
}

RIG_API rig_buffer *rig_buffer_retain(rig_buffer *b) {
  if (b)
    atomic_fetch_add(&b->refs, 1);
  return b;
}

/* A count of 1 read with acquire order is the caller's own reference: no
 * other can appear, so the last release needs no locked instruction. */
RIG_API void rig_buffer_release(rig_buffer *b) {
  if (!b)
    return;
  if (atomic_load_explicit(&b->refs, memory_order_acquire) == 1)
    atomic_store_explicit(&b->refs, 0, memory_order_relaxed);
  else if (atomic_fetch_sub(&b->refs, 1) != 1)
    return;
  if (rig__mag_put(b))
    return; /* queued, record and all, for this thread's next create */
  rig__alloc *a = b->alloc;
  rig__borrow *x = b->borrow;
  rig__buffer_unrecord(b);
  if (x)
    rig__borrow_drop(x);
  rig__alloc_release(a);
}

rig_status rig__host_enter2(rig_buffer *a, rig_buffer *b, const char *fn) {
  if (rig__host_enter(a)) {
    if (!b || rig__host_enter(b))
      return RIG_OK;
    rig__host_leave(a);
  }
  return rig__fail(RIG_INVALID, NULL, 0, "%s: the buffer is dead", fn); /* freed meanwhile */
}

static void pass_submit_lock(rig_device *d) {
  rig__lock(&d->locks.submit);
  rig__unlock(&d->locks.submit);
}

RIG_API rig_status rig_buffer_free(rig_buffer *b) {
  rig_status st = rig__may_lock("rig_buffer_free");
  if (st)
    return st;
  if (!b)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_free: buffer is NULL");
  bool was = rig__buffer_is_dead(b) || atomic_exchange(&b->alloc->dead, true);
  if (was)
    return rig__fail(RIG_INVALID, b->dev, 0, "rig_buffer_free: the buffer is dead");
  /* A submit between its check of the buffer and the stamp of its point
   * holds its device's submit lock and looks at the mark under it
   * (timeline.c): once every device's lock has been free for a moment, each
   * submit either saw the mark or stamped (or, on the host, ran) its work. */
  rig__lock(&rig__host_device()->locks.submit);
  rig__unlock(&rig__host_device()->locks.submit);
  rig__devices_each(pass_submit_lock);
  /* Collected now: its memory returns to the driver once its points are
   * reached, skipping the cache, while the dead buffers keep their
   * records (RECLAIM-4, LIFE-1). */
  rig__alloc_free_early(b->alloc);
  return RIG_OK;
}

RIG_API size_t rig_buffer_length(const rig_buffer *b) { return b ? b->length : 0; }
RIG_API rig_device *rig_buffer_device(const rig_buffer *b) { return b ? b->dev : NULL; }
RIG_API rig_access rig_buffer_access(const rig_buffer *b) { return b ? b->access : RIG_READ; }
RIG_API rig_kind rig_buffer_kind(const rig_buffer *b) {
  return b ? b->alloc->kind : RIG_KIND_DEVICE;
}
RIG_API bool rig_buffer_dead(const rig_buffer *b) { return !b || rig__buffer_is_dead(b); }
RIG_API void *rig_buffer_host_address(const rig_buffer *b) {
  if (!b || rig__buffer_is_dead(b))
    return NULL;
  return rig__host_bytes(b);
}

/* Words are counted from the allocation's first byte, which starts on a
 * word on every device (WORD-2, WORD-9). */
RIG_API bool rig_buffer_overlaps(const rig_buffer *a, const rig_buffer *b) {
  if (!a || !b || a->alloc != b->alloc || a->length == 0 || b->length == 0)
    return false;
  uint64_t a0 = a->offset / RIG_WORD, a1 = (a->offset + a->length - 1) / RIG_WORD;
  uint64_t b0 = b->offset / RIG_WORD, b1 = (b->offset + b->length - 1) / RIG_WORD;
  return a0 <= b1 && b0 <= a1;
}

RIG_API bool rig_buffer_share_byte(const rig_buffer *a, const rig_buffer *b) {
  if (!a || !b || a->alloc != b->alloc || a->length == 0 || b->length == 0)
    return false;
  return a->offset < b->offset + b->length && b->offset < a->offset + a->length;
}
