/* SPDX-License-Identifier: MIT */
/* link_rma.c: bulk bytes by RMA (link.h; docs/remote.md, "Bulk bytes").
 * The server exposes a buffer in its host memory once (EXPOSE: its
 * address and remote key); then a copy between this machine's memory and
 * it is UCX puts or gets straight between the two memories, several
 * pieces in flight, with no request, no reply and no copy through a
 * message body per chunk: as fast as the transport's own RMA. */
#include "link.h"

#include <stdlib.h>
#include <string.h>

#include "ucx.h"

#define PIECE ((uint64_t)8 << 20) /* bytes of one put or get */
#define WINDOW 8                  /* pieces in flight at once */
#define RKEY_MAX 4096u            /* the largest packed key taken */

int rig_link_expose(rig_link *l, uint64_t id, rig_link_rma *out, rig_edge_error *err) {
  uint8_t reply[16 + RKEY_MAX];
  size_t got = 0;
  rig_wire_msg m = {.type = RIG_WIRE_EXPOSE, .buf = id};
  int r = rig_link_call(l, &m, NULL, 0, reply, sizeof reply, &got, err);
  if (r != RIG_EDGE_OK)
    return r;
  if (got <= 16)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: an EXPOSE reply of %zu bytes",
                         rig_link_machine(l), got);
  rig_wire_reader rd = {reply, got, false};
  uint64_t address = rig_wire_read(&rd, 8), bytes = rig_wire_read(&rd, 8);
  if ((r = rig_link_rma_unpack(l, address, bytes, reply + 16, got - 16, out, err)))
    return r;
  if ((out->packed = malloc(got - 16))) { /* for another machine's PUSH */
    memcpy(out->packed, reply + 16, got - 16);
    out->packed_n = got - 16;
  }
  return RIG_EDGE_OK;
}

int rig_link_rma_unpack(rig_link *l, uint64_t address, uint64_t bytes, const void *packed,
                        size_t n, rig_link_rma *out, rig_edge_error *err) {
  ucp_ep_h *ep;
  uint64_t deadline;
  const volatile bool *broken;
  *out = (rig_link_rma){.address = address, .bytes = bytes};
  (void)n;
  (void)rig_link_enter(l, &ep, &deadline, &broken);
  ucs_status_t st = *ep ? ucp_ep_rkey_unpack(*ep, packed, &out->rkey) : UCS_ERR_NOT_CONNECTED;
  (void)rig_link_leave(l, UCS_OK, err);
  if (st != UCS_OK)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: a remote key that does not unpack: %s",
                         rig_link_machine(l), ucs_status_string(st));
  return RIG_EDGE_OK;
}

void rig_link_rma_drop(rig_link_rma *r) {
  if (r->rkey)
    ucp_rkey_destroy(r->rkey);
  r->rkey = NULL;
  free(r->packed);
  r->packed = NULL;
  r->packed_n = 0;
}

/* Starts piece [at, at+n) of a move. */
static void *start(ucp_ep_h ep, const rig_link_rma *r, bool put, uint8_t *local, uint64_t at,
                   uint64_t n) {
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                             .cb.send = rig_ucx_sent};
  return put ? ucp_put_nbx(ep, local, n, r->address + at, r->rkey, &prm)
             : ucp_get_nbx(ep, local, n, r->address + at, r->rkey, &prm);
}

/* Waits for one request of a move: until the hang bound has passed with
 * nothing of the move done (its clock starts again at each piece that
 * ends: the bound counts the server's silence), and once the move has
 * failed only as long as the endpoint's close takes to end it. */
static ucs_status_t settle(ucp_worker_h w, ucp_ep_h *ep, void *req, uint64_t hang,
                           ucs_status_t failed, const volatile bool *broken) {
  ucs_status_t st =
      rig_ucx_wait_or_close(w, ep, req, rig_ucx_now_ms() + (failed ? 0 : hang), broken, false);
  return failed != UCS_OK ? failed : st;
}

int rig_link_rma_move(rig_link *l, const rig_link_rma *r, bool put, void *local,
                      uint64_t offset, uint64_t n, rig_edge_error *err) {
  ucp_ep_h *ep;
  uint64_t deadline;
  const volatile bool *broken;
  ucp_worker_h w = rig_link_enter(l, &ep, &deadline, &broken);
  void *flight[WINDOW] = {0};
  ucs_status_t st = *broken || !*ep ? UCS_ERR_CONNECTION_RESET : UCS_OK;
  uint64_t hang = deadline - rig_ucx_now_ms();
  /* Piece k goes in slot k % WINDOW once the piece before it there is in
   * place: WINDOW pieces are in flight while the bytes stream. */
  for (uint64_t at = 0, k = 0; st == UCS_OK && at < n; at += PIECE, k++) {
    void **slot = &flight[k % WINDOW];
    st = settle(w, ep, *slot, hang, UCS_OK, broken);
    *slot = NULL;
    if (st == UCS_OK)
      *slot =
          start(*ep, r, put, (uint8_t *)local + at, offset + at, n - at < PIECE ? n - at : PIECE);
  }
  for (int i = 0; i < WINDOW; i++) /* the rest, even after a failure */
    st = settle(w, ep, flight[i], hang, st, broken);
  if (st == UCS_OK && put) { /* in place there, not just sent */
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                               .cb.send = rig_ucx_sent};
    st = settle(w, ep, ucp_ep_flush_nbx(*ep, &prm), hang, UCS_OK, broken);
  }
  return rig_link_leave(l, st, err);
}
