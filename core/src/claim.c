/* SPDX-License-Identifier: MIT */
/* claim.c: claims and donation (PRE-23..26, LMEM-3, LMEM-5, LMEM-6,
 * VALID-5, VALID-14, RECLAIM-20; the design is docs/claims.md).
 *
 * A claim records that something reads an allocation, so that a donor
 * writes its result only over memory that nothing else reads. The claims
 * of an allocation are a count shared by its views and borrows. A donor
 * runs inside rig_claim_with, which holds the memory exclusive to its
 * thread; if its claim is the only one it may consume the memory: every
 * buffer made over it until then is dead, and a new one serves the result.
 * Every function here is lock-free (DOM-22): the counts are atomics.
 */
#include <stdlib.h>

#include "alloc.h"

enum { CLAIM_READ, CLAIM_HOLD, CLAIM_EXCLUSIVE };

struct rig_claim {
  int kind;
  rig_buffer *buffer;        /* a reference: the claim keeps the memory */
  struct rig_claim *next;    /* collected holds */
};

static _Atomic uint64_t next_thread_id = 1;
static _Thread_local uint64_t thread_id;

uint64_t rig__thread_id(void) {
  if (!thread_id)
    thread_id = atomic_fetch_add(&next_thread_id, 1);
  return thread_id;
}

/* A claim of kind on b's memory, once the use it stands for may be made:
 * a read depends on the last writes, an exclusive claim on every point
 * (LMEM-2, LMEM-5, LMEM-6). */
static rig_status take(rig_buffer *b, int kind, const char *fn, rig_claim **out) {
  rig_point need[2 * RIG__STAMPS + 1];
  rig_status st = rig__buffer_usable(b, fn);
  if (st)
    return st;
  if (!out)
    return rig__fail(RIG_INVALID, b->dev, 0, "%s: out is NULL", fn);
  if (rig__stamps_needed(b->alloc, kind == CLAIM_EXCLUSIVE, need, 2 * RIG__STAMPS + 1) < 0)
    return RIG_LOST;
  rig_claim *c = malloc(sizeof *c);
  if (!c)
    return rig__fail(RIG_OUT_OF_MEMORY, rig_device_host(), sizeof *c, "%s: out of memory", fn);
  c->kind = kind;
  c->buffer = rig_buffer_retain(b);
  c->next = NULL;
  atomic_fetch_add(&b->alloc->claims, 1);
  *out = c;
  return RIG_OK;
}

static void drop(rig_claim *c) {
  atomic_fetch_sub(&c->buffer->alloc->claims, 1);
  rig_buffer_release(c->buffer);
  free(c);
}

RIG_API rig_status rig_buffer_claim(rig_buffer *b, rig_claim **out) {
  return take(b, CLAIM_READ, "rig_buffer_claim", out);
}

RIG_API rig_status rig_claim_hold(rig_buffer *b, rig_claim **out) {
  return take(b, CLAIM_HOLD, "rig_claim_hold", out);
}

/* Holds whose release came, from any thread or callback, waiting for the
 * next call that moves memory (RECLAIM-20). */
static _Atomic(rig_claim *) collected;

RIG_API void rig_claim_release(rig_claim *c) {
  if (!c || c->kind == CLAIM_EXCLUSIVE)
    return; /* an exclusive claim ends with its rig_claim_with */
  if (c->kind == CLAIM_READ) {
    drop(c);
    return;
  }
  rig_claim *head = atomic_load(&collected);
  do
    c->next = head;
  while (!atomic_compare_exchange_weak(&collected, &head, c));
}

void rig__holds_release(void) {
  if (!atomic_load(&collected))
    return;
  for (rig_claim *c = atomic_exchange(&collected, NULL), *next; c; c = next) {
    next = c->next;
    drop(c);
  }
}

RIG_API rig_status rig_claim_with(rig_buffer *b, rig_claim_fn fn, void *ctx) {
  if (!fn)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_claim_with: function is NULL");
  rig_claim *c = NULL; /* take sets it where it succeeds */
  rig_status st = take(b, CLAIM_EXCLUSIVE, "rig_claim_with", &c);
  if (st)
    return st;
  uint64_t none = 0;
  if (!atomic_compare_exchange_strong(&b->alloc->owner, &none, rig__thread_id())) {
    drop(c);
    return rig__fail(RIG_INVALID, b->dev, 0, "rig_claim_with: the memory is held exclusive already");
  }
  rig__alloc *a = b->alloc;
  fn(c, b, ctx);
  atomic_store(&a->owner, 0);
  drop(c);
  return RIG_OK;
}

RIG_API bool rig_claim_only(const rig_claim *c) {
  return c && atomic_load(&c->buffer->alloc->claims) == 1;
}

RIG_API rig_status rig_claim_consume(rig_claim *c, rig_buffer **out) {
  if (!c || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_claim_consume: %s is NULL", c ? "out" : "claim");
  rig__alloc *a = c->buffer->alloc;
  if (c->kind != CLAIM_EXCLUSIVE || atomic_load(&a->owner) != rig__thread_id())
    return rig__fail(RIG_INVALID, c->buffer->dev, 0,
                     "rig_claim_consume: the claim does not hold the memory exclusive");
  if (!rig_claim_only(c))
    return rig__fail(RIG_INVALID, c->buffer->dev, 0,
                     "rig_claim_consume: %u claims: another reads the memory",
                     atomic_load(&a->claims));                     /* PRE-25 */
  /* The memory as create gave it: its length, not its rounding to words. */
  rig_buffer *fresh = rig__buffer_new(a, a->dev, 0, a->length, RIG_READ_WRITE);
  if (!fresh)
    return rig__fail(RIG_OUT_OF_MEMORY, a->dev, 0, "rig_claim_consume: out of memory");
  atomic_fetch_add(&a->refs, 1);
  atomic_fetch_add(&a->gen, 1);                                    /* PRE-26 */
  fresh->gen = atomic_load(&a->gen);
  *out = fresh;
  return RIG_OK;
}
