/* SPDX-License-Identifier: MIT */
/* link.h: the remote driver's connection to one machine's `rig serve`
 * (docs/remote.md). One link per machine, shared by the handles of its
 * devices; calls on it are serialised by its lock. */
#ifndef RIG_REMOTE_LINK_H
#define RIG_REMOTE_LINK_H

#include <rig/edge.h>

#include "wire.h"

typedef struct rig_link rig_link;

/* Connects to address, proves the key read from key_file (HMAC of the
 * server's nonce: the key never travels) and registers the link under
 * machine. RIG_EDGE_UNAVAILABLE with the reason: no such address, no
 * server, a refused key, an unreadable key file. Blocks up to hang_ms. */
int rig_link_open(const char *machine, const char *address, const char *key_file,
                  uint32_t hang_ms, rig_link **out, rig_edge_error *err);
/* The link registered under machine, with a reference, or NULL. */
rig_link *rig_link_find(const char *machine);
/* Drops a reference; the last closes the connection. */
void rig_link_drop(rig_link *l);
/* The machine's name. */
const char *rig_link_machine(const rig_link *l);
/* Whether a and b are one link. */
bool rig_link_same(const rig_link *a, const rig_link *b);

/* One request and its reply. data (PUT's bytes) follows req's fields.
 * The reply's body goes to reply, which must hold it (reply_cap), its
 * length to *reply_n (may be NULL). Returns RIG_EDGE_OK; the server's
 * refusal as its status with its reason; RIG_EDGE_FAULT "MACHINE lost:
 * CAUSE" once the connection broke, a reply broke the protocol, or the
 * server did not answer within the hang bound. Blocks; locks the link. */
int rig_link_call(rig_link *l, const rig_wire_msg *req, const void *data, size_t data_n,
                  void *reply, size_t reply_cap, size_t *reply_n, rig_edge_error *err);

/* ---- bulk bytes by RMA (link_rma.c; docs/remote.md, "Bulk bytes") ---- */

#include <ucp/api/ucp.h>

/* A remote buffer that its server exposed for RMA: its address there,
 * length and unpacked remote key, and the key as the server packed it
 * (which another machine's server unpacks to put into the buffer:
 * PUSH, "Copies between two machines" in docs/remote.md). */
typedef struct rig_link_rma {
  uint64_t address, bytes;
  ucp_rkey_h rkey;
  uint8_t *packed;
  size_t packed_n;
} rig_link_rma;

/* Asks the server to expose buffer id (EXPOSE) and unpacks its key into
 * *out. RIG_EDGE_UNSUPPORTED where the server's memory of it is not host
 * memory (the caller then sends chunks); RIG_EDGE_FAULT "MACHINE lost"
 * as rig_link_call. Blocks; locks the link. */
int rig_link_expose(rig_link *l, uint64_t id, rig_link_rma *out, rig_edge_error *err);
/* Moves n bytes between local memory and [offset, offset+n) of the exposed
 * buffer: put (to it) or get (from it), in pieces kept in flight together,
 * and returns once they are in place there (put: flushed) or here (get).
 * RIG_EDGE_FAULT "MACHINE lost: CAUSE" as rig_link_call. Blocks; locks. */
int rig_link_rma_move(rig_link *l, const rig_link_rma *r, bool put, void *local,
                      uint64_t offset, uint64_t n, rig_edge_error *err);
/* Destroys the unpacked key (before the link goes) and frees the packed. */
void rig_link_rma_drop(rig_link_rma *r);
/* Unpacks packed (n bytes: a key as EXPOSE replied it) for a buffer at
 * address of bytes on l's machine into *out (packed not kept).
 * RIG_EDGE_UNSUPPORTED where it does not unpack. Blocks; locks. */
int rig_link_rma_unpack(rig_link *l, uint64_t address, uint64_t bytes, const void *packed,
                        size_t n, rig_link_rma *out, rig_edge_error *err);
/* The address the link connected to ("HOST:PORT"). */
const char *rig_link_address(const rig_link *l);

/* For link_rma.c: locks the link and gives its worker, where its endpoint
 * is (NULL there once a wait closed it: rig_ucx_wait_or_close), the
 * deadline of a call begun now and its broken flag; rig_link_leave
 * unlocks, turning a failed status (or a broken link) into the machine's
 * loss as rig_link_call does. */
ucp_worker_h rig_link_enter(rig_link *l, ucp_ep_h **ep, uint64_t *deadline,
                            const volatile bool **is_broken);
int rig_link_leave(rig_link *l, ucs_status_t st, rig_edge_error *err);

#endif
