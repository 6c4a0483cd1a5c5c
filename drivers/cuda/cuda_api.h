/* SPDX-License-Identifier: MIT */
/* cuda_api.h: the part of NVIDIA's CUDA Driver API the CUDA driver uses,
 * written from the Driver API reference (docs.nvidia.com/cuda/cuda-driver-api)
 * so that the plugin builds where no CUDA toolkit is installed. Only the
 * types, constants and function types the driver calls are here; every
 * function is taken from libcuda.so.1 at run time (library.c), never linked.
 *
 * The names are the reference's, with a `cu_` prefix on function types
 * (cu_MemAlloc is the type of cuMemAlloc). A build test (test_cuda_api.c)
 * checks each value, size and function type against the toolkit's cuda.h
 * where one is installed.
 *
 * Symbols: several functions have versioned symbols in libcuda; the driver
 * takes the ones the reference's current header binds (cuMemAlloc is the
 * symbol cuMemAlloc_v2), named in library.c's table.
 */
#ifndef RIG_CUDA_API_H
#define RIG_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* ---- types --------------------------------------------------------------- */

/* The reference's enum types are held as unsigned int, the type a C
 * compiler gives an enum of no negative value (what the build test checks
 * against the toolkit's own enums). */
typedef unsigned int CUresult;        /* enum cudaError_enum */
typedef int CUdevice;                 /* an ordinal */
typedef unsigned long long CUdeviceptr; /* a device address (64-bit builds) */
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef unsigned int CUdevice_attribute;   /* enum CUdevice_attribute_enum */
typedef unsigned int CUjit_option;         /* enum CUjit_option_enum */
typedef unsigned int CUfunction_attribute; /* enum CUfunction_attribute_enum */
typedef void (*CUhostFn)(void *user_data);

/* ---- results (CUresult) -------------------------------------------------- */

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
};

/* ---- device attributes (CUdevice_attribute) ------------------------------ */

enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
  /* 64-bit cuStreamWriteValue64/cuStreamWaitValue64 (the v2 memory
   * operations of CUDA 12 and later; older drivers refuse the attribute) */
  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
};

enum { CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0 };

/* ---- flags ----------------------------------------------------------------- */

enum { CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_STREAM_WAIT_VALUE_GEQ = 0x0 };      /* (int64_t)(*addr - value) >= 0 */
enum { CU_STREAM_WRITE_VALUE_DEFAULT = 0x0 }; /* fenced after earlier work */
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02

enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

/* cuLaunchKernel's `extra`: the parameters as one buffer. */
#define CU_LAUNCH_PARAM_END ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)

/* ---- functions --------------------------------------------------------------- */

typedef CUresult (*cu_Init)(unsigned int flags);
typedef CUresult (*cu_DriverGetVersion)(int *version);
typedef CUresult (*cu_GetErrorName)(CUresult error, const char **name);
typedef CUresult (*cu_GetErrorString)(CUresult error, const char **text);
typedef CUresult (*cu_DeviceGetCount)(int *count);
typedef CUresult (*cu_DeviceGet)(CUdevice *device, int ordinal);
typedef CUresult (*cu_DeviceGetName)(char *name, int len, CUdevice dev);
typedef CUresult (*cu_DeviceGetAttribute)(int *value, CUdevice_attribute attrib, CUdevice dev);
typedef CUresult (*cu_DeviceTotalMem)(size_t *bytes, CUdevice dev);
typedef CUresult (*cu_DeviceGetPCIBusId)(char *bus_id, int len, CUdevice dev);
typedef CUresult (*cu_DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
typedef CUresult (*cu_DevicePrimaryCtxRelease)(CUdevice dev);
typedef CUresult (*cu_DevicePrimaryCtxReset)(CUdevice dev);
typedef CUresult (*cu_CtxSetCurrent)(CUcontext ctx);
typedef CUresult (*cu_StreamCreate)(CUstream *stream, unsigned int flags);
typedef CUresult (*cu_StreamDestroy)(CUstream stream);
typedef CUresult (*cu_StreamQuery)(CUstream stream);
typedef CUresult (*cu_StreamSynchronize)(CUstream stream);
typedef CUresult (*cu_StreamWriteValue64)(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                          unsigned int flags);
typedef CUresult (*cu_StreamWaitValue64)(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                         unsigned int flags);
typedef CUresult (*cu_LaunchHostFunc)(CUstream stream, CUhostFn fn, void *user_data);
typedef CUresult (*cu_MemAlloc)(CUdeviceptr *dptr, size_t bytes);
typedef CUresult (*cu_MemFree)(CUdeviceptr dptr);
typedef CUresult (*cu_MemHostAlloc)(void **pp, size_t bytes, unsigned int flags);
typedef CUresult (*cu_MemFreeHost)(void *p);
typedef CUresult (*cu_MemHostGetDevicePointer)(CUdeviceptr *dptr, void *p, unsigned int flags);
typedef CUresult (*cu_MemHostRegister)(void *p, size_t bytes, unsigned int flags);
typedef CUresult (*cu_MemHostUnregister)(void *p);
typedef CUresult (*cu_MemcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*cu_MemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t n,
                                     CUstream stream);
typedef CUresult (*cu_MemsetD16Async)(CUdeviceptr dst, unsigned short value, size_t n,
                                      CUstream stream);
typedef CUresult (*cu_MemsetD32Async)(CUdeviceptr dst, unsigned int value, size_t n,
                                      CUstream stream);
typedef CUresult (*cu_MemsetD2D8Async)(CUdeviceptr dst, size_t pitch, unsigned char value,
                                       size_t width, size_t height, CUstream stream);
typedef CUresult (*cu_ModuleLoadDataEx)(CUmodule *module, const void *image,
                                        unsigned int noptions, CUjit_option *options,
                                        void **values);
typedef CUresult (*cu_ModuleUnload)(CUmodule module);
typedef CUresult (*cu_ModuleGetFunction)(CUfunction *fn, CUmodule module, const char *name);
typedef CUresult (*cu_FuncGetAttribute)(int *value, CUfunction_attribute attrib, CUfunction fn);
typedef CUresult (*cu_LaunchKernel)(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                                    unsigned int grid_z, unsigned int block_x,
                                    unsigned int block_y, unsigned int block_z,
                                    unsigned int shared_bytes, CUstream stream, void **params,
                                    void **extra);
/* The benchmark's side (bench/cuda.c) and the tests' */
typedef CUresult (*cu_EventCreate)(CUevent *event, unsigned int flags);
typedef CUresult (*cu_EventDestroy)(CUevent event);
typedef CUresult (*cu_EventRecord)(CUevent event, CUstream stream);
typedef CUresult (*cu_StreamWaitEvent)(CUstream stream, CUevent event, unsigned int flags);
/* Profiles (profile.c): events around each part */
typedef CUresult (*cu_EventQuery)(CUevent event);
typedef CUresult (*cu_EventSynchronize)(CUevent event);
typedef CUresult (*cu_EventElapsedTime)(float *ms, CUevent start, CUevent end);
typedef CUresult (*cu_MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*cu_MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);

enum { CU_EVENT_DISABLE_TIMING = 0x2 };

#endif
