/* SPDX-License-Identifier: MIT */
/* wire.h: the remote protocol's messages (docs/remote.md), shared by the
 * remote driver (the client) and `rig serve` (the server).
 *
 * Every message is a 24-byte header and a body of header.length bytes,
 * little-endian, over one UCX stream per connection. A request's reply
 * carries the request's type with RIG_WIRE_REPLY set, its seq, and a
 * status: 0, or a rig_edge_result with the reason as the body. The parsers
 * below read only the bytes they are given, refuse a short, long or
 * unknown message with a reason, and allocate nothing.
 */
#ifndef RIG_REMOTE_WIRE_H
#define RIG_REMOTE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RIG_WIRE_MAGIC 0x31474952u /* "RIG1" as little-endian bytes */
#define RIG_WIRE_VERSION 1u        /* the one version this build speaks */
#define RIG_WIRE_HEADER 24u
#define RIG_WIRE_REPLY 0x8000u
#define RIG_WIRE_CHUNK (16u << 20)  /* data bytes of one PUT or GET */
#define RIG_WIRE_MAX_BODY (RIG_WIRE_CHUNK + 256u)
#define RIG_WIRE_NONCE 32u
#define RIG_WIRE_ARCH 64u
#define RIG_WIRE_NAME_MAX 200u
#define RIG_WIRE_PEER_MAX 63u    /* PUSH: the longest HOST:PORT */
#define RIG_WIRE_RKEY_MAX 4096u /* PUSH: the longest packed rkey */

enum rig_wire_type {
  RIG_WIRE_HELLO = 1, /* u16 version, client nonce: reply is server nonce, proof */
  RIG_WIRE_AUTH = 2, /* the client's proof (key.h) */
  RIG_WIRE_OPEN = 3, /* u8 host, name: reply is a device's facts */
  RIG_WIRE_CLOSE = 4, /* u32 dev */
  RIG_WIRE_ALLOC = 5, /* u32 dev, u64 bytes: reply u64 buf */
  RIG_WIRE_RELEASE = 6, /* u64 buf */
  RIG_WIRE_PUT = 7, /* u64 buf, u64 offset, data */
  RIG_WIRE_GET = 8, /* u64 buf, u64 offset, u64 bytes: reply is the data */
  RIG_WIRE_FILL = 9, /* u64 buf, u64 offset, u64 bytes, u32 pattern, u32 k */
  RIG_WIRE_COPY = 10, /* u64 src, u64 src offset, u64 dst, u64 dst offset, u64 bytes */
  RIG_WIRE_PING = 11, /* nothing: the peer answers */
  RIG_WIRE_BAD = 12, /* replies only: to a message whose header was unreadable */
  /* Code on the other machine (20..29; docs/remote.md, "Code and launches"). */
  RIG_WIRE_LOAD = 20, /* u32 dev, the object: reply u64 image */
  RIG_WIRE_RESOLVE = 21, /* u64 image, name: reply u64 entry, 0 for none */
  RIG_WIRE_UNLOAD = 22, /* u64 image */
  RIG_WIRE_LAUNCH = 23, /* u32 dev, u64 entry, u32 shared, u64 groups[3], u64 threads[3],
                           the parameter block */
  RIG_WIRE_RUN = 24, /* u32 count, then count parts: each a COPY, FILL or LAUNCH
                           as u16 type, u32 length and that request's body */
  /* The tests' range, 30-39 (docs/remote.md, "rig info on another machine"): */
  RIG_WIRE_LIST = 30, /* nothing: reply is the server's device list (serve_list.c) */
  /* The bench's range, 40-49: bulk bytes by RMA (link_rma.c, serve_expose.c): */
  RIG_WIRE_EXPOSE = 40, /* u64 buf: reply u64 address, u64 bytes, the packed rkey */
  /* Copies between two machines, 50-59 (tools/serve_push.c; docs/remote.md,
   * "Copies between two machines"): */
  RIG_WIRE_PUSH = 50, /* u64 buf, u64 offset, u64 dst (the exposed address there),
                           u64 dst offset, u64 bytes; then u8 n, the other server's
                           HOST:PORT in n bytes, and the rkey as its EXPOSE packed it */
  /* Liveness and work of another machine's devices, 60-69 (docs/remote.md,
   * "Liveness"): */
  RIG_WIRE_BUSY = 60, /* replies only, empty: the server still works on a request, so
                           the client's hang bound starts again (serve_beat.c) */
  RIG_WIRE_TYPES = 61, /* one past the last; numbers in between are unknown */
};
/* Whether type is a request this build knows: the version-1 block or one
 * of the ranges appended after it. */
bool rig_wire_known(uint16_t type);

typedef struct rig_wire_header {
  uint32_t magic;
  uint16_t version;
  uint16_t type;   /* enum rig_wire_type, | RIG_WIRE_REPLY in a reply */
  uint32_t seq;    /* the request's number, echoed by its reply */
  int32_t status;  /* replies: 0 or a rig_edge_result */
  uint64_t length; /* body bytes that follow */
} rig_wire_header;

/* A request, decoded. data points into the body it was read from. */
typedef struct rig_wire_msg {
  uint16_t type;
  uint16_t version;            /* HELLO */
  bool host;                   /* OPEN: the machine's host, name unused */
  uint32_t dev;                /* CLOSE, ALLOC */
  uint64_t buf, offset, bytes; /* ALLOC bytes; RELEASE, PUT, GET, FILL; COPY src */
  uint64_t dst, dst_offset;    /* COPY */
  uint32_t pattern, pattern_bytes; /* FILL */
  uint64_t image;              /* RESOLVE, UNLOAD */
  uint64_t entry;              /* LAUNCH: the function, as RESOLVE gave it */
  uint32_t shared_bytes;       /* LAUNCH */
  uint64_t groups[3], threads[3]; /* LAUNCH */
  uint32_t count;              /* RUN: its parts */
  const uint8_t *data; /* PUT data, HELLO nonce, AUTH mac, OPEN and RESOLVE name, LOAD
                                  object, LAUNCH parameters */
  size_t data_n;
} rig_wire_msg;

/* Reads a byte sequence from its start; a read past its end sets bad. */
typedef struct rig_wire_reader {
  const uint8_t *p;
  size_t n;
  bool bad;
} rig_wire_reader;

uint64_t rig_wire_read(rig_wire_reader *r, unsigned bytes);
/* Writes v in bytes little-endian bytes at p; returns p + bytes. */
uint8_t *rig_wire_write(uint8_t *p, uint64_t v, unsigned bytes);

/* Encodes h into out. */
void rig_wire_header_put(uint8_t out[RIG_WIRE_HEADER], const rig_wire_header *h);
/* Decodes and checks a header: magic, version, a known type and a length
 * within RIG_WIRE_MAX_BODY. Returns true, or false with the reason in why. */
bool rig_wire_header_get(const uint8_t in[RIG_WIRE_HEADER], rig_wire_header *h, char *why,
                         size_t why_n);
/* Decodes a request's body of n bytes: every field present, nothing left
 * over, sizes and names within bounds. Returns true, or false with why. */
bool rig_wire_request_get(uint16_t type, const uint8_t *body, size_t n, rig_wire_msg *m,
                          char *why, size_t why_n);
/* Encodes m's fixed fields (not PUT's data, which follows them on the
 * wire) into out, at least 64 bytes; returns their length. */
size_t rig_wire_request_put(const rig_wire_msg *m, uint8_t *out);

/* RUN's parts. rig_wire_part_put appends part m (a COPY, FILL or LAUNCH,
 * data its LAUNCH parameters) at out + *at, within cap bytes, and moves
 * *at past it; false, with nothing written, where it does not fit.
 * rig_wire_part_get decodes the next part of r as rig_wire_request_get
 * does, refusing any other type; false with why. Neither allocates. */
#define RIG_WIRE_PART_HEADER 6u
bool rig_wire_part_put(uint8_t *out, size_t cap, size_t *at, const rig_wire_msg *m,
                       const void *data, size_t data_n);
bool rig_wire_part_get(rig_wire_reader *r, rig_wire_msg *m, char *why, size_t why_n);

/* The facts of a device in an OPEN reply. */
typedef struct rig_wire_facts {
  uint32_t dev, flags;
  uint64_t alignment, cache_bytes, budget;
  char arch[RIG_WIRE_ARCH];
} rig_wire_facts;
#define RIG_WIRE_FACTS_BYTES (4u + 4u + 8u + 8u + 8u + RIG_WIRE_ARCH)
void rig_wire_facts_put(const rig_wire_facts *f, uint8_t out[RIG_WIRE_FACTS_BYTES]);
bool rig_wire_facts_get(const uint8_t *in, size_t n, rig_wire_facts *f);


/* One entry of a LIST reply: a device, or a driver that offers none, as
 * the server's rig_device_list names it (wire_list.c). */
typedef struct rig_wire_entry {
  char name[64], driver[32];
  uint32_t type; /* rig_device_type */
  bool opens;
  char why[128];
} rig_wire_entry;
#define RIG_WIRE_ENTRY_BYTES (64u + 32u + 4u + 4u + 128u)
#define RIG_WIRE_ENTRIES_MAX 64u
void rig_wire_entry_put(const rig_wire_entry *e, uint8_t out[RIG_WIRE_ENTRY_BYTES]);
/* Decodes the entry at in, which must hold RIG_WIRE_ENTRY_BYTES; its texts
 * end in a NUL whatever the bytes were. */
void rig_wire_entry_get(const uint8_t in[RIG_WIRE_ENTRY_BYTES], rig_wire_entry *e);

/* The name of a type for logs: "OPEN", or "?" for one this build lacks. */
const char *rig_wire_type_name(uint16_t type);

#endif
