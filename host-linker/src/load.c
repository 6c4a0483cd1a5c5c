/* load.c: rig_link_load and the image (HOST-2, HOST-3, LINK-1..15, SYM-1).
 *
 * One load, in order:
 * 1. the object's header (LINK-2, LINK-3), read with libelf from the
 *    caller's bytes;
 * 2. its sections: every SHF_ALLOC one joins the image (LINK-12), checked
 *    (LINK-4, LINK-7) and laid out at its alignment (LINK-13), read-only
 *    data first, then code, so that the stubs that follow are nearest the
 *    calls that use them;
 * 3. the relocations of those sections, each checked (LINK-5..8) before any
 *    memory is mapped; the symbols they use but the object does not define
 *    are looked up (SYM-1, LINK-10) and get one stub each (RELOC-8);
 * 4. the image's size (LINK-11) and its memory: pages of freed images
 *    (pages.c) for a small one, a mapping of its own for a large one, its
 *    code read-write;
 * 5. its functions (HOST-3), checked (LINK-3) and listed with their
 *    addresses in the image's data pages;
 * 6. the code: the sections are copied once, the stubs written, the
 *    relocations applied with their range checks (LINK-9), and only then
 *    is it made read-only and executable (LINK-14, LINK-15, PLAT-3). It is
 *    never writable and executable at once.
 * A refusal at any step unmaps, or gives back, and frees what the load
 * took.
 *
 * Speed (bench P5): libelf reads the headers and finds each section's
 * bytes, in the caller's memory, not a copy; the symbols and relocations,
 * which libelf hands over as arrays of Elf64_Sym and Elf64_Rela in the
 * host's order (the object is 64-bit and little-endian, step 1), are read
 * in place rather than through a gelf call each. Names are indexed by a
 * hash at their first lookup, not sorted. Small images reuse the pages of
 * freed ones, with no fault and one mprotect.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
/* x86_64's large common symbols (psABI: SHN_X86_64_LCOMMON), which
 * <elf.h> does not name. */
#define SHN_X86_64_LCOMMON_INDEX 0xff02

/* One name of an image: written with the code, read-only with it. */
typedef struct entry {
  uint32_t name; /* its offset in the image's names */
  uint32_t rank; /* resolve's order among equal names: global, weak, local */
  uint64_t off;  /* its offset in the image */
} entry;

/* The hash index of a table, built by its first lookup (as most images are
 * resolved by a few names or none: bench P5 loads and frees): open
 * addressing, slot[h & mask] holding an entry's index plus one (0 where
 * free) and its hash; a taken slot sends the search to the next. Never
 * full: it has at least twice as many slots as entries. */
typedef struct name_index {
  size_t mask;
  uint32_t slot[][2];
} name_index;

typedef struct table {
  const entry *v; /* in the symbols' order */
  size_t n;
  _Atomic(name_index *) index;
} table;

/* An image: its code (sections, then stubs), then its tables of entries
 * and a copy of the symbol string table, in pages that are read-only and
 * executable once written; the tables are read-only data like the rest.
 * Keeping them there rather than in malloc's heap spares a load the page
 * faults of a heap that grows and is trimmed as images come and go, and
 * pages.c gives their pages back with the code's. */
struct rig_link_image {
  unsigned char *base; /* the code */
  size_t map_bytes;
  bool pooled;         /* the pages are pages.c's, not a mapping of its own */
  bool sealed;         /* the pages are read-only and executable */
  table funcs;         /* the functions (HOST-3) */
  table stubs;         /* the stubs, one per undefined name */
  const char *names;   /* the string table, which the entries point into */
};

typedef struct section {
  GElf_Shdr sh;
  const char *name;
  bool in_image;     /* SHF_ALLOC: laid out in the image */
  uint64_t off;      /* its offset in the image */
  const void *bytes; /* its bytes in the object; NULL for SHT_NOBITS */
  /* SHT_RELA patching a section of the image: its relocations, read in
   * place (LINK-3 checked their size). */
  const Elf64_Rela *rela;
  size_t nrela;
} section;

enum sym_state { SYM_UNSEEN = 0, SYM_IN_IMAGE, SYM_UNDEFINED };

typedef struct symbol {
  uint64_t value; /* SYM_IN_IMAGE: its offset in the image */
  uint32_t at;    /* SYM_UNDEFINED: its stub */
  unsigned char state;
} symbol;

typedef struct stub {
  size_t sym;
  const char *name;
  void *target;
} stub;

typedef struct linker {
  unsigned machine;
  char *err;
  size_t errn;
  Elf *elf;
  size_t nsec;
  section *secs;
  size_t symtab; /* its section index; 0: none */
  Elf_Data *symdata, *xndxdata;
  const Elf64_Sym *symv; /* symdata's symbols, in place */
  size_t nsyms;
  const Elf32_Word *xndx; /* xndxdata's words, in place */
  size_t nxndx;
  size_t strtab;
  const char *strs; /* the symbol string table's bytes in the object */
  size_t nstrs;
  bool strs_end;    /* it ends with a NUL: every name inside it ends */
  symbol *syms;
  size_t *order;    /* the sections of the image, in layout order */
  size_t norder;
  size_t nstubs;
  stub *stubs;
  uint64_t stubs_off, total; /* the stubs, and the end of the code */
  uint64_t tables_off, names_off, end; /* the entries, the names, the image's end */
  uint64_t align; /* the largest section alignment */
  rig_link_image *im;
} linker;

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static unsigned elf_ok;

static void elf_init(void) { elf_ok = elf_version(EV_CURRENT) != EV_NONE; }

static rig_link_status fail(linker *l, rig_link_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static rig_link_status fail(linker *l, rig_link_status st, const char *fmt, ...) {
  if (l->err && l->errn) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err, l->errn, fmt, ap);
    va_end(ap);
  }
  return st;
}

static const char *libelf_says(void) {
  const char *m = elf_errmsg(-1);
  return m ? m : "no reason given";
}

/* A section's name for a message: its name, or #index where it has none. */
typedef struct label {
  char s[320];
} label;

static label sec_label(const linker *l, size_t i) {
  label b;
  if (i < l->nsec && l->secs[i].name && l->secs[i].name[0])
    snprintf(b.s, sizeof b.s, "%.60s", l->secs[i].name);
  else
    snprintf(b.s, sizeof b.s, "#%zu", i);
  return b;
}

/* The name of symbol i: NULL where it lies outside the string table, or
 * runs past its end. A table that ends with a NUL (every compiler's) needs
 * no search for the end of each name. */
static const char *sym_name(const linker *l, const GElf_Sym *s) {
  if (!l->strs || s->st_name >= l->nstrs)
    return NULL;
  if (!l->strs_end && !memchr(l->strs + s->st_name, 0, l->nstrs - s->st_name))
    return NULL;
  return l->strs + s->st_name;
}

/* A symbol for a message: its name, its section's for a section symbol. */
static label sym_label(const linker *l, size_t i) {
  label b;
  GElf_Sym s;
  Elf32_Word x = 0;
  const char *n = NULL;
  if (l->symdata && gelf_getsymshndx(l->symdata, l->xndxdata, (int)i, &s, &x)) {
    n = sym_name(l, &s);
    if (n && !n[0] && GELF_ST_TYPE(s.st_info) == STT_SECTION) {
      size_t sh = s.st_shndx == SHN_XINDEX ? x : s.st_shndx;
      label sl = sec_label(l, sh);
      snprintf(b.s, sizeof b.s, "section %.60s", sl.s);
      return b;
    }
  }
  if (n && n[0])
    snprintf(b.s, sizeof b.s, "%.80s", n);
  else
    snprintf(b.s, sizeof b.s, "#%zu", i);
  return b;
}

/* A relocation for a message: "relocation 3 of .rela.text (R_X86_64_64 at
 * .text+0x1c, symbol gtab)". */
static label rel_label(const linker *l, size_t rsec, size_t j, const GElf_Rela *r) {
  label b, sl = sec_label(l, rsec), tl = sec_label(l, l->secs[rsec].sh.sh_info),
           yl = sym_label(l, GELF_R_SYM(r->r_info));
  unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
  const char *tn = rig__link_reloc_name(l->machine, type);
  char tbuf[24];
  if (!tn) {
    snprintf(tbuf, sizeof tbuf, "type %u", type);
    tn = tbuf;
  }
  snprintf(b.s, sizeof b.s, "relocation %zu of %.60s (%.40s at %.60s+0x%" PRIx64 ", symbol %.80s)",
           j, sl.s, tn, tl.s, (uint64_t)r->r_offset, yl.s);
  return b;
}

static const char *machine_name(unsigned m) {
  switch (m) {
  case EM_X86_64:
    return "EM_X86_64";
  case EM_AARCH64:
    return "EM_AARCH64";
  case EM_386:
    return "EM_386";
  case EM_ARM:
    return "EM_ARM";
  case EM_RISCV:
    return "EM_RISCV";
  case EM_PPC64:
    return "EM_PPC64";
  case EM_S390:
    return "EM_S390";
  default:
    return "another machine";
  }
}

/* ---- 1. the header ---------------------------------------------------------- */

static rig_link_status read_header(linker *l) {
  size_t idn = 0;
  const char *ident;
  GElf_Ehdr eh;

  if (elf_kind(l->elf) == ELF_K_AR)
    return fail(l, RIG_LINK_REFUSED,
                "an ar archive (a static library), not an ELF object: rig links one "
                "object, each of its members on its own (LINK-3)");
  if (elf_kind(l->elf) != ELF_K_ELF)
    return fail(l, RIG_LINK_REFUSED, "not an ELF object (LINK-3)");
  ident = elf_getident(l->elf, &idn);
  if (!ident || idn < EI_NIDENT)
    return fail(l, RIG_LINK_REFUSED, "ELF header: unreadable (LINK-3)");
  if ((unsigned char)ident[EI_CLASS] != ELFCLASS64)
    return fail(l, RIG_LINK_REFUSED, "ELF header: a %s object; rig links 64-bit ones (LINK-3)",
                (unsigned char)ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "class-less");
  if ((unsigned char)ident[EI_DATA] != ELFDATA2LSB)
    return fail(l, RIG_LINK_REFUSED,
                "ELF header: a %s object; rig links little-endian ones (LINK-3)",
                (unsigned char)ident[EI_DATA] == ELFDATA2MSB ? "big-endian" : "byte-order-less");
  if (!gelf_getehdr(l->elf, &eh))
    return fail(l, RIG_LINK_REFUSED, "ELF header: unreadable: %s (LINK-3)", libelf_says());
  if (eh.e_type != ET_REL)
    return fail(l, RIG_LINK_REFUSED,
                "ELF header: e_type %u (%s), not a relocatable object, ET_REL (LINK-3)",
                (unsigned)eh.e_type,
                eh.e_type == ET_EXEC   ? "ET_EXEC"
                : eh.e_type == ET_DYN  ? "ET_DYN"
                : eh.e_type == ET_CORE ? "ET_CORE"
                                       : "unknown");
  if (eh.e_machine != l->machine)
    return fail(l, RIG_LINK_REFUSED,
                "ELF header: an object for e_machine %u (%s), not for this host's "
                "%s (LINK-3)",
                (unsigned)eh.e_machine, machine_name(eh.e_machine), machine_name(l->machine));
  return RIG_LINK_OK;
}

/* ---- 2. the sections --------------------------------------------------------- */

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* The largest section alignment rig gives (LINK-13): 1 GiB. A section
 * aligned past a page takes a mapping of its own, with up to its alignment
 * of slack to trim (map_own); past 1 GiB that is address space no kernel
 * needs, and on a machine that refuses it the load would read as out of
 * memory rather than as the object's fault. */
#define MAX_ALIGN ((uint64_t)1 << 30)

/* Lays out the image's sections of one kind (code or not) from *cur. */
static rig_link_status lay_out(linker *l, bool code, uint64_t *cur) {
  for (size_t i = 1; i < l->nsec; i++) {
    section *s = &l->secs[i];
    if (!s->in_image || !!(s->sh.sh_flags & SHF_EXECINSTR) != code)
      continue;
    uint64_t al = s->sh.sh_addralign > 1 ? s->sh.sh_addralign : 1;
    if (al > RIG_LINK_MAX_BYTES || *cur > RIG_LINK_MAX_BYTES - (al - 1))
      return fail(l, RIG_LINK_REFUSED, "section %s: the image would pass %zu bytes (LINK-11)",
                  sec_label(l, i).s, (size_t)RIG_LINK_MAX_BYTES);
    s->off = (*cur + al - 1) & ~(al - 1);
    if (s->sh.sh_size > RIG_LINK_MAX_BYTES - s->off)
      return fail(l, RIG_LINK_REFUSED,
                  "section %s: %" PRIu64 " bytes: the image would pass %zu bytes (LINK-11)",
                  sec_label(l, i).s, (uint64_t)s->sh.sh_size, (size_t)RIG_LINK_MAX_BYTES);
    *cur = s->off + s->sh.sh_size;
    l->order[l->norder++] = i;
    if (al > l->align)
      l->align = al;
  }
  return RIG_LINK_OK;
}

/* Refuses section headers that lie outside the object, where libelf read
 * none. Where e_shnum is 0, their count is section 0's sh_size (an object
 * of more than 65279 sections): the message gives that count. */
static __attribute__((cold, noinline)) rig_link_status headers_outside(linker *l,
                                                                      const GElf_Ehdr *eh) {
  size_t size = 0;
  const char *raw = elf_rawfile(l->elf, &size);
  uint64_t count = eh->e_shnum;
  const char *from = "e_shnum";
  if (count == 0) {
    Elf64_Shdr zero;
    if (!raw || eh->e_shoff > size || size - eh->e_shoff < sizeof zero)
      return fail(l, RIG_LINK_REFUSED,
                  "ELF header: e_shnum 0, and section 0, which would give the count of "
                  "section headers, lies at offset %" PRIu64 ", outside the object's %zu "
                  "bytes (LINK-3)",
                  (uint64_t)eh->e_shoff, size);
    memcpy(&zero, raw + eh->e_shoff, sizeof zero);
    count = zero.sh_size;
    from = "section 0's sh_size, as e_shnum is 0";
    if (count == 0)
      return fail(l, RIG_LINK_REFUSED,
                  "ELF header: section headers at offset %" PRIu64 ", but none counted: "
                  "e_shnum and section 0's sh_size are 0 (LINK-3)",
                  (uint64_t)eh->e_shoff);
  }
  return fail(l, RIG_LINK_REFUSED,
              "ELF header: %" PRIu64 " section headers (%s) at offset %" PRIu64
              " lie outside the object's %zu bytes (LINK-3)",
              count, from, (uint64_t)eh->e_shoff, size);
}

static rig_link_status read_sections(linker *l) {
  size_t shstrndx;
  GElf_Ehdr eh;
  if (elf_getshdrnum(l->elf, &l->nsec) != 0 || !gelf_getehdr(l->elf, &eh))
    return fail(l, RIG_LINK_REFUSED, "section headers: unreadable: %s (LINK-3)", libelf_says());
  /* libelf reads no section where their headers lie past the object's end. */
  if (l->nsec == 0 && (eh.e_shoff != 0 || eh.e_shnum != 0))
    return headers_outside(l, &eh);
  if (elf_getshdrstrndx(l->elf, &shstrndx) != 0)
    return fail(l, RIG_LINK_REFUSED, "section names: no table: %s (LINK-3)", libelf_says());
  l->secs = calloc(l->nsec ? l->nsec : 1, sizeof *l->secs);
  l->order = malloc((l->nsec ? l->nsec : 1) * sizeof *l->order);
  if (!l->secs || !l->order)
    return fail(l, RIG_LINK_NO_MEMORY, "out of memory reading %zu sections", l->nsec);

  for (size_t i = 1; i < l->nsec; i++) {
    section *s = &l->secs[i];
    Elf_Scn *scn = elf_getscn(l->elf, i);
    if (!scn || !gelf_getshdr(scn, &s->sh))
      return fail(l, RIG_LINK_REFUSED, "section #%zu: unreadable header: %s (LINK-3)", i,
                  libelf_says());
    s->name = elf_strptr(l->elf, shstrndx, s->sh.sh_name);
    if (!s->name)
      return fail(l, RIG_LINK_REFUSED,
                  "section #%zu: its name lies outside the section-name table (LINK-3)", i);

    if (s->sh.sh_type == SHT_SYMTAB) {
      if (l->symtab)
        return fail(l, RIG_LINK_REFUSED, "section %s: a second symbol table (LINK-3)",
                    sec_label(l, i).s);
      l->symtab = i;
    }
    if (!(s->sh.sh_flags & SHF_ALLOC))
      continue;

    /* An allocated section: part of the image (LINK-12). */
    if ((s->sh.sh_flags & SHF_WRITE) && s->sh.sh_size > 0)
      return fail(l, RIG_LINK_REFUSED,
                  "section %s: writable and not empty (%" PRIu64 " bytes); a kernel "
                  "takes mutable state through its parameters (LINK-4)",
                  sec_label(l, i).s, (uint64_t)s->sh.sh_size);
    if ((s->sh.sh_flags & SHF_TLS) && s->sh.sh_size > 0)
      return fail(l, RIG_LINK_REFUSED,
                  "section %s: thread-local data, defined outside the image (LINK-7)",
                  sec_label(l, i).s);
    if (s->sh.sh_type == SHT_REL || s->sh.sh_type == SHT_RELA || s->sh.sh_type == SHT_SYMTAB ||
        s->sh.sh_type == SHT_GROUP || (s->sh.sh_flags & SHF_COMPRESSED))
      return fail(l, RIG_LINK_REFUSED,
                  "section %s: a relocation, symbol, group or compressed section "
                  "cannot be allocated (LINK-3)",
                  sec_label(l, i).s);
    if (s->sh.sh_addralign > 1 && !is_pow2(s->sh.sh_addralign))
      return fail(l, RIG_LINK_REFUSED,
                  "section %s: alignment %" PRIu64 " is not a power of two (LINK-3)",
                  sec_label(l, i).s, (uint64_t)s->sh.sh_addralign);
    if (s->sh.sh_addralign > MAX_ALIGN)
      return fail(l, RIG_LINK_REFUSED,
                  "section %s: alignment 2^%d (%" PRIu64 " bytes); rig aligns a section at 2^%d "
                  "bytes at most (LINK-13)",
                  sec_label(l, i).s, __builtin_ctzll(s->sh.sh_addralign),
                  (uint64_t)s->sh.sh_addralign, __builtin_ctzll(MAX_ALIGN));
    if (s->sh.sh_type != SHT_NOBITS && s->sh.sh_size > 0) {
      Elf_Data *d = elf_rawdata(scn, NULL);
      if (!d || !d->d_buf || d->d_size != s->sh.sh_size)
        return fail(l, RIG_LINK_REFUSED,
                    "section %s: its %" PRIu64 " bytes lie outside the object (LINK-3)",
                    sec_label(l, i).s, (uint64_t)s->sh.sh_size);
      s->bytes = d->d_buf;
    }
    s->in_image = true;
  }

  /* Layout: read-only data, then code (LINK-12, LINK-13). */
  uint64_t cur = 0;
  rig_link_status st;
  l->align = 1;
  if ((st = lay_out(l, false, &cur)) != RIG_LINK_OK)
    return st;
  if ((st = lay_out(l, true, &cur)) != RIG_LINK_OK)
    return st;
  if (cur > RIG_LINK_MAX_BYTES - 15)
    return fail(l, RIG_LINK_REFUSED, "the image would pass %zu bytes (LINK-11)",
                (size_t)RIG_LINK_MAX_BYTES);
  l->stubs_off = (cur + 15) & ~(uint64_t)15;
  if (l->align < 16)
    l->align = 16;
  return RIG_LINK_OK;
}

/* ---- 3. symbols and relocations --------------------------------------------- */

/* Data libelf gives in the memory form of an ELF type: an array of that
 * type, aligned for it (libelf copies what the object misaligns). */
static bool typed(const Elf_Data *d, Elf_Type t, size_t size) {
  return d && d->d_type == t && d->d_size % size == 0 && (d->d_size == 0 || d->d_buf);
}

static rig_link_status read_symtab(linker *l) {
  if (!l->symtab)
    return RIG_LINK_OK;
  section *s = &l->secs[l->symtab];
  Elf_Scn *scn = elf_getscn(l->elf, l->symtab);
  l->symdata = scn ? elf_getdata(scn, NULL) : NULL;
  if (!typed(l->symdata, ELF_T_SYM, sizeof(Elf64_Sym)))
    return fail(l, RIG_LINK_REFUSED, "section %s: an unreadable symbol table: %s (LINK-3)",
                sec_label(l, l->symtab).s, libelf_says());
  l->symv = l->symdata->d_buf;
  l->nsyms = l->symdata->d_size / sizeof(Elf64_Sym);
  l->strtab = s->sh.sh_link;
  if (l->strtab == 0 || l->strtab >= l->nsec || l->secs[l->strtab].sh.sh_type != SHT_STRTAB)
    return fail(l, RIG_LINK_REFUSED, "section %s: its string table #%zu is not one (LINK-3)",
                sec_label(l, l->symtab).s, l->strtab);
  Elf_Scn *strscn = elf_getscn(l->elf, l->strtab);
  Elf_Data *sd = strscn ? elf_rawdata(strscn, NULL) : NULL;
  if (!sd || (sd->d_size && !sd->d_buf))
    return fail(l, RIG_LINK_REFUSED, "section %s: unreadable strings: %s (LINK-3)",
                sec_label(l, l->strtab).s, libelf_says());
  l->strs = sd->d_buf;
  l->nstrs = sd->d_size;
  l->strs_end = l->nstrs && l->strs[l->nstrs - 1] == 0;
  /* Extended section indexes, where the object has more than 65279. */
  for (size_t i = 1; i < l->nsec; i++)
    if (l->secs[i].sh.sh_type == SHT_SYMTAB_SHNDX && l->secs[i].sh.sh_link == l->symtab) {
      Elf_Scn *x = elf_getscn(l->elf, i);
      l->xndxdata = x ? elf_getdata(x, NULL) : NULL;
      if (!typed(l->xndxdata, ELF_T_WORD, sizeof(Elf32_Word)))
        return fail(l, RIG_LINK_REFUSED, "section %s: unreadable: %s (LINK-3)", sec_label(l, i).s,
                    libelf_says());
      l->xndx = l->xndxdata->d_buf;
      l->nxndx = l->xndxdata->d_size / sizeof(Elf32_Word);
    }
  l->syms = calloc(l->nsyms ? l->nsyms : 1, sizeof *l->syms);
  if (!l->syms)
    return fail(l, RIG_LINK_NO_MEMORY, "out of memory reading %zu symbols", l->nsyms);
  return RIG_LINK_OK;
}

/* Reads symbol i, with its section index, or refuses: what
 * gelf_getsymshndx does, in place. Where the object has extended indexes,
 * every symbol must have one. */
static __attribute__((cold, noinline)) rig_link_status sym_unreadable(linker *l, size_t i) {
  return fail(l, RIG_LINK_REFUSED, "symbol #%zu: unreadable: %s (LINK-3)", i,
              i >= l->nsyms    ? "past the symbol table"
              : i > INT32_MAX ? "past 2^31 symbols"
                              : "past its extended section indexes");
}

static inline rig_link_status get_sym(linker *l, size_t i, GElf_Sym *s, size_t *shndx) {
  if (__builtin_expect(i > INT32_MAX || i >= l->nsyms || (l->xndx && i >= l->nxndx), 0)) {
    *s = (GElf_Sym){0};
    *shndx = 0;
    return sym_unreadable(l, i);
  }
  *s = l->symv[i];
  /* SHN_XINDEX without the table reads as 0, as gelf_getsymshndx leaves it. */
  *shndx = s->st_shndx != SHN_XINDEX ? s->st_shndx : l->xndx ? l->xndx[i] : 0;
  return RIG_LINK_OK;
}

/* Refuses relocation j of section rsec, whose symbol has a reserved section
 * index (SHN_LORESERVE.., but SHN_ABS, SHN_COMMON and SHN_XINDEX, which
 * use_symbol reads): x86_64's large common symbols (-mcmodel=medium) are
 * common symbols, defined outside the image (LINK-7); the others name no
 * section rig knows. */
static __attribute__((cold, noinline)) rig_link_status reserved_index(linker *l, size_t rsec,
                                                                     size_t j, const GElf_Rela *r,
                                                                     unsigned shndx) {
  if (l->machine == EM_X86_64 && shndx == SHN_X86_64_LCOMMON_INDEX)
    return fail(l, RIG_LINK_REFUSED,
                "%s: uses a large common symbol (SHN_X86_64_LCOMMON), defined outside the "
                "image (LINK-7)",
                rel_label(l, rsec, j, r).s);
  return fail(l, RIG_LINK_REFUSED,
              "%s: its symbol's section index 0x%x is a reserved one (%s), which names no "
              "section of the object (LINK-3)",
              rel_label(l, rsec, j, r).s, shndx,
              shndx >= SHN_LOPROC && shndx <= SHN_HIPROC ? "a processor's"
              : shndx >= SHN_LOOS && shndx <= SHN_HIOS   ? "an OS's"
                                                         : "unassigned");
}

/* Classifies the symbol relocation j uses: in the image or undefined (then
 * it gets a stub), or refuses it (LINK-7). */
static rig_link_status use_symbol(linker *l, size_t rsec, size_t j, const GElf_Rela *r) {
  size_t i = GELF_R_SYM(r->r_info), shndx;
  GElf_Sym s;
  rig_link_status st;
  if (l->syms[i].state != SYM_UNSEEN)
    return RIG_LINK_OK;
  if ((st = get_sym(l, i, &s, &shndx)) != RIG_LINK_OK)
    return st;
  const char *name = sym_name(l, &s);
  unsigned type = GELF_ST_TYPE(s.st_info);
  const char *outside = NULL;
#define RL rel_label(l, rsec, j, r).s
  if (!name)
    return fail(l, RIG_LINK_REFUSED,
                "%s: symbol #%zu's name lies outside its string table (LINK-3)", RL, i);
  if (i == 0)
    outside = "no symbol, an absolute address";
  else if (type == STT_TLS)
    outside = "a thread-local symbol";
  else if (type == STT_GNU_IFUNC)
    outside = "an indirect function (STT_GNU_IFUNC)";
  else if (s.st_shndx == SHN_COMMON)
    outside = "a common symbol (SHN_COMMON)";
  else if (s.st_shndx == SHN_ABS)
    outside = "an absolute symbol (SHN_ABS)";
  if (outside)
    return fail(l, RIG_LINK_REFUSED, "%s: uses %s, defined outside the image (LINK-7)", RL,
                outside);
  if (shndx == SHN_UNDEF) {
    if (!name[0])
      return fail(l, RIG_LINK_REFUSED, "%s: an undefined symbol without a name (LINK-3)", RL);
    stub *ns = realloc(l->stubs, (l->nstubs + 1) * sizeof *ns);
    if (!ns)
      return fail(l, RIG_LINK_NO_MEMORY, "out of memory for stubs");
    l->stubs = ns;
    l->stubs[l->nstubs] = (stub){.sym = i, .name = name};
    l->syms[i] = (symbol){.state = SYM_UNDEFINED, .at = (uint32_t)l->nstubs++};
    return RIG_LINK_OK;
  }
  if (s.st_shndx >= SHN_LORESERVE && s.st_shndx != SHN_XINDEX)
    return reserved_index(l, rsec, j, r, s.st_shndx);
  if (shndx >= l->nsec)
    return fail(l, RIG_LINK_REFUSED, "%s: its symbol's section #%zu does not exist (LINK-3)", RL,
                shndx);
  if (!l->secs[shndx].in_image)
    return fail(l, RIG_LINK_REFUSED,
                "%s: its symbol is defined in section %s, outside the image (not SHF_ALLOC) "
                "(LINK-7)",
                RL, sec_label(l, shndx).s);
  if (s.st_value > l->secs[shndx].sh.sh_size)
    return fail(l, RIG_LINK_REFUSED,
                "%s: its symbol's value 0x%" PRIx64 " lies outside its section %s (LINK-3)", RL,
                (uint64_t)s.st_value, sec_label(l, shndx).s);
#undef RL
  /* Its offset in the image: the sections are laid out already. */
  l->syms[i] = (symbol){.state = SYM_IN_IMAGE, .value = l->secs[shndx].off + s.st_value};
  return RIG_LINK_OK;
}

/* The relocations of section rsec, where they patch the image, into its
 * rela and nrela; none where they patch a section outside it, as debugging
 * information does. */
static rig_link_status rel_data(linker *l, size_t rsec) {
  section *r = &l->secs[rsec];
  if (r->sh.sh_type != SHT_RELA && r->sh.sh_type != SHT_REL)
    return RIG_LINK_OK;
  if (r->sh.sh_info == 0 || r->sh.sh_info >= l->nsec)
    return fail(l, RIG_LINK_REFUSED,
                "section %s: relocates section #%u, which does not exist (LINK-3)",
                sec_label(l, rsec).s, (unsigned)r->sh.sh_info);
  if (!l->secs[r->sh.sh_info].in_image)
    return RIG_LINK_OK;
  if (r->sh.sh_type == SHT_REL)
    return fail(l, RIG_LINK_REFUSED,
                "section %s: relocations without addends (SHT_REL) for section %s; rig "
                "links SHT_RELA (LINK-5)",
                sec_label(l, rsec).s, sec_label(l, r->sh.sh_info).s);
  if (!l->symtab || r->sh.sh_link != l->symtab)
    return fail(l, RIG_LINK_REFUSED,
                "section %s: its symbol table #%u is not the object's (LINK-3)",
                sec_label(l, rsec).s, (unsigned)r->sh.sh_link);
  Elf_Scn *scn = elf_getscn(l->elf, rsec);
  Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
  if (!typed(d, ELF_T_RELA, sizeof(Elf64_Rela)))
    return fail(l, RIG_LINK_REFUSED, "section %s: unreadable relocations: %s (LINK-3)",
                sec_label(l, rsec).s, libelf_says());
  r->rela = d->d_buf;
  r->nrela = d->d_size / sizeof(Elf64_Rela);
  return RIG_LINK_OK;
}

/* Refuses relocation j of section k, which check_relocations found at
 * fault: out of line, so that the loop over the good ones stays short. */
static __attribute__((cold, noinline)) rig_link_status bad_relocation(linker *l, size_t k,
                                                                     size_t j) {
  const GElf_Rela *r = &l->secs[k].rela[j];
  const section *target = &l->secs[l->secs[k].sh.sh_info];
  unsigned width;
  if (GELF_R_SYM(r->r_info) >= l->nsyms)
    return fail(l, RIG_LINK_REFUSED, "relocation %zu of %s: symbol #%zu does not exist (LINK-3)",
                j, sec_label(l, k).s, (size_t)GELF_R_SYM(r->r_info));
  if (!rig__link_reloc_listed(l->machine, (unsigned)GELF_R_TYPE(r->r_info), &width))
    return fail(l, RIG_LINK_REFUSED, "%s: a type not in the Relocations list (LINK-6)",
                rel_label(l, k, j, r).s);
  return fail(l, RIG_LINK_REFUSED,
              "%s: patches outside its section's %" PRIu64 " bytes, outside the "
              "image (LINK-8)",
              rel_label(l, k, j, r).s, (uint64_t)target->sh.sh_size);
}

/* Checks the relocations of section k, before any memory is mapped: their
 * symbols exist, their types are listed (LINK-6), their fields lie inside
 * their section (LINK-8); each symbol is classified at its first use. */
static rig_link_status check_section_relocations(linker *l, size_t k) {
  const section *rs = &l->secs[k];
  const Elf64_Rela *rv = rs->rela;
  size_t n = rs->nrela, nsyms = l->nsyms;
  if (!n) /* not relocations of the image's: sh_info is unchecked */
    return RIG_LINK_OK;
  uint64_t size = l->secs[rs->sh.sh_info].sh.sh_size;
  /* The last listed type and its width: a section's relocations are mostly
   * of one or two types. */
  unsigned last = 0, width = 0;
  bool known = false;
  rig_link_status st;
  for (size_t j = 0; j < n; j++) {
    const Elf64_Rela *r = &rv[j];
    unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
    size_t sym = GELF_R_SYM(r->r_info);
    if (sym >= nsyms)
      return bad_relocation(l, k, j);
    if (!known || type != last) {
      if (!rig__link_reloc_listed(l->machine, type, &width))
        return bad_relocation(l, k, j);
      last = type;
      known = true;
    }
    if (r->r_offset > size || size - r->r_offset < width)
      return bad_relocation(l, k, j);
    if (l->syms[sym].state == SYM_UNSEEN && (st = use_symbol(l, k, j, r)) != RIG_LINK_OK)
      return st;
  }
  return RIG_LINK_OK;
}

static rig_link_status check_relocations(linker *l) {
  rig_link_status st;
  for (size_t k = 1; k < l->nsec; k++)
    if ((st = rel_data(l, k)) != RIG_LINK_OK ||
        (st = check_section_relocations(l, k)) != RIG_LINK_OK)
      return st;
  return RIG_LINK_OK;
}

/* Looks up the undefined symbols (SYM-1, LINK-10) and sizes the image. */
static rig_link_status resolve_undefined(linker *l, const rig_link_options *opt) {
  rig_link_lookup_fn look = opt && opt->lookup ? opt->lookup : rig_link_default_lookup;
  void *ctx = opt && opt->lookup ? opt->lookup_ctx : NULL;
  for (size_t i = 0; i < l->nstubs; i++) {
    l->stubs[i].target = look(ctx, l->stubs[i].name);
    if (!l->stubs[i].target)
      return fail(l, RIG_LINK_REFUSED,
                  "symbol %s: undefined in the object and not defined by the process "
                  "(LINK-10)",
                  l->stubs[i].name);
  }
  if (l->nstubs > (RIG_LINK_MAX_BYTES - l->stubs_off) / RIG__LINK_STUB_BYTES)
    return fail(l, RIG_LINK_REFUSED, "the image and its %zu stubs would pass %zu bytes (LINK-11)",
                l->nstubs, (size_t)RIG_LINK_MAX_BYTES);
  l->total = l->stubs_off + (uint64_t)l->nstubs * RIG__LINK_STUB_BYTES;
  return RIG_LINK_OK;
}

/* ---- 5. the functions (HOST-3) ------------------------------------------------ */

static bool mapping_symbol(const linker *l, const char *n) {
  /* arm64's $x and $d mark code and data; they name no function. */
  return l->machine == EM_AARCH64 && n[0] == '$' && (n[1] == 'x' || n[1] == 'd') &&
         (n[2] == 0 || n[2] == '.');
}

/* FNV-1a: names are short, and a table lookup then costs one strcmp. */
static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* The index of t over names: of equal names, the first in resolve's order,
 * a lower rank or else an earlier symbol, holds the slot. NULL where
 * malloc refuses. */
static name_index *index_build(const table *t, const char *names) {
  size_t slots = 4;
  while (slots < 2 * t->n)
    slots *= 2;
  name_index *x = calloc(1, sizeof *x + slots * sizeof x->slot[0]);
  if (!x)
    return NULL;
  x->mask = slots - 1;
  for (size_t k = 0; k < t->n; k++) {
    const char *name = names + t->v[k].name;
    uint32_t h = name_hash(name);
    size_t i = h & x->mask;
    for (; x->slot[i][0]; i = (i + 1) & x->mask)
      if (x->slot[i][1] == h && strcmp(names + t->v[x->slot[i][0] - 1].name, name) == 0)
        break;
    if (!x->slot[i][0] || t->v[k].rank < t->v[x->slot[i][0] - 1].rank)
      x->slot[i][0] = (uint32_t)(k + 1), x->slot[i][1] = h;
  }
  return x;
}

/* The same answer without an index: a scan. */
static const entry *table_scan(const table *t, const char *names, const char *name) {
  const entry *best = NULL;
  for (size_t k = 0; k < t->n; k++)
    if (strcmp(names + t->v[k].name, name) == 0 && (!best || t->v[k].rank < best->rank))
      best = &t->v[k];
  return best;
}

/* The entry named name, or NULL. The first lookup builds the index; two at
 * once may both build it, and one copy is kept: no lookup waits. */
static const entry *table_lookup(const table *ct, const char *names, const char *name) {
  table *t = (table *)ct; /* only its index changes, once */
  name_index *x = atomic_load_explicit(&t->index, memory_order_acquire);
  if (!x) {
    name_index *none = NULL;
    if (!(x = index_build(t, names)))
      return table_scan(t, names, name);
    if (!atomic_compare_exchange_strong_explicit(&t->index, &none, x, memory_order_acq_rel,
                                                 memory_order_acquire)) {
      free(x);
      x = none;
    }
  }
  uint32_t h = name_hash(name);
  for (size_t i = h & x->mask; x->slot[i][0]; i = (i + 1) & x->mask)
    if (x->slot[i][1] == h && strcmp(names + t->v[x->slot[i][0] - 1].name, name) == 0)
      return &t->v[x->slot[i][0] - 1];
  return NULL;
}

/* Refuses function symbol i, named n, whose value lies past its section. */
static __attribute__((cold, noinline)) rig_link_status past_section(linker *l, size_t i,
                                                                   const char *n, size_t shndx) {
  if (!n)
    return fail(l, RIG_LINK_REFUSED,
                "symbol #%zu: its name lies outside its string table "
                "(LINK-3)",
                i);
  return fail(l, RIG_LINK_REFUSED,
              "symbol %.80s: its value 0x%" PRIx64 " lies outside its section %s (LINK-3)", n,
              (uint64_t)l->symv[i].st_value, sec_label(l, shndx).s);
}

/* Refuses symbol i, an indirect function (STT_GNU_IFUNC): its value is a
 * resolver, to be run at link time, that returns the function. rig runs
 * none, and offered as the function, the resolver would be launched and
 * compute nothing (LINK-7: what the name stands for is not in the image). */
static __attribute__((cold, noinline)) rig_link_status indirect_function(linker *l, size_t i) {
  return fail(l, RIG_LINK_REFUSED,
              "symbol %s: an indirect function (STT_GNU_IFUNC), whose value is a resolver "
              "that returns the function at link time; rig runs no resolver (LINK-7)",
              sym_label(l, i).s);
}

/* Symbol i's section where it may be a function of the image (HOST-3):
 * named, a function or of no type (an assembler's label), defined in an
 * executable section of the image; 0 where it is not one. Data (STT_OBJECT,
 * STT_COMMON), thread-local, section and file symbols, and the types of an
 * OS or a processor, name no code a launch may call. */
static inline size_t function_section(const linker *l, size_t i) {
  const Elf64_Sym *s = &l->symv[i];
  unsigned type = GELF_ST_TYPE(s->st_info);
  if ((type != STT_FUNC && type != STT_NOTYPE) || s->st_name == 0 ||
      s->st_shndx == SHN_UNDEF || (s->st_shndx >= SHN_LORESERVE && s->st_shndx != SHN_XINDEX))
    return 0;
  /* SHN_XINDEX without the table reads as 0, as gelf_getsymshndx leaves it. */
  size_t shndx = s->st_shndx != SHN_XINDEX ? s->st_shndx : l->xndx ? l->xndx[i] : 0;
  if (shndx >= l->nsec || !l->secs[shndx].in_image ||
      !(l->secs[shndx].sh.sh_flags & SHF_EXECINSTR))
    return 0;
  return shndx;
}

/* The image's tables and names, after its code: the functions (checked
 * here) and the stubs, each with its offset in the image. */
static rig_link_status list_functions(linker *l) {
  rig_link_image *im = l->im;
  if (!im->base) /* an empty image: no tables */
    return RIG_LINK_OK;
  entry *fv = (entry *)(im->base + l->tables_off), *sv = fv + l->nsyms;
  size_t nf = 0;
  if (l->nstrs)
    memcpy(im->base + l->names_off, l->strs, l->nstrs);
  for (size_t i = 1; i < l->nsyms; i++) {
    /* Where the object has extended indexes, every symbol must have one. */
    if (l->xndx && i >= l->nxndx) {
      GElf_Sym s;
      size_t x;
      return get_sym(l, i, &s, &x);
    }
    if (__builtin_expect(GELF_ST_TYPE(l->symv[i].st_info) == STT_GNU_IFUNC, 0))
      return indirect_function(l, i);
    size_t shndx = function_section(l, i);
    if (!shndx)
      continue;
    const Elf64_Sym *s = &l->symv[i];
    const section *sec = &l->secs[shndx];
    const char *n = sym_name(l, s);
    if (!n)
      return past_section(l, i, NULL, shndx);
    if (mapping_symbol(l, n))
      continue;
    if (s->st_value > sec->sh.sh_size)
      return past_section(l, i, n, shndx);
    if (s->st_value == sec->sh.sh_size) /* a label at its end: no code of it */
      continue;
    unsigned bind = GELF_ST_BIND(s->st_info);
    fv[nf++] = (entry){.name = s->st_name,
                       .rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
                       .off = sec->off + s->st_value};
  }
  for (size_t i = 0; i < l->nstubs; i++)
    sv[i] = (entry){.name = (uint32_t)(l->stubs[i].name - l->strs),
                    .off = l->stubs_off + i * RIG__LINK_STUB_BYTES};
  im->funcs = (table){.v = fv, .n = nf};
  im->stubs = (table){.v = sv, .n = l->nstubs};
  im->names = (const char *)im->base + l->names_off;
  return RIG_LINK_OK;
}

/* ---- 4 and 6. the mapping and the code ----------------------------------------- */

/* A mapping of the image's own: for images too large for pages.c, or
 * aligned past a page. */
static unsigned char *map_own(linker *l, size_t bytes, size_t page) {
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
static __attribute__((cold, noinline)) rig_link_status no_map(linker *l, size_t bytes, size_t page,
                                                             int e) {
  if (l->align > page)
    return fail(l, RIG_LINK_NO_MEMORY,
                "cannot map %zu bytes for the image, and %zu more to align it at %" PRIu64
                " bytes: %s",
                bytes, (size_t)l->align - page, l->align, strerror(e));
  return fail(l, RIG_LINK_NO_MEMORY, "cannot map %zu bytes for the image: %s", bytes,
              strerror(e));
}

/* Lays out the tables after the code: an entry for every symbol (a bound
 * on the functions, known before they are listed) and every stub, then the
 * names. */
static rig_link_status lay_out_tables(linker *l) {
  /* Entries hold 32-bit name offsets; past 2^31 symbols, get_sym refuses
   * anyway. */
  if (l->nsyms > (size_t)INT32_MAX + 1 || l->nstrs > UINT32_MAX)
    return fail(l, RIG_LINK_REFUSED, "symbol #%zu: unreadable: past 2^31 symbols (LINK-3)",
                (size_t)INT32_MAX + 1);
  l->tables_off = (l->total + 7) & ~(uint64_t)7;
  l->names_off = l->tables_off + ((uint64_t)l->nsyms + l->nstubs) * sizeof(entry);
  l->end = l->names_off + l->nstrs;
  return RIG_LINK_OK;
}

static rig_link_status map_image(linker *l) {
  rig_link_status st;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if ((st = lay_out_tables(l)) != RIG_LINK_OK)
    return st;
  if (l->end > SIZE_MAX - page)
    return fail(l, RIG_LINK_NO_MEMORY, "cannot map %" PRIu64 " bytes", l->end);
  size_t bytes = ((size_t)l->end + page - 1) & ~(page - 1);
  if (!(l->im = calloc(1, sizeof *l->im)))
    return fail(l, RIG_LINK_NO_MEMORY, "out of memory");
  /* Nothing to lay out and no symbols (a stripped empty object): an empty
   * image, with no pages and no functions. mmap takes no 0 bytes. */
  if (l->end == 0)
    return RIG_LINK_OK;
  unsigned char *base = NULL;
  bool pooled = l->align <= page && bytes <= rig__link_pool_limit() &&
                (base = rig__link_pool_take(bytes));
  if (!pooled && !(base = map_own(l, bytes, page)))
    return no_map(l, bytes, page, errno);
  *l->im = (rig_link_image){.base = base, .map_bytes = bytes, .pooled = pooled};
  return RIG_LINK_OK;
}

/* Copies the sections in (LINK-14). Pages of pages.c hold a freed image's
 * bytes: there the padding, SHT_NOBITS sections and the rest of the last
 * page are zeroed, as a new mapping's are. */
static void copy_sections(linker *l) {
  rig_link_image *im = l->im;
  bool dirty = im->pooled;
  uint64_t cur = 0;
  for (size_t k = 0; k < l->norder; k++) {
    const section *s = &l->secs[l->order[k]];
    if (dirty)
      memset(im->base + cur, 0, s->off - cur);
    if (s->bytes)
      memcpy(im->base + s->off, s->bytes, s->sh.sh_size);
    else if (dirty)
      memset(im->base + s->off, 0, s->sh.sh_size);
    cur = s->off + s->sh.sh_size;
  }
  if (dirty) { /* around the stubs and the tables, written apart */
    memset(im->base + cur, 0, l->stubs_off - cur);
    memset(im->base + l->total, 0, l->tables_off - l->total);
    memset(im->base + l->end, 0, im->map_bytes - l->end);
  }
}

/* Refuses relocation j of section k, whose value s + A does not fit its
 * field at p (LINK-9). */
static __attribute__((cold, noinline)) rig_link_status no_fit(linker *l, size_t k, size_t j,
                                                             uint64_t s, unsigned char *p,
                                                             rig__link_fit fit) {
  const GElf_Rela *r = &l->secs[k].rela[j];
  return fail(l, RIG_LINK_REFUSED,
              "%s: its value, from S + A = 0x%" PRIx64 " at P = 0x%" PRIx64 ", %s (LINK-9)",
              rel_label(l, k, j, r).s, s + (uint64_t)r->r_addend, (uint64_t)(uintptr_t)p,
              fit == RIG__LINK_OVERFLOW ? "overflows its field"
                                        : "has low bits its field cannot hold");
}

/* Applies the relocations of section k, checked already but for their
 * values' ranges (LINK-9). */
static rig_link_status apply_section_relocations(linker *l, size_t k) {
  unsigned char *base = l->im->base;
  const section *rs = &l->secs[k];
  const Elf64_Rela *rv = rs->rela;
  unsigned char *at = base + l->secs[rs->sh.sh_info].off;
  unsigned char *stubs = base + l->stubs_off;
  for (size_t j = 0, n = rs->nrela; j < n; j++) {
    const Elf64_Rela *r = &rv[j];
    unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
    const symbol *y = &l->syms[GELF_R_SYM(r->r_info)];
    unsigned char *p = at + r->r_offset;
    uint64_t s, stub_at = 0;
    if (y->state == SYM_IN_IMAGE) {
      s = (uint64_t)(uintptr_t)base + y->value; /* its offset in the image */
    } else {
      s = (uint64_t)(uintptr_t)l->stubs[y->at].target;
      stub_at = (uint64_t)(uintptr_t)(stubs + (uint64_t)y->at * RIG__LINK_STUB_BYTES);
    }
    rig__link_fit fit = rig__link_reloc_apply(l->machine, type, p, s, r->r_addend);
    /* A call or jump out of reach of a process symbol takes its stub
     * (RELOC-3, RELOC-7). */
    if (fit != RIG__LINK_FITS && stub_at && rig__link_reloc_branch(l->machine, type)) {
      s = stub_at;
      fit = rig__link_reloc_apply(l->machine, type, p, s, r->r_addend);
    }
    if (fit != RIG__LINK_FITS)
      return no_fit(l, k, j, s, p, fit);
  }
  return RIG_LINK_OK;
}

static rig_link_status write_image(linker *l) {
  rig_link_image *im = l->im;
  rig_link_status st;
  if (!im->base) /* an empty image: nothing to write */
    return RIG_LINK_OK;
  copy_sections(l);
  /* The stubs, after the image (RELOC-8). */
  for (size_t i = 0; i < l->nstubs; i++)
    rig__link_stub_write(l->machine, im->base + l->stubs_off + i * RIG__LINK_STUB_BYTES,
                         l->stubs[i].target);
  /* The relocations, checked already but for their values' ranges. */
  for (size_t k = 1; k < l->nsec; k++)
    if (l->secs[k].nrela && (st = apply_section_relocations(l, k)) != RIG_LINK_OK)
      return st;
#if defined(__aarch64__)
  __builtin___clear_cache((char *)im->base, (char *)im->base + im->map_bytes);
#endif
  /* Read-only and executable from now on, never writable again (LINK-15). */
  if (mprotect(im->base, im->map_bytes, PROT_READ | PROT_EXEC) != 0)
    return fail(l, RIG_LINK_SYSTEM, "cannot make the image executable: mprotect: %s",
                strerror(errno));
  im->sealed = true;
  return RIG_LINK_OK;
}

/* ---- the API --------------------------------------------------------------- */

unsigned rig__link_host_machine(void) {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return 0;
#endif
}

void rig_link_free(rig_link_image *im) {
  if (!im)
    return;
  if (im->base && im->pooled)
    rig__link_pool_give(im->base, im->map_bytes, im->sealed);
  else if (im->base)
    munmap(im->base, im->map_bytes);
  free(atomic_load(&im->funcs.index));
  free(atomic_load(&im->stubs.index));
  free(im);
}

rig_link_status rig__link_load(const void *bytes, size_t n, const rig_link_options *opt,
                               unsigned machine, rig_link_image **out, char *err, size_t errn) {
  linker l = {.machine = machine, .err = err, .errn = errn};
  rig_link_status st;
  if (err && errn)
    err[0] = 0;
  if (!bytes || !n || !out)
    return fail(&l, RIG_LINK_INVALID, "rig_link_load: %s",
                !out     ? "out is NULL"
                : !bytes ? "bytes is NULL"
                         : "an object of 0 bytes");
  if (machine != EM_X86_64 && machine != EM_AARCH64)
    return fail(&l, RIG_LINK_REFUSED,
                "this host is neither x86_64 nor arm64, where rig links no code (LINK-2)");
  pthread_once(&elf_once, elf_init);
  if (!elf_ok)
    return fail(&l, RIG_LINK_SYSTEM, "libelf refuses EV_CURRENT");

  /* libelf reads the caller's bytes in place and never writes them (it
   * reads; what it must align or convert, it copies), as libbpf relies on
   * too: no copy of the object. */
  l.elf = elf_memory((char *)(uintptr_t)bytes, n);
  if (!l.elf) {
    st = fail(&l, RIG_LINK_REFUSED, "not an ELF object: %s (LINK-3)", libelf_says());
    goto out;
  }
  if ((st = read_header(&l)) != RIG_LINK_OK || (st = read_sections(&l)) != RIG_LINK_OK ||
      (st = read_symtab(&l)) != RIG_LINK_OK || (st = check_relocations(&l)) != RIG_LINK_OK ||
      (st = resolve_undefined(&l, opt)) != RIG_LINK_OK || (st = map_image(&l)) != RIG_LINK_OK ||
      (st = list_functions(&l)) != RIG_LINK_OK || (st = write_image(&l)) != RIG_LINK_OK)
    goto out;
  *out = l.im;
  l.im = NULL;
out:
  rig_link_free(l.im);
  if (l.elf)
    elf_end(l.elf);
  free(l.secs);
  free(l.order);
  free(l.syms);
  free(l.stubs);
  return st;
}

rig_link_status rig_link_load(const void *bytes, size_t n, const rig_link_options *opt,
                              rig_link_image **out, char *err, size_t errn) {
  return rig__link_load(bytes, n, opt, rig__link_host_machine(), out, err, errn);
}

static void *find(const rig_link_image *im, const table *t, const char *name) {
  if (!im || !name)
    return NULL;
  const entry *e = table_lookup(t, im->names, name);
  return e ? im->base + e->off : NULL;
}

void *rig_link_resolve(const rig_link_image *im, const char *name) {
  return im ? find(im, &im->funcs, name) : NULL;
}

void *rig_link_stub(const rig_link_image *im, const char *name) {
  return im ? find(im, &im->stubs, name) : NULL;
}

const void *rig_link_code(const rig_link_image *im) { return im ? im->base : NULL; }

size_t rig_link_code_bytes(const rig_link_image *im) { return im ? im->map_bytes : 0; }

void *rig_link_default_lookup(void *ctx, const char *name) {
  (void)ctx;
  return name ? dlsym(RTLD_DEFAULT, name) : NULL;
}
