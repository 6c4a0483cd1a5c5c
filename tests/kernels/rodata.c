/* Read-only tables (.rodata) read through PC-relative addresses: x86_64
 * R_X86_64_PC32 (RELOC-2); arm64 ADR_PREL_PG_HI21 with ADD_ABS_LO12_NC and
 * LDST8..128_ABS_LO12_NC (RELOC-4..6). The volatile tables are read at a
 * constant index, so that the compiler keeps the loads (one per access
 * size) instead of folding them. */
#include <stdint.h>

static const float poly[8] = {1.0f, 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.0078125f};
static const int32_t perm[16] = {3, 1, 4, 15, 9, 2, 6, 5, 14, 8, 7, 0, 13, 12, 10, 11};

/* out[i] = poly[k[i] & 7] * in[perm[i & 15]] for first <= i < end < n. */
struct table {
  const float *in;
  const int32_t *k;
  float *out;
  int64_t n;
};
void table(const struct table *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++)
    p->out[i] = poly[p->k[i] & 7] * p->in[perm[i & 15]];
}

typedef float v4 __attribute__((vector_size(16)));
static volatile const uint8_t t8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static volatile const uint16_t t16[8] = {10, 20, 30, 40, 50, 60, 70, 80};
static volatile const uint32_t t32[8] = {100, 200, 300, 400, 500, 600, 700, 800};
static volatile const uint64_t t64[8] = {1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000};
static volatile const v4 t128[2] = {{1, 2, 3, 4}, {5, 6, 7, 8}};

/* 4 + 40 + 400 + 4000 = 4444: one load each of 8, 16, 32 and 64 bits. */
uint64_t widths(void) { return t8[3] + t16[3] + t32[3] + t64[3]; }
/* 5 + 6 + 7 + 8 = 26: one 128-bit load. */
float wide(void) {
  v4 v = t128[1];
  return v[0] + v[1] + v[2] + v[3];
}

/* A table aligned past a page, so that its section is too (LINK-13). */
static const float aligned_table[4] __attribute__((aligned(65536))) = {1, 2, 3, 4};
const float *aligned(void) { return aligned_table; }

static const char greeting[] = "rig links";
const char *message(void) { return greeting; }
