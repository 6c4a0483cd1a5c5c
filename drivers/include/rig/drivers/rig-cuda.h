/* SPDX-License-Identifier: MIT */
/* rig-cuda.h: what the CUDA driver registers for rig_device_capability
 * (PROP-39). Programs, tests and the benchmark include it. */
#ifndef RIG_CUDA_H
#define RIG_CUDA_H

#include <stdint.h>

/* rig_device_capability(d, RIG_CUDA_DEVICE): the GPU behind a cuda:N
 * device. context and stream are the CUcontext (the device's primary
 * context, shared by every open of the GPU) and the open's own CUstream,
 * for programs that mix their own Driver API calls with rig's; they stay
 * valid until the device is closed. */
#define RIG_CUDA_DEVICE "cuda.device"
typedef struct rig_cuda_device {
  uint32_t size;             /* sizeof(rig_cuda_device) */
  int32_t ordinal;           /* N of cuda:N */
  char name[128];            /* cuDeviceGetName */
  uint64_t memory_bytes;     /* cuDeviceTotalMem */
  int32_t sm_count;          /* multiprocessors */
  int32_t cc_major, cc_minor;  /* compute capability */
  int32_t driver_version;    /* cuDriverGetVersion: 12040 is 12.4 */
  int32_t stream_mem_ops;    /* 1: the timeline word and queue waits use
                                64-bit stream memory operations */
  void *context;             /* CUcontext */
  void *stream;              /* CUstream */
} rig_cuda_device;

#endif
