/* SPDX-License-Identifier: MIT */
/* io.c: the host's reads and writes of io devices' memory, and copies
 * between it and every other memory (PRE-6, MACH-19, ERR-26; the design is
 * docs/io.md).
 *
 * An io device runs no work: its library's read and write are calls the
 * host makes on the calling thread, once the points the access follows are
 * reached, as the host's own moves do (STAMP-2: no value, no point). A
 * failing call is RIG_IO with the library's errno text and loses no device
 * (ERR-26). Between io memory and a device's memory that the host does not
 * address, the bytes pass through that device's staging in chunks: the
 * device copies chunk i while the host reads chunk i+1 from the file, and
 * out of a device, writes chunk i to the file while the device copies
 * chunk i+1 out.
 */
#include <stdlib.h>

#include "alloc.h"

/* Bytes per chunk of a staged io copy: large enough that a call's cost is
 * noise, small enough that two chunks overlap well. */
#define CHUNK (8u << 20)

static const rig_edge_io *io_of(const rig_buffer *b) { return b->alloc->dev->drv->io; }

bool rig__io_memory(const rig_buffer *b) { return b->alloc->dev->drv->io && !b->borrow; }

/* The file offset of byte off of b. */
static uint64_t at(const rig_buffer *b, uint64_t off) {
  return b->alloc->mem.address + b->offset + off;
}

/* The library's read of [off, off+n) of b into dst; stamps already waited. */
static rig_status raw_read(const rig_buffer *b, uint64_t off, void *dst, uint64_t n) {
  rig_edge_error err = {0};
  rig_device *d = b->alloc->dev;
  int r = n ? RIG__DRIVER_OF(d, io_of(b)->read(d->h, at(b, off), dst, n, &err)) : RIG_EDGE_OK;
  if (r != RIG_EDGE_OK)
    return rig__io_failed(d, r, n, &err); /* ERR-26 */
  return RIG_OK;
}

static rig_status raw_write(const rig_buffer *b, uint64_t off, const void *src, uint64_t n) {
  rig_edge_error err = {0};
  rig_device *d = b->alloc->dev;
  int r = n ? RIG__DRIVER_OF(d, io_of(b)->write(d->h, at(b, off), src, n, &err)) : RIG_EDGE_OK;
  if (r != RIG_EDGE_OK)
    return rig__io_failed(d, r, n, &err); /* ERR-26 */
  return RIG_OK;
}

/* A lost io device's memory is no one's to read: close ran its stop. */
static rig_status usable(const rig_buffer *b) {
  return rig__is_lost(b->alloc->dev) ? rig__lost_error(b->alloc->dev) : RIG_OK;
}

rig_status rig__io_get(rig_buffer *b, uint64_t off, void *dst, uint64_t n) {
  rig_status st = usable(b);
  if (st || (st = rig__stamps_wait(b->alloc, false)))           /* ORDER-12 */
    return st;
  return raw_read(b, off, dst, n);
}

rig_status rig__io_put(rig_buffer *b, uint64_t off, const void *src, uint64_t n) {
  rig_status st = usable(b);
  if (st || (st = rig__stamps_wait(b->alloc, true)))            /* ORDER-13 */
    return st;
  return raw_write(b, off, src, n);
}

/* io into memory no host address reaches: read each chunk into the
 * device's staging, then its copy engine moves it in, asynchronously, while
 * the host reads the next. *out is the last step's point. */
static rig_status io_to_device(rig_buffer *src, rig_buffer *dst, rig_point *out) {
  rig_device *g = dst->alloc->dev;
  rig_status st = RIG_OK;
  *out = RIG_POINT_NONE;
  for (uint64_t off = 0; off < src->length && st == RIG_OK; off += CHUNK) {
    uint64_t n = src->length - off < CHUNK ? src->length - off : CHUNK;
    rig__staging *s = rig__staging_take(g, n);
    if (!s)
      return rig_error_last()->status;
    rig_point p = RIG_POINT_NONE;
    st = raw_read(src, off, rig__staging_host(s), n);
    if (st == RIG_OK && (st = rig__stage_step(dst, off, n, s, true, &p)) == RIG_OK)
      *out = p;
    rig__staging_put(g, s, p);
  }
  return st;
}

/* Memory no host address reaches into io: the device copies chunk i+1 out
 * into staging while the host writes chunk i to the library. */
static rig_status device_to_io(rig_buffer *src, rig_buffer *dst) {
  rig_device *g = src->alloc->dev;
  rig__staging *s[2] = {NULL, NULL};
  rig_point p[2] = {RIG_POINT_NONE, RIG_POINT_NONE};
  uint64_t len = src->length, chunks = (len + CHUNK - 1) / CHUNK;
  rig_status st = RIG_OK;
  for (uint64_t i = 0; i <= chunks && st == RIG_OK; i++) {
    if (i < chunks) { /* start chunk i */
      uint64_t off = i * CHUNK, n = len - off < CHUNK ? len - off : CHUNK;
      if (!(s[i % 2] = rig__staging_take(g, n)))
        st = rig_error_last()->status;
      else
        st = rig__stage_step(src, off, n, s[i % 2], false, &p[i % 2]);
    }
    if (i > 0 && st == RIG_OK) { /* finish chunk i-1 */
      uint64_t k = (i - 1) % 2, off = (i - 1) * CHUNK;
      uint64_t n = len - off < CHUNK ? len - off : CHUNK;
      st = rig__point_wait(p[k]);                                /* STAMP-10 */
      if (st == RIG_OK)
        st = raw_write(dst, off, rig__staging_host(s[k]), n);
      rig__staging_put(g, s[k], 0);
      s[k] = NULL;
    }
  }
  for (int k = 0; k < 2; k++)
    if (s[k])
      rig__staging_put(g, s[k], p[k]);
  return st;
}

/* Between two io memories: through a bounce buffer of the host's. */
static rig_status io_to_io(rig_buffer *src, rig_buffer *dst) {
  uint64_t len = src->length, n = len < CHUNK ? len : CHUNK;
  void *tmp = malloc(n ? n : 1);
  if (!tmp)
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), n, "rig_buffer_copy: out of memory");
  rig_status st = RIG_OK;
  for (uint64_t off = 0; off < len && st == RIG_OK; off += n) {
    uint64_t k = len - off < n ? len - off : n;
    if ((st = raw_read(src, off, tmp, k)) == RIG_OK)
      st = raw_write(dst, off, tmp, k);
  }
  free(tmp);
  return st;
}

/* A copy one side of which is io memory (copy.c's place_copy). The host
 * moves bytes between io and memory it addresses with no value; a device
 * whose memory it does not address takes part through staging, and *out
 * is its last point. */
rig_status rig__io_copy(rig_buffer *src, rig_buffer *dst, rig_point *out) {
  bool from_io = rig__io_memory(src), to_io = rig__io_memory(dst);
  /* A borrow the host does not address passes through its memory's own
   * device's staging, as that memory itself would. */
  unsigned char *s = rig__host_bytes(src), *d = rig__host_bytes(dst);
  rig_status st;
  *out = RIG_POINT_NONE;
  if ((st = usable(src)) || (st = usable(dst)))
    return st;
  /* What the host's reads and writes follow; a staged step's device waits
   * on its side itself. */
  if ((from_io || s) && (st = rig__stamps_wait(src->alloc, false)))
    return st;
  if ((to_io || d) && (st = rig__stamps_wait(dst->alloc, true)))
    return st;
  if (from_io && to_io)
    return io_to_io(src, dst);
  if (from_io)
    return d ? raw_read(src, 0, d, src->length) : io_to_device(src, dst, out);
  return s ? raw_write(dst, 0, s, src->length) : device_to_io(src, dst);
}

/* A fill of io memory: the host writes the pattern a chunk at a time. */
rig_status rig__io_fill(rig_buffer *dst, uint32_t pattern, uint32_t pattern_bytes) {
  rig_status st = usable(dst);
  if (st || (st = rig__stamps_wait(dst->alloc, true)))
    return st;
  uint64_t len = dst->length, n = len < CHUNK ? len : CHUNK;
  unsigned char *tmp = malloc(n ? n : 1);
  if (!tmp)
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), n, "rig_buffer_fill: out of memory");
  for (uint64_t i = 0; i < n; i++) /* little-endian, as the devices' fills */
    tmp[i] = (unsigned char)(pattern >> (8 * (i % pattern_bytes)));
  for (uint64_t off = 0; off < len && st == RIG_OK; off += n)
    st = raw_write(dst, off, tmp, len - off < n ? len - off : n);
  free(tmp);
  return st;
}
