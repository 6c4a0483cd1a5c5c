/* test_reloc.c: each relocation's formula and field, as its normative
 * reference gives them (the x86-64 psABI, chapter 4.4; ELF for the Arm
 * 64-bit Architecture, section 5.7), and the edges of each range
 * (LINK-9). The linker's relocation step is called directly on a buffer
 * (P is the buffer's address, S = P + delta): both machines' encodings are
 * checked on either host, since nothing here runs. */
#define _GNU_SOURCE
#include "common.h"

#include <elf.h>

#include "../src/internal.h"

static unsigned char buf[1 << 16] __attribute__((aligned(4096)));

static uint32_t get32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* Applies type at place with S = P + delta, A = a, on insn; returns fit and
 * leaves the patched word in *out. */
static rig__link_fit apply(unsigned machine, unsigned type, unsigned char *place, int64_t delta,
                           int64_t a, uint32_t insn, uint32_t *out) {
  put32(place, insn);
  uint64_t s = (uint64_t)(uintptr_t)place + (uint64_t)delta;
  rig__link_fit f = rig__link_reloc_apply(machine, type, place, s, a);
  *out = get32(place);
  return f;
}

/* RELOC-2, RELOC-3: PC32 and PLT32 write S + A - P as a signed 32-bit
 * word; INT32_MIN..INT32_MAX fit, one past does not (LINK-9). */
static void reloc_2_3_pc32(void) {
  unsigned char *p = buf + 64;
  uint32_t w;
  for (int plt = 0; plt < 2; plt++) {
    unsigned t = plt ? R_X86_64_PLT32 : R_X86_64_PC32;
    CHECK(apply(EM_X86_64, t, p, 0x1000, -4, 0, &w) == RIG__LINK_FITS && w == 0xffc);
    CHECK(apply(EM_X86_64, t, p, -0x20, -4, 0, &w) == RIG__LINK_FITS && w == (uint32_t)-0x24);
    CHECK(apply(EM_X86_64, t, p, INT32_MAX, 0, 0, &w) == RIG__LINK_FITS && w == INT32_MAX);
    CHECK(apply(EM_X86_64, t, p, INT32_MIN, 0, 0, &w) == RIG__LINK_FITS && w == 0x80000000u);
    w = 0;
    CHECK(apply(EM_X86_64, t, p, (int64_t)INT32_MAX + 1, 0, 0xdeadbeef, &w) == RIG__LINK_OVERFLOW);
    CHECK(w == 0xdeadbeef); /* nothing written */
    CHECK(apply(EM_X86_64, t, p, (int64_t)INT32_MIN - 1, 0, 0, &w) == RIG__LINK_OVERFLOW);
    CHECK(apply(EM_X86_64, t, p, 0, INT64_C(1) << 40, 0, &w) == RIG__LINK_OVERFLOW);
  }
  CHECK(rig__link_reloc_branch(EM_X86_64, R_X86_64_PLT32));
  CHECK(!rig__link_reloc_branch(EM_X86_64, R_X86_64_PC32));
}

/* RELOC-4: ADR_PREL_PG_HI21 writes Page(S + A) - Page(P) >> 12 as immlo
 * (bits 29..30) and immhi (bits 5..23) of adrp, keeping its register; the
 * range is -2^32..2^32 - 1. */
static void reloc_4_adrp(void) {
  unsigned char *p = buf + 0x10; /* Page(P) = buf */
  uint32_t w, adrp_x3 = 0x90000003u;
  unsigned t = R_AARCH64_ADR_PREL_PG_HI21;
  /* S + A on the next page but 0x10: one page, imm = 1: immlo = 1. */
  CHECK(apply(EM_AARCH64, t, p, 0x1000 - 0x10 + 0x20, 0, adrp_x3, &w) == RIG__LINK_FITS);
  CHECK(w == (adrp_x3 | 1u << 29));
  /* 5 pages on, through the addend: imm = 5: immlo = 1, immhi = 1. */
  CHECK(apply(EM_AARCH64, t, p, 0, 5 * 0x1000, adrp_x3, &w) == RIG__LINK_FITS);
  CHECK(w == (adrp_x3 | 1u << 29 | 1u << 5));
  /* One page back: imm = -1, all 21 bits set. */
  CHECK(apply(EM_AARCH64, t, p, -0x1000, 0, adrp_x3, &w) == RIG__LINK_FITS);
  CHECK(w == (adrp_x3 | 3u << 29 | 0x7ffffu << 5));
  /* The same page: 0, and the old immediate is cleared. */
  CHECK(apply(EM_AARCH64, t, p, 0x100, 0, adrp_x3 | 0x60ffffe0u, &w) == RIG__LINK_FITS);
  CHECK(w == adrp_x3);
  /* The edges: 2^32 - 4096 fits, 2^32 does not; -2^32 fits. */
  CHECK(apply(EM_AARCH64, t, p, (INT64_C(1) << 32) - 0x1000 - 0x10, 0, adrp_x3, &w) ==
        RIG__LINK_FITS);
  CHECK(apply(EM_AARCH64, t, p, (INT64_C(1) << 32) - 0x10, 0, adrp_x3, &w) == RIG__LINK_OVERFLOW);
  CHECK(apply(EM_AARCH64, t, p, -(INT64_C(1) << 32) - 0x10, 0, adrp_x3, &w) == RIG__LINK_FITS);
  CHECK(w == (adrp_x3 | 1u << 23)); /* imm = -2^20: immhi's top bit */
  CHECK(apply(EM_AARCH64, t, p, -(INT64_C(1) << 32) - 0x1010, 0, adrp_x3, &w) ==
        RIG__LINK_OVERFLOW);
}

/* RELOC-5: ADD_ABS_LO12_NC writes the low 12 bits of S + A into add's
 * imm12 (bits 10..21), with no range check. */
static void reloc_5_add_lo12(void) {
  unsigned char *p = buf + 0x100;
  uint32_t w, add_x0_x1 = 0x91000020u; /* add x0, x1, #0 */
  uint64_t pa = (uint64_t)(uintptr_t)p;
  int64_t d = (int64_t)(((pa + 0x10000) & ~(uint64_t)0xfff) + 0xabc - pa); /* S & 0xfff = 0xabc */
  CHECK(apply(EM_AARCH64, R_AARCH64_ADD_ABS_LO12_NC, p, d, 0, add_x0_x1 | 0x3ffc00u, &w) ==
        RIG__LINK_FITS);
  CHECK(w == (add_x0_x1 | 0xabcu << 10));
  CHECK(apply(EM_AARCH64, R_AARCH64_ADD_ABS_LO12_NC, p, d, 0x1001, add_x0_x1, &w) ==
        RIG__LINK_FITS);
  CHECK(w == (add_x0_x1 | 0xabdu << 10));
}

/* RELOC-6: LDSTn_ABS_LO12_NC write the low 12 bits of S + A scaled by the
 * access size (8, 16, 32, 64, 128 bits: shifts 0..4) into imm12; an
 * address not a multiple of the size does not fit (LINK-9). */
static void reloc_6_ldst(void) {
  static const struct {
    unsigned type, shift;
    uint32_t insn; /* ldrb w0, [x1]; ldrh; ldr w; ldr x; ldr q0 */
  } k[] = {
      {R_AARCH64_LDST8_ABS_LO12_NC, 0, 0x39400020u},
      {R_AARCH64_LDST16_ABS_LO12_NC, 1, 0x79400020u},
      {R_AARCH64_LDST32_ABS_LO12_NC, 2, 0xb9400020u},
      {R_AARCH64_LDST64_ABS_LO12_NC, 3, 0xf9400020u},
      {299 /* R_AARCH64_LDST128_ABS_LO12_NC */, 4, 0x3dc00020u},
  };
  unsigned char *p = buf + 0x200;
  uint64_t pa = (uint64_t)(uintptr_t)p;
  int64_t d = (int64_t)(((pa + 0x10000) & ~(uint64_t)0xfff) + 0xab0 - pa); /* low 12: 0xab0 */
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    uint32_t w;
    CHECK(apply(EM_AARCH64, k[i].type, p, d, 0, k[i].insn, &w) == RIG__LINK_FITS);
    CHECK_MSG(w == (k[i].insn | (0xab0u >> k[i].shift) << 10), "type %u: %08x", k[i].type, w);
    if (k[i].shift) {
      CHECK(apply(EM_AARCH64, k[i].type, p, d, 1, k[i].insn, &w) == RIG__LINK_MISALIGNED);
      CHECK(w == k[i].insn);
    }
  }
}

/* RELOC-7: CALL26 and JUMP26 write (S + A - P) >> 2 into imm26 of bl and
 * b; the range is -2^27..2^27 - 4, a multiple of 4. Out of range is what
 * sends a call through its stub. */
static void reloc_7_branch26(void) {
  unsigned char *p = buf + 0x300;
  for (int jump = 0; jump < 2; jump++) {
    unsigned t = jump ? R_AARCH64_JUMP26 : R_AARCH64_CALL26;
    uint32_t op = jump ? 0x14000000u : 0x94000000u, w;
    CHECK(rig__link_reloc_branch(EM_AARCH64, t));
    CHECK(apply(EM_AARCH64, t, p, 0x40, 0, op, &w) == RIG__LINK_FITS && w == (op | 0x10));
    CHECK(apply(EM_AARCH64, t, p, -8, 0, op, &w) == RIG__LINK_FITS && w == (op | 0x3fffffe));
    CHECK(apply(EM_AARCH64, t, p, (INT64_C(1) << 27) - 4, 0, op, &w) == RIG__LINK_FITS);
    CHECK(w == (op | 0x1ffffff));
    CHECK(apply(EM_AARCH64, t, p, -(INT64_C(1) << 27), 0, op, &w) == RIG__LINK_FITS);
    CHECK(w == (op | 0x2000000));
    CHECK(apply(EM_AARCH64, t, p, INT64_C(1) << 27, 0, op, &w) == RIG__LINK_OVERFLOW);
    CHECK(apply(EM_AARCH64, t, p, -(INT64_C(1) << 27) - 4, 0, op, &w) == RIG__LINK_OVERFLOW);
    CHECK(apply(EM_AARCH64, t, p, 6, 0, op, &w) == RIG__LINK_MISALIGNED);
  }
}

/* LINK-6: the listed types are exactly the Relocations section's; others,
 * even common ones, are not. */
static void link_6_listed(void) {
  unsigned w;
  static const unsigned x86[] = {R_X86_64_PC32, R_X86_64_PLT32};
  static const unsigned arm[] = {R_AARCH64_ADR_PREL_PG_HI21,
                                 R_AARCH64_ADD_ABS_LO12_NC,
                                 R_AARCH64_LDST8_ABS_LO12_NC,
                                 R_AARCH64_LDST16_ABS_LO12_NC,
                                 R_AARCH64_LDST32_ABS_LO12_NC,
                                 R_AARCH64_LDST64_ABS_LO12_NC,
                                 299,
                                 R_AARCH64_CALL26,
                                 R_AARCH64_JUMP26};
  for (size_t i = 0; i < 2; i++)
    CHECK(rig__link_reloc_listed(EM_X86_64, x86[i], &w) && w == 4);
  for (size_t i = 0; i < 9; i++)
    CHECK(rig__link_reloc_listed(EM_AARCH64, arm[i], &w) && w == 4);
  CHECK(!rig__link_reloc_listed(EM_X86_64, R_X86_64_64, &w));
  CHECK(!rig__link_reloc_listed(EM_X86_64, R_X86_64_GOTPCREL, &w));
  CHECK(!rig__link_reloc_listed(EM_X86_64, R_X86_64_32S, &w));
  CHECK(!rig__link_reloc_listed(EM_AARCH64, R_AARCH64_ABS64, &w));
  /* RELOC-1: clang's relative lookup tables on aarch64 (data words). */
  CHECK(rig__link_reloc_listed(EM_AARCH64, R_AARCH64_PREL32, &w) && w == 4);
  unsigned char word[4] = {0};
  CHECK(rig__link_reloc_apply_at(EM_AARCH64, R_AARCH64_PREL32, word, 0x10000, 0x8000, 4) ==
        RIG__LINK_FITS);
  CHECK(word[0] == 0x04 && word[1] == 0x80 && word[2] == 0xff && word[3] == 0xff); /* -0x7ffc */
  CHECK(rig__link_reloc_apply_at(EM_AARCH64, R_AARCH64_PREL32, word, 0, UINT64_C(1) << 32, 0) ==
        RIG__LINK_OVERFLOW);
  CHECK(!rig__link_reloc_listed(EM_AARCH64, R_AARCH64_ADR_GOT_PAGE, &w));
  CHECK(!rig__link_reloc_listed(EM_AARCH64, R_X86_64_PC32, &w)); /* numbers are per machine */
  CHECK(strcmp(rig__link_reloc_name(EM_AARCH64, 299), "R_AARCH64_LDST128_ABS_LO12_NC") == 0);
}

/* Whether every type in [lo, hi] but the gaps is named, and its name begins
 * with prefix. */
static bool all_named(unsigned machine, const char *prefix, unsigned lo, unsigned hi,
                      const unsigned *gaps, size_t ngaps) {
  for (unsigned t = lo; t <= hi; t++) {
    bool gap = false;
    for (size_t g = 0; g < ngaps; g++)
      gap |= gaps[g] == t;
    const char *n = rig__link_reloc_name(machine, t);
    if (!gap && (!n || strncmp(n, prefix, strlen(prefix)) != 0)) {
      fprintf(stderr, "  type %u of machine %u: %s\n", t, machine, n ? n : "no name");
      return false;
    }
  }
  return true;
}

/* LINK-6: every type the psABIs define for 64-bit objects, each of which
 * the linker refuses but the listed few, has its name for the refusal's
 * message: x86_64's 0..51 (39 and 40 are unused), arm64's 0, 257..315,
 * 512..573 and 1024..1032 but the unused numbers in them. */
static void link_6_every_type_named(void) {
  static const unsigned x86_gaps[] = {39, 40};
  static const unsigned arm_gaps[] = {281, 294, 295, 296, 297, 298};
  CHECK(all_named(EM_X86_64, "R_X86_64_", 0, 51, x86_gaps, 2));
  CHECK(all_named(EM_AARCH64, "R_AARCH64_", 0, 0, NULL, 0));
  CHECK(all_named(EM_AARCH64, "R_AARCH64_", 257, 315, arm_gaps, 6));
  CHECK(all_named(EM_AARCH64, "R_AARCH64_", 512, 573, NULL, 0));
  CHECK(all_named(EM_AARCH64, "R_AARCH64_", 1024, 1032, NULL, 0));
  CHECK(strcmp(rig__link_reloc_name(EM_X86_64, 29), "R_X86_64_GOTPC64") == 0);
  CHECK(strcmp(rig__link_reloc_name(EM_X86_64, 37), "R_X86_64_IRELATIVE") == 0);
  CHECK(strcmp(rig__link_reloc_name(EM_AARCH64, 287), "R_AARCH64_MOVW_PREL_G0") == 0);
  CHECK(strcmp(rig__link_reloc_name(EM_AARCH64, 1032), "R_AARCH64_IRELATIVE") == 0);
  /* Numbers no psABI gives have no name: the message gives the number. */
  CHECK(!rig__link_reloc_name(EM_X86_64, 39) && !rig__link_reloc_name(EM_X86_64, 250));
  CHECK(!rig__link_reloc_name(EM_AARCH64, 281) && !rig__link_reloc_name(EM_AARCH64, 2));
  CHECK(!rig__link_reloc_name(EM_RISCV, 1));
}

/* RELOC-8..10: a stub is 16 bytes, its slot at +8. x86_64: jmp *2(%rip),
 * two int3; arm64: ldr x17, #8; br x17. */
static void reloc_8_10_stub_layout(void) {
  unsigned char *s = buf + 0x400;
  void *target = (void *)(uintptr_t)0x123456789abcdef0ULL, *slot;
  rig__link_stub_write(EM_X86_64, s, target);
  static const unsigned char jmp[8] = {0xff, 0x25, 0x02, 0, 0, 0, 0xcc, 0xcc};
  CHECK(memcmp(s, jmp, 8) == 0);
  memcpy(&slot, s + RIG__LINK_STUB_SLOT, 8);
  CHECK(slot == target);
  rig__link_stub_write(EM_AARCH64, s, target);
  CHECK(get32(s) == 0x58000051u && get32(s + 4) == 0xd61f0220u);
  memcpy(&slot, s + RIG__LINK_STUB_SLOT, 8);
  CHECK(slot == target && RIG__LINK_STUB_BYTES == 16);
}

int main(int argc, char **argv) {
  static const check_test tests[] = {
      TEST(reloc_2_3_pc32),   TEST(reloc_4_adrp),  TEST(reloc_5_add_lo12),       TEST(reloc_6_ldst),
      TEST(reloc_7_branch26), TEST(link_6_listed), TEST(link_6_every_type_named),
      TEST(reloc_8_10_stub_layout),
  };
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
