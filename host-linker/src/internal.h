/* internal.h: what the host linker's files share (rig__link_*, hidden). */
#ifndef RIG_LINK_INTERNAL_H
#define RIG_LINK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Writes the stub for target at stub (RIG__LINK_STUB_BYTES bytes). */
RIG__LINK_HIDDEN void rig__link_stub_write(unsigned machine, unsigned char *stub, void *target);

/* The most bytes of freed images' pages that wait to go back to the system
 * together (pages.c): malloc's default trim threshold. */
#define RIG__LINK_PENDING_BYTES ((size_t)128 << 10)

/* The pages of small images (pages.c). The largest image, in bytes, that
 * rig__link_pool_take serves. */
RIG__LINK_HIDDEN size_t rig__link_pool_limit(void);

/* bytes (a multiple of the page size, at most rig__link_pool_limit()) of
 * page-aligned memory, read-write, holding whatever a freed image left
 * there; NULL where the pool cannot give them (the caller maps its own). */
RIG__LINK_HIDDEN void *rig__link_pool_take(size_t bytes);

/* Gives back what rig__link_pool_take gave: read-execute where stale (a
 * loaded image's), else read-write (a refused load's). Its memory returns
 * to the system (in batches, pages.c). */
RIG__LINK_HIDDEN void rig__link_pool_give(void *p, size_t bytes, bool stale);

#endif
