/* run.c: a run's launch blocks (Submission.block, Submission.Run): the
 * grid, shared memory and parameter bytes a submit of the run stores for
 * each launch part (RUN-2..7, LAUNCH-13). The setters touch only the
 * caller's run: lock-free, and they allocate nothing.
 */
#include <string.h>

#include "submit.h"

RIG_API rig_status rig_submission_block(const rig_submission *s, uint32_t part, uint32_t *out_k) {
  if (!s || !out_k || part >= s->nparts || s->block_of[part] == UINT32_MAX)
    return rig__fail(RIG_INVALID, s ? s->dev : NULL, 0,
                     "rig_submission_block: part %u is no launch", part);
  *out_k = s->block_of[part];
  return RIG_OK;
}

/* Block k of r, or NULL with the error set. */
static block *block_at(rig_run *r, uint32_t k, const char *fn) {
  if (!r || k >= r->s->nblocks) {
    rig__fail(RIG_INVALID, r ? r->s->dev : NULL, 0, "%s: no block %u", fn, k);
    return NULL;
  }
  return &r->blocks[k];
}

static rig_status set_axes(rig_run *r, uint32_t k, bool groups, uint64_t x, uint64_t y,
                           uint64_t z) {
  block *b = block_at(r, k, groups ? "rig_run_groups" : "rig_run_threads");
  if (!b)
    return RIG_INVALID;
  uint64_t *a = groups ? b->groups : b->threads;
  a[0] = x;
  a[1] = y;
  a[2] = z;
  return RIG_OK;
}

RIG_API rig_status rig_run_groups(rig_run *r, uint32_t k, uint64_t x, uint64_t y, uint64_t z) {
  return set_axes(r, k, true, x, y, z);
}

RIG_API rig_status rig_run_threads(rig_run *r, uint32_t k, uint64_t x, uint64_t y, uint64_t z) {
  return set_axes(r, k, false, x, y, z);
}

RIG_API rig_status rig_run_shared(rig_run *r, uint32_t k, uint32_t bytes) {
  block *b = block_at(r, k, "rig_run_shared");
  if (!b)
    return RIG_INVALID;
  b->shared = bytes;
  return RIG_OK;
}

RIG_API rig_status rig_run_bytes(rig_run *r, uint32_t k, uint32_t off, const void *src,
                                 uint32_t n) {
  block *b = block_at(r, k, "rig_run_bytes");
  if (!b)
    return RIG_INVALID;
  uint32_t size = b->bytes;
  if ((n && !src) || off > size || n > size - off)
    return rig__fail(RIG_INVALID, r->s->dev, 0,
                     "rig_run: [%u, +%u) is out of block %u's %u bytes", off, n, k, size);
  if (n)
    memcpy(b->params + off, src, n);
  return RIG_OK;
}

RIG_API rig_status rig_run_int64(rig_run *r, uint32_t k, uint32_t off, int64_t v) {
  return rig_run_bytes(r, k, off, &v, sizeof v);                /* OBJ-5 */
}
RIG_API rig_status rig_run_int32(rig_run *r, uint32_t k, uint32_t off, int32_t v) {
  return rig_run_bytes(r, k, off, &v, sizeof v);
}
RIG_API rig_status rig_run_float(rig_run *r, uint32_t k, uint32_t off, float v) {
  return rig_run_bytes(r, k, off, &v, sizeof v);
}
RIG_API rig_status rig_run_double(rig_run *r, uint32_t k, uint32_t off, double v) {
  return rig_run_bytes(r, k, off, &v, sizeof v);
}
