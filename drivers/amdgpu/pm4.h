/* SPDX-License-Identifier: MIT */
/* pm4.h: the PM4 packets the amdgpu driver writes into its indirect
 * buffers (pm4.c), for GFX9, GFX10 and GFX11 compute queues.
 *
 * Every number below comes from the kernel's own headers of the amdgpu
 * driver: packet opcodes and fields from soc15d.h (GFX9) and nvd.h (GFX10,
 * GFX11), register offsets from asic_reg/gc/gc_*_offset.h plus the GC
 * block's base (vega10_ip_offset.h, navi10_ip_offset.h), register fields
 * from gc_*_sh_mask.h. Each define carries a `check GENS: EXPR` comment;
 * check-pm4.py compiles `(VALUE) == (EXPR)` against those headers for each
 * generation named (9: gc_9_0, 90a: gc_9_4_2, 10: gc_10_3_0, 11: gc_11_0_0),
 * with REG(X) the header's name of register X and GC_BASE the block's base;
 * a function-like define is compared at 1 (NAME(1) == EXPR).
 * Event numbers come from the kernel's event enum (VGT_EVENT_TYPE).
 */
#ifndef RIG_AMDGPU_PM4_H
#define RIG_AMDGPU_PM4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- packets ---- */
#define PM4_TYPE3 3u /* check 9 10 11: PACKET_TYPE3 */
#define PM4_HEADER(op, n) ((PM4_TYPE3 << 30) | (((op)&0xffu) << 8) | (((n)&0x3fffu) << 16))
#define PM4_HEADER_SAMPLE PM4_HEADER(0x76u, 5u) /* check 9 10 11: PACKET3(0x76, 5) */
#define PM4_SHADER_COMPUTE (1u << 1) /* check 9 10 11: PACKET3_COMPUTE(0, 0) - PACKET3(0, 0) */
#define PM4_OP_NOP 0x10u /* check 9 10 11: PACKET3_NOP */
#define PM4_OP_DISPATCH_DIRECT 0x15u /* check 9 10 11: PACKET3_DISPATCH_DIRECT */
#define PM4_OP_WRITE_DATA 0x37u /* check 9 10 11: PACKET3_WRITE_DATA */
#define PM4_OP_EVENT_WRITE 0x46u /* check 9 10 11: PACKET3_EVENT_WRITE */
#define PM4_OP_RELEASE_MEM 0x49u /* check 9 10 11: PACKET3_RELEASE_MEM */
#define PM4_OP_DMA_DATA 0x50u /* check 9 10 11: PACKET3_DMA_DATA */
#define PM4_OP_ACQUIRE_MEM 0x58u /* check 9 10 11: PACKET3_ACQUIRE_MEM */
#define PM4_OP_SET_SH_REG 0x76u /* check 9 10 11: PACKET3_SET_SH_REG */
#define PM4_SH_REG_START 0x2c00u /* check 9 10 11: PACKET3_SET_SH_REG_START */
#define PM4_SH_REG_END 0x3000u /* check 9 10 11: PACKET3_SET_SH_REG_END */
/* A one-dword NOP: count 0x3fff means "this header alone" (the kernel's
 * ring padding, ring->funcs->nop). */
#define PM4_NOP_PAD PM4_HEADER(PM4_OP_NOP, 0x3fffu)

/* ---- event types (EVENT_WRITE, RELEASE_MEM) ---- */
#define PM4_EVENT_CS_PARTIAL_FLUSH 0x07u /* check 9 10 11: CS_PARTIAL_FLUSH */
#define PM4_EVENT_CACHE_FLUSH_AND_INV_TS 0x14u /* check 9 10 11: CACHE_FLUSH_AND_INV_TS_EVENT */
#define PM4_EVENT_BOTTOM_OF_PIPE_TS 0x28u /* check 9 10 11: BOTTOM_OF_PIPE_TS */
#define PM4_EVENT_TYPE(x) ((x) << 0) /* check 9 10 11: EVENT_TYPE(1) */
#define PM4_EVENT_INDEX(x) ((x) << 8) /* check 9 10 11: EVENT_INDEX(1) */

/* ---- RELEASE_MEM ---- */
#define PM4_RM_DATA_SEL(x) ((uint32_t)(x) << 29) /* check 9: DATA_SEL(1) */
#define PM4_RM_INT_SEL(x) ((x) << 24) /* check 9: INT_SEL(1) */
#define PM4_RM_DST_SEL(x) ((x) << 16) /* check 9: DST_SEL(1) */
#define PM4_RM_DATA_64 2u /* the value given, 64 bits */
#define PM4_RM_DATA_TIMESTAMP 3u /* the GPU's 64-bit clock counter */
#define PM4_RM_INT_NONE 0u /* no interrupt: the host polls the word */
/* GFX9 cache actions at end of pipe */
#define PM4_EOP_TC_WB (1u << 15) /* check 9: EOP_TC_WB_ACTION_EN */
#define PM4_EOP_TCL1 (1u << 16) /* check 9: EOP_TCL1_ACTION_EN */
#define PM4_EOP_TC (1u << 17) /* check 9: EOP_TC_ACTION_EN */
#define PM4_EOP_TC_MD (1u << 21) /* check 9: EOP_TC_MD_ACTION_EN */
/* GFX10/11 cache actions at end of pipe (GCR) */
#define PM4_RM10_GLM_WB (1u << 12) /* check 10 11: PACKET3_RELEASE_MEM_GCR_GLM_WB */
#define PM4_RM10_GLM_INV (1u << 13) /* check 10 11: PACKET3_RELEASE_MEM_GCR_GLM_INV */
#define PM4_RM10_GLV_INV (1u << 14) /* check 10 11: PACKET3_RELEASE_MEM_GCR_GLV_INV */
#define PM4_RM10_GL1_INV (1u << 15) /* check 10 11: PACKET3_RELEASE_MEM_GCR_GL1_INV */
#define PM4_RM10_GL2_INV (1u << 20) /* check 10 11: PACKET3_RELEASE_MEM_GCR_GL2_INV */
#define PM4_RM10_GL2_WB (1u << 21) /* check 10 11: PACKET3_RELEASE_MEM_GCR_GL2_WB */
#define PM4_RM10_SEQ (1u << 22) /* check 10 11: PACKET3_RELEASE_MEM_GCR_SEQ */
#define PM4_RM10_CACHE_POLICY(x) ((x) << 25) /* check 10 11: PACKET3_RELEASE_MEM_CACHE_POLICY(1) */
#define PM4_RM10_DATA_SEL(x)                                                                       \
  ((uint32_t)(x) << 29) /* check 10 11: PACKET3_RELEASE_MEM_DATA_SEL(1) */
#define PM4_RM10_INT_SEL(x) ((x) << 24) /* check 10 11: PACKET3_RELEASE_MEM_INT_SEL(1) */

/* ---- ACQUIRE_MEM ---- */
/* GFX9: CP_COHER_CNTL */
#define PM4_COHER_TC_WB                                                                            \
  (1u << 18) /* check 9: PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(1) */
#define PM4_COHER_TCL1                                                                             \
  (1u << 22) /* check 9: PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TCL1_ACTION_ENA(1) */
#define PM4_COHER_TC (1u << 23) /* check 9: PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(1) */
#define PM4_COHER_SH_KCACHE                                                                        \
  (1u << 27) /* check 9: PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_KCACHE_ACTION_ENA(1) */
#define PM4_COHER_SH_ICACHE                                                                        \
  (1u << 29) /* check 9: PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA(1) */
/* GFX10/11: GCR_CNTL */
#define PM4_GCR_GLI_INV(x) ((x) << 0) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1) */
#define PM4_GCR_GLM_WB (1u << 4) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) */
#define PM4_GCR_GLM_INV (1u << 5) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) */
#define PM4_GCR_GLK_INV (1u << 7) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) */
#define PM4_GCR_GLV_INV (1u << 8) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) */
#define PM4_GCR_GL1_INV (1u << 9) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) */
#define PM4_GCR_GL2_INV (1u << 14) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) */
#define PM4_GCR_GL2_WB (1u << 15) /* check 10 11: PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1) */

/* ---- DMA_DATA ---- */
#define PM4_DMA_DST_SEL(x) ((x) << 20) /* check 9 10 11: PACKET3_DMA_DATA_DST_SEL(1) */
#define PM4_DMA_SRC_SEL(x) ((uint32_t)(x) << 29) /* check 9 10 11: PACKET3_DMA_DATA_SRC_SEL(1) */
#define PM4_DMA_CP_SYNC (1u << 31) /* check 9 10 11: PACKET3_DMA_DATA_CP_SYNC */
#define PM4_DMA_CMD_RAW_WAIT (1u << 30) /* check 9 10 11: PACKET3_DMA_DATA_CMD_RAW_WAIT */
#define PM4_DMA_SRC_DATA 2u /* the source is the packet's DATA word (a fill) */
#define PM4_DMA_ADDR_L2 3u /* src/dst address through L2 (GFX9+) */
/* BYTE_COUNT's width: [20:0] on GFX9 (soc15d.h), [25:0] on GFX10/11 (nvd.h).
 * A packet moves at most the largest multiple of 4 KiB below it. */
#define PM4_DMA_MAX_GFX9 ((1u << 21) - 4096u)
#define PM4_DMA_MAX_GFX10 ((1u << 26) - 4096u)

/* ---- registers (dword addresses; SET_SH_REG takes them less PM4_SH_REG_START) ---- */
#define PM4_COMPUTE_DISPATCH_INITIATOR                                                             \
  0x2e00u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_DISPATCH_INITIATOR) */
#define PM4_COMPUTE_START_X 0x2e04u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_START_X) */
#define PM4_COMPUTE_NUM_THREAD_X                                                                   \
  0x2e07u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_NUM_THREAD_X) */
#define PM4_COMPUTE_PGM_LO 0x2e0cu /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_PGM_LO) */
#define PM4_COMPUTE_PGM_RSRC1 0x2e12u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_PGM_RSRC1) */
#define PM4_COMPUTE_RESOURCE_LIMITS                                                                \
  0x2e15u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_RESOURCE_LIMITS) */
#define PM4_COMPUTE_TMPRING_SIZE                                                                   \
  0x2e18u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_TMPRING_SIZE) */
#define PM4_COMPUTE_PGM_RSRC3_GFX90A 0x2e2du /* check 90a: GC_BASE + REG(COMPUTE_PGM_RSRC3) */
#define PM4_COMPUTE_PGM_RSRC3_GFX10 0x2e28u /* check 10 11: GC_BASE + REG(COMPUTE_PGM_RSRC3) */
#define PM4_COMPUTE_USER_DATA_0 0x2e40u /* check 9 90a 10 11: GC_BASE + REG(COMPUTE_USER_DATA_0) */
#define PM4_USER_DATA_MAX 16u /* COMPUTE_USER_DATA_0..15 */

/* ---- register fields ---- */
#define PM4_INIT_COMPUTE_SHADER_EN                                                                 \
  (1u << 0) /* check 9 90a 10 11: COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN_MASK */
#define PM4_INIT_FORCE_START_AT_000                                                                \
  (1u << 2) /* check 9 90a 10 11: COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000_MASK */
#define PM4_INIT_ORDER_MODE                                                                        \
  (1u << 6) /* check 9 90a 10 11: COMPUTE_DISPATCH_INITIATOR__ORDER_MODE_MASK */
#define PM4_INIT_CS_W32_EN (1u << 15) /* check 10 11: COMPUTE_DISPATCH_INITIATOR__CS_W32_EN_MASK */
#define PM4_RSRC2_SCRATCH_EN 1u /* check 9 90a 10 11: COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK */
#define PM4_RSRC2_USER_SGPR_SHIFT 1u /* check 9 90a 10 11: COMPUTE_PGM_RSRC2__USER_SGPR__SHIFT */
#define PM4_RSRC2_USER_SGPR_MASK 0x3eu /* check 9 90a 10 11: COMPUTE_PGM_RSRC2__USER_SGPR_MASK */
#define PM4_RSRC2_LDS_SIZE_SHIFT 15u /* check 9 90a 10 11: COMPUTE_PGM_RSRC2__LDS_SIZE__SHIFT */
#define PM4_RSRC2_LDS_SIZE_MASK 0xff8000u /* check 9 90a 10 11: COMPUTE_PGM_RSRC2__LDS_SIZE_MASK */
#define PM4_LDS_GRANULE 512u /* bytes per LDS_SIZE unit on compute, GFX7 and later */
#define PM4_NUM_THREAD_FULL_SHIFT                                                                  \
  0u /* check 9 90a 10 11: COMPUTE_NUM_THREAD_X__NUM_THREAD_FULL__SHIFT */

/* ---- the encoder (pm4.c) ---- */

/* A generation's packet and register layout. */
typedef struct pm4_target {
  int gen; /* 9, 10, 11 */
  uint32_t rsrc3; /* COMPUTE_PGM_RSRC3's address, 0 where none (GFX9 but gfx90a) */
  uint32_t dma_max; /* the most bytes one DMA_DATA moves */
} pm4_target;

/* A buffer of dwords being written: a write past cap sets overflow and
 * writes nothing, so the caller checks once at the end. */
typedef struct pm4_buf {
  uint32_t *dw;
  uint32_t n, cap;
  bool overflow;
} pm4_buf;

/* What a dispatch sets. */
typedef struct pm4_dispatch {
  uint64_t code; /* the program's GPU address (256-byte aligned) */
  uint32_t rsrc1, rsrc2, rsrc3;
  uint32_t user[PM4_USER_DATA_MAX]; /* user SGPRs, as many as rsrc2 says */
  uint32_t threads[3]; /* per workgroup */
  uint32_t groups[3];
  bool wave32;
} pm4_dispatch;

/* The layout for a gfx name; -1 for one of no generation known. */
int pm4_target_of(const char *gfx, pm4_target *t);

void pm4_dispatch_emit(pm4_buf *b, const pm4_target *t, const pm4_dispatch *d);
/* The wait for earlier dispatches to end and the invalidation of the
 * shader caches (instruction, scalar, vector/L1) a dispatch that reads
 * their results needs; l2 also writes back and invalidates L2 (at the
 * start of a buffer: memory the host or another device wrote). */
void pm4_barrier(pm4_buf *b, const pm4_target *t, bool l2);
/* Copies in as many DMA_DATA packets as t's size limit needs. */
void pm4_copy(pm4_buf *b, const pm4_target *t, uint64_t dst, uint64_t src, uint64_t bytes);
/* Fills bytes (a multiple of 4, dst 4-aligned) with the 32-bit pattern. */
void pm4_fill(pm4_buf *b, const pm4_target *t, uint64_t dst, uint32_t pattern, uint64_t bytes);
/* Fills bytes at dst (any place, any size) with the pattern of period 1, 2
 * or 4 bytes whose first byte is at dst: the 4-aligned middle by DATA
 * fills, the head and tail (at most 3 bytes each) by copies from src, 8
 * bytes of the pattern repeated from its first byte that the caller has
 * written at a 4-aligned GPU address. pattern is those 8 bytes' first 4,
 * little-endian. */
void pm4_fill_any(pm4_buf *b, const pm4_target *t, uint64_t dst, uint32_t pattern, uint64_t bytes,
                  uint64_t src);
/* At end of pipe, with L2 written back: value (or, timestamp, the GPU's
 * clock counter) written as 64 bits at addr (8-aligned). */
void pm4_release(pm4_buf *b, const pm4_target *t, uint64_t addr, uint64_t value, bool timestamp);
/* NOPs up to a multiple of 8 dwords. */
void pm4_pad(pm4_buf *b);
/* The dwords one pm4_copy/pm4_fill of bytes takes (room counting). */
uint32_t pm4_dma_dwords(const pm4_target *t, uint64_t bytes);

/* The framing walker: every packet of dw[0..n) is a type-3 packet of an
 * opcode the encoder uses, with the body length that opcode has, SET_SH_REG
 * ranges inside the SH registers the encoder sets, DMA_DATA byte counts
 * within t's limit, RELEASE_MEM and DMA_DATA addresses aligned, and n a
 * multiple of 8. 0, or -1 with the first fault and its dword index in why. */
int pm4_walk(const uint32_t *dw, uint32_t n, const pm4_target *t, char *why, size_t m);

#endif
