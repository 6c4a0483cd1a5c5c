/* load.c: rig_link_load and the image (HOST-2, HOST-3, LINK-1..15, SYM-1).
 *
 * One load, in order:
 * 1. the object's header (LINK-2, LINK-3), read with libelf from a private
 *    copy of the caller's bytes, which libelf may rewrite;
 * 2. its sections: every SHF_ALLOC one joins the image (LINK-12), checked
 *    (LINK-4, LINK-7) and laid out at its alignment (LINK-13), read-only
 *    data first, then code, so that the stubs that follow are nearest the
 *    calls that use them;
 * 3. the relocations of those sections, each checked (LINK-5..8) before any
 *    memory is mapped; the symbols they use but the object does not define
 *    are looked up (SYM-1, LINK-10) and get one stub each (RELOC-8);
 * 4. the image's size (LINK-11) and the table of its functions (HOST-3);
 * 5. the mapping, read-write: the sections are copied once, the stubs
 *    written, the relocations applied with their range checks (LINK-9), and
 *    only then is it made read-only and executable (LINK-14, LINK-15,
 *    PLAT-3). It is never writable and executable at once.
 * A refusal at any step unmaps and frees what the load took.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
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

typedef struct entry {
  const char *name;
  void *addr;
  unsigned rank; /* resolve's order among equal names: global, weak, local */
  size_t index;  /* the symbol's index, the last tie-break */
} entry;

struct rig_link_image {
  unsigned char *base; /* the mapping: sections, then stubs */
  size_t map_bytes;
  size_t nfuncs;
  entry *funcs; /* sorted by name, one per name */
  size_t nstubs;
  entry *stubs; /* sorted by name */
  char *names;  /* the symbol string table, which the names point into */
};

typedef struct section {
  GElf_Shdr sh;
  const char *name;
  bool in_image;     /* SHF_ALLOC: laid out in the image */
  uint64_t off;      /* its offset in the image */
  const void *bytes; /* its bytes in the object; NULL for SHT_NOBITS */
} section;

enum sym_state { SYM_UNSEEN = 0, SYM_IN_IMAGE, SYM_UNDEFINED };

typedef struct symbol {
  unsigned char state;
  size_t shndx; /* SYM_IN_IMAGE: its section */
  uint64_t value;
  size_t stub; /* SYM_UNDEFINED: its stub */
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
  char *copy; /* the object's bytes, which libelf reads */
  Elf *elf;
  size_t nsec;
  section *secs;
  size_t symtab; /* its section index; 0: none */
  Elf_Data *symdata, *xndxdata;
  size_t nsyms;
  size_t strtab;
  const char *strs; /* the symbol string table's bytes in the object */
  size_t nstrs;
  symbol *syms;
  size_t nstubs;
  stub *stubs;
  uint64_t stubs_off, total;
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

/* The name of symbol i: NULL where it lies outside the string table. */
static const char *sym_name(const linker *l, const GElf_Sym *s) {
  if (!l->strs || s->st_name >= l->nstrs)
    return NULL;
  if (!elf_strptr(l->elf, l->strtab, s->st_name))
    return NULL;
  if (!memchr(l->strs + s->st_name, 0, l->nstrs - s->st_name))
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
    if (al > l->align)
      l->align = al;
  }
  return RIG_LINK_OK;
}

static rig_link_status read_sections(linker *l) {
  size_t shstrndx;
  GElf_Ehdr eh;
  if (elf_getshdrnum(l->elf, &l->nsec) != 0 || !gelf_getehdr(l->elf, &eh))
    return fail(l, RIG_LINK_REFUSED, "section headers: unreadable: %s (LINK-3)", libelf_says());
  /* libelf reads no section where their headers lie past the object's end. */
  if (l->nsec == 0 && (eh.e_shoff != 0 || eh.e_shnum != 0))
    return fail(l, RIG_LINK_REFUSED,
                "section headers: %u at offset %" PRIu64 " lie outside the object (LINK-3)",
                (unsigned)eh.e_shnum, (uint64_t)eh.e_shoff);
  if (elf_getshdrstrndx(l->elf, &shstrndx) != 0)
    return fail(l, RIG_LINK_REFUSED, "section names: no table: %s (LINK-3)", libelf_says());
  l->secs = calloc(l->nsec ? l->nsec : 1, sizeof *l->secs);
  if (!l->secs)
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

static rig_link_status read_symtab(linker *l) {
  if (!l->symtab)
    return RIG_LINK_OK;
  section *s = &l->secs[l->symtab];
  label sl = sec_label(l, l->symtab);
  Elf_Scn *scn = elf_getscn(l->elf, l->symtab);
  l->symdata = scn ? elf_getdata(scn, NULL) : NULL;
  if (!l->symdata || l->symdata->d_size % sizeof(Elf64_Sym))
    return fail(l, RIG_LINK_REFUSED, "section %s: an unreadable symbol table: %s (LINK-3)", sl.s,
                libelf_says());
  l->nsyms = l->symdata->d_size / sizeof(Elf64_Sym);
  l->strtab = s->sh.sh_link;
  if (l->strtab == 0 || l->strtab >= l->nsec || l->secs[l->strtab].sh.sh_type != SHT_STRTAB)
    return fail(l, RIG_LINK_REFUSED, "section %s: its string table #%zu is not one (LINK-3)", sl.s,
                l->strtab);
  Elf_Scn *strscn = elf_getscn(l->elf, l->strtab);
  Elf_Data *sd = strscn ? elf_rawdata(strscn, NULL) : NULL;
  if (!sd || (sd->d_size && !sd->d_buf))
    return fail(l, RIG_LINK_REFUSED, "section %s: unreadable strings: %s (LINK-3)",
                sec_label(l, l->strtab).s, libelf_says());
  l->strs = sd->d_buf;
  l->nstrs = sd->d_size;
  /* Extended section indexes, where the object has more than 65279. */
  for (size_t i = 1; i < l->nsec; i++)
    if (l->secs[i].sh.sh_type == SHT_SYMTAB_SHNDX && l->secs[i].sh.sh_link == l->symtab) {
      Elf_Scn *x = elf_getscn(l->elf, i);
      l->xndxdata = x ? elf_getdata(x, NULL) : NULL;
      if (!l->xndxdata)
        return fail(l, RIG_LINK_REFUSED, "section %s: unreadable: %s (LINK-3)", sec_label(l, i).s,
                    libelf_says());
    }
  l->syms = calloc(l->nsyms ? l->nsyms : 1, sizeof *l->syms);
  if (!l->syms)
    return fail(l, RIG_LINK_NO_MEMORY, "out of memory reading %zu symbols", l->nsyms);
  return RIG_LINK_OK;
}

/* Reads symbol i, with its section index, or refuses. */
static rig_link_status get_sym(linker *l, size_t i, GElf_Sym *s, size_t *shndx) {
  Elf32_Word x = 0;
  if (i > INT32_MAX || !gelf_getsymshndx(l->symdata, l->xndxdata, (int)i, s, &x))
    return fail(l, RIG_LINK_REFUSED, "symbol #%zu: unreadable: %s (LINK-3)", i, libelf_says());
  *shndx = s->st_shndx == SHN_XINDEX ? x : s->st_shndx;
  return RIG_LINK_OK;
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
    l->syms[i] = (symbol){.state = SYM_UNDEFINED, .stub = l->nstubs++};
    return RIG_LINK_OK;
  }
  if (shndx >= l->nsec || (s.st_shndx >= SHN_LORESERVE && s.st_shndx != SHN_XINDEX))
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
  l->syms[i] = (symbol){.state = SYM_IN_IMAGE, .shndx = shndx, .value = s.st_value};
  return RIG_LINK_OK;
}

/* The relocations of section rsec, where they patch the image: their data,
 * or NULL (and *skip) where they patch a section outside it, as debugging
 * information does. */
static rig_link_status rel_data(linker *l, size_t rsec, Elf_Data **out, size_t *count) {
  section *r = &l->secs[rsec];
  label rl = sec_label(l, rsec);
  *out = NULL;
  *count = 0;
  if (r->sh.sh_type != SHT_RELA && r->sh.sh_type != SHT_REL)
    return RIG_LINK_OK;
  if (r->sh.sh_info == 0 || r->sh.sh_info >= l->nsec)
    return fail(l, RIG_LINK_REFUSED,
                "section %s: relocates section #%u, which does not exist (LINK-3)", rl.s,
                (unsigned)r->sh.sh_info);
  if (!l->secs[r->sh.sh_info].in_image)
    return RIG_LINK_OK;
  if (r->sh.sh_type == SHT_REL)
    return fail(l, RIG_LINK_REFUSED,
                "section %s: relocations without addends (SHT_REL) for section %s; rig "
                "links SHT_RELA (LINK-5)",
                rl.s, sec_label(l, r->sh.sh_info).s);
  if (!l->symtab || r->sh.sh_link != l->symtab)
    return fail(l, RIG_LINK_REFUSED,
                "section %s: its symbol table #%u is not the object's (LINK-3)", rl.s,
                (unsigned)r->sh.sh_link);
  Elf_Scn *scn = elf_getscn(l->elf, rsec);
  Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
  if (!d || d->d_size % sizeof(Elf64_Rela))
    return fail(l, RIG_LINK_REFUSED, "section %s: unreadable relocations: %s (LINK-3)", rl.s,
                libelf_says());
  *out = d;
  *count = d->d_size / sizeof(Elf64_Rela);
  return RIG_LINK_OK;
}

static rig_link_status check_relocations(linker *l) {
  rig_link_status st;
  for (size_t k = 1; k < l->nsec; k++) {
    Elf_Data *d;
    size_t count;
    if ((st = rel_data(l, k, &d, &count)) != RIG_LINK_OK)
      return st;
    const section *target = d ? &l->secs[l->secs[k].sh.sh_info] : NULL;
    for (size_t j = 0; j < count; j++) {
      GElf_Rela r;
      unsigned width;
      if (j > INT32_MAX || !gelf_getrela(d, (int)j, &r))
        return fail(l, RIG_LINK_REFUSED, "relocation %zu of %s: unreadable: %s (LINK-3)", j,
                    sec_label(l, k).s, libelf_says());
      unsigned type = (unsigned)GELF_R_TYPE(r.r_info);
      if (GELF_R_SYM(r.r_info) >= l->nsyms)
        return fail(l, RIG_LINK_REFUSED,
                    "relocation %zu of %s: symbol #%zu does not exist (LINK-3)", j,
                    sec_label(l, k).s, (size_t)GELF_R_SYM(r.r_info));
      if (!rig__link_reloc_listed(l->machine, type, &width))
        return fail(l, RIG_LINK_REFUSED, "%s: a type not in the Relocations list (LINK-6)",
                    rel_label(l, k, j, &r).s);
      if (r.r_offset > target->sh.sh_size || target->sh.sh_size - r.r_offset < width)
        return fail(l, RIG_LINK_REFUSED,
                    "%s: patches outside its section's %" PRIu64 " bytes, outside the "
                    "image (LINK-8)",
                    rel_label(l, k, j, &r).s, (uint64_t)target->sh.sh_size);
      if ((st = use_symbol(l, k, j, &r)) != RIG_LINK_OK)
        return st;
    }
  }
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

/* ---- 4. the functions (HOST-3) ------------------------------------------------ */

static bool mapping_symbol(const linker *l, const char *n) {
  /* arm64's $x and $d mark code and data; they name no function. */
  return l->machine == EM_AARCH64 && n[0] == '$' && (n[1] == 'x' || n[1] == 'd') &&
         (n[2] == 0 || n[2] == '.');
}

static int entry_cmp(const void *a, const void *b) {
  const entry *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c)
    return c;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static rig_link_status list_functions(linker *l) {
  rig_link_image *im = l->im;
  size_t n = 0;
  rig_link_status st;
  /* The names live in a copy of the string table, which outlives the object. */
  im->names = malloc(l->nstrs ? l->nstrs : 1);
  if (!im->names)
    return fail(l, RIG_LINK_NO_MEMORY, "out of memory for symbol names");
  if (l->nstrs)
    memcpy(im->names, l->strs, l->nstrs);

  im->funcs = calloc(l->nsyms ? l->nsyms : 1, sizeof *im->funcs);
  im->stubs = calloc(l->nstubs ? l->nstubs : 1, sizeof *im->stubs);
  if (!im->funcs || !im->stubs)
    return fail(l, RIG_LINK_NO_MEMORY, "out of memory for symbols");
  for (size_t i = 1; i < l->nsyms; i++) {
    GElf_Sym s;
    size_t shndx;
    if ((st = get_sym(l, i, &s, &shndx)) != RIG_LINK_OK)
      return st;
    unsigned type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
    if (type == STT_SECTION || type == STT_FILE || type == STT_TLS || s.st_name == 0)
      continue;
    if (s.st_shndx == SHN_UNDEF || shndx >= l->nsec ||
        (s.st_shndx >= SHN_LORESERVE && s.st_shndx != SHN_XINDEX))
      continue;
    const section *sec = &l->secs[shndx];
    if (!sec->in_image || !(sec->sh.sh_flags & SHF_EXECINSTR))
      continue;
    const char *name = sym_name(l, &s);
    if (!name)
      return fail(l, RIG_LINK_REFUSED,
                  "symbol #%zu: its name lies outside its string table "
                  "(LINK-3)",
                  i);
    if (mapping_symbol(l, name))
      continue;
    if (s.st_value > sec->sh.sh_size)
      return fail(l, RIG_LINK_REFUSED,
                  "symbol %.80s: its value 0x%" PRIx64 " lies outside its section %s (LINK-3)",
                  name, (uint64_t)s.st_value, sec_label(l, shndx).s);
    im->funcs[n++] = (entry){.name = im->names + s.st_name,
                             /* An offset until the image is mapped. */
                             .addr = (void *)(uintptr_t)(sec->off + s.st_value),
                             .rank = bind == STB_GLOBAL ? 0
                                     : bind == STB_WEAK ? 1
                                                        : 2,
                             .index = i};
  }
  qsort(im->funcs, n, sizeof *im->funcs, entry_cmp);
  size_t m = 0; /* one per name: the first in resolve's order */
  for (size_t i = 0; i < n; i++)
    if (m == 0 || strcmp(im->funcs[m - 1].name, im->funcs[i].name) != 0)
      im->funcs[m++] = im->funcs[i];
  im->nfuncs = m;
  for (size_t i = 0; i < l->nstubs; i++)
    im->stubs[i] = (entry){.name = im->names + (l->stubs[i].name - l->strs),
                           .addr = (void *)(uintptr_t)(l->stubs_off + i * RIG__LINK_STUB_BYTES),
                           .index = i};
  im->nstubs = l->nstubs;
  qsort(im->stubs, im->nstubs, sizeof *im->stubs, entry_cmp);
  return RIG_LINK_OK;
}

/* ---- 5. the mapping ----------------------------------------------------------- */

static rig_link_status map_image(linker *l) {
  rig_link_image *im = l->im;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t bytes = l->total ? (size_t)l->total : 1;
  bytes = (bytes + page - 1) & ~(page - 1);
  /* Sections aligned beyond a page need a base aligned as much. */
  size_t slack = l->align > page ? (size_t)l->align - page : 0;
  if (bytes > SIZE_MAX - slack)
    return fail(l, RIG_LINK_NO_MEMORY, "cannot map %zu bytes", bytes);
  /* A small image is populated at once: it is written whole next, and one
   * fault per page costs more than the kernel filling the range in one
   * call. A large one faults in as written, so that an object claiming a
   * huge empty section commits nothing it does not write. */
  int populate = bytes + slack <= ((size_t)16 << 20) ? MAP_POPULATE : 0;
  void *m = mmap(NULL, bytes + slack, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
  if (m == MAP_FAILED)
    return fail(l, RIG_LINK_NO_MEMORY, "cannot map %zu bytes for the image: %s", bytes,
                strerror(errno));
  uintptr_t a = (uintptr_t)m, base = a;
  if (slack) {
    base = (a + (uintptr_t)l->align - 1) & ~((uintptr_t)l->align - 1);
    if (base > a)
      munmap(m, base - a);
    if (a + slack > base)
      munmap((void *)(base + bytes), a + slack - base);
  }
  im->base = (unsigned char *)base;
  im->map_bytes = bytes;
  return RIG_LINK_OK;
}

static rig_link_status write_image(linker *l) {
  rig_link_image *im = l->im;
  rig_link_status st;
  /* The sections, written once (LINK-14); SHT_NOBITS stay zero. */
  for (size_t i = 1; i < l->nsec; i++)
    if (l->secs[i].in_image && l->secs[i].bytes)
      memcpy(im->base + l->secs[i].off, l->secs[i].bytes, l->secs[i].sh.sh_size);
  /* The stubs, after the image (RELOC-8). */
  for (size_t i = 0; i < l->nstubs; i++)
    rig__link_stub_write(l->machine, im->base + l->stubs_off + i * RIG__LINK_STUB_BYTES,
                         l->stubs[i].target);
  /* The relocations, checked already but for their values' ranges. */
  for (size_t k = 1; k < l->nsec; k++) {
    Elf_Data *d;
    size_t count;
    if ((st = rel_data(l, k, &d, &count)) != RIG_LINK_OK)
      return st;
    const section *target = d ? &l->secs[l->secs[k].sh.sh_info] : NULL;
    for (size_t j = 0; j < count; j++) {
      GElf_Rela r;
      if (!gelf_getrela(d, (int)j, &r))
        return fail(l, RIG_LINK_REFUSED, "relocation %zu of %s: unreadable (LINK-3)", j,
                    sec_label(l, k).s);
      unsigned type = (unsigned)GELF_R_TYPE(r.r_info);
      const symbol *y = &l->syms[GELF_R_SYM(r.r_info)];
      unsigned char *p = im->base + target->off + r.r_offset;
      uint64_t s, stub_at = 0;
      if (y->state == SYM_IN_IMAGE) {
        s = (uint64_t)(uintptr_t)im->base + l->secs[y->shndx].off + y->value;
      } else {
        s = (uint64_t)(uintptr_t)l->stubs[y->stub].target;
        stub_at = (uint64_t)(uintptr_t)im->base + l->stubs_off + y->stub * RIG__LINK_STUB_BYTES;
      }
      rig__link_fit fit = rig__link_reloc_apply(l->machine, type, p, s, r.r_addend);
      /* A call or jump out of reach of a process symbol takes its stub
       * (RELOC-3, RELOC-7). */
      if (fit != RIG__LINK_FITS && stub_at && rig__link_reloc_branch(l->machine, type)) {
        s = stub_at;
        fit = rig__link_reloc_apply(l->machine, type, p, s, r.r_addend);
      }
      if (fit != RIG__LINK_FITS)
        return fail(l, RIG_LINK_REFUSED,
                    "%s: its value, from S + A = 0x%" PRIx64 " at P = 0x%" PRIx64 ", %s (LINK-9)",
                    rel_label(l, k, j, &r).s, s + (uint64_t)r.r_addend, (uint64_t)(uintptr_t)p,
                    fit == RIG__LINK_OVERFLOW ? "overflows its field"
                                              : "has low bits its field cannot hold");
    }
  }
  for (size_t i = 0; i < im->nfuncs; i++)
    im->funcs[i].addr = im->base + (uintptr_t)im->funcs[i].addr;
  for (size_t i = 0; i < im->nstubs; i++)
    im->stubs[i].addr = im->base + (uintptr_t)im->stubs[i].addr;
#if defined(__aarch64__)
  __builtin___clear_cache((char *)im->base, (char *)im->base + im->map_bytes);
#endif
  /* Read-only and executable from now on, never writable again (LINK-15). */
  if (mprotect(im->base, im->map_bytes, PROT_READ | PROT_EXEC) != 0)
    return fail(l, RIG_LINK_SYSTEM, "cannot make the image executable: mprotect: %s",
                strerror(errno));
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
  if (im->base)
    munmap(im->base, im->map_bytes);
  free(im->funcs);
  free(im->stubs);
  free(im->names);
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

  l.copy = malloc(n);
  if (!l.copy)
    return fail(&l, RIG_LINK_NO_MEMORY, "out of memory copying %zu bytes", n);
  memcpy(l.copy, bytes, n);
  l.elf = elf_memory(l.copy, n);
  if (!l.elf) {
    st = fail(&l, RIG_LINK_REFUSED, "not an ELF object: %s (LINK-3)", libelf_says());
    goto out;
  }
  l.im = calloc(1, sizeof *l.im);
  if (!l.im) {
    st = fail(&l, RIG_LINK_NO_MEMORY, "out of memory");
    goto out;
  }
  if ((st = read_header(&l)) != RIG_LINK_OK || (st = read_sections(&l)) != RIG_LINK_OK ||
      (st = read_symtab(&l)) != RIG_LINK_OK || (st = check_relocations(&l)) != RIG_LINK_OK ||
      (st = resolve_undefined(&l, opt)) != RIG_LINK_OK ||
      (st = list_functions(&l)) != RIG_LINK_OK || (st = map_image(&l)) != RIG_LINK_OK ||
      (st = write_image(&l)) != RIG_LINK_OK)
    goto out;
  *out = l.im;
  l.im = NULL;
out:
  rig_link_free(l.im);
  if (l.elf)
    elf_end(l.elf);
  free(l.copy);
  free(l.secs);
  free(l.syms);
  free(l.stubs);
  return st;
}

rig_link_status rig_link_load(const void *bytes, size_t n, const rig_link_options *opt,
                              rig_link_image **out, char *err, size_t errn) {
  return rig__link_load(bytes, n, opt, rig__link_host_machine(), out, err, errn);
}

static void *find(const entry *v, size_t n, const char *name) {
  size_t lo = 0, hi = n;
  if (!name)
    return NULL;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(name, v[mid].name);
    if (c == 0) {
      /* The first of equal names, in resolve's order. */
      while (mid > 0 && strcmp(name, v[mid - 1].name) == 0)
        mid--;
      return v[mid].addr;
    }
    if (c < 0)
      hi = mid;
    else
      lo = mid + 1;
  }
  return NULL;
}

void *rig_link_resolve(const rig_link_image *im, const char *name) {
  return im ? find(im->funcs, im->nfuncs, name) : NULL;
}

void *rig_link_stub(const rig_link_image *im, const char *name) {
  return im ? find(im->stubs, im->nstubs, name) : NULL;
}

const void *rig_link_code(const rig_link_image *im) { return im ? im->base : NULL; }

size_t rig_link_code_bytes(const rig_link_image *im) { return im ? im->map_bytes : 0; }

void *rig_link_default_lookup(void *ctx, const char *name) {
  (void)ctx;
  return name ? dlsym(RTLD_DEFAULT, name) : NULL;
}
