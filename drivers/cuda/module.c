/* SPDX-License-Identifier: MIT */
/* module.c: code on a cuda device, and its launches.
 *
 * An image is PTX text, a cubin (ELF) or a fatbin, loaded with
 * cuModuleLoadDataEx; PTX is compiled there by the driver's JIT, whose
 * error log is the load's Error. A function is a __global__ entry of it by
 * name (extern "C": unmangled).
 *
 * A launch maps rig's groups and threads (LAUNCH-6) onto CUDA's grid and
 * blocks, axis by axis, and passes the parameter block, its refs stored as
 * device addresses, as the kernel's arguments in one buffer
 * (CU_LAUNCH_PARAM_BUFFER_POINTER): a kernel taking one struct by value
 * finds the block in it. CUDA takes at most 4 KiB of parameters on every
 * GPU: a larger block goes through the driver's buffer (params.c), and
 * the kernel's one argument is the block's device address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_private.h"

#define LOG_BYTES 4096

typedef struct cufunc {
  struct cufunc *next;
  CUfunction fn;
  int max_threads;           /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK */
  char name[];
} cufunc;

typedef struct cuimage {
  struct cuimage *prev, *next;
  CUmodule module;
  cufunc *funcs;
} cuimage;

/* PTX is text that the JIT reads up to its NUL; a cubin is ELF and a
 * fatbin starts with its magic: those go as they are. */
static bool is_binary(const void *bytes, size_t n) {
  const unsigned char *b = bytes;
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  static const unsigned char fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  return n >= 4 && (memcmp(b, elf, 4) == 0 || memcmp(b, fatbin, 4) == 0);
}

/* cuModuleLoadDataEx with the JIT's error log, which a failure's message
 * carries (its first line or two: the message holds 256 bytes). */
static CUresult load_module(CUmodule *m, const void *image, char *log) {
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[2] = {log, (void *)(uintptr_t)LOG_BYTES};
  log[0] = '\0';
  return cu.ModuleLoadDataEx(m, image, 2, opts, values);
}

static int load_failed(cudev *d, CUresult r, const char *log, rig_edge_error *err) {
  char why[160];
  library_error(r, why, sizeof why);
  if (r == CUDA_ERROR_OUT_OF_MEMORY || loss_sticky(r))
    return loss_fail(d, err, r, "cuModuleLoadDataEx");
  return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: cuModuleLoadDataEx: %s%s%s", d->name, why,
                       *log ? ": " : "", log);
}

int module_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
                rig_edge_error *err) {
  cudev *d = h;
  int rc = loss_check(d, err);
  if (rc != RIG_EDGE_OK)
    return rc;
  char *text = NULL, *log = malloc(LOG_BYTES);
  cuimage *im = calloc(1, sizeof *im);
  bool binary = is_binary(bytes, n);
  if (!binary && (text = malloc(n + 1)) != NULL) {
    memcpy(text, bytes, n);
    text[n] = '\0';
  }
  if (!log || !im || (!binary && !text)) {
    free(text), free(log), free(im);
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  }
  log[0] = '\0'; /* a failed bind reports the log as it is: empty */
  CUresult r = gpu_bind(d->g);
  if (r == CUDA_SUCCESS)
    r = load_module(&im->module, binary ? bytes : text, log);
  free(text);
  if (r != CUDA_SUCCESS) {
    rc = load_failed(d, r, log, err);
    free(log), free(im);
    return rc;
  }
  free(log);
  pthread_mutex_lock(&d->ilock);
  im->next = d->images;
  if (d->images)
    d->images->prev = im;
  d->images = im;
  pthread_mutex_unlock(&d->ilock);
  *out_image = im;
  *out_code_bytes = n;
  return RIG_EDGE_OK;
}

/* A name the image lacks is no function (None), not an error. The first
 * resolve of the open makes its buffer of large parameter blocks. */
int module_resolve(void *h, void *image, const char *name, void **out_function,
                   rig_edge_error *err) {
  cudev *d = h;
  cuimage *im = image;
  pthread_mutex_lock(&d->ilock);
  int pr = params_make(d, err); /* once: a launch of a large block needs it */
  pthread_mutex_unlock(&d->ilock);
  if (pr != RIG_EDGE_OK)
    return pr;
  size_t len = strlen(name);
  cufunc *f = calloc(1, sizeof *f + len + 1);
  if (!f)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  memcpy(f->name, name, len + 1);
  CUresult r = gpu_bind(d->g);
  if (r == CUDA_SUCCESS)
    r = cu.ModuleGetFunction(&f->fn, im->module, name);
  if (r == CUDA_SUCCESS)
    r = cu.FuncGetAttribute(&f->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f->fn);
  if (r != CUDA_SUCCESS) {
    free(f);
    *out_function = NULL;
    return r == CUDA_ERROR_NOT_FOUND ? RIG_EDGE_OK : loss_fail(d, err, r, "cuModuleGetFunction");
  }
  pthread_mutex_lock(&d->ilock);
  f->next = im->funcs;
  im->funcs = f;
  pthread_mutex_unlock(&d->ilock);
  *out_function = f;
  return RIG_EDGE_OK;
}

static void image_free(cudev *d, cuimage *im) {
  if (!loss_is_lost(d->g) && gpu_bind(d->g) == CUDA_SUCCESS)
    cu.ModuleUnload(im->module);
  while (im->funcs) {
    cufunc *f = im->funcs;
    im->funcs = f->next;
    free(f);
  }
  free(im);
}

int module_unload(void *h, void *image, rig_edge_error *err) {
  cudev *d = h;
  cuimage *im = image;
  (void)err;
  pthread_mutex_lock(&d->ilock);
  if (im->prev)
    im->prev->next = im->next;
  else
    d->images = im->next;
  if (im->next)
    im->next->prev = im->prev;
  pthread_mutex_unlock(&d->ilock);
  image_free(d, im);
  return RIG_EDGE_OK;
}

void module_free_all(cudev *d) {
  while (d->images) {
    cuimage *im = d->images;
    d->images = im->next;
    image_free(d, im);
  }
}

/* ---- launches ------------------------------------------------------------------------ */

static int check_launch(const cudev *d, const rig_edge_part *p, rig_edge_error *err) {
  const cufunc *f = p->u.launch.function;
  const uint64_t *g = p->u.launch.groups, *t = p->u.launch.threads;
  const gpu *gp = d->g;
  if ((int64_t)p->u.launch.shared_bytes > gp->max_shared)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s asks %u bytes of shared memory; "
                         "a block has %d", d->name, f->name, p->u.launch.shared_bytes,
                         gp->max_shared);
  for (int a = 0; a < 3; a++)
    if (g[a] > (uint64_t)gp->max_grid[a] || t[a] > (uint64_t)gp->max_block[a])
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: %s: %llu groups of %llu threads on axis %d; the GPU takes at "
                           "most %d of %d", d->name, f->name, (unsigned long long)g[a],
                           (unsigned long long)t[a], a, gp->max_grid[a], gp->max_block[a]);
  if (t[0] * t[1] * t[2] > (uint64_t)f->max_threads)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s runs at most %d threads a group, "
                         "not %llu", d->name, f->name, f->max_threads,
                         (unsigned long long)(t[0] * t[1] * t[2]));
  return RIG_EDGE_OK;
}

/* VALID-20: work the GPU cannot run is refused before core takes a value. */
int module_check(void *h, const rig_edge_work *work, rig_edge_error *err) {
  const cudev *d = h;
  int pr = params_check(d, work, err);
  if (pr != RIG_EDGE_OK)
    return pr;
  for (uint32_t i = 0; i < work->nparts; i++)
    if (work->parts[i].kind == RIG_EDGE_PART_LAUNCH) {
      int r = check_launch(d, &work->parts[i], err);
      if (r != RIG_EDGE_OK)
        return r;
    }
  return RIG_EDGE_OK;
}

int module_launch(cudev *d, const rig_edge_part *p, rig_edge_error *err) {
  const cufunc *f = p->u.launch.function;
  const uint64_t *g = p->u.launch.groups, *t = p->u.launch.threads;
  if (!g[0] || !g[1] || !g[2] || !t[0] || !t[1] || !t[2])
    return RIG_EDGE_OK; /* no thread: nothing runs */
  size_t bytes = p->u.launch.params_bytes;
  const void *args = p->u.launch.params;
  CUdeviceptr block;
  if (bytes > PARAMS_MAX) { /* the block's device address, in the driver's buffer */
    int rc = params_place(d, p, &block, err);
    if (rc != RIG_EDGE_OK)
      return rc;
    args = &block;
    bytes = sizeof block;
  }
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)args, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &bytes, CU_LAUNCH_PARAM_END};
  CUresult r = cu.LaunchKernel(f->fn, (unsigned)g[0], (unsigned)g[1], (unsigned)g[2],
                               (unsigned)t[0], (unsigned)t[1], (unsigned)t[2],
                               p->u.launch.shared_bytes, d->stream, NULL, bytes ? extra : NULL);
  return r == CUDA_SUCCESS ? RIG_EDGE_OK : loss_fail(d, err, r, "cuLaunchKernel");
}
