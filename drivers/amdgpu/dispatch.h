/* SPDX-License-Identifier: MIT */
/* dispatch.h: what one launch of a kernel needs besides its packets
 * (dispatch.c): the user SGPRs its descriptor asks for, the HSA-layout
 * dispatch packet its code reads the workgroup size from, and its kernel
 * arguments with the hidden ones filled. Needs no device. */
#ifndef RIG_AMDGPU_DISPATCH_H
#define RIG_AMDGPU_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "codeobj.h"
#include "pm4.h"

#define DISPATCH_PACKET_BYTES 64u

/* kernel_code_properties (AMDGPU's kernel descriptor) */
enum {
  KCP_PRIVATE_SEGMENT_BUFFER = 1u << 0, /* 4 SGPRs */
  KCP_DISPATCH_PTR = 1u << 1, /* 2 */
  KCP_QUEUE_PTR = 1u << 2, /* 2 */
  KCP_KERNARG_SEGMENT_PTR = 1u << 3, /* 2 */
  KCP_DISPATCH_ID = 1u << 4, /* 2 */
  KCP_FLAT_SCRATCH_INIT = 1u << 5, /* 2 */
  KCP_PRIVATE_SEGMENT_SIZE = 1u << 6, /* 1 */
  KCP_WAVEFRONT_SIZE32 = 1u << 10,
};

/* One launch's shape and the GPU addresses of what it reads. */
typedef struct launch {
  uint32_t groups[3], threads[3];
  uint32_t shared_bytes; /* dynamic LDS, on top of the kernel's own */
  uint64_t code_base; /* the image's GPU address */
  uint64_t packet; /* the dispatch packet's GPU address */
  uint64_t kernargs; /* the kernel arguments' GPU address */
  uint64_t zeros; /* 64 zero bytes: the queue the code may name */
  uint64_t id; /* the dispatch id */
} launch;

/* Whether k can be dispatched on t: its user SGPRs add up to what RSRC2
 * says, within the 16 user data registers, and its LDS fits. 0, or -1
 * with why (naming the kernel). */
int dispatch_check(const co_kernel *k, const pm4_target *t, uint32_t shared_bytes, char *why,
                   size_t m);
/* The bytes one launch of k takes in the argument ring: the packet, then
 * the arguments, each rounded up to 64. */
uint32_t dispatch_slot_bytes(const co_kernel *k);
/* Writes the dispatch packet (64 bytes) of l into out. */
void dispatch_packet(uint8_t *out, const co_kernel *k, const launch *l);
/* Writes k's kernel arguments into out[0..k->kernarg_bytes): params at 0,
 * the hidden arguments the metadata lists filled from l, the rest zero.
 * -1 with why where params is larger than the kernel's arguments. */
int dispatch_kernargs(uint8_t *out, const co_kernel *k, const void *params, uint32_t params_bytes,
                      const launch *l, char *why, size_t m);
/* The registers of l's dispatch of k (pm4_dispatch_emit's input). */
void dispatch_registers(pm4_dispatch *d, const co_kernel *k, const pm4_target *t, const launch *l);

#endif
