/* test_pm4.c: the PM4 encoder and the dispatch's inputs (suite
 * driver-amdgpu), with no device.
 *
 * Golden sequences: for each generation, the dwords of a dispatch, a
 * barrier, a release of the timeline word and a timestamp, copies and fills
 * split at the generation's DMA_DATA limit, written out here by hand from
 * the public references (the kernel's gfx_v9_0.c / gfx_v10_0.c emit
 * functions, Mesa's compute dispatch) as literal numbers, and compared
 * with what the encoder writes. The framing walker accepts every buffer
 * the encoder makes (also a thousand random sequences of its packets) and
 * refuses each kind of broken one. The dispatch inputs are built from the
 * committed code objects: user SGPRs, the dispatch packet, hidden args.
 *
 *   test-amdgpu-pm4 DIR    (DIR: drivers/amdgpu/kernels)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "test_check.h"
#include "dispatch.h"
#include "pm4.h"

static uint32_t mem[4096];

static pm4_buf fresh(void) {
  memset(mem, 0, sizeof mem);
  return (pm4_buf){.dw = mem, .cap = 4096};
}

static void same(const char *what, const pm4_buf *b, const uint32_t *want, uint32_t n) {
  CHECK(!b->overflow && b->n == n, "%s: %u dwords, want %u", what, b->n, n);
  for (uint32_t i = 0; i < n && i < b->n; i++)
    CHECK(b->dw[i] == want[i], "%s: dword %u is 0x%08x, want 0x%08x", what, i, b->dw[i], want[i]);
}

static pm4_dispatch sample_dispatch(void) {
  pm4_dispatch d = {.code = 0x7f1234567800ull,
                    .rsrc1 = 0x00af0041u,
                    .rsrc2 = 0x0000008cu,
                    .rsrc3 = 0x5u,
                    .threads = {64, 1, 1},
                    .groups = {16, 2, 1}};
  for (uint32_t i = 0; i < 6; i++)
    d.user[i] = 0x1000u + i;
  return d;
}

/* The dispatch, by hand: PACKET3(SET_SH_REG = 0x76, n) with the register
 * less 0x2c00, then DISPATCH_DIRECT (0x15) with the compute bit. */
static void golden_dispatch(const char *gfx, uint32_t rsrc3_at, uint32_t initiator, bool wave32) {
  pm4_target t;
  CHECK(pm4_target_of(gfx, &t) == 0, "%s", gfx);
  pm4_dispatch d = sample_dispatch();
  d.wave32 = wave32;
  pm4_buf b = fresh();
  pm4_dispatch_emit(&b, &t, &d);
  uint32_t want[64], n = 0;
  uint32_t head[] = {0xc0027600, 0x20c, 0x12345678, 0x7f, 0xc0027600, 0x212, 0x00af0041, 0x8c};
  memcpy(want, head, sizeof head);
  n = 8;
  if (rsrc3_at) {
    want[n++] = 0xc0017600;
    want[n++] = rsrc3_at - 0x2c00;
    want[n++] = 5;
  }
  uint32_t tail[] = {0xc0017600, 0x215, 0,      0xc0017600, 0x218,    0,      0xc0037600, 0x204,
                     0,          0,     0,      0xc0037600, 0x207,    64,     1,          1,
                     0xc0067600, 0x240, 0x1000, 0x1001,     0x1002,   0x1003, 0x1004,     0x1005,
                     0xc0031502, 16,    2,      1,          initiator};
  memcpy(want + n, tail, sizeof tail);
  n += sizeof tail / sizeof tail[0];
  same(gfx, &b, want, n);
}

static void golden_sync(void) {
  pm4_target t9, t10;
  pm4_target_of("gfx900", &t9);
  pm4_target_of("gfx1030", &t10);
  pm4_buf b = fresh();
  pm4_barrier(&b, &t9, true);
  /* EVENT_WRITE CS_PARTIAL_FLUSH index 4; ACQUIRE_MEM: I$, K$, TCL1, TC, TC_WB */
  uint32_t w9[] = {0xc0004600, 0x407, 0xc0055800, 0x28c40000, 0xffffffff, 0xffffff, 0, 0, 0xa};
  same("gfx9 barrier", &b, w9, 9);
  b = fresh();
  pm4_barrier(&b, &t10, true);
  /* GCR_CNTL: GLI_INV(1), GLM_WB, GLM_INV, GLK_INV, GLV_INV, GL1_INV, GL2_INV, GL2_WB */
  uint32_t w10[] = {0xc0004600, 0x407, 0xc0065800, 0, 0xffffffff, 0xffffff, 0, 0, 0xa, 0xc3b1};
  same("gfx10 barrier", &b, w10, 10);
  b = fresh();
  pm4_barrier(&b, &t10, false);
  uint32_t w10s[] = {0xc0004600, 0x407, 0xc0065800, 0, 0xffffffff, 0xffffff, 0, 0, 0xa, 0x381};
  same("gfx10 barrier without L2", &b, w10s, 10);
  b = fresh();
  pm4_release(&b, &t9, 0x123456780ull, 0x1122334455667788ull, false);
  /* CACHE_FLUSH_AND_INV_TS (0x14) index 5, TCL1|TC|TC_WB|TC_MD; DATA_SEL 2 */
  uint32_t r9[] = {0xc0064900, 0x238514, 0x40000000, 0x23456780, 0x1, 0x55667788, 0x11223344, 0};
  same("gfx9 release", &b, r9, 8);
  b = fresh();
  pm4_release(&b, &t10, 0x123456780ull, 7, false);
  /* SEQ | GL2_WB | GLM_INV | GLM_WB | CACHE_POLICY(3): the kernel's fence */
  uint32_t r10[] = {0xc0064900, 0x6603514, 0x40000000, 0x23456780, 0x1, 7, 0, 0};
  same("gfx10 release", &b, r10, 8);
  b = fresh();
  pm4_release(&b, &t10, 0x1000, 0, true);
  /* BOTTOM_OF_PIPE_TS (0x28) index 5, DATA_SEL 3: the GPU clock */
  uint32_t ts[] = {0xc0064900, 0x528, 0x60000000, 0x1000, 0, 0, 0, 0};
  same("gfx10 timestamp", &b, ts, 8);
}

static void golden_dma(void) {
  pm4_target t9, t11;
  pm4_target_of("gfx90a", &t9);
  pm4_target_of("gfx1100", &t11);
  pm4_buf b = fresh();
  pm4_copy(&b, &t9, 0x200000000ull, 0x100000000ull, 3u << 20);
  /* 3 MiB on GFX9: 0x1ff000 (2 MiB less 4 KiB) then 0x101000; DST/SRC through
   * L2 (3), CP_SYNC; RAW_WAIT with the count */
  uint32_t c9[] = {0xc0055000, 0xe0300000, 0,        1, 0,        2, 0x401ff000,
                   0xc0055000, 0xe0300000, 0x1ff000, 1, 0x1ff000, 2, 0x40101000};
  same("gfx9 copy", &b, c9, 14);
  CHECK(pm4_dma_dwords(&t9, 3u << 20) == 14, "dma dwords");
  b = fresh();
  pm4_copy(&b, &t11, 0x200000000ull, 0x100000000ull, 3u << 20);
  uint32_t c11[] = {0xc0055000, 0xe0300000, 0, 1, 0, 2, 0x40300000};
  same("gfx11 copy", &b, c11, 7);
  b = fresh();
  pm4_fill(&b, &t11, 0x1000, 0xdeadbeef, 4096);
  uint32_t f11[] = {0xc0055000, 0xc0300000, 0xdeadbeef, 0, 0x1000, 0, 0x40001000};
  same("gfx11 fill", &b, f11, 7);
  pm4_pad(&b);
  CHECK(b.n == 8 && b.dw[7] == 0xffff1000, "pad: %u dwords, last 0x%08x", b.n, b.dw[7]);
  /* 10 bytes from 0x1001 of the pattern 11 22 33 44: 3 head bytes copied
   * from the source (0x200000000), the word at 0x1004 is 44 11 22 33, 3 tail
   * bytes copied from the source's phase 3 */
  b = fresh();
  pm4_fill_any(&b, &t11, 0x1001, 0x44332211u, 10, 0x200000000ull);
  uint32_t any[] = {0xc0055000, 0xe0300000, 0,          2, 0x1001, 0, 0x40000003,
                    0xc0055000, 0xc0300000, 0x33221144, 0, 0x1004, 0, 0x40000004,
                    0xc0055000, 0xe0300000, 3,          2, 0x1008, 0, 0x40000003};
  same("gfx11 fill of 10 bytes at 0x1001", &b, any, 21);
  b = fresh();
  pm4_fill_any(&b, &t11, 0x2000, 0xabababab, 2, 0x200000000ull); /* 2 bytes: a tail alone */
  uint32_t two[] = {0xc0055000, 0xe0300000, 0, 2, 0x2000, 0, 0x40000002};
  same("gfx11 fill of 2 bytes", &b, two, 7);
}

int test_walker(void);
int test_dispatch(const char *dir);

int main(int argc, char **argv) {
  golden_dispatch("gfx900", 0, 0x45, false);
  golden_dispatch("gfx90a", 0x2e2d, 0x45, false);
  golden_dispatch("gfx1030", 0x2e28, 0x8045, true);
  golden_dispatch("gfx1030", 0x2e28, 0x45, false); /* wave64 on GFX10 */
  golden_dispatch("gfx1100", 0x2e28, 0x8045, true);
  golden_sync();
  golden_dma();
  failures += test_walker();
  if (argc == 2)
    failures += test_dispatch(argv[1]);
  printf("%s: %d failure%s\n", failures ? "FAIL" : "ok", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
