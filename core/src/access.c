/* SPDX-License-Identifier: MIT */
/* access.c: host access to buffers (HACC-1..5, ORDER-11..15, ORDER-34).
 *
 * The host reads and writes in place the memory it addresses, once the
 * points the access follows are reached: every device's last write for a
 * read, every use for a write. The host's own writes take no value and add
 * no point (STAMP-2). The blits of memory the host does not address pass
 * through staging memory, with the device's copy engine between it and the
 * memory (HACC-6, copy.c); read, write and export of it are RIG_INVALID
 * (HACC-4, docs/decisions.md).
 */
#include <string.h>

#include "alloc.h"

/* Checks that b admits the access. */
static rig_status check(rig_buffer *b, bool write, const char *fn) {
  rig_status st = rig__may_lock(fn);
  if (st)
    return st;
  if ((st = rig__buffer_usable(b, fn)))
    return st;
  if (write && b->access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, b->dev, 0, "%s: the buffer admits only reads", fn);
  return RIG_OK;
}

/* Checks b and waits for what an access must follow; returns its bytes. */
static rig_status prepare(rig_buffer *b, bool write, const char *fn, unsigned char **out) {
  rig_status st = check(b, write, fn);
  if (st)
    return st;
  if (!(*out = rig__host_bytes(b)))
    return rig__fail(RIG_INVALID, b->dev, 0,
                     "%s: the host does not address %s's memory", fn, b->alloc->dev->name);
  if (rig__stamps_wait(b->alloc, write) != RIG_OK)
    return rig_error_last()->status;
  return RIG_OK;
}

static rig_status in_range(const rig_buffer *b, size_t off, size_t n, const char *fn) {
  if (off > b->length || n > b->length - off)
    return rig__fail(RIG_INVALID, b->dev, 0, "%s: [%zu, +%zu) is out of a buffer of %llu bytes",
                     fn, off, n, (unsigned long long)b->length);
  return RIG_OK;
}

static rig_status with_bytes(rig_buffer *b, bool write, rig_bytes_fn fn, void *ctx,
                             const char *name) {
  unsigned char *p;
  if (!fn)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: function is NULL", name);
  rig_status st = prepare(b, write, name, &p);
  if (st)
    return st;
  if (!rig__host_enter(b)) /* a free meanwhile waits for fn (buffer.c) */
    return rig__fail(RIG_INVALID, b->dev, 0, "%s: the buffer is dead", name);
  rig_buffer_retain(b); /* the bytes keep the allocation while fn runs */
  fn(p, b->length, ctx);
  rig_buffer_release(b);
  rig__host_leave(b);
  return RIG_OK;
}

RIG_API rig_status rig_buffer_read(rig_buffer *b, rig_bytes_fn fn, void *ctx) {
  return with_bytes(b, false, fn, ctx, "rig_buffer_read");       /* ORDER-12 */
}

RIG_API rig_status rig_buffer_write(rig_buffer *b, rig_bytes_fn fn, void *ctx) {
  return with_bytes(b, true, fn, ctx, "rig_buffer_write");       /* ORDER-13 */
}

RIG_API rig_status rig_buffer_wait(rig_buffer *b, rig_access access) {
  if (access != RIG_READ && access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_wait: no access %d", (int)access);
  rig_status st = rig__may_lock("rig_buffer_wait");
  if (st || (st = rig__buffer_usable(b, "rig_buffer_wait")))
    return st;
  return rig__stamps_wait(b->alloc, access == RIG_READ_WRITE) == RIG_OK
             ? RIG_OK
             : rig_error_last()->status;                         /* ORDER-14, 34 */
}

RIG_API bool rig_buffer_reached(rig_buffer *b, rig_access access) {
  rig_point need[1];
  if (!b || rig__buffer_is_dead(b))
    return false;
  return rig__stamps_needed(b->alloc, access == RIG_READ_WRITE, need, 1) == 0;
}

RIG_API rig_status rig_buffer_export(rig_buffer *b, void **out_bytes) {
  unsigned char *p;
  if (!out_bytes)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_export: out is NULL");
  /* prepare refuses a NULL b (PRE-28); read its access only past that. */
  rig_status st = prepare(b, b && b->access == RIG_READ_WRITE, "rig_buffer_export", &p);
  if (st)
    return st;
  /* The bytes go out for good, for reads and writes alike: an export, of a
   * Read buffer too, depends on every point (LMEM-5). */
  if (b->access != RIG_READ_WRITE && rig__stamps_wait(b->alloc, true) != RIG_OK)
    return rig_error_last()->status;
  rig_buffer_retain(b);                                            /* HACC-3 */
  *out_bytes = p;
  return RIG_OK;
}

/* A blit of memory the host does not address, through staging (HACC-6):
 * a get is a read of b by the device's copy engine into staging, which the
 * host copies out once it is done; a put, the host's copy into staging and
 * the engine's write of b, waited for (HACC-5). */
static rig_status staged(rig_buffer *b, size_t off, void *dst, const void *src, size_t n,
                         bool write, const char *fn) {
  rig_point p;
  rig_status st = check(b, write, fn);
  if (st || n == 0)
    return st;
  if (rig__io_memory(b)) /* the io library's own read and write */
    return write ? rig__io_put(b, off, src, n) : rig__io_get(b, off, dst, n);
  if (!write)
    return rig__stage_out(b, off, n, dst, &p);
  st = rig__stage_in(src, b, off, n, &p);
  return st ? st : rig__point_wait(p);
}

RIG_API rig_status rig_buffer_get(rig_buffer *b, size_t offset, void *dst, size_t n) {
  unsigned char *p;
  if (!dst && n)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_get: dst is NULL");
  rig_status st = b ? in_range(b, offset, n, "rig_buffer_get") : RIG_OK;
  if (!st && b && !rig__host_bytes(b))
    return staged(b, offset, dst, NULL, n, false, "rig_buffer_get");
  if (st || (st = prepare(b, false, "rig_buffer_get", &p)))
    return st;
  if (!n) /* dst may be NULL for n = 0, and memcpy's may not be (C11 7.1.4) */
    return RIG_OK;
  if ((st = rig__host_enter2(b, NULL, "rig_buffer_get")))
    return st;
  memcpy(dst, p + offset, n);
  rig__host_leave(b);
  return RIG_OK;
}

RIG_API rig_status rig_buffer_put(rig_buffer *b, size_t offset, const void *src, size_t n) {
  unsigned char *p;
  if (!src && n)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_put: src is NULL");
  rig_status st = b ? in_range(b, offset, n, "rig_buffer_put") : RIG_OK;
  if (!st && b && !rig__host_bytes(b))
    return staged(b, offset, NULL, src, n, true, "rig_buffer_put");
  if (st || (st = prepare(b, true, "rig_buffer_put", &p)))
    return st;
  if (!n) /* src may be NULL for n = 0, as in rig_buffer_get */
    return RIG_OK;
  if ((st = rig__host_enter2(b, NULL, "rig_buffer_put")))
    return st;
  memcpy(p + offset, src, n);
  rig__host_leave(b);
  return RIG_OK;
}
