/* SPDX-License-Identifier: MIT */
/* context.c: one CUDA context per physical GPU, shared by every open of it
 * (cuda:0, cuda:0,stream=1, ...), and the host ranges registered on it.
 *
 * The context is the GPU's primary context (cuDevicePrimaryCtxRetain), the
 * one the CUDA runtime and other libraries of the process use too, so that
 * memory and code pass between them and rig. The gpu record is listed while
 * any open holds it. A child of fork finds the parent's records: the fork
 * hook marks them lost (gpu_forked), no call into CUDA is made for them,
 * and library.c refuses CUDA to a child of a process that initialised it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_private.h"

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static gpu *gpus; /* open_lock */

void gpu_lock_opens(bool lock) {
  if (lock)
    pthread_mutex_lock(&open_lock);
  else
    pthread_mutex_unlock(&open_lock);
}

CUresult gpu_bind(const gpu *g) {
  if (library_in_child())
    return CUDA_ERROR_NOT_INITIALIZED; /* the parent's context */
  return cu.CtxSetCurrent(g->ctx);
}

void gpu_forked(void) {
  library_forked();
  for (gpu *g = gpus; g; g = g->next) {
    snprintf(g->lost_why, sizeof g->lost_why, "forked: its CUDA context is the parent's");
    __atomic_store_n(&g->lost, LOST_SET, __ATOMIC_RELEASE);
  }
}

static int attr(const gpu *g, CUdevice_attribute a) {
  int v = 0;
  if (cu.DeviceGetAttribute(&v, a, g->dev) != CUDA_SUCCESS)
    return 0;
  return v;
}

/* The bus as rig states it (PROP-24), "DDDD:BB:DD.F" in lower case, from
 * cuDeviceGetPCIBusId, which writes the domain with 4 or 8 digits. */
static void read_bus(gpu *g) {
  char raw[64] = "";
  unsigned dom, bus, dev, fn;
  if (cu.DeviceGetPCIBusId(raw, (int)sizeof raw, g->dev) == CUDA_SUCCESS &&
      sscanf(raw, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4 && dom <= 0xffff && bus <= 0xff &&
      dev <= 0x1f && fn <= 7)
    snprintf(g->bus, sizeof g->bus, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
  else
    g->bus[0] = '\0';
}

static int read_facts(gpu *g, rig_edge_error *err) {
  size_t total = 0;
  char why[160];
  CUresult r = cu.DeviceGetName(g->name, (int)sizeof g->name, g->dev);
  if (r == CUDA_SUCCESS)
    r = cu.DeviceTotalMem(&total, g->dev);
  if (r == CUDA_SUCCESS)
    r = cu.DriverGetVersion(&g->driver_version);
  if (r != CUDA_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "cuda:%d: %s", g->ordinal,
                         library_error(r, why, sizeof why));
  g->memory = total;
  g->cc_major = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  g->cc_minor = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  snprintf(g->arch, sizeof g->arch, "sm_%d%d", g->cc_major, g->cc_minor); /* PROP-12 */
  g->l2 = (uint64_t)attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  g->sms = attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  g->max_threads = attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  g->max_shared = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  for (int a = 0; a < 3; a++) {
    g->max_block[a] = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + a);
    g->max_grid[a] = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + a);
  }
  g->mem_ops64 = cu.StreamWriteValue64 && cu.StreamWaitValue64 &&
                 attr(g, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) &&
                 attr(g, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  read_bus(g);
  if (!attr(g, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "cuda:%d: %s has no unified addressing, which rig needs", g->ordinal,
                         g->name);
  return RIG_EDGE_OK;
}

/* A new record of ordinal: its device, retained primary context, facts. */
static gpu *gpu_make(int ordinal, rig_edge_error *err) {
  char why[160];
  gpu *g = calloc(1, sizeof *g);
  if (!g) {
    rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "cuda:%d: out of memory", ordinal);
    return NULL;
  }
  g->ordinal = ordinal;
  CUresult r = cu.DeviceGet(&g->dev, ordinal);
  if (r == CUDA_SUCCESS && (r = cu.DevicePrimaryCtxRetain(&g->ctx, g->dev)) != CUDA_SUCCESS)
    g->ctx = NULL;
  int fr = r == CUDA_SUCCESS ? read_facts(g, err) : RIG_EDGE_UNAVAILABLE;
  if (r != CUDA_SUCCESS)
    rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "cuda:%d: %s", ordinal,
                  library_error(r, why, sizeof why));
  if (fr != RIG_EDGE_OK) {
    if (g->ctx)
      cu.DevicePrimaryCtxRelease(g->dev);
    free(g);
    return NULL;
  }
  g->refs = 1;
  return g;
}

int gpu_count(uint32_t *n, rig_edge_error *err) {
  int count = 0;
  pthread_mutex_lock(&open_lock);
  int r = library_load(err);
  if (r == RIG_EDGE_OK && cu.DeviceGetCount(&count) != CUDA_SUCCESS)
    r = rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "cuda: no device: cuDeviceGetCount failed");
  pthread_mutex_unlock(&open_lock);
  *n = r == RIG_EDGE_OK && count > 0 ? (uint32_t)count : 0;
  return r;
}

gpu *gpu_get(int ordinal, rig_edge_error *err) {
  pthread_mutex_lock(&open_lock);
  gpu *g = NULL;
  if (library_load(err) == RIG_EDGE_OK) {
    for (g = gpus; g; g = g->next)
      if (g->ordinal == ordinal && !loss_is_lost(g)) /* a lost one is done */
        break;
    if (g)
      g->refs++;
    else if ((g = gpu_make(ordinal, err)) != NULL) {
      g->next = gpus;
      gpus = g;
    }
  }
  pthread_mutex_unlock(&open_lock);
  return g;
}

void gpu_put(gpu *g) {
  if (!g)
    return;
  pthread_mutex_lock(&open_lock);
  bool last = --g->refs == 0;
  if (last)
    for (gpu **p = &gpus; *p; p = &(*p)->next)
      if (*p == g) {
        *p = g->next;
        break;
      }
  pthread_mutex_unlock(&open_lock);
  if (!last)
    return;
  if (library_in_child()) { /* the parent's context: nothing to call */
    free(g);
    return;
  }
  /* A lost context may still run a kernel that never ends: a reset ends
   * it and frees what is left on it. */
  if (loss_is_lost(g))
    cu.DevicePrimaryCtxReset(g->dev);
  cu.DevicePrimaryCtxRelease(g->dev);
  free(g);
}

/* ---- registrations ------------------------------------------------------------ */

/* Registrations are the process's, not a context's: they are made
 * PORTABLE, so every context maps them, and CUDA refuses a second
 * registration of a page whichever context asks. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static registration *regs; /* reg_lock */

static registration *reg_find(uintptr_t base, size_t bytes) {
  for (registration *r = regs; r; r = r->next)
    if (r->base <= base && base + bytes <= r->base + r->bytes)
      return r;
  return NULL;
}

static int reg_new(uintptr_t base, size_t bytes, registration **out, const char *who,
                   rig_edge_error *err) {
  char why[160];
  registration *r = calloc(1, sizeof *r);
  if (!r)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", who);
  CUresult cr = cu.MemHostRegister((void *)base, bytes,
                                   CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (cr != CUDA_SUCCESS) {
    free(r);
    /* A page another registration holds in part (CUDA registers whole
     * pages), say the user's own: the mapping cannot be made, and
     * nothing is lost. */
    int code = cr == CUDA_ERROR_OUT_OF_MEMORY ? RIG_EDGE_NO_ROOM : RIG_EDGE_UNSUPPORTED;
    return rig_edge_fail(err, code, "%s: cuMemHostRegister of %zu bytes at %p: %s", who, bytes,
                         (void *)base, library_error(cr, why, sizeof why));
  }
  r->base = base;
  r->bytes = bytes;
  r->refs = 1;
  r->next = regs;
  regs = r;
  *out = r;
  return RIG_EDGE_OK;
}

int registration_get(void *host, size_t bytes, registration **out, const char *who,
                     rig_edge_error *err) {
  uintptr_t base = (uintptr_t)host;
  pthread_mutex_lock(&reg_lock);
  registration *r = reg_find(base, bytes);
  int rc = RIG_EDGE_OK;
  if (r)
    r->refs++;
  else
    rc = reg_new(base, bytes, &r, who, err);
  pthread_mutex_unlock(&reg_lock);
  if (rc == RIG_EDGE_OK)
    *out = r;
  return rc;
}

void registration_put(registration *r) {
  pthread_mutex_lock(&reg_lock);
  bool last = --r->refs == 0;
  if (last) {
    for (registration **p = &regs; *p; p = &(*p)->next)
      if (*p == r) {
        *p = r->next;
        break;
      }
    if (!library_in_child()) /* the parent's pages */
      cu.MemHostUnregister((void *)r->base);
  }
  pthread_mutex_unlock(&reg_lock);
  if (last)
    free(r);
}
