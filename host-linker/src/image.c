/* SPDX-License-Identifier: MIT */
/* image.c: steps 4 and 6 of a load: the image's memory, then its code: the
 * sections copied once, the stubs written, the relocations applied with
 * their range checks (LINK-9), and only then read-only and executable
 * (LINK-14, LINK-15, PLAT-3). It is never writable and executable at once.
 *
 * A small image takes pages of pages.c, reserved and not mapped: it is
 * written in heap memory as if it lay there, then placed there read-execute
 * (a pwrite into a memfd and one mmap), so that its pages are never
 * writable at all and no mprotect flushes the TLB (bench P5). A large one,
 * or one aligned past a page, is a mapping of its own, written read-write
 * and then made read-execute with mprotect. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "load.h"

/* A mapping of the image's own: for images too large for pages.c, or
 * aligned past a page. */
static unsigned char *map_own(rig__link_state *l, size_t bytes, size_t page) {
  /* Sections aligned beyond a page need a base aligned as much. */
  size_t slack = l->align > page ? (size_t)l->align - page : 0;
  if (bytes > SIZE_MAX - slack)
    return NULL;
  /* A small image is populated at once: it is written whole next, and one
   * fault per page costs more than the kernel filling the range in one
   * call. A large one faults in as written, so that an object claiming a
   * huge empty section commits nothing it does not write. */
  int populate = bytes + slack <= ((size_t)16 << 20) ? MAP_POPULATE : 0;
  void *m = mmap(NULL, bytes + slack, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  uintptr_t a = (uintptr_t)m, base = a;
  if (slack) {
    base = (a + (uintptr_t)l->align - 1) & ~((uintptr_t)l->align - 1);
    if (base > a)
      munmap(m, base - a);
    if (a + slack > base)
      munmap((void *)(base + bytes), a + slack - base);
  }
  return (unsigned char *)base;
}

/* The image's mapping failed: its message counts what map_own asked for,
 * the slack it trims to align the image included. */
static __attribute__((cold, noinline)) rig_link_status no_map(rig__link_state *l, size_t bytes,
                                                              size_t page, int e) {
  if (l->align > page)
    return rig__link_fail(l, RIG_LINK_NO_MEMORY,
                          "cannot map %zu bytes for the image, and %zu more to align it at %" PRIu64
                          " bytes: %s",
                          bytes, (size_t)l->align - page, l->align, strerror(e));
  return rig__link_fail(l, RIG_LINK_NO_MEMORY, "cannot map %zu bytes for the image: %s", bytes,
                        strerror(e));
}

/* Lays out the tables after the code: an entry for every symbol (a bound
 * on the functions, known before they are listed) and every stub, then the
 * names. */
static rig_link_status lay_out_tables(rig__link_state *l) {
  /* Entries hold 32-bit name offsets; past 2^31 symbols, get_sym (symbols.c) refuses
   * anyway. */
  if (l->nsyms > (size_t)INT32_MAX + 1 || l->nstrs > UINT32_MAX)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "symbol #%zu: unreadable: past 2^31 symbols (LINK-3)",
                          (size_t)INT32_MAX + 1);
  l->tables_off = (l->total + 7) & ~(uint64_t)7;
  l->names_off = l->tables_off + ((uint64_t)l->nsyms + l->nstubs) * sizeof(rig__link_entry);
  l->end = l->names_off + l->nstrs;
  return RIG_LINK_OK;
}

rig_link_status rig__link_map_image(rig__link_state *l) {
  rig_link_status st;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if ((st = lay_out_tables(l)) != RIG_LINK_OK)
    return st;
  if (l->end > SIZE_MAX - page)
    return rig__link_fail(l, RIG_LINK_NO_MEMORY, "cannot map %" PRIu64 " bytes", l->end);
  size_t bytes = ((size_t)l->end + page - 1) & ~(page - 1);
  if (!(l->im = calloc(1, sizeof *l->im)))
    return rig__link_fail(l, RIG_LINK_NO_MEMORY, "out of memory");
  /* Nothing to lay out and no symbols (a stripped empty object): an empty
   * image, with no pages and no functions. mmap takes no 0 bytes. */
  if (l->end == 0)
    return RIG_LINK_OK;
  unsigned char *base = NULL;
  bool pooled = l->align <= page && bytes <= rig__link_pool_limit() &&
                rig__link_pool_take(bytes, &l->pages);
  if (pooled && !(l->w = malloc(bytes))) {
    rig__link_pool_give(l->pages.at, bytes);
    return rig__link_fail(l, RIG_LINK_NO_MEMORY, "out of memory");
  }
  if (pooled) {
    base = l->pages.at;
    /* The tables are written before the code (functions.c), and symbols
     * that are no function leave their slots unwritten: no heap bytes may
     * reach the image. */
    memset(l->w + l->tables_off, 0, l->names_off - l->tables_off);
  }
  else if (!(base = l->w = map_own(l, bytes, page)))
    return no_map(l, bytes, page, errno);
  *l->im = (rig_link_image){.base = base, .map_bytes = bytes, .pooled = pooled};
  return RIG_LINK_OK;
}

/* Copies the sections in (LINK-14). For pages.c's pages the image is
 * written in heap memory, which holds anything: there the padding,
 * SHT_NOBITS sections and the rest of the last page are zeroed, as a new
 * mapping's are. */
static void copy_sections(rig__link_state *l) {
  unsigned char *w = l->w;
  bool dirty = l->im->pooled;
  uint64_t cur = 0;
  for (size_t k = 0; k < l->norder; k++) {
    const rig__link_section *s = &l->secs[l->order[k]];
    if (dirty)
      memset(w + cur, 0, s->off - cur);
    if (s->bytes)
      memcpy(w + s->off, s->bytes, s->sh.sh_size);
    else if (dirty)
      memset(w + s->off, 0, s->sh.sh_size);
    cur = s->off + s->sh.sh_size;
  }
  if (dirty) { /* around the stubs and the tables, written apart */
    memset(w + cur, 0, l->stubs_off - cur);
    memset(w + l->total, 0, l->tables_off - l->total);
    memset(w + l->end, 0, l->im->map_bytes - l->end);
  }
}

/* Refuses relocation j of section k, whose value s + A does not fit its
 * field at p (LINK-9). */
static __attribute__((cold, noinline)) rig_link_status
no_fit(rig__link_state *l, size_t k, size_t j, uint64_t s, uint64_t p, rig__link_fit fit) {
  const GElf_Rela *r = &l->secs[k].rela[j];
  return rig__link_fail(
      l, RIG_LINK_REFUSED,
      "%s: its value, from S + A = 0x%" PRIx64 " at P = 0x%" PRIx64 ", %s (LINK-9)",
      rig__link_rel_label(l, k, j, r).s, s + (uint64_t)r->r_addend, p,
      fit == RIG__LINK_OVERFLOW ? "overflows its field" : "has low bits its field cannot hold");
}

/* Applies the relocations of section k, checked already but for their
 * values' ranges (LINK-9). */
static rig_link_status apply_section_relocations(rig__link_state *l, size_t k) {
  unsigned char *base = l->im->base;
  const rig__link_section *rs = &l->secs[k];
  const Elf64_Rela *rv = rs->rela;
  uint64_t off = l->secs[rs->sh.sh_info].off;
  unsigned char *at = l->w + off; /* written here, runs at base + off */
  uint64_t runs_at = (uint64_t)(uintptr_t)base + off;
  unsigned char *stubs = base + l->stubs_off;
  for (size_t j = 0, n = rs->nrela; j < n; j++) {
    const Elf64_Rela *r = &rv[j];
    unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
    const rig__link_symbol *y = &l->syms[GELF_R_SYM(r->r_info)];
    unsigned char *w = at + r->r_offset;
    uint64_t p = runs_at + r->r_offset, s, stub_at = 0;
    if (y->state == RIG__LINK_SYM_IN_IMAGE) {
      s = (uint64_t)(uintptr_t)base + y->value; /* its offset in the image */
    } else {
      s = (uint64_t)(uintptr_t)l->stubs[y->at].target;
      stub_at = (uint64_t)(uintptr_t)(stubs + (uint64_t)y->at * RIG__LINK_STUB_BYTES);
    }
    rig__link_fit fit = rig__link_reloc_apply_at(l->machine, type, w, p, s, r->r_addend);
    /* A call or jump out of reach of a process symbol takes its stub
     * (RELOC-3, RELOC-7). */
    if (fit != RIG__LINK_FITS && stub_at && rig__link_reloc_branch(l->machine, type)) {
      s = stub_at;
      fit = rig__link_reloc_apply_at(l->machine, type, w, p, s, r->r_addend);
    }
    if (fit != RIG__LINK_FITS)
      return no_fit(l, k, j, s, p, fit);
  }
  return RIG_LINK_OK;
}

/* Makes the written image read-only and executable at im->base, never
 * writable again (LINK-15): pages.c's placed from the heap, a mapping of
 * its own by mprotect. */
static rig_link_status seal(rig__link_state *l) {
  rig_link_image *im = l->im;
  if (im->pooled && !rig__link_pool_place(&l->pages, l->w, im->map_bytes))
    return rig__link_fail(l, RIG_LINK_SYSTEM, "cannot place the image's code: %s",
                          strerror(errno));
#if defined(__aarch64__)
  __builtin___clear_cache((char *)im->base, (char *)im->base + im->map_bytes);
#endif
  if (!im->pooled && mprotect(im->base, im->map_bytes, PROT_READ | PROT_EXEC) != 0)
    return rig__link_fail(l, RIG_LINK_SYSTEM, "cannot make the image executable: mprotect: %s",
                          strerror(errno));
  return RIG_LINK_OK;
}

rig_link_status rig__link_write_image(rig__link_state *l) {
  rig_link_image *im = l->im;
  rig_link_status st;
  if (!im->base) /* an empty image: nothing to write */
    return RIG_LINK_OK;
  copy_sections(l);
  /* The stubs, after the image (RELOC-8). */
  for (size_t i = 0; i < l->nstubs; i++)
    rig__link_stub_write(l->machine, l->w + l->stubs_off + i * RIG__LINK_STUB_BYTES,
                         l->stubs[i].target);
  /* The relocations, checked already but for their values' ranges. */
  for (size_t k = 1; k < l->nsec; k++)
    if (l->secs[k].nrela && (st = apply_section_relocations(l, k)) != RIG_LINK_OK)
      return st;
  return seal(l);
}
