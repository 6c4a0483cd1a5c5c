/* SPDX-License-Identifier: MIT */
/* serve.c: `rig serve --listen ADDR:PORT --key FILE` (docs/remote.md): makes
 * this machine's devices available to the remote driver of other
 * processes and machines. One thread runs a UCP worker: a listener that
 * takes each connection, and per client a receive of the next header or
 * body. A client first proves it holds the key (HELLO, AUTH); then each
 * request runs with this machine's librig-core (serve_requests.c) and is
 * answered before the client's next one is read. Every connection, refusal
 * and bad message is a line on stderr. A message that breaks the framing
 * gets an error reply and its connection closes, since the stream cannot
 * be read past it; the server goes on serving every other client.
 */
#include "serve.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include <net/if.h>

#include "key.h"
#include "shim.h"
#include "serve_private.h"

typedef struct server {
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_listener_h listener;
  uint8_t key[RIG_KEY_MAX];
  size_t key_n;
  serve_client *clients;
  serve_client *incoming; /* connected while a request ran: step_all adds them */
  serve_beat *beat;       /* liveness while a request runs (serve_beat.c) */
  unsigned next_id;
  uint8_t *reply_body;
} server;

static volatile sig_atomic_t stopping;
static void on_signal(int sig) { (void)sig, stopping = 1; }

void serve_log(const serve_client *c, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (c)
    fprintf(stderr, "rig serve: client %u (%s): %s\n", c->id, c->peer, line);
  else
    fprintf(stderr, "rig serve: %s\n", line);
}

static void on_client_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  serve_client *c = arg;
  (void)ep;
  if (!c->broken) /* "closed by the client", not UCX's "Endpoint timeout" */
    rig_ucx_cause(status, "client", true, c->why, sizeof c->why);
  c->broken = true;
}

static void peer_text(ucp_conn_request_h req, char *out, size_t n) {
  ucp_conn_request_attr_t a = {.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR};
  snprintf(out, n, "?");
  if (ucp_conn_request_query(req, &a) != UCS_OK)
    return;
  char ip[64] = "?";
  struct sockaddr *sa = (struct sockaddr *)&a.client_address;
  if (sa->sa_family == AF_INET) {
    struct sockaddr_in *in = (struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    snprintf(out, n, "%s:%u", ip, ntohs(in->sin_port));
  } else if (sa->sa_family == AF_INET6) {
    struct sockaddr_in6 *in = (struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &in->sin6_addr, ip, sizeof ip);
    snprintf(out, n, "[%s]:%u", ip, ntohs(in->sin6_port));
  }
}

/* A new connection: an endpoint and a client waiting for its HELLO. */
static void on_connect(ucp_conn_request_h req, void *arg) {
  server *s = arg;
  serve_client *c = calloc(1, sizeof *c);
  if (c)
    c->body = malloc(RIG_WIRE_MAX_BODY);
  if (!c || !c->body) {
    free(c);
    ucp_listener_reject(s->listener, req);
    serve_log(NULL, "refused a connection: out of memory");
    return;
  }
  c->id = ++s->next_id;
  c->ctx = s->ctx;
  peer_text(req, c->peer, sizeof c->peer);
  ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST |
                                     UCP_EP_PARAM_FIELD_ERR_HANDLER |
                                     UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
                       .conn_request = req,
                       .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                       .err_handler = {on_client_error, c}};
  ucs_status_t st = ucp_ep_create(s->worker, &p, &c->ep);
  if (st != UCS_OK) {
    serve_log(c, "refused: %s", ucs_status_string(st));
    free(c->body);
    free(c);
    return;
  }
  c->next = s->incoming; /* the beat thread may run this: clients is the loop's */
  s->incoming = c;
  serve_log(c, "connected");
}

#define REPLY_MS 10000u /* a client that takes no reply for this long is dropped */

/* Sends a reply to c's current request; a client that does not take it
 * within REPLY_MS is broken. */
static void reply(server *s, serve_client *c, const serve_reply *r) {
  uint8_t head[RIG_WIRE_HEADER];
  const void *body = r->status ? (const void *)r->text : r->body;
  size_t n = r->status ? strlen(r->text) : r->body_n;
  rig_wire_header h = {RIG_WIRE_MAGIC, RIG_WIRE_VERSION, (uint16_t)(c->h.type | RIG_WIRE_REPLY),
                       c->h.seq, r->status, n};
  rig_wire_header_put(head, &h);
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = rig_ucx_sent};
  uint64_t deadline = rig_ucx_now_ms() + REPLY_MS;
  ucs_status_t st = rig_ucx_wait(s->worker, ucp_stream_send_nbx(c->ep, head, sizeof head, &prm),
                                 deadline, &c->broken);
  if (st == UCS_OK && n)
    st = rig_ucx_wait(s->worker, ucp_stream_send_nbx(c->ep, body, n, &prm), deadline, &c->broken);
  if (st != UCS_OK && !c->broken) {
    snprintf(c->why, sizeof c->why, "reply: %s", ucs_status_string(st));
    c->broken = true;
  }
}

/* Refuses c's message with why, in the log and to the peer; closing: the
 * connection then ends. */
static void refuse(server *s, serve_client *c, int status, bool closing, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void refuse(server *s, serve_client *c, int status, bool closing, const char *fmt, ...) {
  serve_reply r = {.status = status};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r.text, sizeof r.text, fmt, ap);
  va_end(ap);
  serve_log(c, "%s%s", r.text, closing ? "; closing the connection" : "");
  reply(s, c, &r);
  if (closing)
    c->phase = SERVE_CLOSING;
}

/* The mutual handshake (docs/remote.md, "Authentication"): HELLO brings
 * the client's nonce and gets this server's, with its proof over both;
 * AUTH must bring the client's proof over both. The key never travels. */
static void challenge(server *s, serve_client *c, const rig_wire_msg *m) {
  if (m->type == RIG_WIRE_HELLO && c->phase == SERVE_HELLO) {
    uint8_t body[RIG_WIRE_NONCE + RIG_KEY_PROOF];
    serve_reply r = {.body = body, .body_n = sizeof body};
    if (getrandom(c->nonce, sizeof c->nonce, 0) != (ssize_t)sizeof c->nonce)
      return refuse(s, c, RIG_EDGE_UNAVAILABLE, true, "no random bytes for a challenge");
    memcpy(c->client_nonce, m->data, sizeof c->client_nonce); /* 32: checked by wire.c */
    memcpy(body, c->nonce, sizeof c->nonce);
    rig_key_mac(s->key, s->key_n, RIG_KEY_SERVER_LABEL, c->client_nonce, sizeof c->client_nonce,
                c->nonce, sizeof c->nonce, body + RIG_WIRE_NONCE);
    c->phase = SERVE_AUTH;
    return reply(s, c, &r);
  }
  if (m->type != RIG_WIRE_AUTH || c->phase != SERVE_AUTH)
    return refuse(s, c, RIG_EDGE_UNAVAILABLE, true, "refused: %s before the challenge was met",
                  rig_wire_type_name(m->type));
  uint8_t mac[RIG_KEY_PROOF];
  rig_key_mac(s->key, s->key_n, RIG_KEY_CLIENT_LABEL, c->nonce, sizeof c->nonce, c->client_nonce,
              sizeof c->client_nonce, mac);
  if (!rig_key_equal(mac, m->data))
    return refuse(s, c, RIG_EDGE_UNAVAILABLE, true, "refused: the peer does not hold the key");
  c->phase = SERVE_READY;
  serve_log(c, "authenticated");
  serve_reply ok = {0};
  reply(s, c, &ok);
}

/* A whole message is in: check it, run it, answer it. */
static void handle(server *s, serve_client *c) {
  rig_wire_msg m;
  char why[200];
  if (c->h.type & RIG_WIRE_REPLY)
    return refuse(s, c, RIG_EDGE_UNSUPPORTED, true, "bad message: a reply where a request goes");
  if (!rig_wire_request_get(c->h.type, c->body, c->h.length, &m, why, sizeof why))
    return refuse(s, c, RIG_EDGE_UNSUPPORTED, false, "bad message: %s", why);
  if (c->phase != SERVE_READY)
    return challenge(s, c, &m);
  serve_reply r = {.body = s->reply_body};
  serve_beat_work(s->beat, c, m.type);
  int st = serve_request(c, &m, &r);
  serve_beat_rest(s->beat);
  if (st != 0)
    serve_log(c, "%s: %s", rig_wire_type_name(m.type), r.text);
  reply(s, c, &r);
}

/* Posts the receive of c's next header, or of the body its header names. */
static void post(server *s, serve_client *c) {
  size_t got = 0;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
                             .cb.recv_stream = rig_ucx_received,
                             .flags = UCP_STREAM_RECV_FLAG_WAITALL};
  void *buf = c->recv_body ? c->body : c->head;
  size_t n = c->recv_body ? c->h.length : sizeof c->head;
  void *req = ucp_stream_recv_nbx(c->ep, buf, n, &got, &prm);
  (void)s;
  if (UCS_PTR_IS_ERR(req)) {
    snprintf(c->why, sizeof c->why, "receive: %s", ucs_status_string(UCS_PTR_STATUS(req)));
    c->broken = true;
  }
  c->recv = req ? req : c; /* c: done at once */
}

/* Whether c's posted receive is done; a failed one breaks c. */
static bool received(serve_client *c) {
  if (c->recv == c) {
    c->recv = NULL;
    return true;
  }
  if (UCS_PTR_IS_ERR(c->recv) || c->recv == NULL)
    return false;
  ucs_status_t st = ucp_request_check_status(c->recv);
  if (st == UCS_INPROGRESS)
    return false;
  ucp_request_free(c->recv);
  c->recv = NULL;
  if (st != UCS_OK && !c->broken) {
    rig_ucx_cause(st, "client", true, c->why, sizeof c->why);
    c->broken = true;
  }
  return st == UCS_OK;
}

/* Moves c on by what arrived: a header, then at once the receive of the
 * body it names (mostly in already), the handling and reply, and the
 * receive of the next header, so that a request costs the worker no pass
 * of its own per piece. One request per call, so that a client that
 * streams requests does not hold the others up. Returns whether any
 * receive of c's ended. */
static bool step(server *s, serve_client *c) {
  char why[200];
  for (bool moved = false;; moved = true) {
    if (c->broken || c->phase == SERVE_CLOSING)
      return moved;
    if (!c->recv) {
      post(s, c);
      if (c->broken)
        return moved;
    }
    if (!received(c))
      return moved;
    if (!c->recv_body) {
      if (!rig_wire_header_get(c->head, &c->h, why, sizeof why)) {
        c->h.seq = 0;
        c->h.type = RIG_WIRE_BAD; /* the reply names no type of the garbage */
        refuse(s, c, RIG_EDGE_UNSUPPORTED, true, "bad message: %s", why);
        return true;
      }
      c->recv_body = c->h.length > 0;
      if (c->recv_body)
        continue;
    }
    c->recv_body = false;
    handle(s, c);
    if (!c->broken && c->phase != SERVE_CLOSING)
      post(s, c);
    return true;
  }
}

/* Ends a client whose connection broke or closes: its receive, its
 * endpoint, its devices and buffers here. The endpoint closes first: UCX
 * cancels no stream receive (ucp_request_cancel leaves one in progress
 * for good, so a server stopped while a client was still connected spun
 * here), but an endpoint's close ends its receives, CANCELED. Every wait
 * is bounded; a receive still running after them keeps its request and
 * its buffer, which the process's exit takes back. */
static void drop(server *s, serve_client *c) {
  /* A refused client's last reply is flushed; a broken one has no peer,
   * and a server that stops flushes nothing to a client still there. */
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = c->broken || stopping ? UCP_EP_CLOSE_FLAG_FORCE : 0};
  (void)rig_ucx_wait(s->worker, ucp_ep_close_nbx(c->ep, &prm), rig_ucx_now_ms() + 1000, NULL);
  bool body_in_use = false;
  if (c->recv && c->recv != c && !UCS_PTR_IS_ERR(c->recv)) {
    uint64_t deadline = rig_ucx_now_ms() + 1000;
    while (ucp_request_check_status(c->recv) == UCS_INPROGRESS && rig_ucx_now_ms() < deadline)
      ucp_worker_progress(s->worker);
    body_in_use = ucp_request_check_status(c->recv) == UCS_INPROGRESS;
    ucp_request_free(c->recv); /* one still running is freed when it ends */
  }
  serve_client_forget(c);
  if (c->phase == SERVE_AUTH) /* a client whose key differs refuses this server's proof */
    serve_log(c, "disconnected before it proved it holds the key%s%s", c->broken ? ": " : "",
              c->broken ? c->why : "");
  else
    serve_log(c, "disconnected%s%s", c->broken ? ": " : "", c->broken ? c->why : "");
  if (body_in_use)
    return;
  free(c->body);
  free(c);
}

/* Adds the connections made since the last step to the clients. */
static void take_incoming(server *s) {
  while (s->incoming) {
    serve_client *c = s->incoming;
    s->incoming = c->next;
    c->next = s->clients;
    s->clients = c;
  }
}

/* Steps every client and drops those that ended. Returns whether any
 * client moved on. */
static bool step_all(server *s) {
  take_incoming(s);
  bool moved = false;
  for (serve_client **p = &s->clients; *p;) {
    serve_client *c = *p;
    moved |= step(s, c);
    if (c->broken || c->phase == SERVE_CLOSING) {
      *p = c->next;
      drop(s, c);
    } else
      p = &c->next;
  }
  return moved;
}

static int usage(void) {
  fprintf(stderr, "usage: rig serve [--listen ADDR:PORT] --key FILE\n"
                  "  ADDR:PORT defaults to 127.0.0.1:13370; port 0 takes a free one.\n"
                  "  UCX uses only the network device of ADDR, unless UCX_NET_DEVICES is set.\n"
                  "  FILE holds the shared secret (1 to 4096 bytes) that clients prove;\n"
                  "  only its owner may read it (chmod 600 FILE).\n");
  return 2;
}

static bool read_key(server *s, const char *path) {
  char why[300];
  if (rig_key_read(path, s->key, &s->key_n, why, sizeof why))
    return true;
  serve_log(NULL, "%s", why);
  return false;
}

/* Listens on address and prints "rig serve: listening on ADDR:PORT" with
 * the port taken, so that a caller that asked for port 0 learns it. */
static bool listen_on(server *s, const char *address) {
  struct sockaddr_storage sa;
  socklen_t len;
  char why[200];
  char device[IF_NAMESIZE + 1] = "";
  if (!rig_ucx_address(address, &sa, &len, why, sizeof why)) {
    serve_log(NULL, "%s", why);
    return false;
  }
  /* UCX's transports listen on every network device they use: only the
   * listen address's, unless the user chose (docs/remote.md). */
  bool narrow = rig_ucx_device_of((struct sockaddr *)&sa, device, sizeof device);
  if (!rig_ucx_start_on(&s->ctx, &s->worker, true, narrow ? device : NULL, why, sizeof why)) {
    serve_log(NULL, "%s", why);
    return false;
  }
  if (getenv("UCX_NET_DEVICES"))
    serve_log(NULL, "UCX uses the network devices UCX_NET_DEVICES names: %s",
              getenv("UCX_NET_DEVICES"));
  else if (narrow)
    serve_log(NULL, "UCX uses the network device %s only (the listen address's)", device);
  ucp_listener_params_t p = {.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
                                           UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
                             .sockaddr = {(struct sockaddr *)&sa, len},
                             .conn_handler = {on_connect, s}};
  ucs_status_t st = ucp_listener_create(s->worker, &p, &s->listener);
  ucp_listener_attr_t a = {.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR};
  if (st == UCS_OK)
    st = ucp_listener_query(s->listener, &a);
  if (st != UCS_OK) {
    serve_log(NULL, "cannot listen on %s: %s", address, ucs_status_string(st));
    return false;
  }
  uint16_t port = ntohs(((struct sockaddr_in *)&a.sockaddr)->sin_port); /* same offset in v6 */
  printf("rig serve: listening on %.*s:%u\n", (int)(strrchr(address, ':') - address), address,
         port);
  fflush(stdout);
  return true;
}

/* Whether a client is mid-message: its bytes come in pieces that UCX's
 * event fd need not signal one by one, so the loop keeps progressing. */
static bool mid_message(const server *s) {
  for (const serve_client *c = s->clients; c; c = c->next)
    if (c->recv_body)
      return true;
  return false;
}

/* Progresses the worker and moves every client on by what arrived, one
 * pass per progress, so that a request's reply leaves in the pass its
 * last bytes came in; sleeps once nothing has moved for RIG_UCX_SPIN_NS
 * (ucx.h: a sleep and wake-up per RMA piece would halve the bandwidth and
 * add tens of microseconds to each round trip; docs/remote.md). */
static void run(server *s) {
  rig_ucx_idle idle;
  rig_ucx_idle_start(&idle, s->worker);
  while (!stopping) {
    bool moved = ucp_worker_progress(s->worker) != 0;
    moved |= step_all(s);
    rig_ucx_idle_pass(&idle, s->worker, moved || mid_message(s), 100);
  }
}

int rig_serve_main(int argc, char **argv) {
  const char *address = "127.0.0.1:13370", *key = NULL;
  for (int i = 0; i < argc; i++) {
    if (i + 1 < argc && strcmp(argv[i], "--listen") == 0)
      address = argv[++i];
    else if (i + 1 < argc && strcmp(argv[i], "--key") == 0)
      key = argv[++i];
    else
      return usage();
  }
  static server s;
  if (!key)
    return usage();
  serve_key_path = key; /* PUSH proves it to another server (serve_push.c) */
  if (!read_key(&s, key) || !(s.reply_body = malloc(RIG_WIRE_MAX_BODY)) || !listen_on(&s, address))
    return 1;
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_set; /* a parent may have left them blocked across exec */
  sigemptyset(&stop_set);
  sigaddset(&stop_set, SIGTERM);
  sigaddset(&stop_set, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &stop_set, NULL);
  s.beat = serve_beat_start(s.worker, &s.clients);
  run(&s);
  serve_beat_stop(s.beat);
  take_incoming(&s); /* to be dropped with the others */
  while (s.clients) {
    serve_client *c = s.clients;
    s.clients = c->next;
    drop(&s, c);
  }
  ucp_listener_destroy(s.listener);
  rig_ucx_stop(s.ctx, s.worker);
  free(s.reply_body);
  serve_log(NULL, "stopped");
  return 0;
}

void rig_serve_hooks_off(char **argv) {
  if (!rig_remote_sanitized() || (getenv("UCX_MEM_EVENTS") && getenv("UCX_MEM_MALLOC_HOOKS") &&
                                  getenv("UCX_MEM_MMAP_HOOK_MODE")))
    return;
  setenv("UCX_MEM_EVENTS", "no", 0);
  setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
  setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 0);
  execv("/proc/self/exe", argv); /* with the settings now all set: once */
}
