/* SPDX-License-Identifier: MIT */
/* serve_push.c: PUSH, a copy from a buffer of this machine into one of
 * another machine (docs/remote.md, "Copies between two machines"). The
 * client names the other machine's server, HOST:PORT, and the remote key
 * and address that server gave it for the destination (EXPOSE); this
 * server connects to that one as a client of its own, proving the same
 * key this server holds (HELLO, AUTH), and puts the bytes into the
 * destination by RMA (link_rma.c), flushed: they go from this machine to
 * the other and never pass through the client's. The connection stays
 * for the next PUSH to that server, and goes once it breaks. */
#include "serve_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

#define PEER_HANG_MS 30000u

const char *serve_key_path;

/* The link to the server at address, with a reference for this PUSH:
 * the one made before, or a new one. The registry (named by the address
 * itself) keeps one more reference, for the next PUSH. */
static int peer(const char *address, rig_link **out, rig_edge_error *err) {
  if ((*out = rig_link_find(address)))
    return RIG_EDGE_OK;
  int r = rig_link_open(address, address, serve_key_path, PEER_HANG_MS, out, err);
  if (r == RIG_EDGE_OK)
    (void)rig_link_find(address); /* the registry's reference */
  return r;
}

/* Forgets a link that failed: its registry reference and ours. */
static void forget(rig_link *l) {
  rig_link_drop(l);
  rig_link_drop(l);
}

static int refuse(serve_reply *out, int status, const char *text) {
  out->status = status;
  snprintf(out->text, sizeof out->text, "%.200s", text);
  return status;
}

/* The source's bytes on this host, or NULL with the reply set: a buffer
 * this host addresses, and the range within it. */
static const uint8_t *source(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_buffer *b = m->buf >= 1 && m->buf <= c->nbufs ? c->bufs[m->buf - 1] : NULL;
  const uint8_t *p = b ? rig_buffer_host_address(b) : NULL;
  uint64_t len = b ? rig_buffer_length(b) : 0;
  if (!p || m->offset > len || m->bytes > len - m->offset) {
    refuse(out, RIG_EDGE_UNSUPPORTED,
           !b  ? "PUSH: no such buffer"
           : p ? "PUSH: a range past the buffer's end"
               : "PUSH: the buffer is not in memory this host addresses");
    return NULL;
  }
  return p + m->offset;
}

int serve_push(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  const uint8_t *from = source(c, m, out);
  if (!from)
    return out->status;
  char address[RIG_WIRE_PEER_MAX + 1];
  size_t n = m->data[0];
  memcpy(address, m->data + 1, n);
  address[n] = 0;
  rig_link *l = NULL;
  rig_link_rma dst = {0};
  rig_edge_error err = {0};
  /* Before a byte moves, a failure is the client's to route otherwise
   * (UNAVAILABLE: it copies through its own host); once bytes move, a
   * failure is the other machine's loss (FAULT "ADDRESS lost: CAUSE"). */
  int r = peer(address, &l, &err);
  if (r == RIG_EDGE_OK &&
      (r = rig_link_rma_unpack(l, m->dst, m->dst_offset + m->bytes, m->data + 1 + n,
                               m->data_n - 1 - n, &dst, &err)) != RIG_EDGE_OK)
    r = RIG_EDGE_UNAVAILABLE;
  if (r != RIG_EDGE_OK) {
    if (l)
      forget(l);
    serve_log(c, "PUSH to %s refused: %s", address, err.message);
    return refuse(out, RIG_EDGE_UNAVAILABLE, err.message);
  }
  serve_log(c, "pushing %llu bytes of buffer %llu to %s", (unsigned long long)m->bytes,
            (unsigned long long)m->buf, address);
  r = rig_link_rma_move(l, &dst, true, (void *)from, m->dst_offset, m->bytes, &err);
  rig_link_rma_drop(&dst);
  if (r != RIG_EDGE_OK) {
    forget(l);
    serve_log(c, "PUSH to %s failed: %s", address, err.message);
    return refuse(out, RIG_EDGE_FAULT, err.message);
  }
  rig_link_drop(l);
  serve_log(c, "pushed %llu bytes to %s", (unsigned long long)m->bytes, address);
  return 0;
}
