/* SPDX-License-Identifier: MIT */
/* encode.c: one value's parts as PM4 in the open's IB (pm4.c), with each
 * launch's dispatch packet and arguments in the argument ring (dispatch.c).
 *
 * The buffer starts with a barrier that also writes back and invalidates
 * L2, since the host or another device may have written the memory this
 * work reads; a part that core says follows an earlier one (ORDER-3) gets a
 * barrier before it, since consecutive dispatches and copies of one
 * compute queue may overlap; the buffer ends with the timeline value
 * written at end of pipe with L2 written back. Nothing here allocates.
 */
#include <stdio.h>
#include <string.h>

#include "amdgpu_private.h"

#define BARRIER_DW 10u
#define RELEASE_DW 8u
#define DISPATCH_DW 64u

static uint64_t at_of(const rig_edge_range *r) {
  return r->alloc->address + r->offset;
}

static bool follows_any(const rig_edge_part *p) {
  for (uint32_t q = 0; q < RIG_EDGE_MAX_QUEUES; q++)
    if (p->follows[q])
      return true;
  return false;
}

static uint32_t replicate(uint32_t pattern, uint32_t bytes) {
  if (bytes == 1)
    return (pattern & 0xffu) * 0x01010101u;
  if (bytes == 2)
    return (pattern & 0xffffu) * 0x00010001u;
  return pattern;
}

void encode_size(const amddev *d, const rig_edge_work *w, uint32_t *dwords, uint32_t *bytes) {
  uint64_t dw = BARRIER_DW + RELEASE_DW + 8, by = 0;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    dw += BARRIER_DW + 2 * RELEASE_DW;
    if (p->kind == RIG_EDGE_PART_COPY)
      dw += pm4_dma_dwords(&d->target, p->u.copy.dst.bytes);
    else if (p->kind == RIG_EDGE_PART_FILL) {
      dw += pm4_dma_dwords(&d->target, p->u.fill.dst.bytes) + 2 * 7; /* head, tail copies */
      by += 64; /* their source */
    } else if (p->kind == RIG_EDGE_PART_LAUNCH) {
      dw += DISPATCH_DW;
      by += dispatch_slot_bytes(((const amdfn *)p->u.launch.function)->k);
    }
  }
  *dwords = dw > UINT32_MAX ? UINT32_MAX : (uint32_t)dw;
  *bytes = by > UINT32_MAX ? UINT32_MAX : (uint32_t)by;
}

int encode_check(const amddev *d, const rig_edge_part *p, rig_edge_error *err) {
  char why[200];
  if (p->kind != RIG_EDGE_PART_LAUNCH)
    return RIG_EDGE_OK;
  const amdfn *f = p->u.launch.function;
  uint64_t t = 1;
  for (int i = 0; i < 3; i++) {
    t *= p->u.launch.threads[i];
    if (p->u.launch.groups[i] > UINT32_MAX || p->u.launch.threads[i] > 1024)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: kernel %s: %llu groups of %llu "
                           "threads on axis %d: at most 2^32-1 groups of 1024",
                           d->name, f->k->name, (unsigned long long)p->u.launch.groups[i],
                           (unsigned long long)p->u.launch.threads[i], i);
  }
  if (t > 1024)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: kernel %s: %llu threads a group, "
                         "more than 1024",
                         d->name, f->k->name, (unsigned long long)t);
  if (p->u.launch.params_bytes > f->k->kernarg_bytes)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: kernel %s takes %u argument bytes, "
                         "given %u",
                         d->name, f->k->name, f->k->kernarg_bytes, p->u.launch.params_bytes);
  if (dispatch_check(f->k, &d->target, p->u.launch.shared_bytes, why, sizeof why) != 0)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s", d->name, why);
  return RIG_EDGE_OK;
}

/* A fill: DATA fills where it is whole 4-byte words, 4-aligned; else the
 * head and tail bytes copied from 8 bytes of the pattern written into the
 * argument ring. */
static void fill_part(amddev *d, const rig_edge_part *p, pm4_buf *b, uint32_t *args_at) {
  uint32_t word = replicate(p->u.fill.pattern, p->u.fill.pattern_bytes);
  uint64_t dst = at_of(&p->u.fill.dst), bytes = p->u.fill.dst.bytes;
  if (((dst | bytes) & 3) == 0) {
    pm4_fill(b, &d->target, dst, word, bytes);
    return;
  }
  uint8_t *host = (uint8_t *)d->rings->host + IB_DWORDS * 4u + *args_at;
  for (int i = 0; i < 8; i++)
    host[i] = (uint8_t)(word >> (8 * (i & 3)));
  pm4_fill_any(b, &d->target, dst, word, bytes, d->rings->va + IB_DWORDS * 4u + *args_at);
  *args_at += 64;
}

static void launch_part(amddev *d, const rig_edge_work *w, const rig_edge_part *p, pm4_buf *b,
                        uint32_t *args_at) {
  const amdfn *f = p->u.launch.function;
  uint8_t *host = (uint8_t *)d->rings->host + IB_DWORDS * 4u;
  uint64_t va = d->rings->va + IB_DWORDS * 4u;
  char why[160];
  launch l = {.shared_bytes = p->u.launch.shared_bytes,
              .code_base = f->base,
              .packet = va + *args_at,
              .kernargs = va + *args_at + DISPATCH_PACKET_BYTES,
              .zeros = d->zeros_va,
              .id = w->value};
  for (int i = 0; i < 3; i++) {
    l.groups[i] = (uint32_t)p->u.launch.groups[i];
    l.threads[i] = (uint32_t)p->u.launch.threads[i];
  }
  dispatch_packet(host + *args_at, f->k, &l);
  /* checked at check: the parameters fit the kernel's arguments */
  dispatch_kernargs(host + *args_at + DISPATCH_PACKET_BYTES, f->k, p->u.launch.params,
                    p->u.launch.params_bytes, &l, why, sizeof why);
  pm4_dispatch regs;
  dispatch_registers(&regs, f->k, &d->target, &l);
  pm4_dispatch_emit(b, &d->target, &regs);
  *args_at += dispatch_slot_bytes(f->k);
}

int encode_work(amddev *d, const rig_edge_work *w, pm4_buf *b, uint32_t *args_at,
                rig_edge_error *err) {
  const pm4_target *t = &d->target;
  pm4_barrier(b, t, true);
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    uint32_t slot = 0;
    if (i > 0 && follows_any(p))
      pm4_barrier(b, t, false);
    bool timed = profile_begin(d, w, i, &slot);
    if (timed)
      pm4_release(b, t, d->stamps_va + 16ull * slot, 0, true);
    if (p->kind == RIG_EDGE_PART_COPY)
      pm4_copy(b, t, at_of(&p->u.copy.dst), at_of(&p->u.copy.src), p->u.copy.dst.bytes);
    else if (p->kind == RIG_EDGE_PART_FILL)
      fill_part(d, p, b, args_at);
    else if (p->kind == RIG_EDGE_PART_LAUNCH)
      launch_part(d, w, p, b, args_at);
    if (timed)
      pm4_release(b, t, d->stamps_va + 16ull * slot + 8, 0, true);
  }
  pm4_release(b, t, d->word_va, w->value, false);
  pm4_pad(b);
  if (b->overflow)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: the work outgrew its IB (a driver bug)",
                         d->name);
  return RIG_EDGE_OK;
}
