/* SPDX-License-Identifier: MIT */
/* load.c: rig_link_load and the image (HOST-2, HOST-3, LINK-1..15, SYM-1):
 * the entry that runs a load's steps, and the calls on a loaded image.
 *
 * One load, in order:
 * 1. the object's header (LINK-2, LINK-3), read with libelf from the
 *    caller's bytes (object.c);
 * 2. its sections: every SHF_ALLOC one joins the image (LINK-12), checked
 *    (LINK-4, LINK-7) and laid out at its alignment (LINK-13), read-only
 *    data first, then code, so that the stubs that follow are nearest the
 *    calls that use them (object.c);
 * 3. the relocations of those sections, each checked (LINK-5..8) before any
 *    memory is mapped; the symbols they use but the object does not define
 *    are looked up (SYM-1, LINK-10) and get one stub each (RELOC-8)
 *    (symbols.c);
 * 4. the image's size (LINK-11) and its memory: pages of freed images
 *    (pages.c) for a small one, a mapping of its own for a large one, its
 *    code read-write (image.c);
 * 5. its functions (HOST-3), checked (LINK-3) and listed with their
 *    addresses in the image's data pages (functions.c);
 * 6. the code: the sections are copied once, the stubs written, the
 *    relocations applied with their range checks (LINK-9), and only then
 *    is it made read-only and executable (LINK-14, LINK-15, PLAT-3). It is
 *    never writable and executable at once (image.c).
 * A refusal at any step unmaps, or gives back, and frees what the load
 * took (messages.c words it).
 *
 * Speed (bench P5): libelf reads the headers and finds each section's
 * bytes, in the caller's memory, not a copy; the symbols and relocations,
 * which libelf hands over as arrays of Elf64_Sym and Elf64_Rela in the
 * host's order (the object is 64-bit and little-endian, step 1), are read
 * in place rather than through a gelf call each. Names are indexed by a
 * hash at their first lookup, not sorted. A small image is linked in heap
 * memory and placed read-execute in one pwrite and one mmap, with no
 * mprotect and so no TLB flush (pages.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#if __has_include(<gnu/lib-names.h>)
#include <gnu/lib-names.h> /* LIBM_SO */
#endif
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "load.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static unsigned elf_ok;

static void elf_init(void) { elf_ok = elf_version(EV_CURRENT) != EV_NONE; }

unsigned rig__link_host_machine(void) {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return 0;
#endif
}

void rig_link_free(rig_link_image *image) {
  if (!image)
    return;
  if (image->base && image->pooled)
    rig__link_pool_give(image->base, image->map_bytes);
  else if (image->base)
    munmap(image->base, image->map_bytes);
  free(atomic_load(&image->funcs.index));
  free(atomic_load(&image->stubs.index));
  free(image);
}

rig_link_status rig__link_load(const void *bytes, size_t n, const rig_link_options *opt,
                               unsigned machine, rig_link_image **out, char *err, size_t errn) {
  rig__link_state l = {.machine = machine, .err = err, .errn = errn};
  rig_link_status st;
  if (err && errn)
    err[0] = 0;
  if (!bytes || !n || !out)
    return rig__link_fail(&l, RIG_LINK_INVALID, "rig_link_load: %s",
                          !out     ? "out is NULL"
                          : !bytes ? "bytes is NULL"
                                   : "an object of 0 bytes");
  if (machine != EM_X86_64 && machine != EM_AARCH64)
    return rig__link_fail(
        &l, RIG_LINK_REFUSED,
        "this host is neither x86_64 nor arm64, where rig links no code (LINK-2)");
  pthread_once(&elf_once, elf_init);
  if (!elf_ok)
    return rig__link_fail(&l, RIG_LINK_SYSTEM, "libelf refuses EV_CURRENT");

  /* libelf reads the caller's bytes in place and never writes them (it
   * reads; what it must align or convert, it copies), as libbpf relies on
   * too: no copy of the object. */
  l.elf = elf_memory((char *)(uintptr_t)bytes, n);
  if (!l.elf) {
    st = rig__link_fail(&l, RIG_LINK_REFUSED, "not an ELF object: %s (LINK-3)",
                        rig__link_libelf_says());
    goto out;
  }
  if ((st = rig__link_read_header(&l)) != RIG_LINK_OK ||
      (st = rig__link_read_sections(&l)) != RIG_LINK_OK ||
      (st = rig__link_read_symtab(&l)) != RIG_LINK_OK ||
      (st = rig__link_check_relocations(&l)) != RIG_LINK_OK ||
      (st = rig__link_resolve_undefined(&l, opt)) != RIG_LINK_OK ||
      (st = rig__link_map_image(&l)) != RIG_LINK_OK ||
      (st = rig__link_list_functions(&l)) != RIG_LINK_OK ||
      (st = rig__link_write_image(&l)) != RIG_LINK_OK)
    goto out;
  *out = l.im;
  l.im = NULL;
out:
  if (st == RIG_LINK_REFUSED)
    rig__link_explain(&l);
  rig_link_free(l.im);
  if (l.elf)
    elf_end(l.elf);
  free(l.secs);
  free(l.order);
  free(l.syms);
  free(l.stubs);
  if (l.w && l.pages.at)
    free(l.w);
  return st;
}

rig_link_status rig_link_load(const void *bytes, size_t n, const rig_link_options *opt,
                              rig_link_image **out, char *err, size_t errn) {
  return rig__link_load(bytes, n, opt, rig__link_host_machine(), out, err, errn);
}

const void *rig_link_code(const rig_link_image *image) {
  return image ? image->base : NULL;
}

size_t rig_link_code_bytes(const rig_link_image *image) {
  return image ? image->map_bytes : 0;
}

/* The math library, opened once at the first name the process lacks:
 * SYM-1 counts it among the process's libraries, and a kernel that calls
 * expf must link whether or not the program itself linked libm (under
 * --as-needed a program that calls no math function has none). Opened
 * RTLD_LOCAL, so it adds nothing to the process's own scope; it stays
 * loaded for the process's life, as the stubs that point into it may. */
static pthread_once_t libm_once = PTHREAD_ONCE_INIT;
static void *libm;

static void libm_open(void) {
#ifdef LIBM_SO
  libm = dlopen(LIBM_SO, RTLD_LAZY | RTLD_LOCAL);
#else
  libm = dlopen("libm.so.6", RTLD_LAZY | RTLD_LOCAL);
#endif
}

void *rig_link_default_lookup(void *ctx, const char *name) {
  (void)ctx;
  if (!name)
    return NULL;
  void *p = dlsym(RTLD_DEFAULT, name);
  if (p)
    return p;
  pthread_once(&libm_once, libm_open);
  return libm ? dlsym(libm, name) : NULL;
}
