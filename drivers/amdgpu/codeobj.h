/* SPDX-License-Identifier: MIT */
/* codeobj.h: HSA code objects (AMDGPU ELF, code object v4 and v5) read
 * with libelf (codeobj.c, metadata.c): the target, the loadable segments
 * placed as one image, relocations to apply once the image's GPU address is
 * known, and each kernel's descriptor and argument layout. Needs no device:
 * the tests read the committed objects with it. */
#ifndef RIG_AMDGPU_CODEOBJ_H
#define RIG_AMDGPU_CODEOBJ_H

#include <stddef.h>
#include <stdint.h>

#define CO_IMAGE_MAX (256u << 20) /* the most bytes an image's segments span */
#define CO_KERNELS_MAX 1024u
#define CO_ARGS_MAX 256u

typedef struct co_arg {
  uint32_t offset, size;
  char kind[40]; /* .value_kind: "by_value", "global_buffer", "hidden_..." */
} co_arg;

typedef struct co_kernel {
  char name[128]; /* .name */
  uint64_t kd; /* the descriptor's place in the image (NAME.kd) */
  uint64_t entry; /* the code's place in the image */
  uint32_t group_bytes; /* LDS per workgroup */
  uint32_t private_bytes; /* scratch per work-item */
  uint32_t kernarg_bytes, kernarg_align;
  uint32_t rsrc1, rsrc2, rsrc3;
  uint16_t properties; /* kernel_code_properties: which user SGPRs */
  uint32_t wavefront; /* 32 or 64 */
  uint32_t nargs;
  co_arg *args;
} co_kernel;

typedef struct co_reloc {
  uint64_t offset; /* in the image: a 64-bit word */
  int64_t addend;
  uint64_t symbol; /* the symbol's place in the image (ABS64) */
  uint32_t type; /* R_AMDGPU_ABS64 (3) or R_AMDGPU_RELATIVE64 (13) */
} co_reloc;

typedef struct codeobj {
  char target[16]; /* the gfx name e_flags names */
  uint32_t version; /* 4 or 5 */
  uint32_t flags; /* e_flags (xnack, sramecc in bits 8..11) */
  uint8_t *image; /* the segments at their addresses, zero between */
  uint64_t image_bytes; /* a multiple of 4096 */
  uint32_t nkernels;
  co_kernel *kernels;
  uint32_t nrelocs;
  co_reloc *relocs;
} codeobj;

/* Reads bytes[0..n) into out (which it owns until codeobj_free). Where gfx
 * is not NULL, the object must be built for it. 0, or -1 with why[0..m)
 * saying what is wrong and nothing kept: not ELF, not an AMDGPU HSA code
 * object, a version other than 4 and 5, another target (both named), a
 * segment or symbol outside the file or image, a relocation it does not
 * apply, metadata that is missing or bad, a kernel with no descriptor, or
 * a kernel that uses private (scratch) memory (named). Allocates; thread-safe. */
int codeobj_read(const void *bytes, size_t n, const char *gfx, codeobj *out, char *why, size_t m);
/* Writes each relocation's value into the image, for the image placed at
 * GPU address base. */
void codeobj_relocate(codeobj *c, uint64_t base);
/* The kernel named name, or NULL. */
const co_kernel *codeobj_kernel(const codeobj *c, const char *name);
void codeobj_free(codeobj *c);
/* Writes the message into why[0..m) and returns -1: the readers' failure. */
int co_fail(char *why, size_t m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The gfx name of an e_flags machine number, or NULL. */
const char *codeobj_mach_name(uint32_t mach);

/* ---- metadata.c: the NT_AMDGPU_METADATA note ---- */

/* Reads the note's MessagePack into the kernels of c whose descriptors
 * codeobj.c found (matched by .symbol), checking amdhsa.target against
 * c->target. 0, or -1 with why. */
int codeobj_metadata(codeobj *c, const void *note, size_t n, char *why, size_t m);

#endif
