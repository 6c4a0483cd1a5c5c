/* SPDX-License-Identifier: MIT */
/* symbols.c: steps 3 and 4 of a load: the symbol table, the relocations of
 * the image's sections, each checked (LINK-5..8) before any memory is
 * mapped, and the symbols they use but the object does not define, looked
 * up (SYM-1, LINK-10), each to get one stub (RELOC-8). */
#include <inttypes.h>
#include <stdlib.h>

#include "load.h"

/* x86_64's large common symbols (psABI: SHN_X86_64_LCOMMON), which
 * <elf.h> does not name. */
#define SHN_X86_64_LCOMMON_INDEX 0xff02

/* Data libelf gives in the memory form of an ELF type: an array of that
 * type, aligned for it (libelf copies what the object misaligns). */
static bool typed(const Elf_Data *d, Elf_Type t, size_t size) {
  return d && d->d_type == t && d->d_size % size == 0 && (d->d_size == 0 || d->d_buf);
}

rig_link_status rig__link_read_symtab(rig__link_state *l) {
  if (!l->symtab)
    return RIG_LINK_OK;
  rig__link_section *s = &l->secs[l->symtab];
  Elf_Scn *scn = elf_getscn(l->elf, l->symtab);
  l->symdata = scn ? elf_getdata(scn, NULL) : NULL;
  if (!typed(l->symdata, ELF_T_SYM, sizeof(Elf64_Sym)))
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: an unreadable symbol table: %s (LINK-3)",
                          rig__link_sec_label(l, l->symtab).s, rig__link_libelf_says());
  l->symv = l->symdata->d_buf;
  l->nsyms = l->symdata->d_size / sizeof(Elf64_Sym);
  l->strtab = s->sh.sh_link;
  if (l->strtab == 0 || l->strtab >= l->nsec || l->secs[l->strtab].sh.sh_type != SHT_STRTAB)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: its string table #%zu is not one (LINK-3)",
                          rig__link_sec_label(l, l->symtab).s, l->strtab);
  Elf_Scn *strscn = elf_getscn(l->elf, l->strtab);
  Elf_Data *sd = strscn ? elf_rawdata(strscn, NULL) : NULL;
  if (!sd || (sd->d_size && !sd->d_buf))
    return rig__link_fail(l, RIG_LINK_REFUSED, "section %s: unreadable strings: %s (LINK-3)",
                          rig__link_sec_label(l, l->strtab).s, rig__link_libelf_says());
  l->strs = sd->d_buf;
  l->nstrs = sd->d_size;
  l->strs_end = l->nstrs && l->strs[l->nstrs - 1] == 0;
  /* Extended section indexes, where the object has more than 65279. */
  for (size_t i = 1; i < l->nsec; i++)
    if (l->secs[i].sh.sh_type == SHT_SYMTAB_SHNDX && l->secs[i].sh.sh_link == l->symtab) {
      Elf_Scn *x = elf_getscn(l->elf, i);
      l->xndxdata = x ? elf_getdata(x, NULL) : NULL;
      if (!typed(l->xndxdata, ELF_T_WORD, sizeof(Elf32_Word)))
        return rig__link_fail(l, RIG_LINK_REFUSED, "section %s: unreadable: %s (LINK-3)",
                              rig__link_sec_label(l, i).s, rig__link_libelf_says());
      l->xndx = l->xndxdata->d_buf;
      l->nxndx = l->xndxdata->d_size / sizeof(Elf32_Word);
    }
  l->syms = calloc(l->nsyms ? l->nsyms : 1, sizeof *l->syms);
  if (!l->syms)
    return rig__link_fail(l, RIG_LINK_NO_MEMORY, "out of memory reading %zu symbols", l->nsyms);
  return RIG_LINK_OK;
}

rig_link_status rig__link_sym_unreadable(rig__link_state *l, size_t i) {
  return rig__link_fail(l, RIG_LINK_REFUSED, "symbol #%zu: unreadable: %s (LINK-3)", i,
                        i >= l->nsyms   ? "past the symbol table"
                        : i > INT32_MAX ? "past 2^31 symbols"
                                        : "past its extended section indexes");
}

/* Reads symbol i, with its section index, or refuses: what
 * gelf_getsymshndx does, in place. Where the object has extended indexes,
 * every symbol must have one. */
static inline rig_link_status get_sym(rig__link_state *l, size_t i, GElf_Sym *s, size_t *shndx) {
  if (__builtin_expect(i > INT32_MAX || i >= l->nsyms || (l->xndx && i >= l->nxndx), 0)) {
    *s = (GElf_Sym){0};
    *shndx = 0;
    return rig__link_sym_unreadable(l, i);
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
static __attribute__((cold, noinline)) rig_link_status
reserved_index(rig__link_state *l, size_t rsec, size_t j, const GElf_Rela *r, unsigned shndx) {
  if (l->machine == EM_X86_64 && shndx == SHN_X86_64_LCOMMON_INDEX)
    return rig__link_fail(
        l, RIG_LINK_REFUSED,
        "%s: uses a large common symbol (SHN_X86_64_LCOMMON), defined outside the "
        "image (LINK-7)",
        rig__link_rel_label(l, rsec, j, r).s);
  return rig__link_fail(
      l, RIG_LINK_REFUSED,
      "%s: its symbol's section index 0x%x is a reserved one (%s), which names no "
      "section of the object (LINK-3)",
      rig__link_rel_label(l, rsec, j, r).s, shndx,
      shndx >= SHN_LOPROC && shndx <= SHN_HIPROC ? "a processor's"
      : shndx >= SHN_LOOS && shndx <= SHN_HIOS   ? "an OS's"
                                                 : "unassigned");
}

/* What symbol i, of type `type`, stands for where it is defined outside
 * the image (LINK-7), or NULL. */
static const char *outside_image(size_t i, const GElf_Sym *s, unsigned type) {
  if (i == 0)
    return "no symbol, an absolute address";
  if (type == STT_TLS)
    return "a thread-local symbol";
  if (type == STT_GNU_IFUNC)
    return "an indirect function (STT_GNU_IFUNC)";
  if (s->st_shndx == SHN_COMMON)
    return "a common symbol (SHN_COMMON)";
  if (s->st_shndx == SHN_ABS)
    return "an absolute symbol (SHN_ABS)";
  return NULL;
}

/* Symbol i, named name, is undefined: it gets a stub (RELOC-8). */
static rig_link_status add_stub(rig__link_state *l, size_t i, const char *name) {
  rig__link_stub *ns = realloc(l->stubs, (l->nstubs + 1) * sizeof *ns);
  if (!ns)
    return rig__link_fail(l, RIG_LINK_NO_MEMORY, "out of memory for stubs");
  l->stubs = ns;
  l->stubs[l->nstubs] = (rig__link_stub){.sym = i, .name = name};
  l->syms[i] = (rig__link_symbol){.state = RIG__LINK_SYM_UNDEFINED, .at = (uint32_t)l->nstubs++};
  return RIG_LINK_OK;
}

/* Classifies the symbol relocation j uses: in the image or undefined (then
 * it gets a stub), or refuses it (LINK-7). */
static rig_link_status use_symbol(rig__link_state *l, size_t rsec, size_t j, const GElf_Rela *r) {
  size_t i = GELF_R_SYM(r->r_info), shndx;
  GElf_Sym s;
  rig_link_status st;
  if (l->syms[i].state != RIG__LINK_SYM_UNSEEN)
    return RIG_LINK_OK;
  if ((st = get_sym(l, i, &s, &shndx)) != RIG_LINK_OK)
    return st;
  const char *name = rig__link_sym_name(l, &s);
  const char *outside = outside_image(i, &s, GELF_ST_TYPE(s.st_info));
#define RL rig__link_rel_label(l, rsec, j, r).s
  if (!name)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "%s: symbol #%zu's name lies outside its string table (LINK-3)", RL, i);
  if (outside)
    return rig__link_fail(l, RIG_LINK_REFUSED, "%s: uses %s, defined outside the image (LINK-7)",
                          RL, outside);
  if (shndx == SHN_UNDEF && !name[0])
    return rig__link_fail(l, RIG_LINK_REFUSED, "%s: an undefined symbol without a name (LINK-3)",
                          RL);
  if (shndx == SHN_UNDEF)
    return add_stub(l, i, name);
  if (s.st_shndx >= SHN_LORESERVE && s.st_shndx != SHN_XINDEX)
    return reserved_index(l, rsec, j, r, s.st_shndx);
  if (shndx >= l->nsec)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "%s: its symbol's section #%zu does not exist (LINK-3)", RL, shndx);
  if (!l->secs[shndx].in_image)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "%s: its symbol is defined in section %s, outside the image (not "
                          "SHF_ALLOC) (LINK-7)",
                          RL, rig__link_sec_label(l, shndx).s);
  if (s.st_value > l->secs[shndx].sh.sh_size)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "%s: its symbol's value 0x%" PRIx64
                          " lies outside its section %s (LINK-3)",
                          RL, (uint64_t)s.st_value, rig__link_sec_label(l, shndx).s);
#undef RL
  /* Its offset in the image: the sections are laid out already. */
  l->syms[i] =
      (rig__link_symbol){.state = RIG__LINK_SYM_IN_IMAGE, .value = l->secs[shndx].off + s.st_value};
  return RIG_LINK_OK;
}

/* The relocations of section rsec, where they patch the image, into its
 * rela and nrela; none where they patch a section outside it, as debugging
 * information does. */
static rig_link_status rel_data(rig__link_state *l, size_t rsec) {
  rig__link_section *r = &l->secs[rsec];
  if (r->sh.sh_type != SHT_RELA && r->sh.sh_type != SHT_REL)
    return RIG_LINK_OK;
  if (r->sh.sh_info == 0 || r->sh.sh_info >= l->nsec)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: relocates section #%u, which does not exist (LINK-3)",
                          rig__link_sec_label(l, rsec).s, (unsigned)r->sh.sh_info);
  if (!l->secs[r->sh.sh_info].in_image)
    return RIG_LINK_OK;
  if (r->sh.sh_type == SHT_REL)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: relocations without addends (SHT_REL) for section %s; rig "
                          "links SHT_RELA (LINK-5)",
                          rig__link_sec_label(l, rsec).s, rig__link_sec_label(l, r->sh.sh_info).s);
  if (!l->symtab || r->sh.sh_link != l->symtab)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: its symbol table #%u is not the object's (LINK-3)",
                          rig__link_sec_label(l, rsec).s, (unsigned)r->sh.sh_link);
  Elf_Scn *scn = elf_getscn(l->elf, rsec);
  Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
  if (!typed(d, ELF_T_RELA, sizeof(Elf64_Rela)))
    return rig__link_fail(l, RIG_LINK_REFUSED, "section %s: unreadable relocations: %s (LINK-3)",
                          rig__link_sec_label(l, rsec).s, rig__link_libelf_says());
  r->rela = d->d_buf;
  r->nrela = d->d_size / sizeof(Elf64_Rela);
  return RIG_LINK_OK;
}

/* Refuses relocation j of section k, which check_relocations found at
 * fault: out of line, so that the loop over the good ones stays short. */
static __attribute__((cold, noinline)) rig_link_status bad_relocation(rig__link_state *l, size_t k,
                                                                      size_t j) {
  const GElf_Rela *r = &l->secs[k].rela[j];
  const rig__link_section *target = &l->secs[l->secs[k].sh.sh_info];
  unsigned width;
  if (GELF_R_SYM(r->r_info) >= l->nsyms)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "relocation %zu of %s: symbol #%zu does not exist (LINK-3)", j,
                          rig__link_sec_label(l, k).s, (size_t)GELF_R_SYM(r->r_info));
  if (!rig__link_reloc_listed(l->machine, (unsigned)GELF_R_TYPE(r->r_info), &width))
    return rig__link_fail_type(l, k, j, r);
  return rig__link_fail(l, RIG_LINK_REFUSED,
                        "%s: patches outside its section's %" PRIu64 " bytes, outside the "
                        "image (LINK-8)",
                        rig__link_rel_label(l, k, j, r).s, (uint64_t)target->sh.sh_size);
}

/* Checks the relocations of section k, before any memory is mapped: their
 * symbols exist, their types are listed (LINK-6), their fields lie inside
 * their section (LINK-8); each symbol is classified at its first use. */
static rig_link_status check_section_relocations(rig__link_state *l, size_t k) {
  const rig__link_section *rs = &l->secs[k];
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
    if (l->syms[sym].state == RIG__LINK_SYM_UNSEEN && (st = use_symbol(l, k, j, r)) != RIG_LINK_OK)
      return st;
  }
  return RIG_LINK_OK;
}

rig_link_status rig__link_check_relocations(rig__link_state *l) {
  rig_link_status st;
  for (size_t k = 1; k < l->nsec; k++)
    if ((st = rel_data(l, k)) != RIG_LINK_OK ||
        (st = check_section_relocations(l, k)) != RIG_LINK_OK)
      return st;
  return RIG_LINK_OK;
}

/* Looks up the undefined symbols (SYM-1, LINK-10) and sizes the image. */
rig_link_status rig__link_resolve_undefined(rig__link_state *l, const rig_link_options *opt) {
  rig_link_lookup_fn look = opt && opt->lookup ? opt->lookup : rig_link_default_lookup;
  void *ctx = opt && opt->lookup ? opt->lookup_ctx : NULL;
  for (size_t i = 0; i < l->nstubs; i++) {
    l->stubs[i].target = look(ctx, l->stubs[i].name);
    if (!l->stubs[i].target)
      return rig__link_fail(l, RIG_LINK_REFUSED,
                            "symbol %s: undefined in the object and not defined by the process "
                            "(LINK-10)",
                            l->stubs[i].name);
  }
  if (l->nstubs > (RIG_LINK_MAX_BYTES - l->stubs_off) / RIG__LINK_STUB_BYTES)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "the image and its %zu stubs would pass %zu bytes (LINK-11)", l->nstubs,
                          (size_t)RIG_LINK_MAX_BYTES);
  l->total = l->stubs_off + (uint64_t)l->nstubs * RIG__LINK_STUB_BYTES;
  return RIG_LINK_OK;
}
