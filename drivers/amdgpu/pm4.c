/* SPDX-License-Identifier: MIT */
/* pm4.c: the packets of the amdgpu driver's indirect buffers, for the
 * compute queues of GFX9, GFX10 and GFX11, and a walker that checks their
 * framing. What each packet holds follows the kernel's own use of it
 * (gfx_v9_0.c, gfx_v10_0.c, gfx_v11_0.c: emit_mem_sync, emit_fence) and
 * Mesa's compute dispatch; the numbers are pm4.h's, each checked against
 * the kernel's headers by check-pm4.py.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gfx.h"
#include "pm4.h"

int pm4_target_of(const char *gfx, pm4_target *t) {
  int gen = gfx_generation(gfx);
  memset(t, 0, sizeof *t);
  if (!gen)
    return -1;
  t->gen = gen;
  t->dma_max = gen == 9 ? PM4_DMA_MAX_GFX9 : PM4_DMA_MAX_GFX10;
  if (gen >= 10)
    t->rsrc3 = PM4_COMPUTE_PGM_RSRC3_GFX10;
  else if (strcmp(gfx, "gfx90a") == 0)
    t->rsrc3 = PM4_COMPUTE_PGM_RSRC3_GFX90A;
  return 0;
}

static void put(pm4_buf *b, uint32_t v) {
  if (b->n < b->cap)
    b->dw[b->n++] = v;
  else
    b->overflow = true;
}

static void header(pm4_buf *b, uint32_t op, uint32_t body) {
  put(b, PM4_HEADER(op, body - 1));
}

static void set_sh(pm4_buf *b, uint32_t reg, const uint32_t *v, uint32_t n) {
  header(b, PM4_OP_SET_SH_REG, n + 1);
  put(b, reg - PM4_SH_REG_START);
  for (uint32_t i = 0; i < n; i++)
    put(b, v[i]);
}

static void set_one(pm4_buf *b, uint32_t reg, uint32_t v) {
  set_sh(b, reg, &v, 1);
}

void pm4_dispatch_emit(pm4_buf *b, const pm4_target *t, const pm4_dispatch *d) {
  uint32_t pgm[2] = {(uint32_t)(d->code >> 8), (uint32_t)(d->code >> 40)};
  uint32_t rsrc[2] = {d->rsrc1, d->rsrc2};
  uint32_t zero[3] = {0, 0, 0};
  uint32_t users = (d->rsrc2 & PM4_RSRC2_USER_SGPR_MASK) >> PM4_RSRC2_USER_SGPR_SHIFT;
  set_sh(b, PM4_COMPUTE_PGM_LO, pgm, 2);
  set_sh(b, PM4_COMPUTE_PGM_RSRC1, rsrc, 2);
  if (t->rsrc3)
    set_one(b, t->rsrc3, d->rsrc3);
  set_one(b, PM4_COMPUTE_RESOURCE_LIMITS, 0);
  set_one(b, PM4_COMPUTE_TMPRING_SIZE, 0); /* no scratch */
  set_sh(b, PM4_COMPUTE_START_X, zero, 3);
  set_sh(b, PM4_COMPUTE_NUM_THREAD_X, d->threads, 3);
  if (users)
    set_sh(b, PM4_COMPUTE_USER_DATA_0, d->user,
           users > PM4_USER_DATA_MAX ? PM4_USER_DATA_MAX : users);
  put(b, PM4_HEADER(PM4_OP_DISPATCH_DIRECT, 3) | PM4_SHADER_COMPUTE);
  put(b, d->groups[0]);
  put(b, d->groups[1]);
  put(b, d->groups[2]);
  put(b, PM4_INIT_COMPUTE_SHADER_EN | PM4_INIT_FORCE_START_AT_000 | PM4_INIT_ORDER_MODE |
             (d->wave32 && t->gen >= 10 ? PM4_INIT_CS_W32_EN : 0));
}

void pm4_barrier(pm4_buf *b, const pm4_target *t, bool l2) {
  header(b, PM4_OP_EVENT_WRITE, 1);
  put(b, PM4_EVENT_TYPE(PM4_EVENT_CS_PARTIAL_FLUSH) | PM4_EVENT_INDEX(4));
  header(b, PM4_OP_ACQUIRE_MEM, t->gen == 9 ? 6 : 7);
  if (t->gen == 9)
    put(b, PM4_COHER_SH_ICACHE | PM4_COHER_SH_KCACHE | PM4_COHER_TCL1 |
               (l2 ? PM4_COHER_TC | PM4_COHER_TC_WB : 0));
  else
    put(b, 0); /* CP_COHER_CNTL: GCR_CNTL below says it all */
  put(b, 0xffffffffu); /* CP_COHER_SIZE: all of memory */
  put(b, 0xffffffu); /* CP_COHER_SIZE_HI */
  put(b, 0); /* CP_COHER_BASE */
  put(b, 0); /* CP_COHER_BASE_HI */
  put(b, 0x0000000au); /* POLL_INTERVAL, the kernel's */
  if (t->gen >= 10)
    put(b, PM4_GCR_GLI_INV(1) | PM4_GCR_GLK_INV | PM4_GCR_GLV_INV | PM4_GCR_GL1_INV |
               (l2 ? PM4_GCR_GLM_INV | PM4_GCR_GLM_WB | PM4_GCR_GL2_INV | PM4_GCR_GL2_WB : 0));
}

static void dma(pm4_buf *b, uint32_t control, uint64_t src, uint64_t dst, uint32_t bytes) {
  header(b, PM4_OP_DMA_DATA, 6);
  put(b, control | PM4_DMA_DST_SEL(PM4_DMA_ADDR_L2) | PM4_DMA_CP_SYNC);
  put(b, (uint32_t)src);
  put(b, (uint32_t)(src >> 32));
  put(b, (uint32_t)dst);
  put(b, (uint32_t)(dst >> 32));
  put(b, bytes | PM4_DMA_CMD_RAW_WAIT);
}

uint32_t pm4_dma_dwords(const pm4_target *t, uint64_t bytes) {
  return (uint32_t)((bytes + t->dma_max - 1) / t->dma_max) * 7u;
}

void pm4_copy(pm4_buf *b, const pm4_target *t, uint64_t dst, uint64_t src, uint64_t bytes) {
  for (uint64_t at = 0; at < bytes; at += t->dma_max) {
    uint64_t n = bytes - at < t->dma_max ? bytes - at : t->dma_max;
    dma(b, PM4_DMA_SRC_SEL(PM4_DMA_ADDR_L2), src + at, dst + at, (uint32_t)n);
  }
}

void pm4_fill(pm4_buf *b, const pm4_target *t, uint64_t dst, uint32_t pattern, uint64_t bytes) {
  for (uint64_t at = 0; at < bytes; at += t->dma_max) {
    uint64_t n = bytes - at < t->dma_max ? bytes - at : t->dma_max;
    dma(b, PM4_DMA_SRC_SEL(PM4_DMA_SRC_DATA), pattern, dst + at, (uint32_t)n);
  }
}

void pm4_fill_any(pm4_buf *b, const pm4_target *t, uint64_t dst, uint32_t pattern, uint64_t bytes,
                  uint64_t src) {
  uint64_t head = (4 - (dst & 3)) & 3;
  if (head > bytes)
    head = bytes;
  uint64_t middle = (bytes - head) & ~3ull, tail = bytes - head - middle;
  if (head)
    dma(b, PM4_DMA_SRC_SEL(PM4_DMA_ADDR_L2), src, dst, (uint32_t)head);
  if (middle) { /* the pattern as it stands at the first 4-aligned byte */
    uint32_t phase = (uint32_t)(head * 8);
    uint32_t word = phase ? (pattern >> phase) | (pattern << (32 - phase)) : pattern;
    pm4_fill(b, t, dst + head, word, middle);
  }
  if (tail) /* its first byte's phase in the pattern: (head + middle) % 4 == head % 4 */
    dma(b, PM4_DMA_SRC_SEL(PM4_DMA_ADDR_L2), src + ((head + middle) & 3), dst + head + middle,
        (uint32_t)tail);
}

/* The end-of-pipe event and its cache actions: the kernel's fence's (L2
 * written back, so the host and other devices read the results), or none
 * for a timestamp, which only marks when the work before it ended. */
static uint32_t release_event(const pm4_target *t, bool timestamp) {
  if (timestamp)
    return PM4_EVENT_TYPE(PM4_EVENT_BOTTOM_OF_PIPE_TS) | PM4_EVENT_INDEX(5);
  uint32_t e = PM4_EVENT_TYPE(PM4_EVENT_CACHE_FLUSH_AND_INV_TS) | PM4_EVENT_INDEX(5);
  if (t->gen == 9)
    return e | PM4_EOP_TCL1 | PM4_EOP_TC | PM4_EOP_TC_WB | PM4_EOP_TC_MD;
  return e | PM4_RM10_SEQ | PM4_RM10_GL2_WB | PM4_RM10_GLM_INV | PM4_RM10_GLM_WB |
         PM4_RM10_CACHE_POLICY(3);
}

void pm4_release(pm4_buf *b, const pm4_target *t, uint64_t addr, uint64_t value, bool timestamp) {
  header(b, PM4_OP_RELEASE_MEM, 7);
  put(b, release_event(t, timestamp));
  put(b, PM4_RM_DATA_SEL(timestamp ? PM4_RM_DATA_TIMESTAMP : PM4_RM_DATA_64) |
             PM4_RM_INT_SEL(PM4_RM_INT_NONE));
  put(b, (uint32_t)addr);
  put(b, (uint32_t)(addr >> 32));
  put(b, timestamp ? 0 : (uint32_t)value);
  put(b, timestamp ? 0 : (uint32_t)(value >> 32));
  put(b, 0);
}

void pm4_pad(pm4_buf *b) {
  while (b->n % 8 != 0 && !b->overflow)
    put(b, PM4_NOP_PAD);
}

/* ---- the walker ---- */

static int fault(char *why, size_t m, uint32_t at, const char *fmt, ...) {
  char what[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(why, m, "dword %u: %s", at, what);
  return -1;
}

static bool settable(const pm4_target *t, uint32_t reg) {
  return (reg >= PM4_COMPUTE_START_X && reg < PM4_COMPUTE_START_X + 3) ||
         (reg >= PM4_COMPUTE_NUM_THREAD_X && reg < PM4_COMPUTE_NUM_THREAD_X + 3) ||
         reg == PM4_COMPUTE_PGM_LO || reg == PM4_COMPUTE_PGM_LO + 1 ||
         reg == PM4_COMPUTE_PGM_RSRC1 || reg == PM4_COMPUTE_PGM_RSRC1 + 1 ||
         (t->rsrc3 && reg == t->rsrc3) || reg == PM4_COMPUTE_RESOURCE_LIMITS ||
         reg == PM4_COMPUTE_TMPRING_SIZE ||
         (reg >= PM4_COMPUTE_USER_DATA_0 && reg < PM4_COMPUTE_USER_DATA_0 + PM4_USER_DATA_MAX);
}

/* The body of one packet at dw[at], body words long. */
static int body(const uint32_t *p, uint32_t op, uint32_t len, uint32_t at, const pm4_target *t,
                char *why, size_t m) {
  switch (op) {
  case PM4_OP_SET_SH_REG:
    for (uint32_t i = 1; i < len; i++)
      if (p[0] > PM4_SH_REG_END - PM4_SH_REG_START || !settable(t, PM4_SH_REG_START + p[0] + i - 1))
        return fault(why, m, at, "SET_SH_REG of register 0x%x, not one a dispatch sets",
                     PM4_SH_REG_START + p[0] + i - 1);
    return len >= 2 ? 0 : fault(why, m, at, "SET_SH_REG with no value");
  case PM4_OP_DISPATCH_DIRECT:
    if (!(p[3] & PM4_INIT_COMPUTE_SHADER_EN) || !p[0] || !p[1] || !p[2])
      return fault(why, m, at, "DISPATCH_DIRECT of no group or without COMPUTE_SHADER_EN");
    return 0;
  case PM4_OP_RELEASE_MEM:
    return p[2] & 7 ? fault(why, m, at, "RELEASE_MEM to an address not 8-aligned") : 0;
  case PM4_OP_DMA_DATA: {
    uint32_t bytes = p[5] & ((1u << 26) - 1);
    if (!bytes || bytes > t->dma_max)
      return fault(why, m, at, "DMA_DATA of %u bytes (limit %u)", bytes, t->dma_max);
    return 0;
  }
  default:
    return 0;
  }
}

/* Each opcode's body length, or 0 for any. */
static uint32_t expected(uint32_t op, const pm4_target *t) {
  switch (op) {
  case PM4_OP_DISPATCH_DIRECT:
    return 4;
  case PM4_OP_EVENT_WRITE:
    return 1;
  case PM4_OP_RELEASE_MEM:
    return 7;
  case PM4_OP_DMA_DATA:
    return 6;
  case PM4_OP_ACQUIRE_MEM:
    return t->gen == 9 ? 6 : 7;
  default:
    return 0;
  }
}

int pm4_walk(const uint32_t *dw, uint32_t n, const pm4_target *t, char *why, size_t m) {
  if (n % 8 != 0)
    return fault(why, m, n, "the buffer is %u dwords, not a multiple of 8", n);
  for (uint32_t at = 0; at < n;) {
    uint32_t h = dw[at], op = (h >> 8) & 0xff, len = ((h >> 16) & 0x3fff) + 1;
    if (h >> 30 != PM4_TYPE3)
      return fault(why, m, at, "0x%08x is not a type-3 packet header", h);
    if (h == PM4_NOP_PAD) {
      at++;
      continue;
    }
    bool known = op == PM4_OP_NOP || op == PM4_OP_SET_SH_REG || expected(op, t);
    if (!known)
      return fault(why, m, at, "opcode 0x%02x is not one the encoder writes", op);
    if (expected(op, t) && len != expected(op, t))
      return fault(why, m, at, "opcode 0x%02x with %u body dwords, not %u", op, len,
                   expected(op, t));
    if (len > n - at - 1)
      return fault(why, m, at, "opcode 0x%02x runs past the buffer's end", op);
    if (body(dw + at + 1, op, len, at, t, why, m) != 0)
      return -1;
    at += 1 + len;
  }
  return 0;
}
