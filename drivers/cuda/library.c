/* SPDX-License-Identifier: MIT */
/* library.c: libcuda.so.1, opened with dlopen at the first open of a cuda
 * device, and every entry point the driver calls taken from it with dlsym,
 * so that nothing links libcuda and a machine without it builds and runs
 * everything else ("no library").
 *
 * RIG_CUDA_LIBRARY, where set (and the program is not setuid), names the
 * library to open instead: the tests point it at the toolkit's stub
 * libcuda.so, whose cuInit says CUDA_ERROR_STUB_LIBRARY ("no device").
 */
#define _GNU_SOURCE /* secure_getenv */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_private.h"

cuda_fns cu;

static bool tried; /* these four: under the open lock (context.c) */
static int load_result;
static char load_why[RIG_EDGE_MESSAGE_BYTES];
static pid_t init_pid;
static bool called_init;       /* cuInit was called, whatever it said */
static pid_t forked_from;      /* a child of fork: the parent that called it */

/* Each entry point: its place in cu, the symbol the reference's current
 * header binds its name to, and whether the driver works without it. */
typedef struct symbol {
  size_t offset;
  const char *name;
  bool optional;
} symbol;

#define S(field, sym) {offsetof(cuda_fns, field), sym, false}
#define OPT(field, sym) {offsetof(cuda_fns, field), sym, true}
static const symbol symbols[] = {
    S(Init, "cuInit"),
    S(DriverGetVersion, "cuDriverGetVersion"),
    S(GetErrorName, "cuGetErrorName"),
    S(GetErrorString, "cuGetErrorString"),
    S(DeviceGetCount, "cuDeviceGetCount"),
    S(DeviceGet, "cuDeviceGet"),
    S(DeviceGetName, "cuDeviceGetName"),
    S(DeviceGetAttribute, "cuDeviceGetAttribute"),
    S(DeviceTotalMem, "cuDeviceTotalMem_v2"),
    S(DeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
    S(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    S(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    S(DevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2"),
    S(CtxSetCurrent, "cuCtxSetCurrent"),
    S(StreamCreate, "cuStreamCreate"),
    S(StreamDestroy, "cuStreamDestroy_v2"),
    S(StreamQuery, "cuStreamQuery"),
    S(StreamSynchronize, "cuStreamSynchronize"),
    OPT(StreamWriteValue64, "cuStreamWriteValue64_v2"),
    OPT(StreamWaitValue64, "cuStreamWaitValue64_v2"),
    S(LaunchHostFunc, "cuLaunchHostFunc"),
    S(MemAlloc, "cuMemAlloc_v2"),
    S(MemFree, "cuMemFree_v2"),
    S(MemHostAlloc, "cuMemHostAlloc"),
    S(MemFreeHost, "cuMemFreeHost"),
    S(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
    S(MemHostRegister, "cuMemHostRegister_v2"),
    S(MemHostUnregister, "cuMemHostUnregister"),
    S(MemcpyAsync, "cuMemcpyAsync"),
    S(MemsetD8Async, "cuMemsetD8Async"),
    S(MemsetD16Async, "cuMemsetD16Async"),
    S(MemsetD32Async, "cuMemsetD32Async"),
    S(MemsetD2D8Async, "cuMemsetD2D8Async"),
    S(ModuleLoadDataEx, "cuModuleLoadDataEx"),
    S(ModuleUnload, "cuModuleUnload"),
    S(ModuleGetFunction, "cuModuleGetFunction"),
    S(FuncGetAttribute, "cuFuncGetAttribute"),
    S(LaunchKernel, "cuLaunchKernel"),
    OPT(EventCreate, "cuEventCreate"),
    OPT(EventDestroy, "cuEventDestroy_v2"),
    OPT(EventRecord, "cuEventRecord"),
    OPT(EventQuery, "cuEventQuery"),
    OPT(EventSynchronize, "cuEventSynchronize"),
    OPT(EventElapsedTime, "cuEventElapsedTime_v2"), /* cuda.h binds the name to _v2 */
};
#undef S
#undef OPT

/* Names of the results the driver meets before cuGetErrorName works (the
 * stub library's) or where it does not know one. */
static const char *known_name(CUresult r) {
  switch (r) {
  case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
  case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
  case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
  case CUDA_ERROR_ILLEGAL_ADDRESS: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case CUDA_ERROR_LAUNCH_FAILED: return "CUDA_ERROR_LAUNCH_FAILED";
  default: return NULL;
  }
}

const char *library_error(CUresult r, char *buf, size_t n) {
  const char *name = NULL, *text = NULL;
  bool callable = !library_in_child(); /* a child calls nothing of CUDA */
  if (!callable || !cu.GetErrorName || cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
    name = known_name(r);
  if (!callable || !cu.GetErrorString || cu.GetErrorString(r, &text) != CUDA_SUCCESS)
    text = NULL;
  if (name && text)
    snprintf(buf, n, "%s: %s", name, text);
  else if (name)
    snprintf(buf, n, "%s", name);
  else
    snprintf(buf, n, "CUresult %u", r);
  return buf;
}

pid_t library_pid(void) { return __atomic_load_n(&init_pid, __ATOMIC_ACQUIRE); }

void library_forked(void) {
  if (called_init && !forked_from)
    forked_from = getppid();
}

bool library_in_child(void) { return __atomic_load_n(&forked_from, __ATOMIC_RELAXED) != 0; }

/* dlopen and dlsym of every symbol; "no library" where either fails. The
 * library stays loaded for the process: its memory may outlive any open. */
static int open_library(void) {
  const char *path = secure_getenv("RIG_CUDA_LIBRARY");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(load_why, sizeof load_why, "cuda: no library: %s", e ? e : path);
    return RIG_EDGE_UNAVAILABLE;
  }
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    void *f = dlsym(lib, symbols[i].name);
    if (!f && !symbols[i].optional) {
      snprintf(load_why, sizeof load_why, "cuda: no library: %s has no %s (a driver too old)",
               path, symbols[i].name);
      memset(&cu, 0, sizeof cu);
      return RIG_EDGE_UNAVAILABLE;
    }
    memcpy((char *)&cu + symbols[i].offset, &f, sizeof f);
  }
  return RIG_EDGE_OK;
}

/* cuInit and a device count: "no device" where the library says it has
 * none (the stub library, no GPU or no kernel module). */
static int init_library(void) {
  char why[160];
  called_init = true;
  CUresult r = cu.Init(0);
  int n = 0;
  if (r == CUDA_SUCCESS)
    r = cu.DeviceGetCount(&n);
  if (r != CUDA_SUCCESS) {
    snprintf(load_why, sizeof load_why, "cuda: no device: cuInit: %s",
             library_error(r, why, sizeof why));
    return RIG_EDGE_UNAVAILABLE;
  }
  if (n == 0) {
    snprintf(load_why, sizeof load_why, "cuda: no device: libcuda lists no GPU");
    return RIG_EDGE_UNAVAILABLE;
  }
  __atomic_store_n(&init_pid, getpid(), __ATOMIC_RELEASE);
  return RIG_EDGE_OK;
}

/* A child of fork may not call into the CUDA its parent set up: the fork
 * hook marks it (library_forked), and a child that no hook ran for (a
 * raw clone) still differs in pid from the process that initialised it. */
int library_load(rig_edge_error *err) {
  pid_t parent = forked_from ? forked_from : init_pid && init_pid != getpid() ? init_pid : 0;
  if (parent)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "cuda: this process is a child of fork of process %d, which had "
                         "called cuInit; a forked child cannot use CUDA", (int)parent);
  if (!tried) {
    tried = true;
    load_result = open_library();
    if (load_result == RIG_EDGE_OK)
      load_result = init_library();
  }
  if (load_result != RIG_EDGE_OK)
    return rig_edge_fail(err, load_result, "%s", load_why);
  return RIG_EDGE_OK;
}
