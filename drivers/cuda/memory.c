/* SPDX-License-Identifier: MIT */
/* memory.c: the memory of a cuda device.
 *
 *   Device   cuMemAlloc: the GPU's own memory; the host addresses none of
 *            it, so core moves bytes to and from it through staging.
 *   Pinned   cuMemHostAlloc (portable, device-mapped): host memory every
 *            context maps, counted in the host's budget; staging uses it.
 *   Mapped   refused: the host addresses no device memory here.
 *   borrows  cuMemHostRegister of the borrowed pages (MAPS_HOST, MACH-23),
 *            through the process's registrations (context.c).
 *
 * Every allocation has a record, listed on its device so that destroy
 * frees what core never gave back. On a lost context, device memory is not
 * freed one allocation at a time (cuMemFree may wait for a kernel that
 * never ends): the context's reset at its last release frees it.
 */
#include <stdlib.h>

#include "cuda_private.h"

enum { MEM_DEVICE, MEM_PINNED, MEM_BORROW };

typedef struct cumem {
  struct cumem *prev, *next;
  int kind;
  void *host;
  CUdeviceptr address;
  registration *reg;
} cumem;

static void list_add(cudev *d, cumem *m) {
  pthread_mutex_lock(&d->mlock);
  m->next = d->mems;
  if (d->mems)
    d->mems->prev = m;
  d->mems = m;
  pthread_mutex_unlock(&d->mlock);
}

static void list_remove(cudev *d, cumem *m) {
  pthread_mutex_lock(&d->mlock);
  if (m->prev)
    m->prev->next = m->next;
  else
    d->mems = m->next;
  if (m->next)
    m->next->prev = m->prev;
  pthread_mutex_unlock(&d->mlock);
}

static CUresult make(cumem *m, uint32_t kind, uint64_t bytes) {
  size_t n = bytes ? (size_t)bytes : 1;
  if (kind == RIG_EDGE_KIND_DEVICE) {
    m->kind = MEM_DEVICE;
    return cu.MemAlloc(&m->address, n);
  }
  m->kind = MEM_PINNED;
  CUresult r = cu.MemHostAlloc(&m->host, n, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_SUCCESS)
    return r;
  r = cu.MemHostGetDevicePointer(&m->address, m->host, 0);
  if (r != CUDA_SUCCESS)
    cu.MemFreeHost(m->host);
  return r;
}

/* A new allocation's record, on a context that is not lost. */
static int new_record(cudev *d, cumem **out, rig_edge_error *err) {
  int r = loss_check(d, err);
  if (r != RIG_EDGE_OK)
    return r;
  if (!(*out = calloc(1, sizeof **out)))
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  return RIG_EDGE_OK;
}

int memory_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                    rig_edge_error *err) {
  cudev *d = h;
  if (kind != RIG_EDGE_KIND_DEVICE && kind != RIG_EDGE_KIND_PINNED)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: the host addresses no memory of a CUDA device (Mapped); "
                         "Pinned memory is host memory the GPU maps", d->name);
  cumem *m;
  int r = new_record(d, &m, err);
  if (r != RIG_EDGE_OK)
    return r;
  CUresult cr = gpu_bind(d->g);
  if (cr == CUDA_SUCCESS)
    cr = make(m, kind, bytes);
  if (cr != CUDA_SUCCESS) {
    free(m);
    return loss_fail(d, err, cr, kind == RIG_EDGE_KIND_DEVICE ? "cuMemAlloc" : "cuMemHostAlloc");
  }
  list_add(d, m);
  *out = (rig_edge_alloc){.handle = m, .host = m->host, .address = m->address, .bytes = bytes};
  return RIG_EDGE_OK;
}

int memory_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err) {
  cudev *d = h;
  cumem *m;
  int r = new_record(d, &m, err);
  if (r != RIG_EDGE_OK)
    return r;
  m->kind = MEM_BORROW;
  m->host = host;
  CUresult cr = gpu_bind(d->g);
  if (cr != CUDA_SUCCESS) {
    free(m);
    return loss_fail(d, err, cr, "cuCtxSetCurrent");
  }
  r = registration_get(host, bytes ? (size_t)bytes : 1, &m->reg, d->name, err);
  if (r != RIG_EDGE_OK) {
    free(m);
    return r;
  }
  cr = cu.MemHostGetDevicePointer(&m->address, host, 0);
  if (cr != CUDA_SUCCESS) {
    registration_put(m->reg);
    free(m);
    return loss_fail(d, err, cr, "cuMemHostGetDevicePointer");
  }
  list_add(d, m);
  *out = (rig_edge_alloc){.handle = m, .host = host, .address = m->address, .bytes = bytes};
  return RIG_EDGE_OK;
}

static void free_mem(cudev *d, cumem *m) {
  bool lost = loss_is_lost(d->g);
  if (gpu_bind(d->g) != CUDA_SUCCESS)
    lost = true;
  if (m->kind == MEM_DEVICE && !lost)
    cu.MemFree(m->address);
  else if (m->kind == MEM_PINNED && !lost)
    cu.MemFreeHost(m->host);
  else if (m->kind == MEM_BORROW)
    registration_put(m->reg);
  free(m);
}

/* Core gives memory back once the work that used it is done (its stamps),
 * so cuMemFree waits for nothing of rig's. */
int memory_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  cudev *d = h;
  (void)err;
  cumem *m = a->handle;
  list_remove(d, m);
  free_mem(d, m);
  return RIG_EDGE_OK;
}

/* MACH-17: opens on one context address each other's memory as their own. */
bool memory_peer(void *h, void *other) {
  const cudev *a = h, *b = other;
  return a->g == b->g;
}

void memory_free_all(cudev *d) {
  while (d->mems) {
    cumem *m = d->mems;
    d->mems = m->next;
    free_mem(d, m);
  }
}
