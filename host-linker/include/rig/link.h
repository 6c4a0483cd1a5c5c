/* SPDX-License-Identifier: MIT */
/* rig/link.h: the host linker, librig-link.
 *
 * Links one relocatable ELF object (ET_REL) for the machine it runs on,
 * x86_64 or arm64, into one executable image in the process's memory, as
 * Image.load on host does (rules LINK, RELOC, SYM, PLAT: docs/rules.md). It
 * depends on nothing of rig's core: a program may use it on its own.
 *
 *   rig_link_image *im;
 *   char err[RIG_LINK_ERROR_BYTES];
 *   if (rig_link_load(bytes, n, NULL, &im, err, sizeof err) != RIG_LINK_OK)
 *     fprintf(stderr, "%s\n", err);
 *   void (*add)(const void *, int64_t, int64_t) =
 *       (void (*)(const void *, int64_t, int64_t))rig_link_resolve(im, "add");
 *   add(params, 0, n);
 *   rig_link_free(im);
 *
 * The functions rig links are called by the convention their object was
 * built for (CALL-1, CALL-2): System V AMD64 on x86_64, AAPCS64 on arm64.
 * Host kernels have the C type (LAUNCH-4)
 *
 *   void f(const void *params, int64_t first, int64_t end);
 *
 * docs/linker.md describes the layout, the relocations, the stubs and every
 * refusal.
 *
 * Conventions: every function is thread-safe unless its comment says
 * otherwise; an image is immutable once loaded, so any number of threads may
 * resolve names in it and run its code at once. No function keeps a pointer
 * to what its caller passed after it returns.
 */
#ifndef RIG_LINK_H
#define RIG_LINK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RIG_LINK_BUILDING)
#define RIG_LINK_API __attribute__((visibility("default")))
#else
#define RIG_LINK_API
#endif

typedef enum rig_link_status {
  RIG_LINK_OK = 0,
  /* The object breaks a rule of Linking (LINK-1..11): the text's Error. The
   * message names the rule and the section, symbol or relocation at fault. */
  RIG_LINK_REFUSED = -1,
  /* malloc or mmap refused the bytes the image needs. */
  RIG_LINK_NO_MEMORY = -2,
  /* The system refused to make the image's memory executable (mprotect, or
   * the write and mapping of its file pages, for instance under an SELinux
   * execmem policy); the message holds errno's. */
  RIG_LINK_SYSTEM = -3,
  /* Misuse: a NULL object, image or out-parameter, or bytes of length 0. */
  RIG_LINK_INVALID = -4,
} rig_link_status;

/* A linked image: its code and read-only data, then its stubs, then the
 * table of its names, in pages that are read-only and executable. Opaque. */
typedef struct rig_link_image rig_link_image;

/* Looks up a symbol the object refers to and does not define (SYM-1): the
 * address of its definition, or NULL where there is none. Called during
 * rig_link_load, on its thread, once per such symbol; it must not call
 * rig_link_* on the image being loaded. */
typedef void *(*rig_link_lookup_fn)(void *ctx, const char *name);

/* Options of rig_link_load. Zero-initialise it: a zero field is the default,
 * and fields added later are added at the end with 0 as their default. */
typedef struct rig_link_options {
  /* Where undefined symbols come from. NULL: rig_link_default_lookup, the
   * process's global scope (SYM-1). */
  rig_link_lookup_fn lookup;
  void *lookup_ctx; /* passed to lookup */
} rig_link_options;

/* A message buffer of this size holds every message rig_link_load writes. */
#define RIG_LINK_ERROR_BYTES 320

/* The largest image with its stubs, in bytes: OCaml's max_int on a 64-bit
 * machine, 2^62 - 1 (LINK-11). */
#define RIG_LINK_MAX_BYTES ((((size_t)1) << 62) - 1)

/* Links the object of n bytes at bytes into a new image (HOST-2, LINK-12..15).
 *
 * Returns RIG_LINK_OK and the image in *out, which the caller owns and frees
 * with rig_link_free. Otherwise returns RIG_LINK_REFUSED for an object that
 * breaks a rule of Linking (LINK-1..11), RIG_LINK_NO_MEMORY,
 * RIG_LINK_SYSTEM or RIG_LINK_INVALID, writes the reason into err (at most
 * errn bytes, NUL-terminated; err may be NULL when errn is 0), leaves *out
 * alone and keeps nothing.
 *
 * The object is read, never written; the caller may free it once this
 * returns. It is never trusted: any bytes at all give a status, never a crash.
 * opt may be NULL (the defaults). Blocks only for the system calls that
 * place the image (pwrite and mmap; mprotect for an image too large to
 * share pages; memfd_create for new shared pages), for the lock of the
 * pages images share (held for no system call), and for the lookups, whose
 * default takes the dynamic loader's lock. Thread-safe. */
RIG_LINK_API rig_link_status rig_link_load(const void *bytes, size_t n, const rig_link_options *opt,
                                           rig_link_image **out, char *err, size_t errn);

/* Returns the address of the function name in image: a named symbol of one
 * of its executable sections (HOST-3), global ones before local ones of the
 * same name. Returns NULL where it has none, or where image or name is NULL.
 * The address lives until rig_link_free. The first lookup of an image
 * builds the index of its names (one malloc; a lookup meanwhile scans
 * rather than waits). Never blocks but for malloc; thread-safe. */
RIG_LINK_API void *rig_link_resolve(const rig_link_image *image, const char *name);

/* Returns the address of the stub of name, a symbol the object refers to and
 * does not define (RELOC-8..10), or NULL where it has none. The stub is a
 * function with name's calling convention: it jumps to the address its slot
 * holds, the 8 bytes at stub + 8 (docs/linker.md). Indexed as
 * rig_link_resolve; never blocks but for malloc; thread-safe. */
RIG_LINK_API void *rig_link_stub(const rig_link_image *image, const char *name);

/* Returns the first byte of image's mapping: its sections, then its stubs.
 * NULL for a NULL image. Never blocks; thread-safe. */
RIG_LINK_API const void *rig_link_code(const rig_link_image *image);

/* Returns the bytes of image's pages, from rig_link_code, a multiple of the
 * page size: what it costs the process's memory (its names' index, built by
 * the first lookup, apart). 0 for a NULL image. Never blocks; thread-safe. */
RIG_LINK_API size_t rig_link_code_bytes(const rig_link_image *image);

/* The default lookup: dlsym(RTLD_DEFAULT, name), the libraries in the
 * process's global scope (SYM-1), then the math library (libm.so.6),
 * which the first name the process lacks opens once (RTLD_LOCAL) and
 * keeps open, so that a kernel's expf links whether or not the program
 * links libm. Returns the address, or NULL; ctx is unused. A lookup of
 * the caller's may end with it. Takes the dynamic loader's lock (and,
 * once, opens libm: blocks on its file); thread-safe. */
RIG_LINK_API void *rig_link_default_lookup(void *ctx, const char *name);

/* Frees image: its pages return to the system (munmap, or for the pages
 * small images share, a few freed images together: mmap of their range
 * PROT_NONE and fallocate of their file pages), and later loads may reuse
 * them. NULL does nothing. Not thread-safe for image: no thread may use
 * it, or run or hold its code, from this call on. Never blocks but for
 * those calls and the lock of the shared pages. */
RIG_LINK_API void rig_link_free(rig_link_image *image);

#ifdef __cplusplus
}
#endif

#endif /* RIG_LINK_H */
