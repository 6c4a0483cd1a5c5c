/* SPDX-License-Identifier: MIT */
/* object.c: steps 1 and 2 of a load: the object's ELF header (LINK-2,
 * LINK-3), then its sections: every SHF_ALLOC one joins the image
 * (LINK-12), checked (LINK-4, LINK-7) and laid out at its alignment
 * (LINK-13), read-only data first, then code, so that the stubs that follow
 * are nearest the calls that use them. */
#include <inttypes.h>
#include <stdlib.h>

#include "load.h"

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

rig_link_status rig__link_read_header(rig__link_state *l) {
  size_t idn = 0;
  const char *ident;
  GElf_Ehdr eh;

  if (elf_kind(l->elf) == ELF_K_AR)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "an ar archive (a static library), not an ELF object: rig links one "
                          "object, each of its members on its own (LINK-3)");
  if (elf_kind(l->elf) != ELF_K_ELF)
    return rig__link_fail(l, RIG_LINK_REFUSED, "not an ELF object (LINK-3)");
  ident = elf_getident(l->elf, &idn);
  if (!ident || idn < EI_NIDENT)
    return rig__link_fail(l, RIG_LINK_REFUSED, "ELF header: unreadable (LINK-3)");
  if ((unsigned char)ident[EI_CLASS] != ELFCLASS64)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "ELF header: a %s object; rig links 64-bit ones (LINK-3)",
                          (unsigned char)ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "class-less");
  if ((unsigned char)ident[EI_DATA] != ELFDATA2LSB)
    return rig__link_fail(
        l, RIG_LINK_REFUSED, "ELF header: a %s object; rig links little-endian ones (LINK-3)",
        (unsigned char)ident[EI_DATA] == ELFDATA2MSB ? "big-endian" : "byte-order-less");
  if (!gelf_getehdr(l->elf, &eh))
    return rig__link_fail(l, RIG_LINK_REFUSED, "ELF header: unreadable: %s (LINK-3)",
                          rig__link_libelf_says());
  if (eh.e_type != ET_REL)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "ELF header: e_type %u (%s), not a relocatable object, ET_REL (LINK-3)",
                          (unsigned)eh.e_type,
                          eh.e_type == ET_EXEC   ? "ET_EXEC"
                          : eh.e_type == ET_DYN  ? "ET_DYN"
                          : eh.e_type == ET_CORE ? "ET_CORE"
                                                 : "unknown");
  if (eh.e_machine != l->machine)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "ELF header: an object for e_machine %u (%s), not for this host's "
                          "%s (LINK-3)",
                          (unsigned)eh.e_machine, machine_name(eh.e_machine),
                          machine_name(l->machine));
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
static rig_link_status lay_out(rig__link_state *l, bool code, uint64_t *cur) {
  for (size_t i = 1; i < l->nsec; i++) {
    rig__link_section *s = &l->secs[i];
    if (!s->in_image || !!(s->sh.sh_flags & SHF_EXECINSTR) != code)
      continue;
    uint64_t al = s->sh.sh_addralign > 1 ? s->sh.sh_addralign : 1;
    if (al > RIG_LINK_MAX_BYTES || *cur > RIG_LINK_MAX_BYTES - (al - 1))
      return rig__link_fail(l, RIG_LINK_REFUSED,
                            "section %s: the image would pass %zu bytes (LINK-11)",
                            rig__link_sec_label(l, i).s, (size_t)RIG_LINK_MAX_BYTES);
    s->off = (*cur + al - 1) & ~(al - 1);
    if (s->sh.sh_size > RIG_LINK_MAX_BYTES - s->off)
      return rig__link_fail(
          l, RIG_LINK_REFUSED,
          "section %s: %" PRIu64 " bytes: the image would pass %zu bytes (LINK-11)",
          rig__link_sec_label(l, i).s, (uint64_t)s->sh.sh_size, (size_t)RIG_LINK_MAX_BYTES);
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
static __attribute__((cold, noinline)) rig_link_status headers_outside(rig__link_state *l,
                                                                       const GElf_Ehdr *eh) {
  size_t size = 0;
  const char *raw = elf_rawfile(l->elf, &size);
  uint64_t count = eh->e_shnum;
  const char *from = "e_shnum";
  if (count == 0) {
    Elf64_Shdr zero;
    if (!raw || eh->e_shoff > size || size - eh->e_shoff < sizeof zero)
      return rig__link_fail(l, RIG_LINK_REFUSED,
                            "ELF header: e_shnum 0, and section 0, which would give the count of "
                            "section headers, lies at offset %" PRIu64 ", outside the object's %zu "
                            "bytes (LINK-3)",
                            (uint64_t)eh->e_shoff, size);
    memcpy(&zero, raw + eh->e_shoff, sizeof zero);
    count = zero.sh_size;
    from = "section 0's sh_size, as e_shnum is 0";
    if (count == 0)
      return rig__link_fail(l, RIG_LINK_REFUSED,
                            "ELF header: section headers at offset %" PRIu64 ", but none counted: "
                            "e_shnum and section 0's sh_size are 0 (LINK-3)",
                            (uint64_t)eh->e_shoff);
  }
  return rig__link_fail(l, RIG_LINK_REFUSED,
                        "ELF header: %" PRIu64 " section headers (%s) at offset %" PRIu64
                        " lie outside the object's %zu bytes (LINK-3)",
                        count, from, (uint64_t)eh->e_shoff, size);
}

/* Counts the sections and takes the arrays that hold them; the index of
 * the section-name table into *shstrndx. */
static rig_link_status open_sections(rig__link_state *l, size_t *shstrndx) {
  GElf_Ehdr eh;
  if (elf_getshdrnum(l->elf, &l->nsec) != 0 || !gelf_getehdr(l->elf, &eh))
    return rig__link_fail(l, RIG_LINK_REFUSED, "section headers: unreadable: %s (LINK-3)",
                          rig__link_libelf_says());
  /* libelf reads no section where their headers lie past the object's end. */
  if (l->nsec == 0 && (eh.e_shoff != 0 || eh.e_shnum != 0))
    return headers_outside(l, &eh);
  if (elf_getshdrstrndx(l->elf, shstrndx) != 0)
    return rig__link_fail(l, RIG_LINK_REFUSED, "section names: no table: %s (LINK-3)",
                          rig__link_libelf_says());
  l->secs = calloc(l->nsec ? l->nsec : 1, sizeof *l->secs);
  l->order = malloc((l->nsec ? l->nsec : 1) * sizeof *l->order);
  if (!l->secs || !l->order)
    return rig__link_fail(l, RIG_LINK_NO_MEMORY, "out of memory reading %zu sections", l->nsec);
  return RIG_LINK_OK;
}

/* Checks allocated section i, part of the image (LINK-12), and finds its
 * bytes in the object. */
static rig_link_status join_image(rig__link_state *l, size_t i, Elf_Scn *scn) {
  rig__link_section *s = &l->secs[i];
  if ((s->sh.sh_flags & SHF_WRITE) && s->sh.sh_size > 0)
    return rig__link_fail_writable(l, i, (uint64_t)s->sh.sh_size);
  if ((s->sh.sh_flags & SHF_TLS) && s->sh.sh_size > 0)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: thread-local data, defined outside the image (LINK-7)",
                          rig__link_sec_label(l, i).s);
  if (s->sh.sh_type == SHT_REL || s->sh.sh_type == SHT_RELA || s->sh.sh_type == SHT_SYMTAB ||
      s->sh.sh_type == SHT_GROUP || (s->sh.sh_flags & SHF_COMPRESSED))
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: a relocation, symbol, group or compressed section "
                          "cannot be allocated (LINK-3)",
                          rig__link_sec_label(l, i).s);
  if (s->sh.sh_addralign > 1 && !is_pow2(s->sh.sh_addralign))
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: alignment %" PRIu64 " is not a power of two (LINK-3)",
                          rig__link_sec_label(l, i).s, (uint64_t)s->sh.sh_addralign);
  if (s->sh.sh_addralign > MAX_ALIGN)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: alignment 2^%d (%" PRIu64
                          " bytes); rig aligns a section at 2^%d bytes at most (LINK-13)",
                          rig__link_sec_label(l, i).s, __builtin_ctzll(s->sh.sh_addralign),
                          (uint64_t)s->sh.sh_addralign, __builtin_ctzll(MAX_ALIGN));
  if (s->sh.sh_type != SHT_NOBITS && s->sh.sh_size > 0) {
    Elf_Data *d = elf_rawdata(scn, NULL);
    if (!d || !d->d_buf || d->d_size != s->sh.sh_size)
      return rig__link_fail(l, RIG_LINK_REFUSED,
                            "section %s: its %" PRIu64 " bytes lie outside the object (LINK-3)",
                            rig__link_sec_label(l, i).s, (uint64_t)s->sh.sh_size);
    s->bytes = d->d_buf;
  }
  s->in_image = true;
  return RIG_LINK_OK;
}

/* Reads section i's header and name; notes the symbol table; an allocated
 * section joins the image. */
static rig_link_status read_section(rig__link_state *l, size_t i, size_t shstrndx) {
  rig__link_section *s = &l->secs[i];
  Elf_Scn *scn = elf_getscn(l->elf, i);
  if (!scn || !gelf_getshdr(scn, &s->sh))
    return rig__link_fail(l, RIG_LINK_REFUSED, "section #%zu: unreadable header: %s (LINK-3)", i,
                          rig__link_libelf_says());
  s->name = elf_strptr(l->elf, shstrndx, s->sh.sh_name);
  if (!s->name)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section #%zu: its name lies outside the section-name table (LINK-3)", i);
  if (s->sh.sh_type == SHT_SYMTAB) {
    if (l->symtab)
      return rig__link_fail(l, RIG_LINK_REFUSED, "section %s: a second symbol table (LINK-3)",
                            rig__link_sec_label(l, i).s);
    l->symtab = i;
  }
  return s->sh.sh_flags & SHF_ALLOC ? join_image(l, i, scn) : RIG_LINK_OK;
}

/* Layout: read-only data, then code (LINK-12, LINK-13), then the stubs at
 * 16 bytes. */
static rig_link_status lay_out_image(rig__link_state *l) {
  uint64_t cur = 0;
  rig_link_status st;
  l->align = 1;
  if ((st = lay_out(l, false, &cur)) != RIG_LINK_OK)
    return st;
  if ((st = lay_out(l, true, &cur)) != RIG_LINK_OK)
    return st;
  if (cur > RIG_LINK_MAX_BYTES - 15)
    return rig__link_fail(l, RIG_LINK_REFUSED, "the image would pass %zu bytes (LINK-11)",
                          (size_t)RIG_LINK_MAX_BYTES);
  l->stubs_off = (cur + 15) & ~(uint64_t)15;
  if (l->align < 16)
    l->align = 16;
  return RIG_LINK_OK;
}

rig_link_status rig__link_read_sections(rig__link_state *l) {
  size_t shstrndx;
  rig_link_status st;
  if ((st = open_sections(l, &shstrndx)) != RIG_LINK_OK)
    return st;
  for (size_t i = 1; i < l->nsec; i++)
    if ((st = read_section(l, i, shstrndx)) != RIG_LINK_OK)
      return st;
  return lay_out_image(l);
}
