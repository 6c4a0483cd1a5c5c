/* SPDX-License-Identifier: MIT */
/* reloc.c: the relocation types of Relocations, their formulas and fields,
 * and the stubs (RELOC-1..11).
 *
 * Formulas from the x86-64 psABI, chapter 4.4, and ELF for the Arm 64-bit
 * Architecture, section 5.7 (RELOC-11). P is the patched place, S the
 * symbol's address, A the addend; Page(x) = x & ~0xfff. Arithmetic is done
 * modulo 2^64 and the result is read as a signed number for the range checks.
 */
#include <elf.h>
#include <string.h>

#include "internal.h"

/* Relocation numbers that older <elf.h> may lack. */
#ifndef R_X86_64_PLT32
#define R_X86_64_PLT32 4
#endif
#ifndef R_X86_64_GOTPCRELX
#define R_X86_64_GOTPCRELX 41
#define R_X86_64_REX_GOTPCRELX 42
#endif
#ifndef R_AARCH64_LDST128_ABS_LO12_NC
#define R_AARCH64_LDST128_ABS_LO12_NC 299
#endif
/* Types of the psABIs that glibc's <elf.h> (2.36) lacks. */
#ifndef R_X86_64_CODE_4_GOTPCRELX
#define R_X86_64_CODE_4_GOTPCRELX 43
#define R_X86_64_CODE_4_GOTTPOFF 44
#define R_X86_64_CODE_4_GOTPC32_TLSDESC 45
#define R_X86_64_CODE_5_GOTPCRELX 46
#define R_X86_64_CODE_5_GOTTPOFF 47
#define R_X86_64_CODE_5_GOTPC32_TLSDESC 48
#define R_X86_64_CODE_6_GOTPCRELX 49
#define R_X86_64_CODE_6_GOTTPOFF 50
#define R_X86_64_CODE_6_GOTPC32_TLSDESC 51
#endif
#ifndef R_AARCH64_PLT32
#define R_AARCH64_PLT32 314
#endif
#ifndef R_AARCH64_GOTPCREL32
#define R_AARCH64_GOTPCREL32 315
#endif

typedef struct reloc_kind {
  unsigned machine, type;
  unsigned width; /* bytes patched */
} reloc_kind;

/* The Relocations list (LINK-6): each listed type and the bytes it
 * patches. */
static const reloc_kind kinds[] = {
    {EM_X86_64, R_X86_64_PC32, 4},
    {EM_X86_64, R_X86_64_PLT32, 4},
    {EM_AARCH64, R_AARCH64_ADR_PREL_PG_HI21, 4},
    {EM_AARCH64, R_AARCH64_ADD_ABS_LO12_NC, 4},
    {EM_AARCH64, R_AARCH64_LDST8_ABS_LO12_NC, 4},
    {EM_AARCH64, R_AARCH64_LDST16_ABS_LO12_NC, 4},
    {EM_AARCH64, R_AARCH64_LDST32_ABS_LO12_NC, 4},
    {EM_AARCH64, R_AARCH64_LDST64_ABS_LO12_NC, 4},
    {EM_AARCH64, R_AARCH64_LDST128_ABS_LO12_NC, 4},
    {EM_AARCH64, R_AARCH64_CALL26, 4},
    {EM_AARCH64, R_AARCH64_JUMP26, 4},
    /* RELOC-1: clang for aarch64 turns a table of pointers to the object's
     * own data into offsets from the table (a relative lookup table in
     * .rodata), where x86_64 uses PC32: the same read of its own data. */
    {EM_AARCH64, R_AARCH64_PREL32, 4},
};

static const reloc_kind *kind_of(unsigned machine, unsigned type) {
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (kinds[i].machine == machine && kinds[i].type == type)
      return &kinds[i];
  return NULL;
}

/* The name of every type of the two psABIs for 64-bit objects, so that a
 * refusal says which it met (LINK-6): x86_64's by number, arm64's (sparse:
 * 257.., 512.., 1024..) searched. Only messages read them. */
#define N(t) [t] = #t
static const char *const x86_64_names[] = {
    N(R_X86_64_NONE), N(R_X86_64_64), N(R_X86_64_PC32), N(R_X86_64_GOT32), N(R_X86_64_PLT32),
    N(R_X86_64_COPY), N(R_X86_64_GLOB_DAT), N(R_X86_64_JUMP_SLOT), N(R_X86_64_RELATIVE),
    N(R_X86_64_GOTPCREL), N(R_X86_64_32), N(R_X86_64_32S), N(R_X86_64_16), N(R_X86_64_PC16),
    N(R_X86_64_8), N(R_X86_64_PC8), N(R_X86_64_DTPMOD64), N(R_X86_64_DTPOFF64),
    N(R_X86_64_TPOFF64), N(R_X86_64_TLSGD), N(R_X86_64_TLSLD), N(R_X86_64_DTPOFF32),
    N(R_X86_64_GOTTPOFF), N(R_X86_64_TPOFF32), N(R_X86_64_PC64), N(R_X86_64_GOTOFF64),
    N(R_X86_64_GOTPC32), N(R_X86_64_GOT64), N(R_X86_64_GOTPCREL64), N(R_X86_64_GOTPC64),
    N(R_X86_64_GOTPLT64), N(R_X86_64_PLTOFF64), N(R_X86_64_SIZE32), N(R_X86_64_SIZE64),
    N(R_X86_64_GOTPC32_TLSDESC), N(R_X86_64_TLSDESC_CALL), N(R_X86_64_TLSDESC),
    N(R_X86_64_IRELATIVE), N(R_X86_64_RELATIVE64), N(R_X86_64_GOTPCRELX),
    N(R_X86_64_REX_GOTPCRELX), N(R_X86_64_CODE_4_GOTPCRELX), N(R_X86_64_CODE_4_GOTTPOFF),
    N(R_X86_64_CODE_4_GOTPC32_TLSDESC), N(R_X86_64_CODE_5_GOTPCRELX),
    N(R_X86_64_CODE_5_GOTTPOFF), N(R_X86_64_CODE_5_GOTPC32_TLSDESC),
    N(R_X86_64_CODE_6_GOTPCRELX), N(R_X86_64_CODE_6_GOTTPOFF),
    N(R_X86_64_CODE_6_GOTPC32_TLSDESC),
};
#undef N

typedef struct reloc_name {
  unsigned type;
  const char *name;
} reloc_name;

#define N(t) {t, #t}
static const reloc_name aarch64_names[] = {
    N(R_AARCH64_NONE), N(R_AARCH64_ABS64), N(R_AARCH64_ABS32), N(R_AARCH64_ABS16),
    N(R_AARCH64_PREL64), N(R_AARCH64_PREL32), N(R_AARCH64_PREL16),
    N(R_AARCH64_MOVW_UABS_G0), N(R_AARCH64_MOVW_UABS_G0_NC), N(R_AARCH64_MOVW_UABS_G1),
    N(R_AARCH64_MOVW_UABS_G1_NC), N(R_AARCH64_MOVW_UABS_G2), N(R_AARCH64_MOVW_UABS_G2_NC),
    N(R_AARCH64_MOVW_UABS_G3), N(R_AARCH64_MOVW_SABS_G0), N(R_AARCH64_MOVW_SABS_G1),
    N(R_AARCH64_MOVW_SABS_G2), N(R_AARCH64_LD_PREL_LO19), N(R_AARCH64_ADR_PREL_LO21),
    N(R_AARCH64_ADR_PREL_PG_HI21), N(R_AARCH64_ADR_PREL_PG_HI21_NC),
    N(R_AARCH64_ADD_ABS_LO12_NC), N(R_AARCH64_LDST8_ABS_LO12_NC), N(R_AARCH64_TSTBR14),
    N(R_AARCH64_CONDBR19), N(R_AARCH64_JUMP26), N(R_AARCH64_CALL26),
    N(R_AARCH64_LDST16_ABS_LO12_NC), N(R_AARCH64_LDST32_ABS_LO12_NC),
    N(R_AARCH64_LDST64_ABS_LO12_NC), N(R_AARCH64_MOVW_PREL_G0), N(R_AARCH64_MOVW_PREL_G0_NC),
    N(R_AARCH64_MOVW_PREL_G1), N(R_AARCH64_MOVW_PREL_G1_NC), N(R_AARCH64_MOVW_PREL_G2),
    N(R_AARCH64_MOVW_PREL_G2_NC), N(R_AARCH64_MOVW_PREL_G3), N(R_AARCH64_LDST128_ABS_LO12_NC),
    N(R_AARCH64_MOVW_GOTOFF_G0), N(R_AARCH64_MOVW_GOTOFF_G0_NC), N(R_AARCH64_MOVW_GOTOFF_G1),
    N(R_AARCH64_MOVW_GOTOFF_G1_NC), N(R_AARCH64_MOVW_GOTOFF_G2),
    N(R_AARCH64_MOVW_GOTOFF_G2_NC), N(R_AARCH64_MOVW_GOTOFF_G3), N(R_AARCH64_GOTREL64),
    N(R_AARCH64_GOTREL32), N(R_AARCH64_GOT_LD_PREL19), N(R_AARCH64_LD64_GOTOFF_LO15),
    N(R_AARCH64_ADR_GOT_PAGE), N(R_AARCH64_LD64_GOT_LO12_NC), N(R_AARCH64_LD64_GOTPAGE_LO15),
    N(R_AARCH64_PLT32), N(R_AARCH64_GOTPCREL32),
    N(R_AARCH64_TLSGD_ADR_PREL21), N(R_AARCH64_TLSGD_ADR_PAGE21),
    N(R_AARCH64_TLSGD_ADD_LO12_NC), N(R_AARCH64_TLSGD_MOVW_G1), N(R_AARCH64_TLSGD_MOVW_G0_NC),
    N(R_AARCH64_TLSLD_ADR_PREL21), N(R_AARCH64_TLSLD_ADR_PAGE21),
    N(R_AARCH64_TLSLD_ADD_LO12_NC), N(R_AARCH64_TLSLD_MOVW_G1), N(R_AARCH64_TLSLD_MOVW_G0_NC),
    N(R_AARCH64_TLSLD_LD_PREL19), N(R_AARCH64_TLSLD_MOVW_DTPREL_G2),
    N(R_AARCH64_TLSLD_MOVW_DTPREL_G1), N(R_AARCH64_TLSLD_MOVW_DTPREL_G1_NC),
    N(R_AARCH64_TLSLD_MOVW_DTPREL_G0), N(R_AARCH64_TLSLD_MOVW_DTPREL_G0_NC),
    N(R_AARCH64_TLSLD_ADD_DTPREL_HI12), N(R_AARCH64_TLSLD_ADD_DTPREL_LO12),
    N(R_AARCH64_TLSLD_ADD_DTPREL_LO12_NC), N(R_AARCH64_TLSLD_LDST8_DTPREL_LO12),
    N(R_AARCH64_TLSLD_LDST8_DTPREL_LO12_NC), N(R_AARCH64_TLSLD_LDST16_DTPREL_LO12),
    N(R_AARCH64_TLSLD_LDST16_DTPREL_LO12_NC), N(R_AARCH64_TLSLD_LDST32_DTPREL_LO12),
    N(R_AARCH64_TLSLD_LDST32_DTPREL_LO12_NC), N(R_AARCH64_TLSLD_LDST64_DTPREL_LO12),
    N(R_AARCH64_TLSLD_LDST64_DTPREL_LO12_NC), N(R_AARCH64_TLSIE_MOVW_GOTTPREL_G1),
    N(R_AARCH64_TLSIE_MOVW_GOTTPREL_G0_NC), N(R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21),
    N(R_AARCH64_TLSIE_LD64_GOTTPREL_LO12_NC), N(R_AARCH64_TLSIE_LD_GOTTPREL_PREL19),
    N(R_AARCH64_TLSLE_MOVW_TPREL_G2), N(R_AARCH64_TLSLE_MOVW_TPREL_G1),
    N(R_AARCH64_TLSLE_MOVW_TPREL_G1_NC), N(R_AARCH64_TLSLE_MOVW_TPREL_G0),
    N(R_AARCH64_TLSLE_MOVW_TPREL_G0_NC), N(R_AARCH64_TLSLE_ADD_TPREL_HI12),
    N(R_AARCH64_TLSLE_ADD_TPREL_LO12), N(R_AARCH64_TLSLE_ADD_TPREL_LO12_NC),
    N(R_AARCH64_TLSLE_LDST8_TPREL_LO12), N(R_AARCH64_TLSLE_LDST8_TPREL_LO12_NC),
    N(R_AARCH64_TLSLE_LDST16_TPREL_LO12), N(R_AARCH64_TLSLE_LDST16_TPREL_LO12_NC),
    N(R_AARCH64_TLSLE_LDST32_TPREL_LO12), N(R_AARCH64_TLSLE_LDST32_TPREL_LO12_NC),
    N(R_AARCH64_TLSLE_LDST64_TPREL_LO12), N(R_AARCH64_TLSLE_LDST64_TPREL_LO12_NC),
    N(R_AARCH64_TLSDESC_LD_PREL19), N(R_AARCH64_TLSDESC_ADR_PREL21),
    N(R_AARCH64_TLSDESC_ADR_PAGE21), N(R_AARCH64_TLSDESC_LD64_LO12),
    N(R_AARCH64_TLSDESC_ADD_LO12), N(R_AARCH64_TLSDESC_OFF_G1), N(R_AARCH64_TLSDESC_OFF_G0_NC),
    N(R_AARCH64_TLSDESC_LDR), N(R_AARCH64_TLSDESC_ADD), N(R_AARCH64_TLSDESC_CALL),
    N(R_AARCH64_TLSLE_LDST128_TPREL_LO12), N(R_AARCH64_TLSLE_LDST128_TPREL_LO12_NC),
    N(R_AARCH64_TLSLD_LDST128_DTPREL_LO12), N(R_AARCH64_TLSLD_LDST128_DTPREL_LO12_NC),
    N(R_AARCH64_COPY), N(R_AARCH64_GLOB_DAT), N(R_AARCH64_JUMP_SLOT), N(R_AARCH64_RELATIVE),
    N(R_AARCH64_TLS_DTPMOD), N(R_AARCH64_TLS_DTPREL), N(R_AARCH64_TLS_TPREL),
    N(R_AARCH64_TLSDESC), N(R_AARCH64_IRELATIVE),
};
#undef N

const char *rig__link_reloc_name(unsigned machine, unsigned type) {
  if (machine == EM_X86_64)
    return type < sizeof x86_64_names / sizeof x86_64_names[0] ? x86_64_names[type] : NULL;
  if (machine == EM_AARCH64)
    for (size_t i = 0; i < sizeof aarch64_names / sizeof aarch64_names[0]; i++)
      if (aarch64_names[i].type == type)
        return aarch64_names[i].name;
  return NULL;
}

bool rig__link_reloc_listed(unsigned machine, unsigned type, unsigned *width) {
  const reloc_kind *k = kind_of(machine, type);
  if (!k)
    return false;
  *width = k->width;
  return true;
}

bool rig__link_reloc_branch(unsigned machine, unsigned type) {
  if (machine == EM_X86_64)
    return type == R_X86_64_PLT32;
  if (machine == EM_AARCH64)
    return type == R_AARCH64_CALL26 || type == R_AARCH64_JUMP26;
  return false;
}

static uint32_t load32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4); /* the object's byte order is the host's (LINK-3) */
  return v;
}

static void store32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

/* Whether v, read as signed, lies in [lo, hi]. */
static bool in_range(uint64_t v, int64_t lo, int64_t hi) {
  int64_t s = (int64_t)v;
  return s >= lo && s <= hi;
}

/* RELOC-2 (PC32), RELOC-3 (PLT32): S + A - P, a signed word32. */
static rig__link_fit x86_64_apply(unsigned type, unsigned char *place, uint64_t sa, uint64_t p) {
  if (type != R_X86_64_PC32 && type != R_X86_64_PLT32)
    return RIG__LINK_OVERFLOW; /* not reached: unlisted types are refused */
  uint64_t v = sa - p;
  if (!in_range(v, INT32_MIN, INT32_MAX))
    return RIG__LINK_OVERFLOW;
  store32(place, (uint32_t)v);
  return RIG__LINK_FITS;
}

/* RELOC-4: Page(S + A) - Page(P) into adrp's immlo:immhi. */
static rig__link_fit adrp_patch(uint32_t *insn, uint64_t sa, uint64_t p) {
  uint64_t v = (sa & ~(uint64_t)0xfff) - (p & ~(uint64_t)0xfff);
  if (!in_range(v, -(INT64_C(1) << 32), (INT64_C(1) << 32) - 1))
    return RIG__LINK_OVERFLOW;
  uint64_t imm = v >> 12; /* 21 bits: immlo at 29..30, immhi at 5..23 */
  *insn &= 0x9f00001fu;
  *insn |= (uint32_t)(imm & 3) << 29;
  *insn |= (uint32_t)((imm >> 2) & 0x7ffff) << 5;
  return RIG__LINK_FITS;
}

/* RELOC-6: the low 12 bits of S + A, scaled by the access size of `type`. */
static rig__link_fit ldst_patch(uint32_t *insn, unsigned type, uint64_t sa) {
  unsigned shift = type == R_AARCH64_LDST8_ABS_LO12_NC    ? 0
                   : type == R_AARCH64_LDST16_ABS_LO12_NC ? 1
                   : type == R_AARCH64_LDST32_ABS_LO12_NC ? 2
                   : type == R_AARCH64_LDST64_ABS_LO12_NC ? 3
                                                          : 4;
  uint64_t lo = sa & 0xfff;
  /* The field holds lo >> shift: bits below would be lost. */
  if (lo & ((UINT64_C(1) << shift) - 1))
    return RIG__LINK_MISALIGNED;
  *insn = (*insn & ~(0xfffu << 10)) | (uint32_t)(lo >> shift) << 10;
  return RIG__LINK_FITS;
}

/* RELOC-7: S + A - P into b's or bl's imm26, in words. */
static rig__link_fit branch_patch(uint32_t *insn, uint64_t sa, uint64_t p) {
  uint64_t v = sa - p;
  if (v & 3)
    return RIG__LINK_MISALIGNED;
  if (!in_range(v, -(INT64_C(1) << 27), (INT64_C(1) << 27) - 1))
    return RIG__LINK_OVERFLOW;
  *insn = (*insn & 0xfc000000u) | (uint32_t)((v >> 2) & 0x3ffffff);
  return RIG__LINK_FITS;
}

/* Patches insn, arm64 relocation `type` (RELOC-4..7), where it fits. */
static rig__link_fit aarch64_patch(unsigned type, uint32_t *insn, uint64_t sa, uint64_t p) {
  switch (type) {
  case R_AARCH64_ADR_PREL_PG_HI21:
    return adrp_patch(insn, sa, p);
  case R_AARCH64_ADD_ABS_LO12_NC: /* RELOC-5: the low 12 bits of S + A */
    *insn = (*insn & ~(0xfffu << 10)) | (uint32_t)(sa & 0xfff) << 10;
    return RIG__LINK_FITS;
  case R_AARCH64_LDST8_ABS_LO12_NC:
  case R_AARCH64_LDST16_ABS_LO12_NC:
  case R_AARCH64_LDST32_ABS_LO12_NC:
  case R_AARCH64_LDST64_ABS_LO12_NC:
  case R_AARCH64_LDST128_ABS_LO12_NC:
    return ldst_patch(insn, type, sa);
  case R_AARCH64_CALL26:
  case R_AARCH64_JUMP26:
    return branch_patch(insn, sa, p);
  case R_AARCH64_PREL32: /* a data word, not an instruction: S + A - P, signed */
    if (!in_range(sa - p, INT32_MIN, INT32_MAX))
      return RIG__LINK_OVERFLOW;
    *insn = (uint32_t)(sa - p);
    return RIG__LINK_FITS;
  default:
    return RIG__LINK_OVERFLOW; /* not reached: unlisted types are refused */
  }
}

rig__link_fit rig__link_reloc_apply(unsigned machine, unsigned type, unsigned char *place,
                                    uint64_t s, int64_t a) {
  return rig__link_reloc_apply_at(machine, type, place, (uint64_t)(uintptr_t)place, s, a);
}

rig__link_fit rig__link_reloc_apply_at(unsigned machine, unsigned type, unsigned char *place,
                                       uint64_t p, uint64_t s, int64_t a) {
  uint64_t sa = s + (uint64_t)a;
  if (machine == EM_X86_64)
    return x86_64_apply(type, place, sa, p);
  uint32_t insn = load32(place);
  rig__link_fit fit = aarch64_patch(type, &insn, sa, p);
  if (fit == RIG__LINK_FITS)
    store32(place, insn);
  return fit;
}

void rig__link_stub_write(unsigned machine, unsigned char *stub, void *target) {
  uint64_t slot = (uint64_t)(uintptr_t)target;
  if (machine == EM_X86_64) {
    /* RELOC-9: jmp *2(%rip), two int3 of padding, the slot at +8. An
     * indirect jump through memory: no register is read or written. */
    static const unsigned char code[8] = {0xff, 0x25, 0x02, 0x00, 0x00, 0x00, 0xcc, 0xcc};
    memcpy(stub, code, sizeof code);
  } else {
    /* RELOC-10: ldr x17, .+8; br x17; the slot at +8. x17 (IP1) is a
     * register a veneer may use (AAPCS64). */
    store32(stub, 0x58000051u);     /* ldr x17, #8 */
    store32(stub + 4, 0xd61f0220u); /* br x17 */
  }
  memcpy(stub + RIG__LINK_STUB_SLOT, &slot, 8);
}
