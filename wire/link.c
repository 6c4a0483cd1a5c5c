/* SPDX-License-Identifier: MIT */
/* link.c: the client side of the remote protocol (link.h, docs/remote.md):
 * one UCP worker and endpoint per machine, a request at a time. Once the
 * connection breaks, or the server stays silent past the hang bound, the
 * link is broken for good and every call faults with the cause: the
 * machine is lost (MACH-6), and a new connection is another machine. */
#include "link.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "key.h"
#include "ucx.h"

struct rig_link {
  char machine[64];
  char address[256];
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_ep_h ep;
  pthread_mutex_t lock;
  volatile bool broken;
  bool answered; /* a reply came once: a break after it is no refused connection */
  char why[160];
  uint32_t seq, hang_ms;
  int refs; /* under registry */
  rig_link *next;
};

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static rig_link *links;

static void on_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  rig_link *l = arg;
  (void)ep;
  if (!l->broken)
    rig_ucx_cause(status, "server", l->answered, l->why, sizeof l->why);
  l->broken = true;
}

/* Why a wait that ended st broke the link, in words a person can act on
 * (UCX's say "Endpoint timeout" for a peer that exited as for silence). */
static const char *cause(rig_link *l, ucs_status_t st, char *out, size_t n) {
  if (st == UCS_ERR_TIMED_OUT)
    snprintf(out, n, "no answer within the hang bound (%u ms)", l->hang_ms);
  else
    rig_ucx_cause(st, "server", l->answered, out, n);
  return out;
}

/* Marks the link broken with why (the first cause stays) and faults. */
static int broken(rig_link *l, rig_edge_error *err, const char *why) {
  if (!l->broken && why)
    snprintf(l->why, sizeof l->why, "%s", why);
  l->broken = true;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s lost: %s", l->machine, l->why);
}

static ucs_status_t send_bytes(rig_link *l, const void *p, size_t n, uint64_t deadline) {
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                             .cb.send = rig_ucx_sent};
  return rig_ucx_wait_or_close(l->worker, &l->ep, ucp_stream_send_nbx(l->ep, p, n, &prm), deadline,
                               &l->broken, false);
}

static ucs_status_t recv_bytes(rig_link *l, void *p, size_t n, uint64_t deadline) {
  size_t got = 0;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
                             .cb.recv_stream = rig_ucx_received,
                             .flags = UCP_STREAM_RECV_FLAG_WAITALL};
  if (n == 0)
    return UCS_OK;
  return rig_ucx_wait_or_close(l->worker, &l->ep, ucp_stream_recv_nbx(l->ep, p, n, &got, &prm),
                               deadline, &l->broken, true);
}

/* Sends the request's header, fields and data. */
static int send_request(rig_link *l, const rig_wire_msg *req, const void *data, size_t data_n,
                        uint64_t deadline, rig_edge_error *err) {
  uint8_t out[RIG_WIRE_HEADER + 128];
  size_t fixed = rig_wire_request_put(req, out + RIG_WIRE_HEADER);
  if (req->type == RIG_WIRE_HELLO || req->type == RIG_WIRE_AUTH ||
      req->type == RIG_WIRE_OPEN) { /* data in the body */
    memcpy(out + RIG_WIRE_HEADER + fixed, data, data_n);
    fixed += data_n;
    data_n = 0;
  }
  rig_wire_header h = {RIG_WIRE_MAGIC, RIG_WIRE_VERSION, req->type, ++l->seq, 0,
                       fixed + data_n};
  rig_wire_header_put(out, &h);
  ucs_status_t st = send_bytes(l, out, RIG_WIRE_HEADER + fixed, deadline);
  if (st == UCS_OK && data_n)
    st = send_bytes(l, data, data_n, deadline);
  char why[160];
  if (st != UCS_OK)
    return broken(l, err, cause(l, st, why, sizeof why));
  return RIG_EDGE_OK;
}

/* Whether the header in is a BUSY: the server still works (serve_beat.c),
 * so the hang bound, which counts only its silence, starts again. */
static bool busy(const uint8_t in[RIG_WIRE_HEADER]) {
  rig_wire_header h;
  char why[8];
  return rig_wire_header_get(in, &h, why, sizeof why) &&
         h.type == (RIG_WIRE_BUSY | RIG_WIRE_REPLY) && h.status == 0 && h.length == 0;
}

/* Receives the reply to request type, its body into reply. */
static int recv_reply(rig_link *l, uint16_t type, void *reply, size_t cap, size_t *reply_n,
                      uint64_t deadline, rig_edge_error *err) {
  uint8_t in[RIG_WIRE_HEADER];
  char why[160], text[RIG_EDGE_MESSAGE_BYTES] = "";
  rig_wire_header h;
  ucs_status_t st = recv_bytes(l, in, sizeof in, deadline);
  while (st == UCS_OK && busy(in)) {
    deadline = rig_ucx_now_ms() + l->hang_ms;
    st = recv_bytes(l, in, sizeof in, deadline);
  }
  if (st != UCS_OK)
    return broken(l, err, cause(l, st, why, sizeof why));
  l->answered = true;
  if (!rig_wire_header_get(in, &h, why, sizeof why))
    return broken(l, err, why);
  bool fails = h.status != 0;
  if (h.type != (type | RIG_WIRE_REPLY) || h.seq != l->seq ||
      h.length > (fails ? sizeof text - 1 : cap))
    return broken(l, err, "a reply that does not answer the request");
  st = recv_bytes(l, fails ? (void *)text : reply, h.length, deadline);
  if (st != UCS_OK)
    return broken(l, err, cause(l, st, why, sizeof why));
  if (fails) {
    text[h.length] = 0;
    int code = h.status == RIG_EDGE_NO_ROOM || h.status == RIG_EDGE_UNSUPPORTED ||
                       h.status == RIG_EDGE_UNAVAILABLE
                   ? h.status : RIG_EDGE_FAULT;
    return rig_edge_fail(err, code, "%s: %s", l->machine, text);
  }
  if (reply_n)
    *reply_n = h.length;
  return RIG_EDGE_OK;
}

int rig_link_call(rig_link *l, const rig_wire_msg *req, const void *data, size_t data_n,
                  void *reply, size_t reply_cap, size_t *reply_n, rig_edge_error *err) {
  pthread_mutex_lock(&l->lock);
  uint64_t deadline = rig_ucx_now_ms() + l->hang_ms;
  int r = l->broken ? broken(l, err, NULL)
                    : send_request(l, req, data, data_n, deadline, err);
  if (r == RIG_EDGE_OK)
    r = recv_reply(l, req->type, reply, reply_cap, reply_n, deadline, err);
  pthread_mutex_unlock(&l->lock);
  return r;
}

/* The mutual handshake (docs/remote.md, "Authentication"): HELLO with a
 * fresh nonce of this client's, whose reply is the server's nonce and its
 * proof over both; only a server that proves it holds the key gets this
 * client's proof (AUTH), so a party without the key can neither pass for
 * the client nor for the server. */
static int prove(rig_link *l, const uint8_t *key, size_t key_n, rig_edge_error *err) {
  uint8_t mine[RIG_WIRE_NONCE], reply[RIG_WIRE_NONCE + RIG_KEY_PROOF], want[RIG_KEY_PROOF];
  size_t got = 0;
  if (getrandom(mine, sizeof mine, 0) != (ssize_t)sizeof mine)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: no random bytes for a challenge",
                         l->machine);
  rig_wire_msg hello = {.type = RIG_WIRE_HELLO, .version = RIG_WIRE_VERSION};
  int r = rig_link_call(l, &hello, mine, sizeof mine, reply, sizeof reply, &got, err);
  if (r == RIG_EDGE_OK && got != sizeof reply)
    r = rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                      "%s: %s: a HELLO reply of %zu bytes, not a nonce and a proof (a server "
                      "of an older rig, or no rig serve)",
                      l->machine, l->address, got);
  if (r != RIG_EDGE_OK)
    return r;
  const uint8_t *theirs = reply, *proof = reply + RIG_WIRE_NONCE;
  rig_key_mac(key, key_n, RIG_KEY_SERVER_LABEL, mine, sizeof mine, theirs, RIG_WIRE_NONCE, want);
  if (!rig_key_equal(want, proof))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "%s: %s: refused the server: its proof does not match this key "
                         "file's (the server does not hold the key, or this file is not the "
                         "one it holds)",
                         l->machine, l->address);
  uint8_t mac[RIG_KEY_PROOF];
  rig_key_mac(key, key_n, RIG_KEY_CLIENT_LABEL, theirs, RIG_WIRE_NONCE, mine, sizeof mine, mac);
  rig_wire_msg auth = {.type = RIG_WIRE_AUTH};
  return rig_link_call(l, &auth, mac, sizeof mac, NULL, 0, NULL, err);
}

static int connect_to(rig_link *l, const char *address, rig_edge_error *err) {
  struct sockaddr_storage sa;
  socklen_t len;
  char why[200];
  if (!rig_ucx_address(address, &sa, &len, why, sizeof why))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s", l->machine, why);
  if (!rig_ucx_start(&l->ctx, &l->worker, true, why, sizeof why))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s", l->machine, why);
  ucp_ep_params_t p = {
      .field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
      .err_mode = UCP_ERR_HANDLING_MODE_PEER,
      .err_handler = {on_error, l},
      .flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
      .sockaddr = {(struct sockaddr *)&sa, len}};
  ucs_status_t st = ucp_ep_create(l->worker, &p, &l->ep);
  if (st != UCS_OK) {
    rig_ucx_stop(l->ctx, l->worker);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: connect to %s: %s", l->machine,
                         address, ucs_status_string(st));
  }
  return RIG_EDGE_OK;
}

static void disconnect(rig_link *l) {
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
  if (l->ep) /* NULL where a wait closed it (rig_ucx_wait_or_close) */
    (void)rig_ucx_wait(l->worker, ucp_ep_close_nbx(l->ep, &prm), rig_ucx_now_ms() + 1000, NULL);
  rig_ucx_stop(l->ctx, l->worker);
}

int rig_link_open(const char *machine, const char *address, const char *key_file,
                  uint32_t hang_ms, rig_link **out, rig_edge_error *err) {
  uint8_t key[RIG_KEY_MAX];
  size_t key_n = 0;
  char why[300];
  rig_link *l = calloc(1, sizeof *l);
  if (!l)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: out of memory", machine);
  snprintf(l->machine, sizeof l->machine, "%s", machine);
  snprintf(l->address, sizeof l->address, "%s", address);
  pthread_mutex_init(&l->lock, NULL);
  l->hang_ms = hang_ms;
  l->refs = 1;
  int r = rig_key_read(key_file, key, &key_n, why, sizeof why)
              ? RIG_EDGE_OK
              : rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s", why);
  if (r == RIG_EDGE_OK && (r = connect_to(l, address, err)) == RIG_EDGE_OK &&
      (r = prove(l, key, key_n, err)) != RIG_EDGE_OK) {
    if (l->broken) /* never opened, so not "lost": where it failed, and why */
      rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s: %s", machine, address, l->why);
    disconnect(l);
  }
  memset(key, 0, sizeof key);
  if (r != RIG_EDGE_OK) {
    if (r == RIG_EDGE_FAULT) /* refused or broken while proving: not lost, never opened */
      r = RIG_EDGE_UNAVAILABLE;
    pthread_mutex_destroy(&l->lock);
    free(l);
    return r;
  }
  pthread_mutex_lock(&registry);
  l->next = links;
  links = l;
  pthread_mutex_unlock(&registry);
  *out = l;
  return RIG_EDGE_OK;
}

rig_link *rig_link_find(const char *machine) {
  pthread_mutex_lock(&registry);
  rig_link *l = links;
  while (l && strcmp(l->machine, machine) != 0)
    l = l->next;
  if (l)
    l->refs++;
  pthread_mutex_unlock(&registry);
  return l;
}

void rig_link_drop(rig_link *l) {
  pthread_mutex_lock(&registry);
  bool last = --l->refs == 0;
  if (last)
    for (rig_link **p = &links; *p; p = &(*p)->next)
      if (*p == l) {
        *p = l->next;
        break;
      }
  pthread_mutex_unlock(&registry);
  if (!last)
    return;
  disconnect(l);
  pthread_mutex_destroy(&l->lock);
  free(l);
}

const char *rig_link_machine(const rig_link *l) { return l->machine; }
const char *rig_link_address(const rig_link *l) { return l->address; }
bool rig_link_same(const rig_link *a, const rig_link *b) { return a == b; }

/* ---- for link_rma.c: the link's UCP objects, under its lock ---- */

ucp_worker_h rig_link_enter(rig_link *l, ucp_ep_h **ep, uint64_t *deadline,
                            const volatile bool **is_broken) {
  pthread_mutex_lock(&l->lock);
  *ep = &l->ep;
  *deadline = rig_ucx_now_ms() + l->hang_ms;
  *is_broken = &l->broken;
  return l->worker;
}

int rig_link_leave(rig_link *l, ucs_status_t st, rig_edge_error *err) {
  int r = RIG_EDGE_OK;
  char why[160];
  if (l->broken || st != UCS_OK)
    r = broken(l, err, st != UCS_OK ? cause(l, st, why, sizeof why) : NULL);
  pthread_mutex_unlock(&l->lock);
  return r;
}
