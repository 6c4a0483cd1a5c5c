/* SPDX-License-Identifier: MIT */
/* memory.c: the open's memory as amdgpu buffer objects, each with a GPU
 * virtual address of its own (reserved with amdgpu_va_range_alloc, mapped
 * with amdgpu_bo_va_op) and listed for every submit (the kernel makes the
 * objects of a submission's list resident before its work runs):
 *
 *   DEVICE  VRAM the CPU never maps (AMDGPU_GEM_CREATE_NO_CPU_ACCESS)
 *   PINNED  GTT (system memory the GPU reaches), mapped for the host
 *   MAPPED  VRAM the CPU maps (a large BAR), mapped for the host
 *   map()   a borrow of host pages: a userptr object over them
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_private.h"

static uint64_t pages(uint64_t bytes) {
  return (bytes + 4095u) & ~4095ull;
}

/* The BO list grows at allocation, so that a submit never allocates. */
static int list_add(amddev *d, amem *m) {
  pthread_mutex_lock(&d->mlock);
  if (d->nlist == d->caplist) {
    uint32_t cap = d->caplist ? d->caplist * 2 : 64;
    void *more = realloc(d->list, cap * sizeof *d->list);
    if (!more) {
      pthread_mutex_unlock(&d->mlock);
      return -ENOMEM;
    }
    d->list = more;
    d->caplist = cap;
  }
  d->list[d->nlist++] = (struct drm_amdgpu_bo_list_entry){.bo_handle = m->kms};
  pthread_mutex_unlock(&d->mlock);
  return 0;
}

static void list_remove(amddev *d, const amem *m) {
  pthread_mutex_lock(&d->mlock);
  for (uint32_t i = 0; i < d->nlist; i++)
    if (d->list[i].bo_handle == m->kms) {
      d->list[i] = d->list[--d->nlist];
      break;
    }
  pthread_mutex_unlock(&d->mlock);
}

/* A GPU address for m's object, and its place in the list. */
static int place(amddev *d, amem *m, rig_edge_error *err) {
  int r = drm.amdgpu_va_range_alloc(d->node.dev, amdgpu_gpu_va_range_general, m->bytes, 4096, 0,
                                    &m->va, &m->range, 0);
  if (r == 0 && (r = drm.amdgpu_bo_va_op(m->bo, 0, m->bytes, m->va, 0, AMDGPU_VA_OP_MAP)) != 0) {
    drm.amdgpu_va_range_free(m->range);
    m->range = NULL;
  }
  if (r == 0 && (r = drm.amdgpu_bo_export(m->bo, amdgpu_bo_handle_type_kms, &m->kms)) == 0)
    r = list_add(d, m);
  if (r != 0)
    return rig_edge_fail(err, r == -ENOMEM ? RIG_EDGE_NO_ROOM : RIG_EDGE_FAULT,
                         "%s: a GPU address for %llu bytes: %s", d->name,
                         (unsigned long long)m->bytes, strerror(-r));
  return RIG_EDGE_OK;
}

/* In a child of fork the object is the parent's: only the record goes. */
void mem_free(amddev *d, amem *m) {
  if (!m)
    return;
  if (library_in_child()) {
    free(m);
    return;
  }
  if (m->kms)
    list_remove(d, m);
  if (m->range) {
    drm.amdgpu_bo_va_op(m->bo, 0, m->bytes, m->va, 0, AMDGPU_VA_OP_UNMAP);
    drm.amdgpu_va_range_free(m->range);
  }
  if (m->cpu_mapped)
    drm.amdgpu_bo_cpu_unmap(m->bo);
  if (m->bo)
    drm.amdgpu_bo_free(m->bo);
  free(m);
}

int mem_make(amddev *d, uint64_t bytes, uint32_t domain, uint64_t flags, bool host, amem **out,
             rig_edge_error *err) {
  amem *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  m->bytes = pages(bytes ? bytes : 1);
  struct amdgpu_bo_alloc_request req = {
      .alloc_size = m->bytes, .phys_alignment = 4096, .preferred_heap = domain, .flags = flags};
  int r = drm.amdgpu_bo_alloc(d->node.dev, &req, &m->bo);
  if (r != 0) {
    m->bo = NULL;
    mem_free(d, m);
    return rig_edge_fail(err, r == -ENOMEM ? RIG_EDGE_NO_ROOM : RIG_EDGE_FAULT,
                         "%s: amdgpu_bo_alloc of %llu bytes: %s", d->name,
                         (unsigned long long)bytes, strerror(-r));
  }
  if (host) {
    r = drm.amdgpu_bo_cpu_map(m->bo, &m->host);
    m->cpu_mapped = r == 0;
    if (r != 0) {
      mem_free(d, m);
      return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: amdgpu_bo_cpu_map: %s", d->name,
                           strerror(-r));
    }
  }
  r = place(d, m, err);
  if (r != RIG_EDGE_OK) {
    mem_free(d, m);
    return r;
  }
  *out = m;
  return RIG_EDGE_OK;
}

static void describe(const amem *m, rig_edge_alloc *out) {
  out->handle = (void *)m;
  out->host = m->host;
  out->address = m->va;
  out->bytes = m->bytes;
}

int memory_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                    rig_edge_error *err) {
  amddev *d = h;
  amem *m = NULL;
  int r;
  if (kind == RIG_EDGE_KIND_DEVICE)
    r = mem_make(d, bytes, AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_NO_CPU_ACCESS, false, &m, err);
  else if (kind == RIG_EDGE_KIND_PINNED)
    r = mem_make(d, bytes, AMDGPU_GEM_DOMAIN_GTT, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, true, &m,
                 err);
  else if (kind == RIG_EDGE_KIND_MAPPED)
    r = mem_make(d, bytes, AMDGPU_GEM_DOMAIN_VRAM, AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, true, &m,
                 err);
  else
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory of kind %u", d->name, kind);
  if (r == RIG_EDGE_OK)
    describe(m, out);
  return r;
}

int memory_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  (void)err;
  mem_free(h, a->handle);
  return RIG_EDGE_OK;
}

/* A borrow: the kernel pins the pages (a userptr object) while it lasts. */
int memory_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err) {
  amddev *d = h;
  amem *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  m->bytes = pages(bytes);
  m->host = host;
  int r = drm.amdgpu_create_bo_from_user_mem(d->node.dev, host, m->bytes, &m->bo);
  if (r != 0) {
    free(m);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: a userptr object over %llu bytes: %s",
                         d->name, (unsigned long long)bytes, strerror(-r));
  }
  r = place(d, m, err);
  if (r != RIG_EDGE_OK) {
    mem_free(d, m);
    return r;
  }
  describe(m, out);
  return RIG_EDGE_OK;
}
