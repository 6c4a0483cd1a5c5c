/* SPDX-License-Identifier: MIT */
/* codeobj.c: an HSA code object (an AMDGPU ELF shared object, code object
 * v4 or v5) read with libelf, checked at every step against the bytes it
 * has, since an image comes from the program: the ELF header's identity
 * and target, the loadable segments placed at their addresses in one
 * image, the dynamic relocations to apply once the image's GPU address is
 * known, the kernel descriptors (the 64-byte NAME.kd objects), and the
 * metadata note (metadata.c). The descriptor's layout is the one AMDGPU's
 * ABI documents (LLVM's AMDGPUUsage, "Kernel Descriptor").
 */
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"

#define EM_AMDGPU_ 224
#define OSABI_AMDGPU_HSA 64
#define NT_AMDGPU_METADATA_ 32
#define R_ABS64 3
#define R_RELATIVE64 13

typedef struct reading {
  Elf *elf;
  const uint8_t *bytes;
  size_t n;
  codeobj *c;
  char *why;
  size_t m;
} reading;

int co_fail(char *why, size_t m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, m, fmt, ap);
  va_end(ap);
  return -1;
}

#define bad(r, ...) co_fail((r)->why, (r)->m, __VA_ARGS__)

/* e_flags' low byte names the target (LLVM's EF_AMDGPU_MACH_AMDGCN_*). */
static const struct {
  uint32_t mach;
  const char *gfx;
} machs[] = {
    {0x2c, "gfx900"},  {0x2d, "gfx902"},  {0x2e, "gfx904"},  {0x2f, "gfx906"},  {0x30, "gfx908"},
    {0x31, "gfx909"},  {0x32, "gfx90c"},  {0x3f, "gfx90a"},  {0x33, "gfx1010"}, {0x34, "gfx1011"},
    {0x35, "gfx1012"}, {0x42, "gfx1013"}, {0x36, "gfx1030"}, {0x37, "gfx1031"}, {0x38, "gfx1032"},
    {0x39, "gfx1033"}, {0x3e, "gfx1034"}, {0x3d, "gfx1035"}, {0x45, "gfx1036"}, {0x41, "gfx1100"},
    {0x46, "gfx1101"}, {0x47, "gfx1102"}, {0x44, "gfx1103"},
};

const char *codeobj_mach_name(uint32_t mach) {
  for (size_t i = 0; i < sizeof machs / sizeof machs[0]; i++)
    if (machs[i].mach == mach)
      return machs[i].gfx;
  return NULL;
}

static int header(reading *r, const char *gfx) {
  GElf_Ehdr eh;
  if (elf_kind(r->elf) != ELF_K_ELF || !gelf_getehdr(r->elf, &eh))
    return bad(r, "not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
      eh.e_machine != EM_AMDGPU_)
    return bad(r, "not an AMDGPU ELF object (machine %u)", eh.e_machine);
  if (eh.e_ident[EI_OSABI] != OSABI_AMDGPU_HSA)
    return bad(r, "not an HSA code object (OS ABI %u, not 64)", eh.e_ident[EI_OSABI]);
  if (eh.e_ident[EI_ABIVERSION] != 2 && eh.e_ident[EI_ABIVERSION] != 3)
    return bad(r, "code object v%u is not one this driver reads (v4, v5)",
               eh.e_ident[EI_ABIVERSION] + 2u);
  if (eh.e_type != ET_DYN)
    return bad(r, "not a linked code object (ELF type %u, not ET_DYN)", eh.e_type);
  r->c->version = eh.e_ident[EI_ABIVERSION] + 2u;
  r->c->flags = (uint32_t)eh.e_flags;
  const char *name = codeobj_mach_name(eh.e_flags & 0xff);
  if (!name)
    return bad(r, "built for a target this driver does not know (e_flags 0x%x)",
               (unsigned)eh.e_flags);
  snprintf(r->c->target, sizeof r->c->target, "%s", name);
  if (gfx && strcmp(gfx, name) != 0)
    return bad(r, "built for %s, not for this device's %s", name, gfx);
  return 0;
}

/* The loadable segments at their addresses in one zeroed image. */
static int segments(reading *r) {
  size_t count;
  GElf_Phdr ph;
  uint64_t end = 0;
  if (elf_getphdrnum(r->elf, &count) != 0)
    return bad(r, "no program headers");
  for (size_t i = 0; i < count; i++) {
    if (!gelf_getphdr(r->elf, (int)i, &ph))
      return bad(r, "program header %zu unreadable", i);
    if (ph.p_type != PT_LOAD)
      continue;
    if (ph.p_filesz > ph.p_memsz || ph.p_offset > r->n || ph.p_filesz > r->n - ph.p_offset)
      return bad(r, "segment %zu lies outside the file", i);
    if (ph.p_vaddr > CO_IMAGE_MAX || ph.p_memsz > CO_IMAGE_MAX - ph.p_vaddr)
      return bad(r, "segment %zu lies past %u MiB", i, CO_IMAGE_MAX >> 20);
    if (ph.p_vaddr + ph.p_memsz > end)
      end = ph.p_vaddr + ph.p_memsz;
  }
  if (end == 0)
    return bad(r, "no loadable segment");
  r->c->image_bytes = (end + 4095) & ~4095ull;
  r->c->image = calloc(1, r->c->image_bytes);
  if (!r->c->image)
    return bad(r, "out of memory for a %llu-byte image", (unsigned long long)end);
  for (size_t i = 0; i < count; i++)
    if (gelf_getphdr(r->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
      memcpy(r->c->image + ph.p_vaddr, r->bytes + ph.p_offset, ph.p_filesz);
  return 0;
}

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A kernel descriptor (64 bytes at k->kd) into k. */
static int descriptor(reading *r, co_kernel *k) {
  const uint8_t *d = r->c->image + k->kd;
  int64_t off = (int64_t)((uint64_t)le32(d + 16) | (uint64_t)le32(d + 20) << 32);
  k->group_bytes = le32(d + 0);
  k->private_bytes = le32(d + 4);
  k->kernarg_bytes = le32(d + 8);
  k->rsrc3 = le32(d + 44);
  k->rsrc1 = le32(d + 48);
  k->rsrc2 = le32(d + 52);
  k->properties = (uint16_t)(d[56] | d[57] << 8);
  if (off < -(int64_t)k->kd || off > (int64_t)(r->c->image_bytes - k->kd - 4) ||
      (((int64_t)k->kd + off) & 255) != 0)
    return bad(r,
               "kernel %s: its code (descriptor offset %lld) lies outside the image or "
               "off a 256-byte boundary",
               k->name, (long long)off);
  k->entry = (uint64_t)((int64_t)k->kd + off);
  return 0;
}

static Elf_Scn *section_of(reading *r, Elf64_Word type, GElf_Shdr *sh) {
  for (Elf_Scn *s = elf_nextscn(r->elf, NULL); s; s = elf_nextscn(r->elf, s))
    if (gelf_getshdr(s, sh) && sh->sh_type == type)
      return s;
  return NULL;
}

/* Each NAME.kd object of the dynamic symbols: a kernel. */
static int kernels(reading *r) {
  GElf_Shdr sh;
  Elf_Scn *s = section_of(r, SHT_DYNSYM, &sh);
  Elf_Data *data = s ? elf_getdata(s, NULL) : NULL;
  if (!data || sh.sh_entsize != sizeof(Elf64_Sym))
    return bad(r, "no dynamic symbols");
  size_t count = sh.sh_size / sh.sh_entsize;
  r->c->kernels = calloc(count ? count : 1, sizeof *r->c->kernels);
  if (!r->c->kernels)
    return bad(r, "out of memory");
  for (size_t i = 0; i < count; i++) {
    GElf_Sym sym;
    const char *name =
        gelf_getsym(data, (int)i, &sym) ? elf_strptr(r->elf, sh.sh_link, sym.st_name) : NULL;
    size_t len = name ? strlen(name) : 0;
    if (len < 4 || strcmp(name + len - 3, ".kd") != 0 || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
      continue;
    if (r->c->nkernels == CO_KERNELS_MAX || len - 3 >= sizeof r->c->kernels[0].name)
      return bad(r, "too many kernels, or a name too long (%.40s)", name);
    co_kernel *k = &r->c->kernels[r->c->nkernels++];
    snprintf(k->name, sizeof k->name, "%.*s", (int)(len - 3), name);
    if (sym.st_size != 64 || sym.st_value > r->c->image_bytes - 64 || (sym.st_value & 63))
      return bad(r, "kernel %s: its descriptor is not 64 aligned bytes inside the image", k->name);
    k->kd = sym.st_value;
    if (descriptor(r, k) != 0)
      return -1;
  }
  if (r->c->nkernels == 0)
    return bad(r, "no kernel (no NAME.kd descriptor)");
  return 0;
}

static int one_reloc(reading *r, Elf_Data *syms, size_t symn, const GElf_Rela *ra) {
  uint32_t type = (uint32_t)GELF_R_TYPE(ra->r_info);
  co_reloc *out = &r->c->relocs[r->c->nrelocs];
  if (type != R_ABS64 && type != R_RELATIVE64)
    return bad(r,
               "relocation type %u at 0x%llx is not one this driver applies (ABS64, "
               "RELATIVE64)",
               type, (unsigned long long)ra->r_offset);
  if (ra->r_offset > r->c->image_bytes - 8)
    return bad(r, "a relocation at 0x%llx lies outside the image",
               (unsigned long long)ra->r_offset);
  *out = (co_reloc){.offset = ra->r_offset, .addend = ra->r_addend, .type = type};
  if (type == R_ABS64) {
    GElf_Sym sym;
    size_t si = GELF_R_SYM(ra->r_info);
    if (!syms || si >= symn || !gelf_getsym(syms, (int)si, &sym) || sym.st_shndx == SHN_UNDEF)
      return bad(r, "a relocation at 0x%llx names a symbol the image does not define",
                 (unsigned long long)ra->r_offset);
    out->symbol = sym.st_value;
  }
  r->c->nrelocs++;
  return 0;
}

/* The SHT_RELA sections of the loaded image (.rela.dyn). */
static int relocations(reading *r) {
  GElf_Shdr sh, ssh;
  for (Elf_Scn *s = elf_nextscn(r->elf, NULL); s; s = elf_nextscn(r->elf, s)) {
    if (!gelf_getshdr(s, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
      continue;
    if (sh.sh_type == SHT_REL || sh.sh_entsize != sizeof(Elf64_Rela))
      return bad(r, "relocations without addends (SHT_REL), which code objects never have");
    Elf_Data *data = elf_getdata(s, NULL);
    Elf_Scn *ss = elf_getscn(r->elf, sh.sh_link);
    Elf_Data *syms = ss && gelf_getshdr(ss, &ssh) ? elf_getdata(ss, NULL) : NULL;
    size_t symn = syms && ssh.sh_entsize ? ssh.sh_size / ssh.sh_entsize : 0;
    size_t count = data ? sh.sh_size / sh.sh_entsize : 0;
    co_reloc *more = realloc(r->c->relocs, (r->c->nrelocs + count + 1) * sizeof *more);
    if (!more)
      return bad(r, "out of memory");
    r->c->relocs = more;
    for (size_t i = 0; i < count; i++) {
      GElf_Rela ra;
      if (!gelf_getrela(data, (int)i, &ra))
        return bad(r, "relocation %zu unreadable", i);
      if (one_reloc(r, syms, symn, &ra) != 0)
        return -1;
    }
  }
  return 0;
}

/* The NT_AMDGPU_METADATA note, wherever a SHT_NOTE section holds it. */
static int metadata(reading *r) {
  GElf_Shdr sh;
  for (Elf_Scn *s = elf_nextscn(r->elf, NULL); s; s = elf_nextscn(r->elf, s)) {
    Elf_Data *data = gelf_getshdr(s, &sh) && sh.sh_type == SHT_NOTE ? elf_getdata(s, NULL) : NULL;
    GElf_Nhdr nh;
    size_t off = 0, name_at, desc_at, next;
    while (data && (next = gelf_getnote(data, off, &nh, &name_at, &desc_at)) > 0) {
      if (nh.n_type == NT_AMDGPU_METADATA_ && nh.n_namesz == 7 &&
          memcmp((const char *)data->d_buf + name_at, "AMDGPU", 7) == 0)
        return codeobj_metadata(r->c, (const char *)data->d_buf + desc_at, nh.n_descsz, r->why,
                                r->m);
      off = next;
    }
  }
  return bad(r, "no AMDGPU metadata note");
}

/* Private (scratch) memory: refused, naming the kernel, until the driver
 * provides it (the descriptor's size, or the program asking for it). */
static int no_scratch(reading *r) {
  for (uint32_t i = 0; i < r->c->nkernels; i++) {
    const co_kernel *k = &r->c->kernels[i];
    if (k->private_bytes || (k->rsrc2 & 1u))
      return bad(r,
                 "kernel %s uses %u bytes of private (scratch) memory, which this driver "
                 "does not provide yet",
                 k->name, k->private_bytes);
  }
  return 0;
}

int codeobj_read(const void *bytes, size_t n, const char *gfx, codeobj *out, char *why, size_t m) {
  memset(out, 0, sizeof *out);
  reading r = {.bytes = bytes, .n = n, .c = out, .why = why, .m = m};
  if (elf_version(EV_CURRENT) == EV_NONE)
    return bad(&r, "libelf: %s", elf_errmsg(-1));
  /* libelf reads in place and never writes through the pointer given. */
  r.elf = elf_memory((char *)(uintptr_t)bytes, n);
  if (!r.elf)
    return bad(&r, "not an ELF file (%s)", elf_errmsg(-1));
  int rc = header(&r, gfx);
  if (rc == 0)
    rc = segments(&r);
  if (rc == 0)
    rc = kernels(&r);
  if (rc == 0)
    rc = relocations(&r);
  if (rc == 0)
    rc = metadata(&r);
  if (rc == 0)
    rc = no_scratch(&r);
  elf_end(r.elf);
  if (rc != 0)
    codeobj_free(out);
  return rc;
}

void codeobj_relocate(codeobj *c, uint64_t base) {
  for (uint32_t i = 0; i < c->nrelocs; i++) {
    const co_reloc *x = &c->relocs[i];
    uint64_t v = base + (uint64_t)x->addend + (x->type == R_ABS64 ? x->symbol : 0);
    memcpy(c->image + x->offset, &v, sizeof v); /* little-endian host and device */
  }
}

const co_kernel *codeobj_kernel(const codeobj *c, const char *name) {
  for (uint32_t i = 0; i < c->nkernels; i++)
    if (strcmp(c->kernels[i].name, name) == 0)
      return &c->kernels[i];
  return NULL;
}

void codeobj_free(codeobj *c) {
  for (uint32_t i = 0; c->kernels && i < c->nkernels; i++)
    free(c->kernels[i].args);
  free(c->kernels);
  free(c->relocs);
  free(c->image);
  memset(c, 0, sizeof *c);
}
