/* SPDX-License-Identifier: MIT */
/* hostmem.c: buffers over memory the program already has (Buffer.of_bigarray,
 * Buffer.of_string; WORD-2, WORD-7, RECLAIM-16).
 *
 * rig_buffer_of_host adopts the program's host memory: an allocation record
 * of the host over it that no budget counts and no driver gives back; the
 * program learns through its release callback, run where the host's memory
 * moves (reclaim.c), that nothing uses the bytes any more. Words count from
 * address 0 for host memory (WORD-2), so the record covers the whole words
 * that hold the bytes and the buffer starts where they do inside it: two
 * buffers share a word exactly where their addresses do. rig_buffer_of_bytes
 * copies the program's bytes into a new buffer instead.
 */
#include <stdint.h>

#include "alloc.h"

/* A host buffer over [p, p+n): lock-free (a calloc and a record). */
static rig_status adopt_host(void *p, size_t n, rig_host_release release, void *ctx,
                             rig_buffer **out) {
  uintptr_t first = (uintptr_t)p / RIG_WORD * RIG_WORD;
  uintptr_t end = ((uintptr_t)p + n + RIG_WORD - 1) / RIG_WORD * RIG_WORD;
  rig_device *host = rig__host_device();
  rig__alloc *a;
  rig_status st = rig__alloc_adopt(host, first, end - first, &a);
  if (st)
    return st;
  a->mem.host = (void *)first;
  a->length = n;
  rig_buffer *b = rig__buffer_new(a, host, (uintptr_t)p - first, n, RIG_READ_WRITE);
  if (!b) {
    rig__alloc_release(a); /* no release to run: the call failed */
    return rig__fail(RIG_OUT_OF_MEMORY, host, 0,
                     "rig_buffer_of_host: no memory for a buffer record");
  }
  a->host_release = release;
  a->host_ctx = ctx;
  *out = b;
  return RIG_OK;
}

RIG_API rig_status rig_buffer_of_host(rig_device *d, void *bytes, size_t n,
                                      rig_host_release release, void *ctx, rig_buffer **out) {
  if (!d || !bytes || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_of_host: %s is NULL",
                     !d ? "device" : !bytes ? "bytes" : "out");
  if (n > INT64_MAX || (uintptr_t)bytes + n < (uintptr_t)bytes ||
      (uintptr_t)bytes + n > UINTPTR_MAX - RIG_WORD)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_of_host: %zu bytes at %p pass the end of "
                     "the address space", n, bytes);
  if (d == rig__host_device())
    return adopt_host(bytes, n, release, ctx, out);
  rig_buffer *h;
  rig_status st = adopt_host(bytes, n, NULL, NULL, &h);
  if (st)
    return st;
  rig_buffer *b;
  if ((st = rig_buffer_borrow(d, h, &b)) == RIG_OK) { /* MACH-22..25 */
    h->alloc->host_release = release;
    h->alloc->host_ctx = ctx;
    *out = b;
  }
  rig_buffer_release(h); /* the borrow holds the allocation */
  return st;
}

RIG_API rig_status rig_buffer_of_bytes(rig_device *d, const void *bytes, size_t n,
                                       rig_buffer **out) {
  rig_status st = rig__may_lock("rig_buffer_of_bytes");
  if (st)
    return st;
  if (!d || (!bytes && n) || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_of_bytes: %s is NULL",
                     !d ? "device" : !out ? "out" : "bytes");
  rig__move_collected(d);                                         /* RECLAIM-16 */
  rig_buffer *b;
  if ((st = rig_buffer_create(d, n, &b)) != RIG_OK)
    return st;
  if (n && (st = rig_buffer_put(b, 0, bytes, n)) != RIG_OK) {
    rig_buffer_release(b);
    return st;
  }
  *out = b;
  return RIG_OK;
}
