/* SPDX-License-Identifier: MIT */
/* ucx.h: what the remote driver and `rig serve` share of UCX (UCP streams
 * over tcp or shared memory; docs/remote.md). */
#ifndef RIG_REMOTE_UCX_H
#define RIG_REMOTE_UCX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <ucp/api/ucp.h>

/* A UCP context with the stream and RMA features (RMA: bulk bytes of
 * memory the server exposes, link_rma.c) and one worker on it. Returns
 * true, or false with the reason in why. */
bool rig_ucx_start(ucp_context_h *ctx, ucp_worker_h *worker, bool wakeup, char *why,
                   size_t why_n);
/* rig_ucx_start with UCX's network devices limited to devices (UCX's
 * NET_DEVICES, "lo" or "eth0,eth1"; NULL: every one), unless the user set
 * UCX_NET_DEVICES, which wins. */
bool rig_ucx_start_on(ucp_context_h *ctx, ucp_worker_h *worker, bool wakeup, const char *devices,
                      char *why, size_t why_n);
/* The name of the network device that holds address sa (into name, n
 * bytes; a 127.x.x.x address: the loopback device). Returns false for a
 * wildcard address (0.0.0.0, ::), which is every device's, and for one no
 * device holds. */
bool rig_ucx_device_of(const struct sockaddr *sa, char *name, size_t n);
void rig_ucx_stop(ucp_context_h ctx, ucp_worker_h worker);
/* Parses "HOST:PORT" ("127.0.0.1:7000", "[::1]:7000", "localhost:7000")
 * into an address. Returns true, or false with why. */
bool rig_ucx_address(const char *text, struct sockaddr_storage *out, socklen_t *len,
                     char *why, size_t why_n);
/* Progresses worker until req completes, *broken turns true, or
 * deadline_ms (CLOCK_MONOTONIC) passes; a request still running is then
 * cancelled and waited for. Returns the request's status,
 * UCS_ERR_CONNECTION_RESET once *broken, UCS_ERR_TIMED_OUT at the deadline.
 * req may be NULL (done) or an error pointer. Frees req. Spins: a
 * sender's own puts and their acknowledgements move only as it progresses. */
ucs_status_t rig_ucx_wait(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                          const volatile bool *broken);
/* rig_ucx_wait for a reply that another process's work precedes: after
 * RIG_UCX_SPIN_NS with nothing moved, sleeps on the worker's event fd
 * where it was made with wakeup (100 ms at a time), so that a long wait
 * (a PUSH of 256 MiB between two other machines) leaves the CPU to the
 * processes moving the bytes. */
ucs_status_t rig_ucx_wait_resting(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                                  const volatile bool *broken);
/* rig_ucx_wait (rests: rig_ucx_wait_resting) that, where req must end
 * early (the deadline, *broken), closes *ep by force instead of cancelling
 * req, and leaves *ep NULL: UCX cancels no put, get, flush or stream send,
 * and one left running past the deadline kept its caller waiting: each of
 * an RMA move's eight pieces in flight then waited a bound and a second of
 * its own (a 256 MiB copy under a 2 s bound was lost after 24 s). A closed
 * endpoint ends every request on it at once, with an error. */
ucs_status_t rig_ucx_wait_or_close(ucp_worker_h worker, ucp_ep_h *ep, void *req,
                                   uint64_t deadline_ms, const volatile bool *broken, bool rests);
/* Words a person can act on for st, the failure of an endpoint to the
 * peer (who: "server" or "client"): "connection refused" where it never
 * answered (answered false: nothing listens there, or a firewall drops
 * it), "closed by the WHO" where the connection broke after, else UCX's
 * own words. UCX reports a refused connection as "Endpoint is not
 * connected" and a peer's exit as "Endpoint timeout". Writes to out. */
void rig_ucx_cause(ucs_status_t st, const char *who, bool answered, char *out, size_t n);
/* Now on CLOCK_MONOTONIC, in milliseconds. */
uint64_t rig_ucx_now_ms(void);
/* Completion callbacks that do nothing: rig_ucx_wait polls the request. */
void rig_ucx_sent(void *request, ucs_status_t status, void *user_data);
void rig_ucx_received(void *request, ucs_status_t status, size_t length, void *user_data);

/* ---- how a serving loop waits for its next request ----
 *
 * `rig serve` and the bench's UCX peer (bench/remote_ucx.c) wait alike, so
 * that the bench compares like with like: each keeps progressing its
 * worker for RIG_UCX_SPIN_NS after anything last moved (a client's next
 * request, and the pieces of an RMA that only the target's progress lands
 * over tcp, mostly come within it), then sleeps on the worker's event fd.
 * A peer that spun for good instead would take a CPU from whatever runs
 * beside it: on 2 CPUs, the bench's rig rows then moved a third of the
 * time (docs/remote.md, "The round trip, profiled"). */
#define RIG_UCX_SPIN_NS 2000000u

typedef struct rig_ucx_idle {
  int fd;          /* the worker's event fd; -1: none, the loop only spins */
  uint64_t since;  /* CLOCK_MONOTONIC ns when something last moved; 0: now */
} rig_ucx_idle;

/* Takes worker's event fd (a worker made with wakeup). */
void rig_ucx_idle_start(rig_ucx_idle *i, ucp_worker_h worker);
/* Ends one pass of a loop that progressed worker; moved says whether
 * anything moved in it. Returns at once within RIG_UCX_SPIN_NS of the
 * last move; after it, sleeps on the event fd until the worker has
 * something to progress, or sleep_ms pass. Blocks that long at most. */
void rig_ucx_idle_pass(rig_ucx_idle *i, ucp_worker_h worker, bool moved, int sleep_ms);

#endif
