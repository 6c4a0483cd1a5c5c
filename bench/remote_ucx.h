/* remote_ucx.h: the anchor of `rig bench remote` (remote.c): UCX alone,
 * over the same kind of worker and endpoint as the remote driver's
 * (wire/ucx.c: a UCP context with streams and RMA, one
 * single-threaded worker, a client-server endpoint to a loopback
 * listener), with a peer process of its own. */
#ifndef RIG_BENCH_REMOTE_UCX_H
#define RIG_BENCH_REMOTE_UCX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ucx.h"

/* The request and reply sizes of a remote 4-byte fill: the header and
 * FILL's fields (wire/wire.h), and a bare header back. */
#define REMOTE_UCX_ASK (24 + 32)
#define REMOTE_UCX_ANSWER 24

typedef struct remote_ucx {
  pid_t peer;               /* the peer process */
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_ep_h ep;
  volatile bool broken;
  uint64_t address, bytes;  /* the peer's exposed memory */
  ucp_rkey_h rkey;
  uint8_t *local;           /* bytes of this side, as many */
} remote_ucx;

/* Starts the peer, `exe bench --ucx-peer BYTES`, which exposes `bytes`
 * of its memory for RMA and echoes every REMOTE_UCX_ASK bytes with
 * REMOTE_UCX_ANSWER, waiting for each ask as `rig serve` waits for a
 * request (rig_ucx_idle: busy-polling while asks come, asleep when they
 * stop, so that it takes no CPU from rig's rows); connects to
 * it. Returns true, or false with why. */
bool remote_ucx_start(remote_ucx *u, const char *exe, size_t bytes, char *why, size_t why_n);
/* The peer's program (`rig bench --ucx-peer BYTES`): prints "port N" on
 * stdout, takes one connection and serves it until it ends. Returns the
 * exit status. */
int remote_ucx_peer_main(size_t bytes);
/* iters round trips of the stream: ask, then wait for the answer. */
bool remote_ucx_pingpong(remote_ucx *u, uint64_t iters);
/* Puts (or gets) n bytes between u->local and the peer's memory in one
 * ucp_put_nbx (ucp_get_nbx) that UCX pipelines itself; a put is flushed,
 * so its bytes are in the peer's memory when it returns. */
bool remote_ucx_move(remote_ucx *u, bool put, size_t n);
/* Reads a child's first line from fd into line (n bytes, NUL-ended,
 * without its newline), each byte within wait_ms; "" if none comes. */
void remote_ucx_first_line(int fd, char *line, size_t n, int wait_ms);
/* Closes the endpoint, ends and reaps the peer. Idempotent. */
void remote_ucx_stop(remote_ucx *u);

#endif
