/* SPDX-License-Identifier: MIT */
/* copy.c: copies and fills of buffers (ORDER-15, TL-2, TL-3, WORD-5,
 * HACC-5..8, STAMP-1..18; the design is docs/copying.md).
 *
 * A copy runs on a device whose work addresses both memories as they are,
 * with no new mapping: its destination's device unless that is the host,
 * then its source's, then the host, which takes a host value for it (TL-3)
 * and adds no point (ORDER-21). A device addresses its own memory, a
 * peer's (MACH-17), memory through a borrow on it, and, where it runs on
 * the host, every memory the host addresses. Between memories no device
 * addresses so, the bytes pass through staging memory (staging.c): the
 * host moves them between host memory and the staging, and the device's
 * copy engine between the staging and its memory, so that host memory
 * takes none of the device's points (STAMP-1, STAMP-2). A synchronous
 * device's engine moves them straight from or to the host memory instead
 * (direct_step), and a driver that copies between two of its devices by
 * its own means (across) takes such a copy whole.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

static bool can_run(rig_device *r, const rig_buffer *b, uint32_t kind) {
  return !rig__is_lost(r) && r->facts.part_queue[kind] != RIG_EDGE_NO_QUEUE &&
         rig__mem_for(r, b);
}

/* The device that runs a part over a (and b), or NULL: a device's own copy
 * engine before the host's cores. */
static rig_device *runner(const rig_buffer *a, const rig_buffer *b, uint32_t kind) {
  rig_device *order[3] = {b ? b->dev : a->dev, a->dev, rig__host_device()};
  for (int i = 0; i < 3; i++)
    if ((i == 2 || !order[i]->is_host) && can_run(order[i], a, kind) &&
        (!b || can_run(order[i], b, kind)))
      return order[i];
  return NULL;
}

/* b as r's work names it: the record r's driver addresses (borrow.c). */
static rig_edge_range range(const rig_device *r, const rig_buffer *b) {
  rig_edge_range x = {rig__mem_for(r, b), b->offset, b->length};
  return x;
}

static rig_status check_copy(rig_buffer *src, rig_buffer *dst) {
  rig_status st = rig__may_lock("rig_buffer_copy");
  if (st || (st = rig__buffer_usable(src, "rig_buffer_copy")) ||
      (st = rig__buffer_usable(dst, "rig_buffer_copy")))
    return st;
  if (src->length != dst->length)
    return rig__fail(RIG_INVALID, dst->dev, 0, "rig_buffer_copy: lengths %llu and %llu differ",
                     (unsigned long long)src->length, (unsigned long long)dst->length);
  if (rig_buffer_share_byte(src, dst))
    return rig__fail(RIG_INVALID, dst->dev, 0,
                     "rig_buffer_copy: the buffers share a byte");  /* WORD-5 */
  if (dst->access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, dst->dev, 0, "rig_buffer_copy: dst admits only reads");
  return RIG_OK;
}

static rig_status no_runner(const rig_buffer *a, const rig_buffer *b, const char *fn) {
  return rig__fail(RIG_INVALID, a->dev, 0, "%s: no device copies between %s's and %s's memory",
                   fn, a->alloc->dev->name, (b ? b : a)->alloc->dev->name);
}

/* The device step of a staged copy: g's copy engine between b's bytes
 * [off, off+n) and host, a range of host memory g maps, toward b (in) or
 * out of it. */
static rig_status step(rig_buffer *b, uint64_t off, uint64_t n, rig_edge_range host, bool in,
                       rig_point *out) {
  rig_device *g = b->alloc->dev;
  rig_edge_part part = {.kind = RIG_EDGE_PART_COPY, .queue = g->facts.part_queue[RIG_EDGE_PART_COPY]};
  rig_edge_range dev = {&b->alloc->mem, b->offset + off, n};
  part.u.copy.src = in ? host : dev;
  part.u.copy.dst = in ? dev : host;
  rig_edge_work work = {.size = sizeof work, .nparts = 1, .parts = &part};
  rig__use use = {b->alloc, in, false};
  return rig__timeline_submit(g, &work, &use, 1, NULL, 0, out);
}

rig_status rig__stage_step(rig_buffer *b, uint64_t off, uint64_t n, rig__staging *s, bool in,
                           rig_point *out) {
  rig_edge_range host = {rig__staging_map(s), 0, n};
  return step(b, off, n, host, in, out);
}


/* The step straight over the caller's bytes p, with no staging and no
 * host copy: where g is synchronous (DOM-6), its submit has moved them
 * before it returns, so they are its driver's only while core waits in
 * that submit, as a staging region would be, and the mapping of their
 * pages goes then. Its driver maps them (the remote driver by their
 * address alone, and moves them by RMA). Returns false, with nothing
 * done, where g is not synchronous or its map refuses: the caller
 * stages. */
static bool direct_step(rig_buffer *b, uint64_t off, uint64_t n, void *p, bool in,
                        rig_point *out, rig_status *st) {
  rig_device *g = b->alloc->dev;
  if (!(g->facts.flags & RIG_EDGE_SYNCHRONOUS) || !g->drv->map || n == 0)
    return false;
  uintptr_t at = (uintptr_t)p, base = at / RIG__PAGE * RIG__PAGE;
  uint64_t bytes = (at - base + n + RIG__PAGE - 1) / RIG__PAGE * RIG__PAGE;
  rig_edge_alloc map = {0};
  rig_edge_error err = {0};
  if (RIG__DRIVER(g->drv->map(g->h, (void *)base, bytes, &map, &err)) != RIG_EDGE_OK)
    return false;
  rig_edge_range host = {&map, at - base, n};
  *st = step(b, off, n, host, in, out);
  if (g->drv->unmap && !rig__is_stopped(g) && !g->life.forked)
    (void)RIG__DRIVER(g->drv->unmap(g->h, &map, &err));
  return true;
}

rig_status rig__stage_in(const void *src, rig_buffer *b, uint64_t off, uint64_t n,
                         rig_point *out) {
  rig_device *g = b->alloc->dev;
  rig_status st;
  if (direct_step(b, off, n, (void *)src, true, out, &st))
    return st;
  rig__staging *s = rig__staging_take(g, n);
  if (!s)
    return rig_error_last()->status;
  memcpy(rig__staging_host(s), src, n);              /* the host's move: no value */
  st = rig__stage_step(b, off, n, s, true, out);
  rig__staging_put(g, s, st == RIG_OK ? *out : 0);
  return st;
}

rig_status rig__stage_out(rig_buffer *b, uint64_t off, uint64_t n, void *dst, rig_point *out) {
  rig_device *g = b->alloc->dev;
  rig_status st;
  if (direct_step(b, off, n, dst, false, out, &st))
    return st ? st : rig__point_wait(*out);          /* reached: synchronous */
  rig__staging *s = rig__staging_take(g, n);
  if (!s)
    return rig_error_last()->status;
  st = rig__stage_step(b, off, n, s, false, out);
  if (st == RIG_OK)
    st = rig__point_wait(*out);                      /* STAMP-10 */
  if (st == RIG_OK)
    memcpy(dst, rig__staging_host(s), n);
  /* An interrupted wait leaves the step to run: the staging stays its own
   * until the step's point (ERR-7). */
  rig__staging_put(g, s, st == RIG_INTERRUPTED ? *out : 0);
  return st;
}

/* A copy between memories no device addresses both of: through staging,
 * on the side or sides the host does not address (STAMP-1). Returns once
 * the bytes are in host memory, or with the point of the device's step
 * that writes them into its memory. */
static rig_status staged_copy(rig_buffer *src, rig_buffer *dst, rig_point *out) {
  unsigned char *s = rig__host_bytes(src), *d = rig__host_bytes(dst);
  uint64_t n = src->length;
  rig_status st;
  if (s && !d) {
    if ((st = rig__stamps_wait(src->alloc, false)))
      return st;
    return rig__stage_in(s, dst, 0, n, out);
  }
  if (!s && d) {
    if ((st = rig__stamps_wait(dst->alloc, true)))
      return st;
    return rig__stage_out(src, 0, n, d, out);
  }
  void *tmp = malloc(n ? n : 1); /* two devices that map only host memory */
  if (!tmp)
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), n, "rig_buffer_copy: out of memory");
  st = rig__stage_out(src, 0, n, tmp, out);
  if (st == RIG_OK)
    st = rig__stage_in(tmp, dst, 0, n, out);
  free(tmp);
  return st;
}

/* A copy that raises Lost still moves the collected memory of the devices
 * it involves (RECLAIM-16, RECLAIM-18): those of the buffers it has, the
 * other one maybe NULL or dead. The moves keep the Lost it reports. */
static rig_status moved_then_lost(rig_buffer *src, rig_buffer *dst) {
  rig_error lost = *rig_error_last();
  if (src && !rig__buffer_is_dead(src))
    rig__move_collected(src->alloc->dev);
  if (dst && !rig__buffer_is_dead(dst))
    rig__move_collected(dst->alloc->dev);
  return rig__fail(lost.status, lost.device, lost.bytes, "%s", lost.message);
}

/* The submit of the copy on r, a device's copy engine or the host's
 * cores (TL-3). */
static rig_status submit_copy_on(rig_device *r, rig_buffer *src, rig_buffer *dst,
                                 rig_point *out) {
  rig__use uses[2] = {{src->alloc, false, false}, {dst->alloc, true, false}};
  rig_edge_part part = {.kind = RIG_EDGE_PART_COPY,
                        .queue = r->facts.part_queue[RIG_EDGE_PART_COPY]};
  part.u.copy.src = range(r, src);
  part.u.copy.dst = range(r, dst);
  rig_edge_work work = {.size = sizeof work, .nparts = 1, .parts = &part};
  return rig__timeline_submit(r, &work, uses, 2, NULL, 0, out);
}

/* The device whose driver copies into dst's memory from src's by its own
 * means, though neither addresses the other's (edge.h's copies_from, ABI
 * 1.8: the remote driver between two machines), or NULL. Only buffers
 * seen from their own device's side: a borrow's mapping is another's. */
static rig_device *across(const rig_buffer *src, const rig_buffer *dst) {
  rig_device *g = dst->alloc->dev, *f = src->alloc->dev;
  const rig_edge_driver *t = g->drv;
  if (g == f || f->drv != t || dst->dev != g || src->dev != f || rig__host_bytes(src) ||
      rig__host_bytes(dst) ||
      t->size < offsetof(rig_edge_driver, copies_from) + sizeof t->copies_from ||
      !t->copies_from)
    return NULL;
  bool runs = !rig__is_lost(g) && g->facts.part_queue[RIG_EDGE_PART_COPY] != RIG_EDGE_NO_QUEUE;
  return runs && t->copies_from(g->h, f->h) ? g : NULL;
}

/* The copy on g, across: its part names each allocation's own record. */
static rig_status submit_across(rig_device *g, rig_buffer *src, rig_buffer *dst,
                                rig_point *out) {
  rig__use uses[2] = {{src->alloc, false, false}, {dst->alloc, true, false}};
  rig_edge_part part = {.kind = RIG_EDGE_PART_COPY,
                        .queue = g->facts.part_queue[RIG_EDGE_PART_COPY]};
  part.u.copy.src = (rig_edge_range){&src->alloc->mem, src->offset, src->length};
  part.u.copy.dst = (rig_edge_range){&dst->alloc->mem, dst->offset, dst->length};
  rig_edge_work work = {.size = sizeof work, .nparts = 1, .parts = &part};
  return rig__timeline_submit(g, &work, uses, 2, NULL, 0, out);
}

/* A copy the host takes part in, run as submit_copy places it, r its
 * runner or NULL; host_value: whether a copy the host makes takes a host
 * value (submit_copy, TL-3) or none (copy, STAMP-18). *out is
 * RIG_POINT_NONE for the latter. */
static rig_status place_on_host(rig_device *r, rig_buffer *src, rig_buffer *dst,
                                bool host_value, rig_point *out) {
  rig_status st;
  if (rig__io_memory(src) || rig__io_memory(dst))
    return rig__io_copy(src, dst, out);                         /* docs/io.md */
  if (!r && (!rig__host_bytes(src) || !rig__host_bytes(dst)))
    return staged_copy(src, dst, out);
  if (!r)
    return no_runner(src, dst, "rig_buffer_submit_copy");
  if (!host_value) { /* the host's own move: it waits, then copies */
    if ((st = rig__stamps_wait(src->alloc, false)) || (st = rig__stamps_wait(dst->alloc, true)))
      return st;
    memmove(rig__host_bytes(dst), rig__host_bytes(src), src->length);
    *out = RIG_POINT_NONE;
    return RIG_OK;
  }
  return submit_copy_on(r, src, dst, out);
}

/* The copy. One a device's engine runs is ordered by its stamps, and a
 * free meanwhile is seen under the device's submit lock (timeline.c), as
 * for any submit. Where the host takes part, both memories are marked as
 * in the host's use while it runs: the host's own moves take no point,
 * and a rig_buffer_free meanwhile returns the memory only after them
 * (buffer.c). */
static rig_status place_copy(rig_buffer *src, rig_buffer *dst, bool host_value, rig_point *out) {
  rig_status st = check_copy(src, dst);
  if (st == RIG_LOST)
    return moved_then_lost(src, dst);                         /* RECLAIM-18 */
  if (st)
    return st;
  if (!out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_submit_copy: out is NULL");
  rig__move_collected(src->alloc->dev);                       /* RECLAIM-16 */
  if (dst->alloc->dev != src->alloc->dev)
    rig__move_collected(dst->alloc->dev);
  bool io = rig__io_memory(src) || rig__io_memory(dst);
  rig_device *r = io ? NULL : runner(src, dst, RIG_EDGE_PART_COPY);
  if (r && !r->is_host)
    return submit_copy_on(r, src, dst, out);
  rig_device *g = r || io ? NULL : across(src, dst);
  if (g)
    return submit_across(g, src, dst, out);
  if ((st = rig__host_enter2(src, dst, "rig_buffer_copy")))
    return st;
  st = place_on_host(r, src, dst, host_value, out);
  rig__host_leave(src);
  rig__host_leave(dst);
  return st;
}

RIG_API rig_status rig_buffer_submit_copy(rig_buffer *src, rig_buffer *dst, rig_point *out) {
  return place_copy(src, dst, true, out);
}

RIG_API rig_status rig_buffer_copy(rig_buffer *src, rig_buffer *dst) {
  rig_point p = RIG_POINT_NONE;
  rig_status st = place_copy(src, dst, false, &p);
  if (st || !p)
    return st;
  /* The copy's device is one of the buffers' (runner): the point of a
   * synchronous one is reached already, and a wait on a held device
   * needs no lookup of it. */
  rig_device *d = rig_point_slot(p) == dst->dev->slot ? dst->dev : src->dev;
  return rig__point_wait_of(d, p);                            /* STAMP-11 */
}

/* A fill of dst as submit_fill places it; host_value as for copies. */
static rig_status place_fill(rig_buffer *dst, uint32_t pattern, uint32_t pattern_bytes,
                             bool host_value, rig_point *out) {
  rig_status st = rig__may_lock("rig_buffer_fill");
  if (st || (st = rig__buffer_usable(dst, "rig_buffer_fill")))
    return st;
  if (!out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_submit_fill: out is NULL");
  if ((pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4) ||
      dst->length % pattern_bytes)
    return rig__fail(RIG_INVALID, dst->dev, 0,
                     "rig_buffer_fill: a pattern of %u bytes does not tile %llu bytes",
                     pattern_bytes, (unsigned long long)dst->length);
  if (dst->access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, dst->dev, 0, "rig_buffer_fill: the buffer admits only reads");
  if (rig__io_memory(dst)) {
    *out = RIG_POINT_NONE;
    return rig__io_fill(dst, pattern, pattern_bytes);
  }
  rig_device *r = runner(dst, NULL, RIG_EDGE_PART_FILL);
  if (!r)
    return no_runner(dst, NULL, "rig_buffer_submit_fill");
  rig_edge_part part = {.kind = RIG_EDGE_PART_FILL,
                        .queue = r->facts.part_queue[RIG_EDGE_PART_FILL]};
  part.u.fill.dst = range(r, dst);
  part.u.fill.pattern = pattern;
  part.u.fill.pattern_bytes = pattern_bytes;
  rig__use use = {dst->alloc, true, false};
  if (r->is_host && !host_value) { /* the host's own write: no value (STAMP-2) */
    /* marked while it writes: a free meanwhile waits for it (buffer.c) */
    if ((st = rig__stamps_wait(dst->alloc, true)) ||
        (st = rig__host_enter2(dst, NULL, "rig_buffer_fill")))
      return st;
    rig_edge_error err;
    (void)rig_edge_run_on_host(&part, &err);
    rig__host_leave(dst);
    *out = RIG_POINT_NONE;
    return RIG_OK;
  }
  rig_edge_work work = {.size = sizeof work, .nparts = 1, .parts = &part};
  return rig__timeline_submit(r, &work, &use, 1, NULL, 0, out);
}

RIG_API rig_status rig_buffer_submit_fill(rig_buffer *dst, uint32_t pattern,
                                          uint32_t pattern_bytes, rig_point *out) {
  return place_fill(dst, pattern, pattern_bytes, true, out);
}

RIG_API rig_status rig_buffer_fill(rig_buffer *b, uint32_t pattern, uint32_t pattern_bytes) {
  rig_point p = RIG_POINT_NONE;
  rig_status st = place_fill(b, pattern, pattern_bytes, false, &p);
  return st || !p ? st : rig__point_wait(p);
}
