/* SPDX-License-Identifier: MIT */
/* move.c: the remote driver's copies that move bytes between machines
 * (move.h; docs/remote.md). Between this host's memory and a remote
 * buffer: RMA where the buffer is exposed, else chunks. Between two other
 * machines: the source's server puts the bytes into the destination
 * itself (PUSH), so that none passes through this host; where it cannot
 * (a buffer not exposed or not in its host's memory, a server that cannot
 * reach the other), they pass through this host in pieces. */
#include "move.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic uint64_t rig_remote_bytes_here;

#define PIECE ((uint64_t)64 << 20)       /* through this host: one get, then its put */
#define PUSH_PIECE ((uint64_t)256 << 20) /* bytes of one PUSH */

static uint64_t id_of(const rig_edge_range *r) {
  return ((const rig_remote_buf *)r->alloc->handle)->id;
}

/* The exposure through which n bytes at offset of r's buffer move by
 * RMA, or NULL: a small move, or a buffer not exposed. */
static const rig_link_rma *by_rma(const rig_edge_range *r) {
  const rig_remote_buf *b = r->alloc->handle;
  bool fits = r->offset <= b->rma.bytes && r->bytes <= b->rma.bytes - r->offset;
  return b->rma.rkey && r->bytes >= RIG_REMOTE_RMA_MIN && fits ? &b->rma : NULL;
}

int rig_remote_put(rig_link *l, const rig_edge_range *src, const rig_edge_range *dst,
                   rig_edge_error *err) {
  const uint8_t *p = (const uint8_t *)src->alloc->host + src->offset;
  atomic_fetch_add(&rig_remote_bytes_here, src->bytes);
  if (by_rma(dst))
    return rig_link_rma_move(l, by_rma(dst), true, (void *)p, dst->offset, src->bytes, err);
  for (uint64_t done = 0; done < src->bytes;) {
    uint64_t n = src->bytes - done < RIG_WIRE_CHUNK ? src->bytes - done : RIG_WIRE_CHUNK;
    rig_wire_msg m = {.type = RIG_WIRE_PUT, .buf = id_of(dst), .offset = dst->offset + done};
    int r = rig_link_call(l, &m, p + done, n, NULL, 0, NULL, err);
    if (r != RIG_EDGE_OK)
      return r;
    done += n;
  }
  return RIG_EDGE_OK;
}

int rig_remote_get(rig_link *l, const rig_edge_range *src, const rig_edge_range *dst,
                   rig_edge_error *err) {
  uint8_t *p = (uint8_t *)dst->alloc->host + dst->offset;
  atomic_fetch_add(&rig_remote_bytes_here, src->bytes);
  if (by_rma(src))
    return rig_link_rma_move(l, by_rma(src), false, p, src->offset, src->bytes, err);
  for (uint64_t done = 0; done < src->bytes;) {
    uint64_t n = src->bytes - done < RIG_WIRE_CHUNK ? src->bytes - done : RIG_WIRE_CHUNK;
    size_t got = 0;
    rig_wire_msg m = {.type = RIG_WIRE_GET, .buf = id_of(src), .offset = src->offset + done,
                      .bytes = n};
    int r = rig_link_call(l, &m, NULL, 0, p + done, n, &got, err);
    if (r == RIG_EDGE_OK && got != n)
      r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: a GET reply of %zu bytes, not %llu",
                        rig_link_machine(l), got, (unsigned long long)n);
    if (r != RIG_EDGE_OK)
      return r;
    done += n;
  }
  return RIG_EDGE_OK;
}

/* PUSH: the source's server puts into the exposed destination, one
 * request per PUSH_PIECE, so that each reply comes within the hang bound
 * at any bandwidth above PUSH_PIECE per bound. Returns
 * RIG_EDGE_UNAVAILABLE where it could not begin (nothing moved). */
static int push(const rig_edge_range *src, const rig_edge_range *dst, rig_edge_error *err) {
  const rig_remote_buf *s = src->alloc->handle, *d = dst->alloc->handle;
  const char *to = rig_link_address(d->link);
  size_t n = strlen(to);
  if (!by_rma(dst) || !d->rma.packed || n == 0 || n > RIG_WIRE_PEER_MAX ||
      strcmp(to, rig_link_address(s->link)) == 0) /* one server: it would call itself */
    return RIG_EDGE_UNAVAILABLE;
  uint8_t data[1 + RIG_WIRE_PEER_MAX + RIG_WIRE_RKEY_MAX];
  if (d->rma.packed_n > RIG_WIRE_RKEY_MAX)
    return RIG_EDGE_UNAVAILABLE;
  data[0] = (uint8_t)n;
  memcpy(data + 1, to, n);
  memcpy(data + 1 + n, d->rma.packed, d->rma.packed_n);
  int r = RIG_EDGE_OK;
  for (uint64_t at = 0; r == RIG_EDGE_OK && at < src->bytes; at += PUSH_PIECE) {
    uint64_t k = src->bytes - at < PUSH_PIECE ? src->bytes - at : PUSH_PIECE;
    rig_wire_msg m = {.type = RIG_WIRE_PUSH, .buf = s->id, .offset = src->offset + at,
                      .dst = d->rma.address, .dst_offset = dst->offset + at, .bytes = k};
    r = rig_link_call(s->link, &m, data, 1 + n + d->rma.packed_n, NULL, 0, NULL, err);
    if (at > 0 && (r == RIG_EDGE_UNAVAILABLE || r == RIG_EDGE_UNSUPPORTED))
      r = RIG_EDGE_FAULT; /* part moved: no way back to the other path */
  }
  return r;
}

/* The bytes through this host, a piece at a time: a get from the source,
 * then a put into the destination. */
static int through_here(const rig_edge_range *src, const rig_edge_range *dst,
                        rig_edge_error *err) {
  uint64_t n = src->bytes < PIECE ? src->bytes : PIECE;
  rig_edge_alloc tmp = {.host = malloc(n ? n : 1), .bytes = n};
  if (!tmp.host)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "remote: no memory to copy between machines");
  const rig_remote_buf *s = src->alloc->handle, *d = dst->alloc->handle;
  int r = RIG_EDGE_OK;
  for (uint64_t at = 0; r == RIG_EDGE_OK && at < src->bytes; at += n) {
    uint64_t k = src->bytes - at < n ? src->bytes - at : n;
    rig_edge_range from = {src->alloc, src->offset + at, k}, here = {&tmp, 0, k},
                   to = {dst->alloc, dst->offset + at, k};
    r = rig_remote_get(s->link, &from, &here, err);
    if (r == RIG_EDGE_OK)
      r = rig_remote_put(d->link, &here, &to, err);
  }
  free(tmp.host);
  return r;
}

/* Which machine a failed PUSH lost: the source's where its link broke
 * (err says so already), else the destination's where its server no
 * longer answers; else the source server's reason stands. */
static int blame(const rig_edge_range *dst, int r, rig_edge_error *err) {
  const rig_remote_buf *d = dst->alloc->handle;
  rig_edge_error ping_err = {0};
  rig_wire_msg ping = {.type = RIG_WIRE_PING};
  if (rig_link_call(d->link, &ping, NULL, 0, NULL, 0, NULL, &ping_err) != RIG_EDGE_OK)
    *err = ping_err; /* "DST lost: CAUSE" */
  return r;
}

int rig_remote_copy_across(const rig_edge_range *src, const rig_edge_range *dst,
                           rig_edge_error *err) {
  const rig_remote_buf *s = src->alloc->handle;
  int r = push(src, dst, err);
  if (r == RIG_EDGE_OK)
    return r;
  if (r == RIG_EDGE_UNAVAILABLE || r == RIG_EDGE_UNSUPPORTED) /* nothing moved */
    return through_here(src, dst, err);
  char lost[80];
  snprintf(lost, sizeof lost, "%s lost:", rig_link_machine(s->link));
  if (strncmp(err->message, lost, strlen(lost)) == 0)
    return r; /* the source's link broke */
  return blame(dst, r, err);
}
