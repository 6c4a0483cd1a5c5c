/* SPDX-License-Identifier: MIT */
/* spirv_reader.h: the Vulkan driver's reader of SPIR-V modules.
 *
 * Private to drivers/vulkan (and its unit test, test_spirv_reader.c). It
 * knows no Vulkan and allocates nothing: it reads a module's words in the
 * host's byte order, checks what load needs of them, and finds a compute
 * entry point and its group size for resolve. Its opcode and enum numbers
 * are the SPIR-V headers' (<spirv/unified1/spirv.h>). Any words at all,
 * however corrupt, give a status, never a read past the module.
 */
#ifndef RIG_VULKAN_SPIRV_READER_H
#define RIG_VULKAN_SPIRV_READER_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef enum rvk_spirv_status {
  RVK_SPIRV_OK,
  RVK_SPIRV_SHORT,           /* fewer words than the header's 5 */
  RVK_SPIRV_BYTE_ORDER,      /* the magic in the other byte order */
  RVK_SPIRV_MAGIC,           /* the first word is not the magic */
  RVK_SPIRV_OVERRUN,         /* an instruction of no words, or past the module's end */
  RVK_SPIRV_REFUSED,         /* a capability the caller refuses */
  RVK_SPIRV_NO_MEMORY_MODEL, /* no OpMemoryModel */
  RVK_SPIRV_NO_ENTRY_POINT,  /* no OpEntryPoint */
} rvk_spirv_status;

/* Where a check stopped: the instruction's first word (OVERRUN, REFUSED),
 * the capability refused and what the caller named for it (REFUSED). */
typedef struct rvk_spirv_fault {
  size_t word;
  uint32_t capability;
  const char *feature;
} rvk_spirv_fault;

/* What the caller lacks for a capability the module declares (a name,
 * e.g. a device feature's), or NULL where it takes it. */
typedef const char *(*rvk_spirv_refuse_fn)(const void *ctx, uint32_t capability);

/* Checks n words: the header, instructions that tile the words, every
 * OpCapability past refuse (NULL: all pass), an OpMemoryModel and an
 * OpEntryPoint. Returns the status of the first fault met, in the words'
 * order, with *fault saying where (fault may be NULL). Reads only w[0..n). */
rvk_spirv_status rvk_spirv_check(const uint32_t *w, size_t n, rvk_spirv_refuse_fn refuse,
                                 const void *ctx, rvk_spirv_fault *fault);

/* The driver's message for a status other than OK and REFUSED (whose
 * message names the device), written into why; returns why. */
const char *rvk_spirv_why(rvk_spirv_status s, const rvk_spirv_fault *fault, char *why,
                          size_t whyn);

/* A compute entry point's group: per axis a SpecId (UINT32_MAX where the
 * axis does not specialize) and, where it does not, its fixed size. */
typedef struct rvk_spirv_group {
  uint32_t fixed[3];
  uint32_t spec[3];
} rvk_spirv_group;

/* Finds the OpEntryPoint GLCompute called name and its group's axes: the
 * WorkgroupSize built-in where the module decorates one (it overrides the
 * rest), else its LocalSizeId, else its LocalSize. Returns 1 found (*g
 * set), 0 no such entry point, -1 an entry whose group size it cannot read
 * (no size, or one of constants it does not find). Stops at a malformed
 * instruction, as at the module's end. */
int rvk_spirv_entry(const uint32_t *w, size_t n, const char *name, rvk_spirv_group *g);

#pragma GCC visibility pop

#endif
