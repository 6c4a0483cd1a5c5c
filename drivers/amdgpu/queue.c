/* SPDX-License-Identifier: MIT */
/* queue.c: the open's one compute queue. Each value's work is one indirect
 * buffer (encode.c) in the IB ring, handed to the kernel at its submit
 * (commit k 1) with amdgpu_cs_submit_raw2: the IB chunk on
 * AMDGPU_HW_IP_COMPUTE, the list of the open's buffer objects, and a
 * timeline syncobj signal chunk at the value, so the syncobj reaches value
 * when the kernel's fence of the job signals. The IB itself ends with a
 * RELEASE_MEM of the value into the timeline word (GTT, mapped), which
 * signaled() reads with no system call.
 *
 * Waits on other amdgpu opens are the submit's SYNCOBJ_TIMELINE_WAIT
 * chunk (waits.c). The rings (IB, arguments) are reused per sixteenth once the value that
 * last wrote there is reached: a submit may wait for it (MAY_BLOCK). The
 * waits are on the syncobj, in slices, bounded by the hang bound.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amdgpu_private.h"

static uint64_t reached(const amddev *d) {
  return __atomic_load_n(d->word, __ATOMIC_ACQUIRE);
}

int queue_make(amddev *d, rig_edge_error *err) {
  const char *walk = secure_getenv("RIG_AMDGPU_WALK");
  d->walk = walk && strcmp(walk, "1") == 0;
  if (pm4_target_of(d->node.arch, &d->target) != 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s has no PM4 layout here", d->name,
                         d->node.arch);
  int r = mem_make(d, RING_BYTES, AMDGPU_GEM_DOMAIN_GTT, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED,
                   true, &d->rings, err);
  if (r != RIG_EDGE_OK)
    return r == RIG_EDGE_NO_ROOM ? RIG_EDGE_UNAVAILABLE : r;
  memset(d->rings->host, 0, RING_BYTES);
  d->ib.size = IB_DWORDS;
  d->args.size = ARGS_BYTES;
  d->word_va = d->rings->va + IB_DWORDS * 4u + ARGS_BYTES;
  d->word = (volatile uint64_t *)((char *)d->rings->host + IB_DWORDS * 4u + ARGS_BYTES);
  d->zeros_va = d->word_va + 64;
  d->stamps_va = d->word_va + 4096;
  return RIG_EDGE_OK;
}

int queue_signaled(void *h, uint64_t *out, rig_edge_error *err) {
  amddev *d = h;
  *out = reached(d);
  profile_harvest(d, *out);
  return loss_check(d, err);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int queue_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  amddev *d = h;
  if (reached(d) >= value)
    return loss_check(d, err);
  if (library_in_child())
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: forked: its file is the parent's", d->name);
  uint64_t point = value;
  uint32_t handle = d->syncobj;
  int64_t deadline = (int64_t)(now_ns() + (uint64_t)timeout_ms * 1000000ull);
  int r = drm.amdgpu_cs_syncobj_timeline_wait(
      d->node.dev, &handle, &point, 1, deadline,
      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
  if (r == -ETIME)
    return loss_query(d) ? loss_check(d, err) : RIG_EDGE_TIMEOUT;
  if (r != 0) {
    loss_query(d);
    return loss_check(d, err)
               ? RIG_EDGE_FAULT
               : rig_edge_fail(err, RIG_EDGE_FAULT, "%s: syncobj wait: %s", d->name, strerror(-r));
  }
  profile_harvest(d, reached(d));
  if (reached(d) < value && !loss_query(d)) {
    /* the job ended, its word never came: the kernel ended it */
    char why[120];
    snprintf(why, sizeof why, "value %llu's job ended without writing its word",
             (unsigned long long)value);
    loss_mark(d, why);
  }
  return loss_check(d, err);
}

int queue_reach(amddev *d, uint64_t value, rig_edge_error *err) {
  uint64_t start = now_ns(), bound = (uint64_t)d->hang_ms * 1000000ull;
  for (;;) {
    int r = queue_wait(d, value, 100, err);
    if (r != RIG_EDGE_TIMEOUT)
      return r;
    if (bound && now_ns() - start > bound) {
      char why[120];
      snprintf(why, sizeof why, "hang: value %llu not reached in %u ms", (unsigned long long)value,
               d->hang_ms);
      loss_mark(d, why);
      return loss_check(d, err);
    }
  }
}

/* n units of r from its head (wrapping to 0 where they do not fit before
 * the end), once the GPU passed what last used them. */
static int reserve(amddev *d, amdring *r, uint32_t n, uint64_t value, uint32_t *at,
                   rig_edge_error *err) {
  if (n == 0) {
    *at = r->head;
    return RIG_EDGE_OK;
  }
  if (n > r->size / 2) /* check refuses such work; a submit without it fails here */
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: %u units of a ring of %u", d->name, n, r->size);
  if (r->head + n > r->size)
    r->head = 0;
  uint32_t chunk = r->size / CHUNKS;
  for (uint32_t c = r->head / chunk; c <= (r->head + n - 1) / chunk; c++) {
    if (r->used[c] > reached(d)) {
      int rc = queue_reach(d, r->used[c], err);
      if (rc != RIG_EDGE_OK)
        return rc;
    }
    r->used[c] = value;
  }
  *at = r->head;
  r->head += n;
  return RIG_EDGE_OK;
}

static int submit_ib(amddev *d, const rig_edge_work *w, uint64_t va, uint32_t dwords,
                     rig_edge_error *err) {
  struct drm_amdgpu_cs_chunk_ib ib = {
      .ip_type = AMDGPU_HW_IP_COMPUTE, .va_start = va, .ib_bytes = dwords * 4u};
  struct drm_amdgpu_cs_chunk_syncobj sig = {.handle = d->syncobj, .point = w->value};
  struct drm_amdgpu_cs_chunk_syncobj waits[WAITS_MAX];
  struct drm_amdgpu_bo_list_in list = {.bo_info_size = sizeof(struct drm_amdgpu_bo_list_entry)};
  uint32_t nwaits = 0;
  int r = waits_chunk(d, w, waits, &nwaits, err);
  if (r != RIG_EDGE_OK)
    return r;
  struct drm_amdgpu_cs_chunk chunks[4] = {
      {AMDGPU_CHUNK_ID_IB, sizeof ib / 4, (uintptr_t)&ib},
      {AMDGPU_CHUNK_ID_BO_HANDLES, sizeof list / 4, (uintptr_t)&list},
      {AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_SIGNAL, sizeof sig / 4, (uintptr_t)&sig},
      {AMDGPU_CHUNK_ID_SYNCOBJ_TIMELINE_WAIT, nwaits * (uint32_t)sizeof waits[0] / 4,
       (uintptr_t)waits},
  };
  uint64_t seq = 0;
  pthread_mutex_lock(&d->mlock); /* the list, as it stands */
  list.bo_number = d->nlist;
  list.bo_info_ptr = (uintptr_t)d->list;
  r = drm.amdgpu_cs_submit_raw2(d->node.dev, d->ctx, 0, nwaits ? 4 : 3, chunks, &seq);
  pthread_mutex_unlock(&d->mlock);
  if (r == 0)
    return RIG_EDGE_OK;
  if (!loss_query(d) && r == -ECANCELED)
    loss_mark(d, "the kernel cancels this context's submits (-ECANCELED)");
  if (loss_check(d, err) != RIG_EDGE_OK)
    return RIG_EDGE_FAULT;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: amdgpu_cs_submit_raw2: %s", d->name, strerror(-r));
}

int queue_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  amddev *d = h;
  uint32_t dw, bytes, ib_at = 0, args_at = 0;
  int r = loss_check(d, err);
  if (r != RIG_EDGE_OK)
    return r;
  encode_size(d, w, &dw, &bytes);
  dw = (dw + 7u) & ~7u;
  r = reserve(d, &d->ib, dw, w->value, &ib_at, err);
  if (r == RIG_EDGE_OK)
    r = reserve(d, &d->args, bytes, w->value, &args_at, err);
  if (r != RIG_EDGE_OK)
    return r;
  pm4_buf b = {.dw = (uint32_t *)d->rings->host + ib_at, .cap = dw};
  r = encode_work(d, w, &b, &args_at, err);
  if (r == RIG_EDGE_OK && d->walk) {
    char why[160];
    if (pm4_walk(b.dw, b.n, &d->target, why, sizeof why) != 0)
      r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: value %llu's IB fails the framing walk: %s",
                        d->name, (unsigned long long)w->value, why);
  }
  if (r == RIG_EDGE_OK)
    r = submit_ib(d, w, d->rings->va + 4ull * ib_at, b.n, err);
  if (r == RIG_EDGE_OK)
    __atomic_store_n(&d->taken, w->value, __ATOMIC_RELEASE);
  return r;
}

int queue_check(void *h, const rig_edge_work *w, rig_edge_error *err) {
  amddev *d = h;
  uint32_t dw, bytes;
  for (uint32_t i = 0; i < w->nparts; i++) {
    int r = encode_check(d, &w->parts[i], err);
    if (r != RIG_EDGE_OK)
      return r;
  }
  encode_size(d, w, &dw, &bytes);
  if (dw > IB_DWORDS / 2 || bytes > ARGS_BYTES / 2)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: work of %u parts needs %u IB dwords and %u argument bytes; one "
                         "value takes at most %u and %u",
                         d->name, w->nparts, dw, bytes, IB_DWORDS / 2, ARGS_BYTES / 2);
  return RIG_EDGE_OK;
}

/* A lost open waits no more: its jobs end by the kernel's reset or
 * timeout, and the kernel keeps their buffer objects until then, so what
 * destroy frees is safe to free at once. */
void queue_end(amddev *d) {
  rig_edge_error ignored;
  uint64_t taken = __atomic_load_n(&d->taken, __ATOMIC_ACQUIRE);
  if (d->rings && taken && !library_in_child() && !__atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
    queue_reach(d, taken, &ignored);
}

void queue_free(amddev *d) {
  profile_free(d);
  mem_free(d, d->rings);
  d->rings = NULL;
}
