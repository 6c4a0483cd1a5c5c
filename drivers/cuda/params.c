/* SPDX-License-Identifier: MIT */
/* params.c: parameter blocks over PARAMS_MAX, the bytes every CUDA device
 * takes by value, passed through a buffer of the driver, as the Vulkan
 * driver does with a block over its push constants.
 *
 * Such a kernel takes one argument, the device address of its block
 * (`extern "C" __global__ void f(const struct p *block)`). At submit the
 * driver writes the block into a ring of pinned memory, and its stream
 * copies it from there into a ring of device memory (cuMemcpyAsync, before
 * the launch), so that the kernel reads its block from the GPU's own
 * memory. Both rings are PARAMS_RING bytes, made at the open's first
 * resolve, so that submit allocates nothing.
 *
 * The device ring needs no bookkeeping: the stream runs the copy into a
 * slot after every earlier launch that read it. The pinned ring does: the
 * host writes a slot at submit and the stream reads it later, so each
 * chunk of PARAMS_CHUNK bytes remembers the last value whose blocks lay
 * in it, and is written again only once the device reached that value (a
 * submit that wraps round waits for it: MAY_BLOCK). One work's large
 * blocks take one stretch of the ring: check() refuses work whose blocks
 * are more than the ring holds.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_private.h"

#define PARAMS_RING (2u << 20)
#define PARAMS_CHUNK (16u << 10)
#define PARAMS_ALIGN 256u           /* each block's start: cuMemAlloc's alignment */
#define CHUNKS (PARAMS_RING / PARAMS_CHUNK)

struct cuparams {
  void *host;                       /* pinned: the host writes blocks here */
  CUdeviceptr host_address;         /* ... which the stream copies from */
  CUdeviceptr dev;                  /* device memory: the kernels read here */
  uint64_t head;                    /* the next free byte of the ring */
  uint64_t used[CHUNKS];            /* per chunk: the last value that used it */
};

static uint64_t aligned(uint64_t n) { return (n + PARAMS_ALIGN - 1) / PARAMS_ALIGN * PARAMS_ALIGN; }

/* The ring bytes of w's blocks over PARAMS_MAX. */
static uint64_t ring_bytes(const rig_edge_work *w) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < w->nparts; i++)
    if (w->parts[i].kind == RIG_EDGE_PART_LAUNCH && w->parts[i].u.launch.params_bytes > PARAMS_MAX)
      n += aligned(w->parts[i].u.launch.params_bytes);
  return n;
}

int params_check(const cudev *d, const rig_edge_work *w, rig_edge_error *err) {
  uint64_t n = ring_bytes(w);
  if (n > PARAMS_RING)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: the work's parameter blocks over %u bytes come to %llu bytes; "
                         "the driver's buffer of them holds %u (split the work)", d->name,
                         PARAMS_MAX, (unsigned long long)n, PARAMS_RING);
  return RIG_EDGE_OK;
}

int params_make(cudev *d, rig_edge_error *err) {
  if (__atomic_load_n(&d->params, __ATOMIC_ACQUIRE))
    return RIG_EDGE_OK;
  cuparams *p = calloc(1, sizeof *p);
  if (!p)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  CUresult r = gpu_bind(d->g);
  const char *call = "cuMemHostAlloc";
  if (r == CUDA_SUCCESS)
    r = cu.MemHostAlloc(&p->host, PARAMS_RING, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == CUDA_SUCCESS && (r = cu.MemHostGetDevicePointer(&p->host_address, p->host, 0)) ==
                               CUDA_SUCCESS) {
    call = "cuMemAlloc";
    r = cu.MemAlloc(&p->dev, PARAMS_RING);
  }
  if (r != CUDA_SUCCESS) {
    if (p->host)
      cu.MemFreeHost(p->host);
    free(p);
    return loss_fail(d, err, r, call);
  }
  __atomic_store_n(&d->params, p, __ATOMIC_RELEASE);
  return RIG_EDGE_OK;
}

void params_free(cudev *d) {
  cuparams *p = d->params;
  d->params = NULL;
  if (!p)
    return;
  if (!loss_is_lost(d->g) && gpu_bind(d->g) == CUDA_SUCCESS) {
    cu.MemFree(p->dev);
    cu.MemFreeHost(p->host);
  }
  free(p);
}

/* Waits until d reached value (the ring's chunk comes free), within the
 * hang bound: past it the device is lost, as a hang. */
static int wait_free(cudev *d, uint64_t value, rig_edge_error *err) {
  int r = queue_wait(d, value, d->hang_ms ? d->hang_ms : UINT32_MAX, err);
  if (r == RIG_EDGE_TIMEOUT) {
    loss_mark(d, "its parameter buffer did not come free within the hang bound");
    return loss_check(d, err);
  }
  return r;
}

int params_reserve(cudev *d, const rig_edge_work *w, rig_edge_error *err) {
  cuparams *p = __atomic_load_n(&d->params, __ATOMIC_ACQUIRE);
  uint64_t n = ring_bytes(w);
  if (!n)
    return RIG_EDGE_OK;
  if (!p) /* a function of this open was resolved: module_resolve made it */
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: no parameter buffer", d->name);
  if (p->head + n > PARAMS_RING)
    p->head = 0;
  /* A chunk whose start the stretch holds is entered anew: what it held is
   * a lap old, read once the value that used it last is reached. The one
   * that holds head past its start was entered by earlier work of this lap. */
  uint64_t newest = 0;
  for (uint64_t c = p->head / PARAMS_CHUNK; c <= (p->head + n - 1) / PARAMS_CHUNK; c++) {
    if (c * PARAMS_CHUNK >= p->head && p->used[c] > newest)
      newest = p->used[c];
    p->used[c] = w->value;
  }
  return newest ? wait_free(d, newest, err) : RIG_EDGE_OK;
}

int params_place(cudev *d, const rig_edge_part *part, CUdeviceptr *out, rig_edge_error *err) {
  cuparams *p = d->params;
  uint32_t bytes = part->u.launch.params_bytes;
  memcpy((char *)p->host + p->head, part->u.launch.params, bytes);
  CUresult r = cu.MemcpyAsync(p->dev + p->head, p->host_address + p->head, bytes, d->stream);
  if (r != CUDA_SUCCESS)
    return loss_fail(d, err, r, "cuMemcpyAsync");
  *out = p->dev + p->head;
  p->head += aligned(bytes);
  return RIG_EDGE_OK;
}
