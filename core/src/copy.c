/* copy.c: copies and fills of buffers (ORDER-15, TL-2, TL-3, WORD-5,
 * STAMP-11; the design is docs/copying.md).
 *
 * A copy runs on a device that reaches both memories: its destination's
 * device unless that is the host, then its source's, then the host, which takes a host value
 * for it (TL-3) and adds no point (ORDER-21). Copies between memories no
 * device reaches go through staging memory: the memory issue.
 */
#include "internal.h"

static bool can_run(rig_device *r, const rig_buffer *b, uint32_t kind) {
  return !rig__is_lost(r) && r->facts.part_queue[kind] != RIG_EDGE_NO_QUEUE &&
         rig_reaches(r, b->alloc->dev);
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

static rig_edge_range range(const rig_buffer *b) {
  rig_edge_range r = {&b->alloc->mem, b->offset, b->length};
  return r;
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
  return rig__fail(RIG_INVALID, a->dev, 0,
                   "%s: no device reaches both %s's and %s's memory; staging comes "
                   "with the memory issue", fn, a->alloc->dev->name,
                   (b ? b : a)->alloc->dev->name);
}

RIG_API rig_status rig_buffer_submit_copy(rig_buffer *src, rig_buffer *dst, rig_point *out) {
  rig_status st = check_copy(src, dst);
  if (st)
    return st;
  if (!out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_buffer_submit_copy: out is NULL");
  rig__move_collected(src->alloc->dev);                       /* RECLAIM-16 */
  rig__move_collected(dst->alloc->dev);
  rig_device *r = runner(src, dst, RIG_EDGE_PART_COPY);
  if (!r)
    return no_runner(src, dst, "rig_buffer_submit_copy");
  rig_edge_part part = {.kind = RIG_EDGE_PART_COPY,
                        .queue = r->facts.part_queue[RIG_EDGE_PART_COPY]};
  part.u.copy.src = range(src);
  part.u.copy.dst = range(dst);
  rig_edge_work work = {.size = sizeof work, .nparts = 1, .parts = &part};
  rig__use uses[2] = {{src->alloc, false, false}, {dst->alloc, true, false}};
  return rig__timeline_submit(r, &work, uses, 2, NULL, 0, out);
}

RIG_API rig_status rig_buffer_copy(rig_buffer *src, rig_buffer *dst) {
  rig_point p;
  rig_status st = rig_buffer_submit_copy(src, dst, &p);
  return st ? st : rig__point_wait(p);                        /* STAMP-11 */
}

RIG_API rig_status rig_buffer_submit_fill(rig_buffer *dst, uint32_t pattern,
                                          uint32_t pattern_bytes, rig_point *out) {
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
  rig_device *r = runner(dst, NULL, RIG_EDGE_PART_FILL);
  if (!r)
    return no_runner(dst, NULL, "rig_buffer_submit_fill");
  rig_edge_part part = {.kind = RIG_EDGE_PART_FILL,
                        .queue = r->facts.part_queue[RIG_EDGE_PART_FILL]};
  part.u.fill.dst = range(dst);
  part.u.fill.pattern = pattern;
  part.u.fill.pattern_bytes = pattern_bytes;
  rig_edge_work work = {.size = sizeof work, .nparts = 1, .parts = &part};
  rig__use use = {dst->alloc, true, false};
  return rig__timeline_submit(r, &work, &use, 1, NULL, 0, out);
}
