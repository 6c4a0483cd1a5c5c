/* test_refuse.c: every refusal of Linking, each with its own bad object,
 * hand-made with libelf's writer (elfgen, common.c), patched from a good one,
 * or a compiler's own output (tests/kernels/bad_*.c). LINK-1: each is an
 * Error, RIG_LINK_REFUSED, whose message names the rule and the section,
 * symbol or relocation at fault, and leaves the out-parameter alone. Runs
 * on x86_64 and, under qemu-aarch64, on arm64. */
#define _GNU_SOURCE
#include "common.h"

#include <elf.h>
#include <gelf.h>

#include "../src/internal.h"

#define SHF_AX (SHF_ALLOC | SHF_EXECINSTR)

/* A good object: .text holding the host's jump-and-return, a function f
 * at 0, and the relocation section for .text where the test adds one. */
static eg_obj *good(unsigned *text, unsigned *f) {
  eg_obj *o = eg_new(host_machine());
  *text = eg_section(o, ".text", SHT_PROGBITS, SHF_AX, 16, host_code, host_code_bytes);
  *f = eg_symbol(o, "f", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), (uint16_t)*text, 0, host_code_bytes);
  return o;
}

static bool refused_eg(eg_obj *o, const rig_link_options *opt, const char *rule, const char *what) {
  size_t n;
  unsigned char *b = eg_build(o, &n);
  bool ok = n > 0 && refused(b, n, opt, rule, what);
  free(b);
  return ok;
}

static bool refused_kernel(const char *name, const char *rule, const char *what) {
  size_t n;
  unsigned char *b = kernel(name, &n);
  bool ok = b && refused(b, n, NULL, rule, what);
  free(b);
  return ok;
}

static const char *name_of(unsigned type) { return rig__link_reloc_name(host_machine(), type); }

/* The hand-made good object loads and runs: elfgen makes what the linker
 * takes, so each refusal below is its one defect. */
static void elfgen_good_object_loads(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  unsigned g = eg_symbol(o, "g", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), (uint16_t)text, 5, 1);
  (void)g;
  /* f jumps to its ret: f + 5 on x86_64 (field at 1, so A = 5 - 4), f + 4
   * on arm64. */
  eg_reloc(o, text, host_code_patch, f, host_branch_type(), host_machine() == EM_X86_64 ? 1 : 4);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  CHECK_MSG(rig_link_load(b, n, NULL, &im, err, sizeof err) == RIG_LINK_OK, "%s", err);
  void (*fn)(void) = (void (*)(void))rig_link_resolve(im, "f");
  CHECK(fn);
  fn();
  rig_link_free(im);
  free(b);
}

/* LINK-1: the compiler's bad objects are each an Error. */
static void link_1_bad_kernels(void) {
  CHECK(refused_kernel("bad_writable", "LINK-4", ".bss"));
  CHECK(refused_kernel("bad_data", "LINK-4", ".data"));
  CHECK(refused_kernel("bad_tls", "LINK-4", ".tbss"));
  CHECK(refused_kernel("bad_common", "LINK-7", "shared_count"));
  CHECK(refused_kernel("bad_global", "LINK-6", "global_table"));
  CHECK(refused_kernel("bad_undefined", "LINK-10", "rig_link_test_nowhere"));
  CHECK(refused_kernel("bad_ifunc", "LINK-7", "symbol add"));
}

/* LINK-2: a host that is neither x86_64 nor arm64 links nothing. */
static void link_2_other_host(void) {
  size_t n;
  unsigned char *b = kernel("add", &n);
  CHECK(b);
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  CHECK(rig__link_load(b, n, NULL, 0, &im, err, sizeof err) == RIG_LINK_REFUSED);
  CHECK(strstr(err, "LINK-2") && im == NULL);
  CHECK(rig__link_load(b, n, NULL, EM_RISCV, &im, err, sizeof err) == RIG_LINK_REFUSED);
  CHECK(strstr(err, "LINK-2") && im == NULL);
  free(b);
}

/* LINK-3: not ELF, or truncated. */
static void link_3_not_elf(void) {
  static const char text[] = "void add(void) { }\n";
  CHECK(refused(text, sizeof text, NULL, "LINK-3", "not an ELF object"));
  /* A static library: say so, not merely "not an ELF object". */
  static const char archive[] = "!<arch>\n";
  CHECK(refused(archive, sizeof archive - 1, NULL, "LINK-3", "an ar archive"));
  static const unsigned char magic_only[4] = {0x7f, 'E', 'L', 'F'};
  CHECK(refused(magic_only, sizeof magic_only, NULL, "LINK-3", NULL));
  size_t n;
  unsigned char *b = kernel("add", &n);
  CHECK(b);
  CHECK(refused(b, 40, NULL, "LINK-3", NULL));    /* inside the ELF header */
  CHECK(refused(b, n / 2, NULL, "LINK-3", NULL)); /* without its section headers */
  free(b);
}

/* LINK-3: 64-bit, little-endian, ET_REL only. */
static void link_3_header(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_header(o, ELFCLASS32, ELFDATA2LSB, ET_REL);
  CHECK(refused_eg(o, NULL, "LINK-3", "32-bit"));
  o = good(&text, &f);
  eg_header(o, ELFCLASS64, ELFDATA2MSB, ET_REL);
  CHECK(refused_eg(o, NULL, "LINK-3", "big-endian"));
  o = good(&text, &f);
  eg_header(o, ELFCLASS64, ELFDATA2LSB, ET_EXEC);
  CHECK(refused_eg(o, NULL, "LINK-3", "ET_EXEC"));
  o = good(&text, &f);
  eg_header(o, ELFCLASS64, ELFDATA2LSB, ET_DYN);
  CHECK(refused_eg(o, NULL, "LINK-3", "ET_DYN"));
}

/* LINK-3: an object for another machine: the compiler's add for the other
 * architecture, and a hand-made RISC-V one. */
static void link_3_foreign_machine(void) {
  size_t n;
  unsigned char *b = kernel_arch("add", other_arch(), &n);
  CHECK(b);
  CHECK(refused(b, n, NULL, "LINK-3", other_machine() == EM_AARCH64 ? "EM_AARCH64" : "EM_X86_64"));
  free(b);
  eg_obj *o = eg_new(EM_RISCV);
  eg_section(o, ".text", SHT_PROGBITS, SHF_AX, 4, host_code, host_code_bytes);
  CHECK(refused_eg(o, NULL, "LINK-3", "EM_RISCV"));
}

/* Patches the 8-byte field at `field` (offsetof(Elf64_Shdr, ...)) of
 * section `name`'s header in the object b, found with libelf. */
static bool patch_shdr(unsigned char *b, size_t n, const char *name, size_t field, uint64_t v) {
  size_t shnum = 0, shstrndx = 0, at = 0;
  elf_version(EV_CURRENT);
  char *copy = malloc(n);
  memcpy(copy, b, n);
  Elf *e = elf_memory(copy, n);
  GElf_Ehdr eh;
  if (e && gelf_getehdr(e, &eh) && elf_getshdrnum(e, &shnum) == 0 &&
      elf_getshdrstrndx(e, &shstrndx) == 0)
    for (size_t i = 1; i < shnum; i++) {
      GElf_Shdr sh;
      gelf_getshdr(elf_getscn(e, i), &sh);
      const char *sn = elf_strptr(e, shstrndx, sh.sh_name);
      if (sn && strcmp(sn, name) == 0)
        at = eh.e_shoff + i * eh.e_shentsize + field;
    }
  if (e)
    elf_end(e);
  free(copy);
  if (!at || at + 8 > n)
    return false;
  memcpy(b + at, &v, 8);
  return true;
}

/* LINK-3: malformed sections and relocations. */
static void link_3_malformed(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_section(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, 4, "abcd", 4);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  CHECK(patch_shdr(b, n, ".rodata", offsetof(Elf64_Shdr, sh_addralign), 12));
  bool ok = refused(b, n, NULL, "LINK-3", ".rodata"); /* alignment 12 */
  free(b);
  CHECK(ok);

  o = good(&text, &f);
  eg_reloc(o, text, host_code_patch, 40, host_branch_type(), 0);
  CHECK(refused_eg(o, NULL, "LINK-3", "symbol #40"));

  o = good(&text, &f);
  eg_reloc(o, text, host_code_patch, f, host_branch_type(), 0);
  eg_reloc_section(o, text, 77, 0);
  CHECK(refused_eg(o, NULL, "LINK-3", "#77"));

  o = good(&text, &f);
  eg_reloc(o, text, host_code_patch, f, host_branch_type(), 0);
  eg_reloc_section(o, text, 0, text); /* its sh_link names .text */
  CHECK(refused_eg(o, NULL, "LINK-3", ".rela.text"));
}

/* LINK-3: a section whose bytes lie outside the object: the add kernel
 * with .text's sh_offset moved past its end. */
static void link_3_section_outside(void) {
  size_t n;
  unsigned char *b = kernel("add", &n);
  CHECK(b);
  CHECK(patch_shdr(b, n, ".text", offsetof(Elf64_Shdr, sh_offset), n + 4096));
  CHECK(refused(b, n, NULL, "LINK-3", ".text"));
  free(b);
}

/* LINK-3: e_shnum 0 with a section 0 that gives a count (its sh_size, as
 * for more than 65279 sections) whose headers lie past the object's end:
 * the message gives that count, not 0. */
static bool refused_shnum_0(uint64_t count, bool shoff_outside, const char *what) {
  size_t n;
  unsigned char *b = kernel("add", &n);
  if (!b)
    return false;
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  uint16_t zero = 0;
  uint64_t outside = n + 64;
  memcpy(b + offsetof(Elf64_Ehdr, e_shnum), &zero, 2);
  memcpy(b + eh.e_shoff + offsetof(Elf64_Shdr, sh_size), &count, 8);
  if (shoff_outside)
    memcpy(b + offsetof(Elf64_Ehdr, e_shoff), &outside, 8);
  bool ok = refused(b, n, NULL, "LINK-3", what);
  free(b);
  return ok;
}

static void link_3_extended_section_count(void) {
  CHECK(refused_shnum_0(UINT64_C(1) << 30, false, "1073741824 section headers"));
  CHECK(refused_shnum_0(0, false, "none counted"));  /* no count at all */
  CHECK(refused_shnum_0(1, true, "section 0, which")); /* no section 0 to count */
}

/* LINK-4: an allocated section that is writable and not empty. An empty
 * one is no use of it, and links. */
static void link_4_writable(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_section(o, ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 4, "\1\2\3\4", 4);
  CHECK(refused_eg(o, NULL, "LINK-4", ".data"));
  o = good(&text, &f);
  eg_section(o, ".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, 8, NULL, 64);
  CHECK(refused_eg(o, NULL, "LINK-4", ".bss"));
  o = good(&text, &f);
  eg_section(o, ".data", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, 4, NULL, 0);
  eg_section(o, ".bss", SHT_NOBITS, SHF_ALLOC | SHF_WRITE, 8, NULL, 0);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  CHECK_MSG(rig_link_load(b, n, NULL, &im, err, sizeof err) == RIG_LINK_OK, "%s", err);
  rig_link_free(im);
  free(b);
}

/* LINK-5: relocations without addends (SHT_REL). */
static void link_5_rel(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_rel(o, text, host_code_patch, f, host_branch_type());
  CHECK(refused_eg(o, NULL, "LINK-5", ".rel.text"));
}

/* LINK-6: a type not in the Relocations list. */
static void link_6_unlisted(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_reloc(o, text, 0, f, host_abs_type(), 0);
  CHECK(refused_eg(o, NULL, "LINK-6", name_of(host_abs_type())));
  o = good(&text, &f);
  eg_reloc(o, text, 0, f, 250, 0);
  CHECK(refused_eg(o, NULL, "LINK-6", "type 250"));
  /* The compiler's: a global table read through the GOT. */
  CHECK(refused_kernel("bad_global", "LINK-6", host_machine() == EM_X86_64 ? "GOTPCREL" : "GOT"));
}

/* LINK-6: the message names each type by its ELF name, on both machines
 * (rig__link_load links the other machine's objects as its host would):
 * GOTPC64, not "type 29". */
static void link_6_named_in_message(void) {
  static const struct {
    unsigned machine, type;
    const char *name;
  } cases[] = {
      {EM_X86_64, 29, "R_X86_64_GOTPC64"},
      {EM_X86_64, 37, "R_X86_64_IRELATIVE"},
      {EM_X86_64, 42, "R_X86_64_REX_GOTPCRELX"},
      {EM_AARCH64, 287, "R_AARCH64_MOVW_PREL_G0"},
      {EM_AARCH64, 311, "R_AARCH64_ADR_GOT_PAGE"},
      {EM_AARCH64, 562, "R_AARCH64_TLSDESC_ADR_PAGE21"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    eg_obj *o = eg_new(cases[i].machine);
    unsigned text = eg_section(o, ".text", SHT_PROGBITS, SHF_AX, 16, NULL, 16);
    unsigned f = eg_symbol(o, "f", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), (uint16_t)text, 0, 16);
    eg_reloc(o, text, 0, f, cases[i].type, 0);
    size_t n;
    unsigned char *b = eg_build(o, &n);
    rig_link_image *im = NULL;
    char err[RIG_LINK_ERROR_BYTES] = "";
    rig_link_status st = rig__link_load(b, n, NULL, cases[i].machine, &im, err, sizeof err);
    free(b);
    printf("  %s\n", err);
    CHECK(st == RIG_LINK_REFUSED && !im);
    CHECK_MSG(strstr(err, "LINK-6") && strstr(err, cases[i].name), "%s", err);
  }
}

/* Where using_symbol defines its symbol, besides a section index: in the
 * code's section, or in a .comment section, not allocated. */
enum { IN_TEXT = -1, IN_COMMENT = -2 };

/* A good object whose code uses symbol `name`, of type `type`, defined in
 * section shndx (or IN_TEXT, IN_COMMENT), through a relocation of rtype. */
static eg_obj *using_symbol(const char *name, unsigned type, int shndx, uint64_t value,
                            uint64_t size, unsigned rtype) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  if (shndx == IN_TEXT)
    shndx = (int)text;
  else if (shndx == IN_COMMENT)
    shndx = (int)eg_section(o, ".comment", SHT_PROGBITS, 0, 1, "clang", 6);
  unsigned s = eg_symbol(o, name, GELF_ST_INFO(STB_GLOBAL, type), (uint16_t)shndx, value, size);
  eg_reloc(o, text, host_code_patch, s, rtype, 0);
  return o;
}

/* LINK-7: symbols defined outside the image. */
static void link_7_outside(void) {
  static const struct {
    const char *name;
    unsigned type;
    int shndx;
    uint64_t value, size;
    const char *says;
  } cases[] = {
      {"common_var", STT_OBJECT, SHN_COMMON, 4, 4, "common_var"},
      {"tls_var", STT_TLS, IN_TEXT, 0, 4, "tls_var"},
      {"abs_sym", STT_NOTYPE, SHN_ABS, 0x1234, 0, "abs_sym"},
      {"in_comment", STT_OBJECT, IN_COMMENT, 0, 6, ".comment"},
      {"ifunc", STT_GNU_IFUNC, IN_TEXT, 0, 1, "ifunc"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    eg_obj *o = using_symbol(cases[i].name, cases[i].type, cases[i].shndx, cases[i].value,
                             cases[i].size, host_branch_type());
    CHECK_MSG(refused_eg(o, NULL, "LINK-7", cases[i].says), "%s", cases[i].name);
  }

  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_reloc(o, text, host_code_patch, 0, host_branch_type(), 0);
  CHECK(refused_eg(o, NULL, "LINK-7", "no symbol"));

  /* Reserved section indexes: x86_64's large common symbols
   * (SHN_X86_64_LCOMMON, 0xff02) are common (LINK-7), not "a section
   * #65282 that does not exist"; the others are said to be reserved. */
  o = using_symbol("big_common", STT_OBJECT, 0xff02, 8, 8, host_pc_type());
  if (host_machine() == EM_X86_64)
    CHECK(refused_eg(o, NULL, "LINK-7", "large common symbol (SHN_X86_64_LCOMMON)"));
  else
    CHECK(refused_eg(o, NULL, "LINK-3", "0xff02 is a reserved one (a processor's)"));
  o = using_symbol("os_sym", STT_OBJECT, SHN_LOOS, 0, 8, host_pc_type());
  CHECK(refused_eg(o, NULL, "LINK-3", "0xff20 is a reserved one (an OS's)"));

  o = good(&text, &f);
  eg_section(o, ".tdata", SHT_PROGBITS, SHF_ALLOC | SHF_TLS, 4, "abcd", 4);
  CHECK(refused_eg(o, NULL, "LINK-7", ".tdata"));
}

/* LINK-7: an object that defines an indirect function (STT_GNU_IFUNC),
 * used by no relocation, is refused naming it: the symbol's value is its
 * resolver, which rig does not run, and a launch of the resolver as the
 * function would compute nothing. The compiler's (bad_ifunc.c, in
 * link_1_bad_kernels) and a hand-made one, local or global. */
static void link_7_ifunc_defined(void) {
  for (int local = 0; local < 2; local++) {
    unsigned text, f;
    eg_obj *o = eg_new(host_machine());
    text = eg_section(o, ".text", SHT_PROGBITS, SHF_AX, 16, host_code, host_code_bytes);
    f = eg_symbol(o, "picker", GELF_ST_INFO(local ? STB_LOCAL : STB_GLOBAL, STT_GNU_IFUNC),
                  (uint16_t)text, 0, host_code_bytes);
    (void)f;
    CHECK(refused_eg(o, NULL, "LINK-7", "symbol picker: an indirect function"));
  }
}

/* LINK-8: a relocation that patches outside the image: past its section's
 * end, by a byte or by 2^63. */
static void link_8_outside_image(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_reloc(o, text, host_code_bytes - 3, f, host_branch_type(), 0);
  CHECK(refused_eg(o, NULL, "LINK-8", ".text+0xd"));
  o = good(&text, &f);
  eg_reloc(o, text, UINT64_C(1) << 63, f, host_branch_type(), 0);
  CHECK(refused_eg(o, NULL, "LINK-8", name_of(host_branch_type())));
}

/* LINK-9: a value that does not fit its field. */
static void link_9_overflow(void) {
  unsigned text, f, u;
  /* A PC-relative reference to a process symbol 2^62 away: no stub helps a
   * data reference (x86_64 PC32, arm64 ADR_PREL_PG_HI21). */
  lookup_table t = {.names = {"far_data"}, .addrs = {(void *)(uintptr_t)(UINT64_C(1) << 62)}};
  rig_link_options opt = {.lookup = table_lookup, .lookup_ctx = &t};
  eg_obj *o = good(&text, &f);
  u = eg_symbol(o, "far_data", GELF_ST_INFO(STB_GLOBAL, STT_NOTYPE), SHN_UNDEF, 0, 0);
  eg_reloc(o, text, host_code_patch, u, host_pc_type(), 0);
  CHECK(refused_eg(o, &opt, "LINK-9", "far_data"));

  /* A call to a symbol of the object out of its reach: no stub is made for
   * a symbol the object defines. */
  o = good(&text, &f);
  eg_reloc(o, text, host_code_patch, f, host_branch_type(), INT64_C(1) << 40);
  CHECK(refused_eg(o, NULL, "LINK-9", name_of(host_branch_type())));

  if (host_machine() == EM_AARCH64) {
    /* A branch to an address that is not a multiple of 4. */
    o = good(&text, &f);
    eg_reloc(o, text, 0, f, R_AARCH64_CALL26, 2);
    CHECK(refused_eg(o, NULL, "LINK-9", "R_AARCH64_CALL26"));
    /* A 64-bit load at an address that is not a multiple of 8: LDST64's
     * field holds bits 3..11 only. */
    o = good(&text, &f);
    unsigned ro = eg_section(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, 16, "0123456789abcdef", 16);
    unsigned rs = eg_symbol(o, "", GELF_ST_INFO(STB_LOCAL, STT_SECTION), (uint16_t)ro, 0, 0);
    eg_reloc(o, text, 4, rs, R_AARCH64_LDST64_ABS_LO12_NC, 4);
    CHECK(refused_eg(o, NULL, "LINK-9", "R_AARCH64_LDST64_ABS_LO12_NC"));
  }
}

/* LINK-10: an undefined symbol the process does not define: the lookup
 * finds nothing. */
static void link_10_undefined(void) {
  unsigned text, f, u;
  lookup_table t = {0};
  rig_link_options opt = {.lookup = table_lookup, .lookup_ctx = &t};
  eg_obj *o = good(&text, &f);
  u = eg_symbol(o, "nowhere_fn", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), SHN_UNDEF, 0, 0);
  eg_reloc(o, text, host_code_patch, u, host_branch_type(), 0);
  CHECK(refused_eg(o, &opt, "LINK-10", "nowhere_fn"));
  CHECK(t.calls == 1);
  /* Weak is no different: the process must define it. */
  o = good(&text, &f);
  u = eg_symbol(o, "weak_nowhere", GELF_ST_INFO(STB_WEAK, STT_FUNC), SHN_UNDEF, 0, 0);
  eg_reloc(o, text, host_code_patch, u, host_branch_type(), 0);
  CHECK(refused_eg(o, NULL, "LINK-10", "weak_nowhere"));
}

/* SYM-2: functions of other images are not linked by name: a symbol only
 * another image defines is undefined to the process (LINK-10). */
static void sym_2_other_images(void) {
  rig_link_image *a = load_kernel("add", NULL);
  CHECK(a && rig_link_resolve(a, "add"));
  unsigned text, f, u;
  eg_obj *o = good(&text, &f);
  u = eg_symbol(o, "add", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), SHN_UNDEF, 0, 0);
  eg_reloc(o, text, host_code_patch, u, host_branch_type(), 0);
  bool ok = refused_eg(o, NULL, "LINK-10", "add");
  rig_link_free(a);
  CHECK(ok);
}

/* LINK-13: an alignment past 2^30, which rig does not give: 2^40 and 2^63
 * are refused as such, naming it, not as a mapping that failed
 * (RIG_LINK_NO_MEMORY). 2^30 itself links. */
static void link_13_alignment_too_large(void) {
  unsigned text, f;
  for (unsigned log = 40; log < 64; log += 23) {
    eg_obj *o = good(&text, &f);
    eg_section(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, 16, "x", 1);
    size_t n;
    unsigned char *b = eg_build(o, &n);
    CHECK(patch_shdr(b, n, ".rodata", offsetof(Elf64_Shdr, sh_addralign), UINT64_C(1) << log));
    char what[32];
    snprintf(what, sizeof what, ".rodata: alignment 2^%u", log);
    bool ok = refused(b, n, NULL, "LINK-13", what);
    free(b);
    CHECK(ok);
  }
  eg_obj *o = good(&text, &f);
  eg_section(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, 16, "x", 1);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  CHECK(patch_shdr(b, n, ".rodata", offsetof(Elf64_Shdr, sh_addralign), UINT64_C(1) << 30));
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  rig_link_status st = rig_link_load(b, n, NULL, &im, err, sizeof err);
  free(b);
  CHECK_MSG(st == RIG_LINK_OK, "%s", err);
  CHECK(((uintptr_t)rig_link_code(im) & ((UINT64_C(1) << 30) - 1)) == 0);
  rig_link_free(im);
}

/* LINK-11: an image with its stubs larger than max_int (2^62 - 1) bytes. */
static void link_11_too_large(void) {
  unsigned text, f;
  eg_obj *o = good(&text, &f);
  eg_section(o, ".huge", SHT_NOBITS, SHF_ALLOC, 16, NULL, UINT64_C(1) << 62);
  CHECK(refused_eg(o, NULL, "LINK-11", ".huge"));
  o = good(&text, &f);
  eg_section(o, ".big1", SHT_NOBITS, SHF_ALLOC, 16, NULL, UINT64_C(1) << 61);
  eg_section(o, ".big2", SHT_NOBITS, SHF_ALLOC, 16, NULL, (UINT64_C(1) << 61) + 1);
  CHECK(refused_eg(o, NULL, "LINK-11", ".big2"));
  /* The padding before a section aligned at 2^30 takes the image past (the
   * alignment patched in, or libelf's writer would pad the file to it). */
  o = good(&text, &f);
  eg_section(o, ".big", SHT_NOBITS, SHF_ALLOC, 16, NULL, (UINT64_C(1) << 62) - 64);
  eg_section(o, ".rodata", SHT_PROGBITS, SHF_ALLOC, 16, "x", 1);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  CHECK(patch_shdr(b, n, ".rodata", offsetof(Elf64_Shdr, sh_addralign), UINT64_C(1) << 30));
  bool ok = refused(b, n, NULL, "LINK-11", ".rodata");
  free(b);
  CHECK(ok);
}

int main(int argc, char **argv) {
  static const check_test tests[] = {
      TEST(elfgen_good_object_loads),
      TEST(link_1_bad_kernels),
      TEST(link_2_other_host),
      TEST(link_3_not_elf),
      TEST(link_3_header),
      TEST(link_3_foreign_machine),
      TEST(link_3_malformed),
      TEST(link_3_section_outside),
      TEST(link_3_extended_section_count),
      TEST(link_4_writable),
      TEST(link_5_rel),
      TEST(link_6_unlisted),
      TEST(link_6_named_in_message),
      TEST(link_7_outside),
      TEST(link_7_ifunc_defined),
      TEST(link_8_outside_image),
      TEST(link_9_overflow),
      TEST(link_10_undefined),
      TEST(sym_2_other_images),
      TEST(link_11_too_large),
      TEST(link_13_alignment_too_large),
  };
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
