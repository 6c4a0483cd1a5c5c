/* SPDX-License-Identifier: MIT */
/* run.c: a run's launch blocks (Submission.block, Submission.Run): the
 * grid, shared memory and parameter bytes a submit of the run stores for
 * each launch part (RUN-2..7, LAUNCH-13). The setters touch only the
 * caller's run: lock-free, and they allocate nothing.
 */
#include <stdlib.h>
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

/* ---- taking runs ---- */

RIG_API rig_submission *rig_run_submission(const rig_run *r) { return r ? r->s : NULL; }

RIG_API rig_status rig_run_drop(rig_run *r) {
  if (!r)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_run_drop: NULL run");
  /* As a submit claims it: only the taking thread's run, and not twice. */
  int want = RUN_TAKEN;
  if (!atomic_compare_exchange_strong(&r->state, &want, RUN_SUBMITTING))
    return rig__fail(RIG_INVALID, r->s->dev, 0,
                     want == RUN_FREE ? "rig_run_drop: the run is not taken"
                                      : "rig_run_drop: a submit of the run is under way");
  if (!pthread_equal(r->owner, pthread_self())) {
    atomic_store_explicit(&r->state, RUN_TAKEN, memory_order_release);
    return rig__fail(RIG_INVALID, r->s->dev, 0, "rig_run_drop: another thread took the run");
  }
  rig__run_free(r);
  return RIG_OK;
}

void rig__run_destroy(rig_run *r) {
  for (uint32_t k = 0; r->blocks && k < r->s->nblocks; k++)
    free(r->blocks[k].params);
  free(r->blocks);
  free(r->parts);
  free(r->uses);
  free(r->bufs);
  free(r);
}

/* A run with room for everything a submit builds, so that submit
 * allocates nothing (SUBMIT-20); its blocks' grids start at zero, which a
 * submit refuses until they are set (LAUNCH-13). */
static rig_run *run_new(rig_submission *s) {
  rig_run *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->s = s;
  r->parts = calloc(s->nparts, sizeof *r->parts);
  r->uses = calloc(s->nuses + 1, sizeof *r->uses);
  r->bufs = calloc(s->nslots + 1, sizeof *r->bufs);
  r->blocks = calloc(s->nblocks + 1, sizeof *r->blocks);
  bool ok = r->parts && r->uses && r->bufs && r->blocks;
  for (uint32_t i = 0; ok && i < s->nparts; i++) {
    uint32_t k = s->block_of[i];
    if (k != UINT32_MAX &&
        posix_memalign((void **)&r->blocks[k].params, 16, s->parts[i].params_bytes + 16u) != 0) {
      r->blocks[k].params = NULL;
      ok = false;
    } else if (k != UINT32_MAX) {
      memset(r->blocks[k].params, 0, s->parts[i].params_bytes + 16u);
      r->blocks[k].bytes = s->parts[i].params_bytes;
    }
  }
  if (!ok) {
    rig__run_destroy(r);
    return NULL;
  }
  return r;
}

/* A run for take from the free list, under the pool's lock, or a slot for
 * a new one (*make); NULL with *make false while every run is taken. */
static rig_run *take_free(rig_submission *s, bool *make) {
  rig__lock(s->lock);
  /* The spare again: a run freed since the caller looked is free now. */
  rig_run *r = atomic_exchange(&s->spare, NULL);
  if (!r && (r = s->free_runs))
    s->free_runs = r->next_free;
  *make = !r && s->nruns < RIG_SUBMISSION_RUNS;
  if (*make)
    s->nruns++;
  rig__unlock(s->lock);
  return r;
}

RIG_API rig_status rig_submission_take(rig_submission *s, rig_run **out) {
  rig_status st = rig__may_lock("rig_submission_take");
  if (st)
    return st;
  if (!s || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_submission_take: NULL argument");
  /* A run leaves the spare or the free list before it leaves RUN_FREE, and
   * only claim_free, which finds it in one of them, takes it otherwise: so
   * no run is handed out twice (claim_run relies on it). */
  rig_run *r = atomic_exchange(&s->spare, NULL);
  bool make = false;
  if (!r && !(r = take_free(s, &make)) && !make)
    return rig__fail(RIG_INVALID, s->dev, 0,
                     "rig_submission_take: all %u runs of the submission are taken; "
                     "a submit gives its run back",
                     RIG_SUBMISSION_RUNS);
  if (make && !(r = run_new(s))) {
    rig__lock(s->lock);
    s->nruns--;
    rig__unlock(s->lock);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), 0, "rig_submission_take: out of memory");
  }
  r->owner = pthread_self();
  atomic_store_explicit(&r->state, RUN_TAKEN, memory_order_release);
  if (make) {
    rig__lock(s->lock);
    r->next_all = s->all_runs;
    s->all_runs = r;
    rig__unlock(s->lock);
  }
  *out = r;
  return RIG_OK;
}
