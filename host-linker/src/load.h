/* SPDX-License-Identifier: MIT */
/* load.h: one load's state and its steps, shared by the files that carry
 * them out (rig__link_*, hidden). The steps, in order (load.c):
 *   object.c    1, 2: the header, the sections and their layout
 *   symbols.c   3, 4: the symbols and relocations, checked; the undefined
 *               symbols looked up
 *   image.c     4, 6: the image's memory, the code written and sealed
 *   functions.c 5: the image's tables of names, and their lookup
 *   messages.c  the words of a refusal
 */
#ifndef RIG_LINK_LOAD_H
#define RIG_LINK_LOAD_H

#include <gelf.h>
#include <libelf.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

/* One name of an image: written with the code, read-only with it. */
typedef struct rig__link_entry {
  uint32_t name; /* its offset in the image's names */
  uint32_t rank; /* resolve's order among equal names: global, weak, local */
  uint64_t off;  /* its offset in the image */
} rig__link_entry;

/* The hash index of a table (functions.c), built by its first lookup. */
struct rig__link_index;

typedef struct rig__link_table {
  const rig__link_entry *v; /* in the symbols' order */
  size_t n;
  _Atomic(struct rig__link_index *) index;
} rig__link_table;

/* An image: its code (sections, then stubs), then its tables of entries
 * and a copy of the symbol string table, in pages that are read-only and
 * executable once written; the tables are read-only data like the rest.
 * Keeping them there rather than in malloc's heap spares a load the page
 * faults of a heap that grows and is trimmed as images come and go, and
 * pages.c gives their pages back with the code's. */
struct rig_link_image {
  unsigned char *base; /* the code */
  size_t map_bytes;
  bool pooled;           /* the pages are pages.c's, not a mapping of its own */
  rig__link_table funcs; /* the functions (HOST-3) */
  rig__link_table stubs; /* the stubs, one per undefined name */
  const char *names;     /* the string table, which the entries point into */
};

typedef struct rig__link_section {
  GElf_Shdr sh;
  const char *name;
  bool in_image;     /* SHF_ALLOC: laid out in the image */
  uint64_t off;      /* its offset in the image */
  const void *bytes; /* its bytes in the object; NULL for SHT_NOBITS */
  /* SHT_RELA patching a section of the image: its relocations, read in
   * place (LINK-3 checked their size). */
  const Elf64_Rela *rela;
  size_t nrela;
} rig__link_section;

enum { RIG__LINK_SYM_UNSEEN = 0, RIG__LINK_SYM_IN_IMAGE, RIG__LINK_SYM_UNDEFINED };

typedef struct rig__link_symbol {
  uint64_t value; /* RIG__LINK_SYM_IN_IMAGE: its offset in the image */
  uint32_t at;    /* RIG__LINK_SYM_UNDEFINED: its stub */
  unsigned char state;
} rig__link_symbol;

/* An undefined symbol a relocation uses: what the lookup gave, and so what
 * its stub jumps to. */
typedef struct rig__link_stub {
  size_t sym;
  const char *name;
  void *target;
} rig__link_stub;

typedef struct rig__link_state {
  unsigned machine;
  char *err;
  size_t errn;
  Elf *elf;
  size_t nsec;
  rig__link_section *secs;
  size_t symtab; /* its section index; 0: none */
  Elf_Data *symdata, *xndxdata;
  const Elf64_Sym *symv; /* symdata's symbols, in place */
  size_t nsyms;
  const Elf32_Word *xndx; /* xndxdata's words, in place */
  size_t nxndx;
  size_t strtab;
  const char *strs; /* the symbol string table's bytes in the object */
  size_t nstrs;
  bool strs_end; /* it ends with a NUL: every name inside it ends */
  rig__link_symbol *syms;
  size_t *order; /* the sections of the image, in layout order */
  size_t norder;
  size_t nstubs;
  rig__link_stub *stubs;
  uint64_t stubs_off, total;           /* the stubs, and the end of the code */
  uint64_t tables_off, names_off, end; /* the entries, the names, the image's end */
  uint64_t align;                      /* the largest section alignment */
  rig_link_image *im;
  /* Where the image's bytes are written: im->base for a mapping of its
   * own; for pages.c's, heap memory of map_bytes (owned), placed at
   * im->base (pages) once linked. */
  unsigned char *w;
  rig__link_pages pages;
} rig__link_state;

/* ---- the steps of a load, in order ------------------------------------------ */

/* 1 (object.c): the ELF header (LINK-2, LINK-3). */
RIG__LINK_HIDDEN rig_link_status rig__link_read_header(rig__link_state *l);
/* 2 (object.c): the sections, checked and laid out (LINK-4, LINK-7,
 * LINK-12, LINK-13). */
RIG__LINK_HIDDEN rig_link_status rig__link_read_sections(rig__link_state *l);
/* 3 (symbols.c): the symbol table and its strings. */
RIG__LINK_HIDDEN rig_link_status rig__link_read_symtab(rig__link_state *l);
/* 3 (symbols.c): every relocation of the image checked, before any memory
 * is mapped (LINK-5..8), its symbol classified. */
RIG__LINK_HIDDEN rig_link_status rig__link_check_relocations(rig__link_state *l);
/* 4 (symbols.c): the undefined symbols looked up (SYM-1, LINK-10), and the
 * code sized with its stubs (LINK-11). */
RIG__LINK_HIDDEN rig_link_status rig__link_resolve_undefined(rig__link_state *l,
                                                             const rig_link_options *opt);
/* 4 (image.c): the image and its pages, read-write; l->im owns them. */
RIG__LINK_HIDDEN rig_link_status rig__link_map_image(rig__link_state *l);
/* 5 (functions.c): the image's tables of functions and stubs (HOST-3). */
RIG__LINK_HIDDEN rig_link_status rig__link_list_functions(rig__link_state *l);
/* 6 (image.c): the code copied, stubs written, relocations applied, then
 * read-only and executable (LINK-9, LINK-14, LINK-15). */
RIG__LINK_HIDDEN rig_link_status rig__link_write_image(rig__link_state *l);

/* ---- refusals (messages.c) ---------------------------------------------------- */

/* Writes the message into l->err (where the caller gave one) and returns
 * st. */
RIG__LINK_HIDDEN rig_link_status rig__link_fail(rig__link_state *l, rig_link_status st,
                                                const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#ifdef __clang_analyzer__
/* The analyzer reads one file at a time: spelled out so that it knows the
 * call returns st (as core's rig__fail, core/src/internal.h). */
#define rig__link_fail(l, st, ...) ((void)rig__link_fail((l), (st), __VA_ARGS__), (st))
#endif

/* What libelf said of its last error. */
RIG__LINK_HIDDEN const char *rig__link_libelf_says(void);

/* A name for a message, cut to fit RIG_LINK_ERROR_BYTES. */
typedef struct rig__link_label {
  char s[320];
} rig__link_label;

/* A section: its name, or #index where it has none. */
RIG__LINK_HIDDEN rig__link_label rig__link_sec_label(const rig__link_state *l, size_t i);
/* A symbol: its name, its section's for a section symbol. */
RIG__LINK_HIDDEN rig__link_label rig__link_sym_label(const rig__link_state *l, size_t i);
/* Relocation j of section rsec, with its type, place and symbol. */
RIG__LINK_HIDDEN rig__link_label rig__link_rel_label(const rig__link_state *l, size_t rsec,
                                                     size_t j, const GElf_Rela *r);

/* Refuses relocation j of section rsec for its type (LINK-6); a GOT type
 * gets the words of what to change: pass the process's variable in the
 * parameters, or make the kernel's global static or hidden. */
RIG__LINK_HIDDEN __attribute__((cold, noinline)) rig_link_status
rig__link_fail_type(rig__link_state *l, size_t rsec, size_t j, const GElf_Rela *r);
/* Refuses writable section i of so many bytes (LINK-4); a relro table of
 * pointers (.data.rel.ro) gets the words of what to change. */
RIG__LINK_HIDDEN __attribute__((cold, noinline)) rig_link_status
rig__link_fail_writable(rig__link_state *l, size_t i, uint64_t bytes);
/* After a refusal: where the object calls an OpenMP runtime (built with
 * -fopenmp), rewrites the message to say so, keeping the rule's tag. */
RIG__LINK_HIDDEN __attribute__((cold, noinline)) void rig__link_explain(rig__link_state *l);

/* Refuses symbol i, which cannot be read (symbols.c): past the table, past
 * 2^31 symbols, or past the extended section indexes. */
RIG__LINK_HIDDEN __attribute__((cold, noinline)) rig_link_status
rig__link_sym_unreadable(rig__link_state *l, size_t i);

/* The name of symbol s: NULL where it lies outside the string table, or
 * runs past its end. A table that ends with a NUL (every compiler's) needs
 * no search for the end of each name. Inline: the functions' listing reads
 * one a symbol (bench P5). */
static inline const char *rig__link_sym_name(const rig__link_state *l, const GElf_Sym *s) {
  if (!l->strs || s->st_name >= l->nstrs)
    return NULL;
  if (!l->strs_end && !memchr(l->strs + s->st_name, 0, l->nstrs - s->st_name))
    return NULL;
  return l->strs + s->st_name;
}

#endif
