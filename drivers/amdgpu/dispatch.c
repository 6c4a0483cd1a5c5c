/* SPDX-License-Identifier: MIT */
/* dispatch.c: a launch as the hardware's compute dispatch sees it, with no
 * HSA runtime. The code object's kernel descriptor says which user SGPRs
 * its code expects preloaded, in a fixed order (AMDGPU's ABI, "Initial
 * Kernel Execution State"): the private segment buffer, the dispatch
 * packet's address, the queue's, the kernel arguments', the dispatch id,
 * flat scratch, the private segment size. A runtime's queue writes an HSA
 * dispatch packet anyway; the driver writes one of the same layout beside
 * the arguments, since code object v4 code reads its workgroup size from
 * it. Scratch is never enabled (codeobj.c refuses kernels that use it), so
 * its SGPRs are zero.
 */
#include <stdio.h>
#include <string.h>

#include "dispatch.h"

#define bad co_fail

static uint32_t user_sgprs(uint16_t p) {
  return (p & KCP_PRIVATE_SEGMENT_BUFFER ? 4u : 0) + (p & KCP_DISPATCH_PTR ? 2u : 0) +
         (p & KCP_QUEUE_PTR ? 2u : 0) + (p & KCP_KERNARG_SEGMENT_PTR ? 2u : 0) +
         (p & KCP_DISPATCH_ID ? 2u : 0) + (p & KCP_FLAT_SCRATCH_INIT ? 2u : 0) +
         (p & KCP_PRIVATE_SEGMENT_SIZE ? 1u : 0);
}

static uint32_t lds_bytes(const co_kernel *k, uint32_t shared) {
  return k->group_bytes + shared;
}

int dispatch_check(const co_kernel *k, const pm4_target *t, uint32_t shared_bytes, char *why,
                   size_t m) {
  uint32_t said = (k->rsrc2 & PM4_RSRC2_USER_SGPR_MASK) >> PM4_RSRC2_USER_SGPR_SHIFT;
  uint32_t need = user_sgprs(k->properties);
  /* RSRC2 may count more than the properties enable: LLVM sets 15 on GFX11
   * (its work-around for the user SGPR init bug); the rest load as zero. */
  if (need > said || said > PM4_USER_DATA_MAX)
    return bad(why, m, "kernel %s: its descriptor asks for %u user SGPRs, RSRC2 says %u", k->name,
               need, said);
  if ((uint64_t)k->group_bytes + shared_bytes > 65536)
    return bad(why, m, "kernel %s: %u + %u bytes of LDS, more than 64 KiB", k->name, k->group_bytes,
               shared_bytes);
  if (t->gen == 9 && (k->properties & KCP_WAVEFRONT_SIZE32))
    return bad(why, m, "kernel %s: wave32 code on GFX9, which runs wave64 only", k->name);
  return 0;
}

uint32_t dispatch_slot_bytes(const co_kernel *k) {
  return DISPATCH_PACKET_BYTES + ((k->kernarg_bytes + 63u) & ~63u);
}

static void le16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v) {
  le16(p, v);
  le16(p + 2, v >> 16);
}

static void le64(uint8_t *p, uint64_t v) {
  le32(p, (uint32_t)v);
  le32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t dims(const launch *l) {
  return l->groups[2] > 1 || l->threads[2] > 1 ? 3 : l->groups[1] > 1 || l->threads[1] > 1 ? 2 : 1;
}

/* hsa_kernel_dispatch_packet_t: header (a kernel dispatch, type 2), setup
 * (dimensions), workgroup and grid sizes, segment sizes, the descriptor's
 * and the arguments' addresses. */
void dispatch_packet(uint8_t *out, const co_kernel *k, const launch *l) {
  memset(out, 0, DISPATCH_PACKET_BYTES);
  le16(out + 0, 2u);
  le16(out + 2, dims(l));
  for (int i = 0; i < 3; i++) {
    le16(out + 4 + 2 * i, l->threads[i]);
    le32(out + 12 + 4 * i, l->groups[i] * l->threads[i]);
  }
  le32(out + 24, k->private_bytes);
  le32(out + 28, lds_bytes(k, l->shared_bytes));
  le64(out + 32, l->code_base + k->kd);
  le64(out + 40, l->kernargs);
}

/* One hidden argument from the launch; false for a kind left zero (the
 * printf and hostcall buffers, queues, heaps, apertures: none is provided). */
static bool hidden(uint8_t *p, const co_arg *a, const launch *l) {
  static const char *const xyz[] = {"_x", "_y", "_z"};
  for (int i = 0; i < 3; i++) {
    char name[40];
    snprintf(name, sizeof name, "hidden_block_count%s", xyz[i]);
    if (strcmp(a->kind, name) == 0 && a->size == 4)
      return le32(p, l->groups[i]), true;
    snprintf(name, sizeof name, "hidden_group_size%s", xyz[i]);
    if (strcmp(a->kind, name) == 0 && a->size == 2)
      return le16(p, l->threads[i]), true;
  }
  if (strcmp(a->kind, "hidden_grid_dims") == 0 && a->size == 2)
    return le16(p, dims(l)), true;
  if (strcmp(a->kind, "hidden_dynamic_lds_size") == 0 && a->size == 4)
    return le32(p, l->shared_bytes), true;
  return false; /* global offsets, remainders (grids are whole groups): zero */
}

int dispatch_kernargs(uint8_t *out, const co_kernel *k, const void *params, uint32_t params_bytes,
                      const launch *l, char *why, size_t m) {
  if (params_bytes > k->kernarg_bytes)
    return bad(why, m, "kernel %s takes %u bytes of arguments, given %u", k->name, k->kernarg_bytes,
               params_bytes);
  memset(out, 0, k->kernarg_bytes);
  if (params_bytes)
    memcpy(out, params, params_bytes);
  for (uint32_t i = 0; i < k->nargs; i++)
    if (strncmp(k->args[i].kind, "hidden_", 7) == 0 && k->args[i].offset >= params_bytes)
      hidden(out + k->args[i].offset, &k->args[i], l);
  return 0;
}

static uint32_t put64(uint32_t *u, uint32_t n, uint64_t v) {
  u[n] = (uint32_t)v;
  u[n + 1] = (uint32_t)(v >> 32);
  return n + 2;
}

void dispatch_registers(pm4_dispatch *d, const co_kernel *k, const pm4_target *t, const launch *l) {
  uint16_t p = k->properties;
  uint32_t n = 0, lds = (lds_bytes(k, l->shared_bytes) + PM4_LDS_GRANULE - 1) / PM4_LDS_GRANULE;
  memset(d, 0, sizeof *d);
  d->code = l->code_base + k->entry;
  d->rsrc1 = k->rsrc1;
  d->rsrc2 = (k->rsrc2 & ~PM4_RSRC2_LDS_SIZE_MASK) |
             ((lds << PM4_RSRC2_LDS_SIZE_SHIFT) & PM4_RSRC2_LDS_SIZE_MASK);
  d->rsrc3 = k->rsrc3;
  if (p & KCP_PRIVATE_SEGMENT_BUFFER)
    n += 4; /* no scratch: a null buffer */
  if (p & KCP_DISPATCH_PTR)
    n = put64(d->user, n, l->packet);
  if (p & KCP_QUEUE_PTR)
    n = put64(d->user, n, l->zeros);
  if (p & KCP_KERNARG_SEGMENT_PTR)
    n = put64(d->user, n, l->kernargs);
  if (p & KCP_DISPATCH_ID)
    put64(d->user, n, l->id); /* the last user SGPRs this kernel reads */
  /* KCP_FLAT_SCRATCH_INIT's two SGPRs come last and stay zero: no scratch
   * (d->user was zeroed), and nothing follows them to place. */
  for (int i = 0; i < 3; i++) {
    d->threads[i] = l->threads[i];
    d->groups[i] = l->groups[i];
  }
  d->wave32 = t->gen >= 10 && (p & KCP_WAVEFRONT_SIZE32);
}
