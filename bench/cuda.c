/* cuda.c: benchmark P9 (`rig bench cuda`): rig on an NVIDIA GPU against
 * the CUDA Driver API, measured in the same run, alternating.
 *
 * (a) submit: a prepared submission of one launch of the empty kernel on
 *     cuda:0, taken and submitted once per iteration, vs cuLaunchKernel of
 *     the same kernel plus the cuStreamWriteValue64 of a value that rig's
 *     driver enqueues after every submit (its timeline word). Each round
 *     ends once its last submit is done (rig_point_wait, and
 *     cuStreamSynchronize), so neither side's queue runs ahead. Per submit;
 *     ratio rig / anchor, target <= 1.05.
 * (b) cross-device order: an empty launch on cuda:0, then one on
 *     cuda:0,stream=1 that follows its point (a wait in the second stream
 *     on the first device's word, cuStreamWaitValue64), waited for; vs the
 *     same two launches on two streams of the anchor ordered by
 *     cuEventRecord + cuStreamWaitEvent, waited for with
 *     cuStreamSynchronize. Per chain; ratio rig / anchor, target < 1.
 * (c) bandwidth: rig_buffer_copy of 1 GiB from a host buffer into a cuda:0
 *     buffer and back, vs cuMemcpyHtoD / cuMemcpyDtoH of 1 GiB between
 *     pinned memory (cuMemHostAlloc) and cuMemAlloc'd memory. Ratio of
 *     bandwidths rig / anchor, target >= 0.95.
 *
 * The anchor takes its entry points from libcuda itself (dlopen of
 * $RIG_CUDA_LIBRARY, else libcuda.so.1; nothing links libcuda), with the
 * declarations of drivers/cuda/cuda_api.h, and works in the GPU's primary
 * context, the one rig's driver uses (rig_cuda_device.context). Kernels:
 * empty.ptx from $RIG_CUDA_KERNELS, else the source tree's drivers/cuda/
 * kernels. Where libcuda or cuda:0 is missing it prints "P9 skipped: " and
 * the reason, and returns 0. Prints "P9 ratios: ..." last. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/rig.h>

#include "bench.h"
#include "cuda_api.h"
#include <rig/drivers/rig-cuda.h>

#ifndef RIG_P9_KERNELS
#define RIG_P9_KERNELS "drivers/cuda/kernels"
#endif

#define COPY_BYTES ((size_t)1 << 30)

/* The anchor's entry points. */
typedef struct anchor_fns {
  cu_Init Init;
  cu_GetErrorName GetErrorName;
  cu_CtxSetCurrent CtxSetCurrent;
  cu_StreamCreate StreamCreate;
  cu_StreamDestroy StreamDestroy;
  cu_StreamSynchronize StreamSynchronize;
  cu_StreamWriteValue64 StreamWriteValue64;
  cu_ModuleLoadDataEx ModuleLoadDataEx;
  cu_ModuleUnload ModuleUnload;
  cu_ModuleGetFunction ModuleGetFunction;
  cu_LaunchKernel LaunchKernel;
  cu_EventCreate EventCreate;
  cu_EventDestroy EventDestroy;
  cu_EventRecord EventRecord;
  cu_StreamWaitEvent StreamWaitEvent;
  cu_MemAlloc MemAlloc;
  cu_MemFree MemFree;
  cu_MemHostAlloc MemHostAlloc;
  cu_MemFreeHost MemFreeHost;
  cu_MemHostGetDevicePointer MemHostGetDevicePointer;
  cu_MemcpyHtoD MemcpyHtoD;
  cu_MemcpyDtoH MemcpyDtoH;
} anchor_fns;

/* Each entry point's place and the symbol cuda.h binds its name to (the
 * build test cuda-api-matches-cuda-h checks these against cuda.h). */
#define S(field, sym) {offsetof(anchor_fns, field), sym}
static const struct {
  size_t offset;
  const char *name;
} symbols[] = {
    S(Init, "cuInit"),
    S(GetErrorName, "cuGetErrorName"),
    S(CtxSetCurrent, "cuCtxSetCurrent"),
    S(StreamCreate, "cuStreamCreate"),
    S(StreamDestroy, "cuStreamDestroy_v2"),
    S(StreamSynchronize, "cuStreamSynchronize"),
    S(StreamWriteValue64, "cuStreamWriteValue64_v2"),
    S(ModuleLoadDataEx, "cuModuleLoadDataEx"),
    S(ModuleUnload, "cuModuleUnload"),
    S(ModuleGetFunction, "cuModuleGetFunction"),
    S(LaunchKernel, "cuLaunchKernel"),
    S(EventCreate, "cuEventCreate"),
    S(EventDestroy, "cuEventDestroy_v2"),
    S(EventRecord, "cuEventRecord"),
    S(StreamWaitEvent, "cuStreamWaitEvent"),
    S(MemAlloc, "cuMemAlloc_v2"),
    S(MemFree, "cuMemFree_v2"),
    S(MemHostAlloc, "cuMemHostAlloc"),
    S(MemFreeHost, "cuMemFreeHost"),
    S(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
    S(MemcpyHtoD, "cuMemcpyHtoD_v2"),
    S(MemcpyDtoH, "cuMemcpyDtoH_v2"),
};
#undef S

struct p9 {
  anchor_fns cu;
  /* rig */
  rig_device *a, *b;                 /* cuda:0 and cuda:0,stream=1 */
  rig_image *im_a, *im_b;
  rig_submission *sa, *sb;           /* one empty launch on each */
  rig_buffer *host, *gpu;            /* (c): 1 GiB each */
  /* the anchor, in the same primary context */
  CUcontext ctx;
  CUstream s1, s2;
  CUmodule module;
  CUfunction empty;
  CUevent ev;
  void *word;                        /* pinned: the anchor's stream writes */
  CUdeviceptr word_address;
  uint64_t value;
  void *pinned;                      /* (c): 1 GiB pinned, 1 GiB device */
  CUdeviceptr dev;
  int failed;
};

/* Notes the first failure of a CUDA call. */
static void cu_ok(struct p9 *c, CUresult r, const char *call) {
  if (r == CUDA_SUCCESS || c->failed)
    return;
  const char *name = NULL;
  if (c->cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
    name = "?";
  fprintf(stderr, "bench P9: %s: %s (%u)\n", call, name, r);
  c->failed = 1;
}

static void rig_ok(struct p9 *c, rig_status st, const char *what) {
  if (rig_bench_status(st, what) != RIG_OK)
    c->failed = 1;
}

/* ---- (a) submit ----------------------------------------------------------- */

static rig_point submit_empty(struct p9 *c, rig_submission *s, const rig_point *after) {
  rig_run *r;
  rig_point p = 0;
  if (rig_submission_take(s, &r) || rig_run_groups(r, 0, 1, 1, 1) ||
      rig_run_threads(r, 0, 1, 1, 1) || rig_run_submit(r, NULL, 0, after, after ? 1 : 0, &p))
    c->failed = 1;
  return p;
}

static void a_rig(void *p, uint64_t iters) {
  struct p9 *c = p;
  rig_point last = 0;
  for (uint64_t i = 0; i < iters; i++)
    last = submit_empty(c, c->sa, NULL);
  rig_ok(c, rig_point_wait(last), "P9a: wait");
}

/* The anchor's launch of empty, one group of one thread, on s. */
static void launch_empty(struct p9 *c, CUstream s) {
  cu_ok(c, c->cu.LaunchKernel(c->empty, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), "cuLaunchKernel");
}

static void a_anchor(void *p, uint64_t iters) {
  struct p9 *c = p;
  cu_ok(c, c->cu.CtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  for (uint64_t i = 0; i < iters; i++) {
    launch_empty(c, c->s1);
    cu_ok(c, c->cu.StreamWriteValue64(c->s1, c->word_address, ++c->value,
                                      CU_STREAM_WRITE_VALUE_DEFAULT),
          "cuStreamWriteValue64");
  }
  cu_ok(c, c->cu.StreamSynchronize(c->s1), "cuStreamSynchronize");
}

/* ---- (b) cross-device order ------------------------------------------------- */

static void b_rig(void *p, uint64_t iters) {
  struct p9 *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    rig_point first = submit_empty(c, c->sa, NULL);
    rig_point second = submit_empty(c, c->sb, &first);
    rig_ok(c, rig_point_wait(second), "P9b: wait");
  }
}

static void b_anchor(void *p, uint64_t iters) {
  struct p9 *c = p;
  cu_ok(c, c->cu.CtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  for (uint64_t i = 0; i < iters; i++) {
    launch_empty(c, c->s1);
    cu_ok(c, c->cu.EventRecord(c->ev, c->s1), "cuEventRecord");
    cu_ok(c, c->cu.StreamWaitEvent(c->s2, c->ev, 0), "cuStreamWaitEvent");
    launch_empty(c, c->s2);
    cu_ok(c, c->cu.StreamSynchronize(c->s2), "cuStreamSynchronize");
  }
}

/* ---- (c) bandwidth ------------------------------------------------------------ */

static void c_rig_up(void *p, uint64_t iters) {
  struct p9 *c = p;
  for (uint64_t i = 0; i < iters; i++)
    rig_ok(c, rig_buffer_copy(c->host, c->gpu), "P9c: copy to cuda:0");
}

static void c_rig_down(void *p, uint64_t iters) {
  struct p9 *c = p;
  for (uint64_t i = 0; i < iters; i++)
    rig_ok(c, rig_buffer_copy(c->gpu, c->host), "P9c: copy from cuda:0");
}

static void c_anchor_up(void *p, uint64_t iters) {
  struct p9 *c = p;
  cu_ok(c, c->cu.CtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  for (uint64_t i = 0; i < iters; i++)
    cu_ok(c, c->cu.MemcpyHtoD(c->dev, c->pinned, COPY_BYTES), "cuMemcpyHtoD");
}

static void c_anchor_down(void *p, uint64_t iters) {
  struct p9 *c = p;
  cu_ok(c, c->cu.CtxSetCurrent(c->ctx), "cuCtxSetCurrent");
  for (uint64_t i = 0; i < iters; i++)
    cu_ok(c, c->cu.MemcpyDtoH(c->pinned, c->dev, COPY_BYTES), "cuMemcpyDtoH");
}

/* The time ratio rig_bench_compare prints, turned into bandwidths: one
 * copy per iteration, so bytes / ns per iteration is GB/s. */
static double bandwidth(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                        struct p9 *c) {
  double time_ratio = rig_bench_compare(out, name, rig, anchor, c, 1, 5);
  double ratio = time_ratio > 0 ? 1 / time_ratio : 0;
  fprintf(out, "%-44s bandwidth rig / anchor %.3f (target >= 0.95)\n", name, ratio);
  return ratio;
}

/* ---- setup ------------------------------------------------------------------------ */

/* libcuda's entry points, or a reason in why. */
static int load_anchor(anchor_fns *fns, char *why, size_t n) {
  const char *path = getenv("RIG_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, n, "no library: %s", e ? e : path);
    return -1;
  }
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    void *f = dlsym(lib, symbols[i].name);
    if (!f) {
      snprintf(why, n, "%s has no %s (a driver older than CUDA 12)", path, symbols[i].name);
      return -1;
    }
    memcpy((char *)fns + symbols[i].offset, &f, sizeof f);
  }
  return 0;
}

/* empty.ptx, NUL-terminated (the JIT reads PTX up to its NUL); NULL where
 * it is not found. */
static char *empty_ptx(size_t *n) {
  char path[512];
  const char *dir = getenv("RIG_CUDA_KERNELS");
  snprintf(path, sizeof path, "%s/empty.ptx", dir && *dir ? dir : RIG_P9_KERNELS);
  char *b = rig_bench_read_file(path, n);
  char *text = b ? malloc(*n + 1) : NULL;
  if (text) {
    memcpy(text, b, *n);
    text[*n] = '\0';
  }
  free(b);
  return text;
}

/* One launch of empty on d, prepared. */
static int rig_side(rig_device *d, const char *ptx, size_t n, rig_image **im,
                    rig_submission **s) {
  rig_function *f = NULL;
  if (rig_image_load(d, ptx, n, im) != RIG_OK || rig_image_resolve(*im, "empty", &f) != RIG_OK ||
      !f)
    return -1;
  rig_part launch = rig_part_launch(f, NULL, 0, 0);
  return rig_submission_make(d, &launch, 1, s) == RIG_OK ? 0 : -1;
}

static int anchor_side(struct p9 *c, const char *ptx) {
  anchor_fns *cu = &c->cu;
  CUresult r = cu->CtxSetCurrent(c->ctx);
  if (r == CUDA_SUCCESS)
    r = cu->StreamCreate(&c->s1, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS)
    r = cu->StreamCreate(&c->s2, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS)
    r = cu->ModuleLoadDataEx(&c->module, ptx, 0, NULL, NULL);
  if (r == CUDA_SUCCESS)
    r = cu->ModuleGetFunction(&c->empty, c->module, "empty");
  if (r == CUDA_SUCCESS)
    r = cu->EventCreate(&c->ev, CU_EVENT_DISABLE_TIMING);
  if (r == CUDA_SUCCESS)
    r = cu->MemHostAlloc(&c->word, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == CUDA_SUCCESS)
    r = cu->MemHostGetDevicePointer(&c->word_address, c->word, 0);
  cu_ok(c, r, "the anchor's setup");
  return r == CUDA_SUCCESS ? 0 : -1;
}

/* (c)'s memory: 1 GiB on each side, written once so that no page is
 * first touched inside a measured copy. */
static int copy_side(struct p9 *c) {
  if (rig_buffer_create(rig_device_host(), COPY_BYTES, &c->host) != RIG_OK ||
      rig_buffer_create(c->a, COPY_BYTES, &c->gpu) != RIG_OK ||
      rig_buffer_fill(c->host, 0x5a, 1) != RIG_OK || rig_buffer_fill(c->gpu, 0, 1) != RIG_OK)
    return rig_bench_status(rig_error_last()->status, "P9c: 1 GiB buffers"), -1;
  CUresult r = c->cu.CtxSetCurrent(c->ctx);
  if (r == CUDA_SUCCESS)
    r = c->cu.MemHostAlloc(&c->pinned, COPY_BYTES, 0);
  if (r == CUDA_SUCCESS) {
    memset(c->pinned, 0x5a, COPY_BYTES);
    r = c->cu.MemAlloc(&c->dev, COPY_BYTES);
  }
  cu_ok(c, r, "P9c: the anchor's 1 GiB");
  return r == CUDA_SUCCESS ? 0 : -1;
}

static void teardown(struct p9 *c) {
  rig_buffer_release(c->host);
  rig_buffer_release(c->gpu);
  rig_submission_release(c->sa);
  rig_submission_release(c->sb);
  rig_image_release(c->im_a);
  rig_image_release(c->im_b);
  if (c->ctx && c->cu.CtxSetCurrent(c->ctx) == CUDA_SUCCESS) {
    if (c->s1)
      c->cu.StreamSynchronize(c->s1), c->cu.StreamDestroy(c->s1);
    if (c->s2)
      c->cu.StreamSynchronize(c->s2), c->cu.StreamDestroy(c->s2);
    if (c->ev)
      c->cu.EventDestroy(c->ev);
    if (c->module)
      c->cu.ModuleUnload(c->module);
    if (c->word)
      c->cu.MemFreeHost(c->word);
    if (c->pinned)
      c->cu.MemFreeHost(c->pinned);
    if (c->dev)
      c->cu.MemFree(c->dev);
  }
  rig_device *devs[2] = {c->b, c->a};
  for (int i = 0; i < 2; i++)
    if (devs[i]) {
      rig_bench_status(rig_device_close(devs[i]), "P9: close");
      rig_device_release(devs[i]);
    }
}

/* Opens cuda:0 and cuda:0,stream=1; a reason in why where they do not. */
static int open_devices(struct p9 *c, char *why, size_t n) {
  const char *names[2] = {"cuda:0", "cuda:0,stream=1"};
  rig_device **out[2] = {&c->a, &c->b};
  for (int i = 0; i < 2; i++)
    if (rig_device_open(names[i], out[i]) != RIG_OK) {
      snprintf(why, n, "%s: %s", names[i], rig_error_last()->message);
      return -1;
    }
  const rig_cuda_device *rec = rig_device_capability(c->a, RIG_CUDA_DEVICE);
  if (!rec) {
    snprintf(why, n, "cuda:0 has no %s record", RIG_CUDA_DEVICE);
    return -1;
  }
  if (!rec->stream_mem_ops) {
    snprintf(why, n, "%s has no 64-bit stream memory operations: rig's driver stores its "
             "values with host functions there, which the anchor does not mirror", rec->name);
    return -1;
  }
  c->ctx = rec->context;
  return 0;
}

static void measure(FILE *out, struct p9 *c) {
  double a = rig_bench_compare(out, "P9a submit empty kernel (cuda:0)", a_rig, a_anchor, c,
                               20000, 7);
  double b = rig_bench_compare(out, "P9b cross-device order (cuda:0 -> stream=1)", b_rig,
                               b_anchor, c, 2000, 7);
  double up = bandwidth(out, "P9c copy 1 GiB host -> cuda:0", c_rig_up, c_anchor_up, c);
  double down = bandwidth(out, "P9c copy 1 GiB cuda:0 -> host", c_rig_down, c_anchor_down, c);
  fprintf(out, "P9 ratios: (a) submit %.3f (target <= 1.05)  (b) order %.3f (target < 1)  "
               "(c) host->device %.3f, device->host %.3f (target >= 0.95)%s\n",
          a, b, up, down, c->failed ? "  [a call failed: see above]" : "");
}

int rig_bench_cuda(FILE *out) {
  struct p9 c = {0};
  char why[RIG_MESSAGE_BYTES + 64];
  size_t n = 0;
  char *ptx = NULL;
  if (load_anchor(&c.cu, why, sizeof why) != 0 || open_devices(&c, why, sizeof why) != 0) {
    fprintf(out, "P9 skipped: %s\n", why);
    teardown(&c);
    return 0;
  }
  if (!(ptx = empty_ptx(&n))) {
    fprintf(out, "P9 skipped: no empty.ptx (set RIG_CUDA_KERNELS to drivers/cuda/kernels)\n");
    teardown(&c);
    return 0;
  }
  int setup = rig_side(c.a, ptx, n, &c.im_a, &c.sa) || rig_side(c.b, ptx, n, &c.im_b, &c.sb);
  if (setup)
    fprintf(out, "bench P9: %s\n", rig_error_last()->message);
  setup = setup || anchor_side(&c, ptx) || copy_side(&c);
  free(ptx);
  if (!setup)
    measure(out, &c);
  int failed = setup || c.failed;
  teardown(&c);
  return failed;
}
