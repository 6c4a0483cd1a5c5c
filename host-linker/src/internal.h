/* SPDX-License-Identifier: MIT */
/* internal.h: what the host linker's files share (rig__link_*, hidden). */
#ifndef RIG_LINK_INTERNAL_H
#define RIG_LINK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rig/link.h"

#define RIG__LINK_HIDDEN __attribute__((visibility("hidden")))

/* Bytes of one stub: code, then its 8-byte slot at offset 8 (RELOC-8). */
#define RIG__LINK_STUB_BYTES 16
#define RIG__LINK_STUB_SLOT 8

/* The ELF machine of the host: EM_X86_64, EM_AARCH64, or 0 where the host is
 * neither (LINK-2). */
RIG__LINK_HIDDEN unsigned rig__link_host_machine(void);

/* rig_link_load as if the host's machine were `machine` (0: neither x86_64
 * nor arm64). Tests use it for LINK-2 and to link arm64 objects on x86_64. */
RIG__LINK_HIDDEN rig_link_status rig__link_load(const void *bytes, size_t n,
                                                const rig_link_options *opt, unsigned machine,
                                                rig_link_image **out, char *err, size_t errn);

/* The ELF name of relocation `type` of `machine` ("R_X86_64_PC32"), or NULL
 * where rig does not know it. */
RIG__LINK_HIDDEN const char *rig__link_reloc_name(unsigned machine, unsigned type);

/* Whether `type` is in the Relocations list for `machine` (LINK-6), and the
 * bytes it patches in *width. */
RIG__LINK_HIDDEN bool rig__link_reloc_listed(unsigned machine, unsigned type, unsigned *width);

/* Whether `type` is a call or jump that may go through a stub when its
 * symbol is out of reach (RELOC-3, RELOC-7). */
RIG__LINK_HIDDEN bool rig__link_reloc_branch(unsigned machine, unsigned type);

/* Outcome of applying one relocation. */
typedef enum rig__link_fit {
  RIG__LINK_FITS = 0,
  RIG__LINK_OVERFLOW,  /* the value is out of its field's range (LINK-9) */
  RIG__LINK_MISALIGNED /* the field cannot hold the value's low bits (LINK-9) */
} rig__link_fit;

/* Writes relocation `type` at place (its runtime address is where it lies):
 * the value from s (S), a (A) and the address of place (P). Writes nothing
 * unless it fits. */
RIG__LINK_HIDDEN rig__link_fit rig__link_reloc_apply(unsigned machine, unsigned type,
                                                     unsigned char *place, uint64_t s, int64_t a);

/* The same for a place written apart from where it will run: P is p, the
 * place's runtime address (pages.c links into heap memory first). */
RIG__LINK_HIDDEN rig__link_fit rig__link_reloc_apply_at(unsigned machine, unsigned type,
                                                        unsigned char *place, uint64_t p,
                                                        uint64_t s, int64_t a);

/* Writes the stub for target at stub (RIG__LINK_STUB_BYTES bytes). */
RIG__LINK_HIDDEN void rig__link_stub_write(unsigned machine, unsigned char *stub, void *target);

/* The most bytes of freed images' pages that wait to go back to the system
 * together (pages.c): malloc's default trim threshold. */
#define RIG__LINK_PENDING_BYTES ((size_t)128 << 10)

/* The pages of small images (pages.c). The largest image, in bytes, that
 * rig__link_pool_take serves. */
RIG__LINK_HIDDEN size_t rig__link_pool_limit(void);

/* Pages of a chunk (pages.c): their address, reserved and not yet
 * mapped, and where they lie in the chunk's memfd. */
typedef struct rig__link_pages {
  unsigned char *at;
  int fd;
  off_t off;
} rig__link_pages;

/* Takes bytes (a multiple of the page size, at most rig__link_pool_limit())
 * of address space for an image into *out; false where the pool cannot
 * give them (the caller maps its own). Nothing is mapped there until
 * rig__link_pool_place. */
RIG__LINK_HIDDEN bool rig__link_pool_take(size_t bytes, rig__link_pages *out);

/* Writes the image's n bytes (all of the pages taken) into the chunk's
 * file and maps them read-only and executable at pg->at; false (errno
 * set) where the system refuses. No writable mapping of them exists. */
RIG__LINK_HIDDEN bool rig__link_pool_place(const rig__link_pages *pg, const void *bytes, size_t n);

/* Gives back what rig__link_pool_take gave, placed or not. Its memory
 * returns to the system (in batches, pages.c). */
RIG__LINK_HIDDEN void rig__link_pool_give(void *p, size_t bytes);

#endif
