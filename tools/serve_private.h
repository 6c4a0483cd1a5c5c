/* SPDX-License-Identifier: MIT */
/* serve_private.h: what the files of `rig serve` share (docs/remote.md). */
#ifndef RIG_TOOLS_SERVE_PRIVATE_H
#define RIG_TOOLS_SERVE_PRIVATE_H

#include <rig/edge.h>
#include <rig/rig.h>

#include "ucx.h"
#include "wire.h"

enum serve_phase { SERVE_HELLO, SERVE_AUTH, SERVE_READY, SERVE_CLOSING };

/* One connected client: its endpoint, where its request stands, and the
 * devices and buffers it opened here (ids are 1 + the index). */
typedef struct serve_client {
  unsigned id;
  char peer[96];
  ucp_ep_h ep;
  volatile bool broken;
  char why[128];
  enum serve_phase phase;
  uint8_t nonce[RIG_WIRE_NONCE]; /* this server's, of the handshake */
  uint8_t client_nonce[RIG_WIRE_NONCE]; /* the client's, from its HELLO */
  uint8_t head[RIG_WIRE_HEADER];
  rig_wire_header h;
  uint8_t *body;       /* RIG_WIRE_MAX_BODY bytes */
  void *recv;          /* the posted receive, or NULL */
  bool recv_body;      /* it receives the body, not the header */
  rig_device **devs;
  size_t ndevs;
  rig_buffer **bufs;
  size_t nbufs;
  /* Code it loaded here (serve_code.c): images (ids are 1 + the index)
   * and the functions it resolved in them, found by their entry. */
  rig_image **images;
  size_t nimages;
  struct serve_function *functions;
  struct serve_client *next;
  /* RMA (serve_expose.c): the server's context, and the registration of
   * each exposed buffer (index as bufs; NULL where not exposed). */
  ucp_context_h ctx;
  ucp_mem_h *memhs;
  size_t nmemhs;
} serve_client;

/* A reply: status 0 with body, or a rig_edge_result with text. */
typedef struct serve_reply {
  int status;
  char text[RIG_EDGE_MESSAGE_BYTES - 32]; /* fits the client's message with its machine */
  uint8_t *body; /* RIG_WIRE_MAX_BODY bytes */
  size_t body_n;
} serve_reply;

/* Runs an authenticated client's request m into out; returns out->status. */
int serve_request(serve_client *c, const rig_wire_msg *m, serve_reply *out);
/* LIST: this machine's devices, each a wire entry, into out's body;
 * returns out->status (serve_list.c). Blocks: opens every device. */
int serve_list(serve_reply *out);
/* Releases every device and buffer c opened here. */
void serve_client_forget(serve_client *c);
/* Code on this machine (serve_code.c): LOAD, RESOLVE, UNLOAD, LAUNCH and
 * RUN of an authenticated client c into out; returns out->status. */
int serve_code_request(serve_client *c, const rig_wire_msg *m, serve_reply *out);
/* Releases the images and functions c loaded here. */
void serve_code_forget(serve_client *c);

/* serve_requests.c's replies and tables, for the handlers of other files.
 * serve_refuse: the reply for a failed rig call, with rig_error_last's
 * message; serve_bad: an error reply of fmt with v; serve_add: puts p in
 * a free entry of a table of pointers, growing it, and returns its index
 * or -1; serve_device: c's device id, or NULL. */
int serve_refuse(serve_reply *out, rig_status st);
int serve_bad(serve_reply *out, const char *fmt, unsigned long long v);
long serve_add(void ***table, size_t *n, void *p);
rig_device *serve_device(serve_client *c, uint32_t id);

/* EXPOSE (serve_expose.c): registers the buffer m names for RMA and
 * replies with its address, length and packed remote key. Returns
 * out->status. */
int serve_expose(serve_client *c, const rig_wire_msg *m, serve_reply *out);
/* Drops buffer id's registration, if any (before the buffer goes). */
void serve_unexpose(serve_client *c, uint64_t id);
/* Drops every registration of c. */
void serve_unexpose_all(serve_client *c);
/* Liveness (serve_beat.c): while a request runs, a second thread holds the
 * UCP worker and sends BUSY replies, so that a client's hang bound counts
 * only silence. serve_beat_start starts it over the client list *clients
 * and gives the calling (loop's) thread the worker; NULL where no thread
 * starts (requests then run without beats). serve_beat_work hands the
 * worker over while c's request of type runs (not for a request that uses
 * UCX itself); serve_beat_rest takes it back, waiting for a BUSY being
 * sent; serve_beat_stop ends the thread. Each accepts NULL. */
typedef struct serve_beat serve_beat;
serve_beat *serve_beat_start(ucp_worker_h worker, serve_client *const *clients);
void serve_beat_work(serve_beat *b, const serve_client *c, uint16_t type);
void serve_beat_rest(serve_beat *b);
void serve_beat_stop(serve_beat *b);

/* PUSH (serve_push.c): puts the range of c's buffer that m names into
 * another machine's exposed buffer, connecting to that machine's server
 * with the key at serve_key_path (serve.c sets it). Returns out->status:
 * RIG_EDGE_UNAVAILABLE where no byte moved (that server unreachable, the
 * key refused), RIG_EDGE_FAULT where the move broke off. Blocks. */
int serve_push(serve_client *c, const rig_wire_msg *m, serve_reply *out);
extern const char *serve_key_path;
/* Writes a line "rig serve: client N (PEER): ..." to the log (stderr). */
void serve_log(const serve_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
