/* remote_ucx.c: the anchor of `rig bench remote` (remote_ucx.h). */
#include "remote_ucx.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#define WAIT_MS 60000u /* the longest one step of the anchor may take */

static void on_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  (void)ep, (void)status;
  *(volatile bool *)arg = true;
}

/* One stream send or receive, waited for up to WAIT_MS. */
static ucs_status_t stream(ucp_worker_h w, ucp_ep_h ep, bool send, void *p, size_t n,
                           volatile bool *broken) {
  size_t got = 0;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = send ? 0 : UCP_STREAM_RECV_FLAG_WAITALL};
  if (send)
    prm.cb.send = rig_ucx_sent;
  else
    prm.cb.recv_stream = rig_ucx_received;
  void *req = send ? ucp_stream_send_nbx(ep, p, n, &prm)
                   : ucp_stream_recv_nbx(ep, p, n, &got, &prm);
  return rig_ucx_wait(w, req, rig_ucx_now_ms() + WAIT_MS, broken);
}

/* ---- the peer process ---- */

typedef struct peer {
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_conn_request_h conn;
  ucp_ep_h ep;
  volatile bool broken;
  rig_ucx_idle idle;
} peer;

static void on_connect(ucp_conn_request_h req, void *arg) { ((peer *)arg)->conn = req; }

/* Listens on a loopback port, which it prints ("port N"), and takes one
 * connection. */
static bool peer_accept(peer *p) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ucp_listener_params_t lp = {.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
                                            UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
                              .sockaddr = {(struct sockaddr *)&sa, sizeof sa},
                              .conn_handler = {on_connect, p}};
  ucp_listener_h l;
  ucp_listener_attr_t a = {.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR};
  if (ucp_listener_create(p->worker, &lp, &l) != UCS_OK || ucp_listener_query(l, &a) != UCS_OK)
    return false;
  uint16_t port = ntohs(((struct sockaddr_in *)&a.sockaddr)->sin_port);
  if (printf("port %u\n", port) < 0 || fflush(stdout) != 0)
    return false;
  while (!p->conn)
    ucp_worker_progress(p->worker);
  ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST |
                                      UCP_EP_PARAM_FIELD_ERR_HANDLER |
                                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
                        .conn_request = p->conn,
                        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                        .err_handler = {on_error, (void *)&p->broken}};
  return ucp_ep_create(p->worker, &ep, &p->ep) == UCS_OK;
}

/* Exposes bytes of memory, every page written, and sends its address,
 * length, key length and key. */
static bool peer_expose(peer *p, size_t bytes) {
  uint8_t *mem = malloc(bytes);
  ucp_mem_h h;
  void *rkey;
  size_t rkey_n;
  if (!mem)
    return false;
  memset(mem, 7, bytes);
  ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                           UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                             .address = mem, .length = bytes};
  if (ucp_mem_map(p->ctx, &mp, &h) != UCS_OK || ucp_rkey_pack(p->ctx, h, &rkey, &rkey_n) != UCS_OK)
    return false;
  uint64_t head[3] = {(uint64_t)(uintptr_t)mem, bytes, rkey_n};
  return stream(p->worker, p->ep, true, head, sizeof head, &p->broken) == UCS_OK &&
         stream(p->worker, p->ep, true, rkey, rkey_n, &p->broken) == UCS_OK;
}

/* Receives the next ask, waiting for it as `rig serve` waits for a request
 * (rig_ucx_idle: progressing for a while after the last one, then asleep
 * on the worker's event fd), for as long as the link lasts. */
static bool peer_ask(peer *p, uint8_t ask[REMOTE_UCX_ASK]) {
  size_t got = 0;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
                             .cb.recv_stream = rig_ucx_received,
                             .flags = UCP_STREAM_RECV_FLAG_WAITALL};
  void *req = ucp_stream_recv_nbx(p->ep, ask, REMOTE_UCX_ASK, &got, &prm);
  if (req == NULL || UCS_PTR_IS_ERR(req))
    return req == NULL;
  while (ucp_request_check_status(req) == UCS_INPROGRESS && !p->broken)
    rig_ucx_idle_pass(&p->idle, p->worker, ucp_worker_progress(p->worker) != 0, 100);
  if (p->broken)
    return false; /* UCX cancels no stream receive: the peer's exit ends it */
  return rig_ucx_wait(p->worker, req, rig_ucx_now_ms(), &p->broken) == UCS_OK;
}

int remote_ucx_peer_main(size_t bytes) {
  peer p = {0};
  char why[200];
  uint8_t ask[REMOTE_UCX_ASK], answer[REMOTE_UCX_ANSWER] = {0};
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (!rig_ucx_start(&p.ctx, &p.worker, true, why, sizeof why) || !peer_accept(&p) ||
      !peer_expose(&p, bytes))
    return 1;
  rig_ucx_idle_start(&p.idle, p.worker);
  /* An ask may be long in coming (the bandwidth rows run between): the
   * peer waits until the link ends, or its parent does (PDEATHSIG). */
  while (peer_ask(&p, ask) &&
         stream(p.worker, p.ep, true, answer, sizeof answer, &p.broken) == UCS_OK)
    ;
  return 0;
}

/* ---- this side ---- */

/* Connects to the peer's port and takes its memory's address and key. */
static bool connect_peer(remote_ucx *u, uint16_t port, char *why, size_t why_n) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ucp_ep_params_t p = {
      .field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
      .err_mode = UCP_ERR_HANDLING_MODE_PEER,
      .err_handler = {on_error, (void *)&u->broken},
      .flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER,
      .sockaddr = {(struct sockaddr *)&sa, sizeof sa}};
  uint64_t head[3];
  uint8_t rkey[4096];
  if (!rig_ucx_start(&u->ctx, &u->worker, false, why, why_n))
    return false;
  if (ucp_ep_create(u->worker, &p, &u->ep) != UCS_OK ||
      stream(u->worker, u->ep, false, head, sizeof head, &u->broken) != UCS_OK ||
      head[2] > sizeof rkey ||
      stream(u->worker, u->ep, false, rkey, head[2], &u->broken) != UCS_OK ||
      ucp_ep_rkey_unpack(u->ep, rkey, &u->rkey) != UCS_OK) {
    snprintf(why, why_n, "the UCX anchor's peer did not connect");
    return false;
  }
  u->address = head[0];
  u->bytes = head[1];
  return true;
}

/* Runs `exe bench --ucx-peer BYTES` (a process of its own: UCX started
 * in a fork of this threaded process could find a lock taken) and reads
 * the port it prints, up to 60 s. */
static bool spawn(remote_ucx *u, const char *exe, size_t bytes, unsigned *port) {
  int out[2];
  char n[32], line[64] = "";
  if (pipe(out) != 0)
    return false;
  snprintf(n, sizeof n, "%zu", bytes);
  if ((u->peer = fork()) == 0) {
    dup2(out[1], 1);
    execl(exe, exe, "bench", "--ucx-peer", n, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  if (u->peer > 0)
    remote_ucx_first_line(out[0], line, sizeof line, 60000);
  close(out[0]);
  return sscanf(line, "port %u", port) == 1;
}

void remote_ucx_first_line(int fd, char *line, size_t n, int wait_ms) {
  size_t got = 0;
  struct pollfd p = {fd, POLLIN, 0};
  while (got + 1 < n && poll(&p, 1, wait_ms) > 0 && read(fd, line + got, 1) == 1 &&
         line[got] != '\n')
    got++;
  line[got] = 0;
}

bool remote_ucx_start(remote_ucx *u, const char *exe, size_t bytes, char *why, size_t why_n) {
  unsigned port = 0;
  memset(u, 0, sizeof *u);
  if (!spawn(u, exe, bytes, &port) || !(u->local = malloc(bytes))) {
    snprintf(why, why_n, "the UCX anchor's peer (%s bench --ucx-peer) did not start", exe);
    return false;
  }
  memset(u->local, 5, bytes);
  return connect_peer(u, (uint16_t)port, why, why_n);
}

bool remote_ucx_pingpong(remote_ucx *u, uint64_t iters) {
  uint8_t ask[REMOTE_UCX_ASK] = {0}, answer[REMOTE_UCX_ANSWER];
  for (uint64_t i = 0; i < iters; i++)
    if (stream(u->worker, u->ep, true, ask, sizeof ask, &u->broken) != UCS_OK ||
        stream(u->worker, u->ep, false, answer, sizeof answer, &u->broken) != UCS_OK)
      return false;
  return true;
}

bool remote_ucx_move(remote_ucx *u, bool put, size_t n) {
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = rig_ucx_sent};
  uint64_t deadline = rig_ucx_now_ms() + WAIT_MS;
  void *req = put ? ucp_put_nbx(u->ep, u->local, n, u->address, u->rkey, &prm)
                  : ucp_get_nbx(u->ep, u->local, n, u->address, u->rkey, &prm);
  if (rig_ucx_wait(u->worker, req, deadline, &u->broken) != UCS_OK)
    return false;
  return !put || rig_ucx_wait(u->worker, ucp_ep_flush_nbx(u->ep, &prm), deadline,
                              &u->broken) == UCS_OK;
}

void remote_ucx_stop(remote_ucx *u) {
  if (u->rkey)
    ucp_rkey_destroy(u->rkey);
  if (u->ep) {
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                               .flags = UCP_EP_CLOSE_FLAG_FORCE};
    (void)rig_ucx_wait(u->worker, ucp_ep_close_nbx(u->ep, &prm), rig_ucx_now_ms() + 1000, NULL);
  }
  if (u->worker)
    rig_ucx_stop(u->ctx, u->worker);
  if (u->peer > 0) {
    kill(u->peer, SIGKILL);
    waitpid(u->peer, NULL, 0);
  }
  free(u->local);
  memset(u, 0, sizeof *u);
}
