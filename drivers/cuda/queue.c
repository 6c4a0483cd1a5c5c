/* SPDX-License-Identifier: MIT */
/* queue.c: an open's stream, its timeline word, and its waits on others.
 *
 * Each open has a CUstream of its own (non-blocking: it never waits for
 * the legacy default stream) and a timeline word in pinned memory, which
 * it keeps itself (OWN_WORD): submit enqueues the work's waits, its parts
 * in order, then the store of the work's value into the word, so the host
 * reads how far the GPU has got without a call into CUDA.
 *
 * The store is cuStreamWriteValue64 where the GPU has 64-bit stream memory
 * operations (CUDA 12's v2 operations; the attribute
 * CAN_USE_64_BIT_STREAM_MEM_OPS): its default flags fence the work's
 * writes before the word's (a system-scope fence), so a reader that sees
 * the value sees the work's bytes. There the queue also waits on other
 * devices' words with cuStreamWaitValue64 (QUEUE_WAITS, SUBMIT-2): core's
 * words of host, memory, io, Vulkan and test devices (map_word registers
 * the word's page with the GPU) and the own words of other cuda devices
 * (map_peer: their pinned words are mapped by every context), so a submit
 * that follows another device's work never blocks the host.
 *
 * Fallback, where the GPU or driver lacks them: the store is a host
 * function (cuLaunchHostFunc) that CUDA's own thread runs once the work
 * before it is done, and the device states no QUEUE_WAITS: core waits for
 * other devices' points on the host before the submit (SUBMIT-3). Its
 * values in flight live in a ring of RING records, so submit allocates
 * nothing; a submit RING values ahead of the word waits for it first
 * (MAY_BLOCK).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cuda_private.h"

int queue_make(cudev *d, rig_edge_error *err) {
  CUresult r = gpu_bind(d->g);
  if (r == CUDA_SUCCESS)
    r = cu.StreamCreate(&d->stream, CU_STREAM_NON_BLOCKING);
  void *word = NULL;
  if (r == CUDA_SUCCESS)
    r = cu.MemHostAlloc(&word, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == CUDA_SUCCESS) {
    d->word = word;
    *d->word = 0;
    r = cu.MemHostGetDevicePointer(&d->self.address, word, 0);
  }
  d->self.peer = true;
  if (r != CUDA_SUCCESS) {
    char why[160];
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: its stream: %s", d->name,
                         library_error(r, why, sizeof why));
  }
  return RIG_EDGE_OK;
}

/* Whether the stream holds unfinished work; a sticky error loses d. */
static int stream_busy(cudev *d, bool *busy, rig_edge_error *err) {
  CUresult r = cu.StreamQuery(d->stream);
  *busy = r == CUDA_ERROR_NOT_READY;
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
    return loss_check(d, err);
  return loss_fail(d, err, r, "cuStreamQuery");
}

/* Ends the stream once its work is done, or once the hang bound passed
 * without it (then the context is lost: a kernel that never ends holds
 * it, and the last release resets it). A lost context is not waited for. */
void queue_end(cudev *d) {
  rig_edge_error err;
  uint32_t waited = 0;
  if (!d->stream)
    return;
  bool busy = gpu_bind(d->g) == CUDA_SUCCESS;
  while (busy && stream_busy(d, &busy, &err) == RIG_EDGE_OK && busy) {
    if (d->hang_ms && waited >= d->hang_ms) {
      char why[96];
      snprintf(why, sizeof why, "its work did not end within %u ms of its stop", d->hang_ms);
      loss_mark(d, why);
      break;
    }
    nanosleep(&(struct timespec){0, 10000000}, NULL);
    waited += 10;
  }
  profile_end(d); /* before the stream: its events were recorded on it */
  if (!loss_is_lost(d->g))
    cu.StreamDestroy(d->stream);
  d->stream = NULL;
}

/* After destroy's queue_end: the word goes last, since peers' queues may
 * wait on it until core gave back their mappings. */
void queue_free(cudev *d) {
  if (d->word && gpu_bind(d->g) == CUDA_SUCCESS && !loss_is_lost(d->g))
    cu.MemFreeHost((void *)d->word);
  d->word = NULL;
}

int queue_signaled(void *h, uint64_t *out, rig_edge_error *err) {
  cudev *d = h;
  *out = rig_edge_word_load(d->word);
  profile_harvest(d, true);
  return loss_check(d, err);
}

/* Waits in slices of at most 5 ms on the word, asking the stream between
 * them whether it failed: a faulting kernel never stores its value, and
 * its sticky error is the device's loss (LOSS-14). */
int queue_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  cudev *d = h;
  uint32_t waited = 0;
  for (;;) {
    uint32_t slice = timeout_ms - waited < 5 ? timeout_ms - waited : 5;
    if (rig_edge_word_wait(d->word, value, slice) == RIG_EDGE_OK) {
      profile_harvest(d, true);
      return RIG_EDGE_OK;
    }
    waited += slice;
    bool busy;
    CUresult r = gpu_bind(d->g);
    if (r != CUDA_SUCCESS)
      return loss_fail(d, err, r, "cuCtxSetCurrent");
    int rc = stream_busy(d, &busy, err);
    if (rc != RIG_EDGE_OK)
      return rc;
    if (!busy && rig_edge_word_load(d->word) < value) /* the store is the stream's last */
      return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: its stream is idle below value %llu",
                           d->name, (unsigned long long)value);
    if (waited >= timeout_ms)
      return RIG_EDGE_TIMEOUT;
  }
}

/* ---- the fallback: the word stored by a host function ---------------------------- */

static void store_value(void *user) {
  cuslot *s = user;
  rig_edge_word_store(s->d->word, s->value);
}

static CUresult signal_by_host(cudev *d, uint64_t value) {
  cuslot *s = &d->ring[value % RING];
  if (value > RING)
    rig_edge_word_wait(d->word, value - RING, UINT32_MAX); /* its slot's last user ran */
  s->d = d;
  s->value = value;
  return cu.LaunchHostFunc(d->stream, store_value, s);
}

/* ---- parts ------------------------------------------------------------------------- */

static CUdeviceptr at(const rig_edge_range *r) { return r->alloc->address + r->offset; }

/* A fill of a pattern of 1, 2 or 4 bytes, which repeats from the range's
 * first byte: cuMemsetD8/16/32 where the range is aligned to the pattern,
 * else one strided byte-wide 2D memset per byte of the pattern. */
static CUresult fill(cudev *d, const rig_edge_part *p) {
  CUdeviceptr dst = at(&p->u.fill.dst);
  uint64_t n = p->u.fill.dst.bytes;
  uint32_t size = p->u.fill.pattern_bytes, pattern = p->u.fill.pattern;
  if (size == 1 || (size != 2 && size != 4))
    return cu.MemsetD8Async(dst, (unsigned char)pattern, n, d->stream);
  if ((dst | n) % size == 0)
    return size == 2 ? cu.MemsetD16Async(dst, (unsigned short)pattern, n / 2, d->stream)
                     : cu.MemsetD32Async(dst, pattern, n / 4, d->stream);
  CUresult r = CUDA_SUCCESS;
  for (uint32_t j = 0; j < size && j < n && r == CUDA_SUCCESS; j++)
    r = cu.MemsetD2D8Async(dst + j, size, (unsigned char)(pattern >> (8 * j)), 1,
                           (n - j + size - 1) / size, d->stream);
  return r;
}

static int run_part(cudev *d, const rig_edge_part *p, rig_edge_error *err) {
  CUresult r = CUDA_SUCCESS;
  const char *call = "cuMemcpyAsync";
  if (p->kind == RIG_EDGE_PART_COPY) {
    if (p->u.copy.dst.bytes)
      r = cu.MemcpyAsync(at(&p->u.copy.dst), at(&p->u.copy.src), p->u.copy.dst.bytes, d->stream);
  } else if (p->kind == RIG_EDGE_PART_FILL) {
    call = "cuMemsetAsync";
    if (p->u.fill.dst.bytes)
      r = fill(d, p);
  } else if (p->kind == RIG_EDGE_PART_LAUNCH)
    return module_launch(d, p, err);
  else
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: part kind %u", d->name, p->kind);
  return r == CUDA_SUCCESS ? RIG_EDGE_OK : loss_fail(d, err, r, call);
}

/* ---- submit -------------------------------------------------------------------------- */

int queue_submit(void *h, const rig_edge_work *work, rig_edge_error *err) {
  cudev *d = h;
  int rc = loss_check(d, err);
  if (rc != RIG_EDGE_OK)
    return rc;
  CUresult r = gpu_bind(d->g);
  if (r != CUDA_SUCCESS)
    return loss_fail(d, err, r, "cuCtxSetCurrent");
  for (uint32_t i = 0; i < work->nwaits; i++) {
    const cumap *m = work->waits[i].mapping;
    r = cu.StreamWaitValue64(d->stream, m->address, work->waits[i].value, CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS)
      return loss_fail(d, err, r, "cuStreamWaitValue64");
  }
  if ((rc = params_reserve(d, work, err)) != RIG_EDGE_OK)
    return rc;
  for (uint32_t i = 0; i < work->nparts; i++) {
    bool timed = profile_before(d, work, i);
    if ((rc = run_part(d, &work->parts[i], err)) != RIG_EDGE_OK)
      return rc;
    if (timed)
      profile_after(d);
  }
  if (d->waits)
    r = cu.StreamWriteValue64(d->stream, d->self.address, work->value,
                              CU_STREAM_WRITE_VALUE_DEFAULT);
  else
    r = signal_by_host(d, work->value);
  if (r != CUDA_SUCCESS)
    return loss_fail(d, err, r, d->waits ? "cuStreamWriteValue64" : "cuLaunchHostFunc");
  __atomic_store_n(&d->taken, work->value, __ATOMIC_RELEASE);
  return RIG_EDGE_OK;
}

/* ---- waits on other devices' words ---------------------------------------------------- */

/* Core's word of another device, in host memory: its page registered with
 * every context, and the address d's context gives it. */
int queue_map_word(void *h, volatile uint64_t *word, void **out, rig_edge_error *err) {
  cudev *d = h;
  size_t page_bytes = (size_t)sysconf(_SC_PAGESIZE); /* CUDA registers whole pages */
  uintptr_t page = (uintptr_t)word & ~(uintptr_t)(page_bytes - 1);
  cumap *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  CUresult r = gpu_bind(d->g);
  int rc = r == CUDA_SUCCESS ? registration_get((void *)page, page_bytes, &m->reg, d->name, err)
                             : loss_fail(d, err, r, "cuCtxSetCurrent");
  if (rc == RIG_EDGE_OK && (r = cu.MemHostGetDevicePointer(&m->address, (void *)word, 0)) !=
                               CUDA_SUCCESS) {
    registration_put(m->reg);
    rc = loss_fail(d, err, r, "cuMemHostGetDevicePointer");
  }
  if (rc != RIG_EDGE_OK) {
    free(m);
    return rc;
  }
  *out = m;
  return RIG_EDGE_OK;
}

/* A peer's own word: pinned and portable, so every context maps it; the
 * peer's word outlives its stop until its destroy, which core holds back
 * until this mapping is given back (edge ABI 1.2). */
int queue_map_peer(void *h, void *peer, void **out, rig_edge_error *err) {
  cudev *d = h, *p = peer;
  if (!d->waits)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no 64-bit stream memory operations",
                         d->name);
  if (p->g == d->g) {
    *out = &p->self;
    return RIG_EDGE_OK;
  }
  cumap *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: out of host memory", d->name);
  CUresult r = gpu_bind(d->g);
  if (r == CUDA_SUCCESS)
    r = cu.MemHostGetDevicePointer(&m->address, (void *)p->word, 0);
  if (r != CUDA_SUCCESS) {
    free(m);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s's word is not mapped here", d->name,
                         p->name);
  }
  *out = m;
  return RIG_EDGE_OK;
}

void queue_unmap_word(void *h, void *mapping) {
  cumap *m = mapping;
  (void)h;
  if (m->peer)
    return;
  if (m->reg)
    registration_put(m->reg);
  free(m);
}
