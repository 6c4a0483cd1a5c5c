/* SPDX-License-Identifier: MIT */
/* spirv_layout.h: what a SPIR-V module asks of the pipeline that runs it:
 * its descriptor bindings, its push-constant block, its specialization
 * constants, the built-ins rig must know of (gl_NumWorkGroups) and the
 * bytes of its shared (Workgroup) memory.
 *
 * Private to drivers/vulkan (and test_spirv_reader.c). Like
 * spirv_reader.h it knows no Vulkan and allocates nothing, and any words
 * at all give an answer, never a read past the module: the caller has
 * passed the module through rvk_spirv_check first.
 */
#ifndef RIG_VULKAN_SPIRV_LAYOUT_H
#define RIG_VULKAN_SPIRV_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define RVK_SPIRV_MAX_BINDINGS 32u /* Vulkan's least maxPushDescriptors */
#define RVK_SPIRV_MAX_SPECS 32u

enum { RVK_BIND_STORAGE = 1, RVK_BIND_UNIFORM = 2 };

/* One buffer the module binds: set, binding, kind, its variable's id. */
typedef struct rvk_spirv_binding {
  uint32_t set, binding, kind, var;
} rvk_spirv_binding;

/* A specialization constant: its SpecId, its id, its type and default.
 * kind: 'b' bool, 'i' signed, 'u' unsigned, 'f' float; width in bits. */
typedef struct rvk_spirv_spec {
  uint32_t spec_id, id;
  char kind;
  uint32_t width;
  uint64_t def;
} rvk_spirv_spec;

typedef struct rvk_spirv_layout {
  uint32_t nbind;
  rvk_spirv_binding bind[RVK_SPIRV_MAX_BINDINGS]; /* in (set, binding) order */
  uint32_t push_bytes; /* the push-constant block's end, 0 where none */
  uint32_t nspec;
  rvk_spirv_spec spec[RVK_SPIRV_MAX_SPECS];
  bool num_groups; /* decorates the NumWorkgroups built-in */
  bool shared_fixed; /* Workgroup memory sized by constants alone */
  uint64_t shared_bytes; /* its bytes, where fixed */
} rvk_spirv_layout;

/* Reads what the module asks of a pipeline into *out. Returns 0, or -1
 * for what rig cannot run, with the reason naming it in why (an image, a
 * sampler, a set other than 0, an array of buffers, too many bindings or
 * specialization constants, a push-constant block whose size it cannot
 * read). */
int rvk_spirv_read_layout(const uint32_t *w, size_t n, rvk_spirv_layout *out, char *why,
                          size_t whyn);

/* A specialization constant's value: by SpecId, for rvk_spirv_shared. */
typedef struct rvk_spirv_value {
  uint32_t spec_id;
  uint64_t value;
} rvk_spirv_value;

/* The bytes of the module's Workgroup variables with the specialization
 * constants vals gives (the rest at their defaults). Returns 0 with
 * *out set, or -1 where a size is an expression it does not evaluate,
 * with why naming it. */
int rvk_spirv_shared(const uint32_t *w, size_t n, const rvk_spirv_value *vals, uint32_t nvals,
                     uint64_t *out, char *why, size_t whyn);

#pragma GCC visibility pop

#endif
