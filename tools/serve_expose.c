/* SPDX-License-Identifier: MIT */
/* serve_expose.c: EXPOSE, the server's half of bulk bytes by RMA
 * (docs/remote.md, "Bulk bytes"). A buffer whose memory this host
 * addresses (a memory device's, the host's) is registered with UCX once,
 * and the client gets its address and remote key: from then on the
 * client's puts and gets move its bytes straight into and out of that
 * memory, with no request, no copy into a message body and no reply per
 * chunk. The registration lives as long as the client's buffer. */
#include "serve_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The registration of buffer id (1-based), growing the table to the
 * client's buffer table; NULL where there is none. */
static ucp_mem_h *slot(serve_client *c, uint64_t id) {
  if (id < 1 || id > c->nbufs)
    return NULL;
  if (c->nmemhs < c->nbufs) {
    ucp_mem_h *t = realloc(c->memhs, c->nbufs * sizeof *t);
    if (!t)
      return NULL;
    memset(t + c->nmemhs, 0, (c->nbufs - c->nmemhs) * sizeof *t);
    c->memhs = t;
    c->nmemhs = c->nbufs;
  }
  return &c->memhs[id - 1];
}

static int refuse(serve_reply *out, int status, const char *fmt, unsigned long long v) {
  out->status = status;
  snprintf(out->text, sizeof out->text, fmt, v);
  return out->status;
}

/* Registers b's memory at *h, once. */
static ucs_status_t map(serve_client *c, rig_buffer *b, ucp_mem_h *h) {
  if (*h)
    return UCS_OK;
  ucp_mem_map_params_t p = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                          UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                            .address = rig_buffer_host_address(b),
                            .length = rig_buffer_length(b)};
  return ucp_mem_map(c->ctx, &p, h);
}

int serve_expose(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_buffer *b = m->buf >= 1 && m->buf <= c->nbufs ? c->bufs[m->buf - 1] : NULL;
  if (!b)
    return refuse(out, RIG_EDGE_UNSUPPORTED, "no buffer %llu", m->buf);
  if (!rig_buffer_host_address(b) || rig_buffer_length(b) == 0)
    return refuse(out, RIG_EDGE_UNSUPPORTED,
                  "buffer %llu is not in memory this host addresses: no RMA", m->buf);
  ucp_mem_h *h = slot(c, m->buf);
  if (!h)
    return refuse(out, RIG_EDGE_NO_ROOM, "out of memory for buffer %llu", m->buf);
  void *rkey = NULL;
  size_t rkey_n = 0;
  ucs_status_t st = map(c, b, h);
  if (st == UCS_OK)
    st = ucp_rkey_pack(c->ctx, *h, &rkey, &rkey_n);
  if (st != UCS_OK)
    return refuse(out, RIG_EDGE_UNSUPPORTED, "buffer %llu: no RMA registration", m->buf);
  if (16 + rkey_n > RIG_WIRE_MAX_BODY) {
    ucp_rkey_buffer_release(rkey);
    return refuse(out, RIG_EDGE_UNSUPPORTED, "a remote key of %llu bytes", rkey_n);
  }
  uint8_t *p = rig_wire_write(out->body, (uint64_t)(uintptr_t)rig_buffer_host_address(b), 8);
  p = rig_wire_write(p, rig_buffer_length(b), 8);
  memcpy(p, rkey, rkey_n);
  out->body_n = 16 + rkey_n;
  ucp_rkey_buffer_release(rkey);
  serve_log(c, "exposed buffer %llu (%zu bytes) for RMA", (unsigned long long)m->buf,
            rig_buffer_length(b));
  return 0;
}

void serve_unexpose(serve_client *c, uint64_t id) {
  if (id < 1 || id > c->nmemhs || !c->memhs[id - 1])
    return;
  (void)ucp_mem_unmap(c->ctx, c->memhs[id - 1]);
  c->memhs[id - 1] = NULL;
}

void serve_unexpose_all(serve_client *c) {
  for (size_t i = 0; i < c->nmemhs; i++)
    serve_unexpose(c, i + 1);
  free(c->memhs);
  c->memhs = NULL;
  c->nmemhs = 0;
}
