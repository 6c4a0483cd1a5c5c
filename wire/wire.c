/* SPDX-License-Identifier: MIT */
/* wire.c: encoding and checking the remote protocol's messages (wire.h,
 * docs/remote.md). Every read is bounded by the bytes given: a garbage
 * message is refused with a reason, never read past. */
#include "wire.h"

#include <stdio.h>
#include <string.h>

static const char *const names[RIG_WIRE_TYPES] = {
    "?", "HELLO", "AUTH", "OPEN", "CLOSE", "ALLOC", "RELEASE", "PUT", "GET", "FILL", "COPY", "PING", "BAD",
    [RIG_WIRE_LOAD] = "LOAD", [RIG_WIRE_RESOLVE] = "RESOLVE", [RIG_WIRE_UNLOAD] = "UNLOAD",
    [RIG_WIRE_LAUNCH] = "LAUNCH", [RIG_WIRE_RUN] = "RUN", [RIG_WIRE_LIST] = "LIST",
    [RIG_WIRE_EXPOSE] = "EXPOSE", [RIG_WIRE_PUSH] = "PUSH", [RIG_WIRE_BUSY] = "BUSY"};

/* Whether this build knows the type: numbers between the ranges of
 * requests are unknown. */
bool rig_wire_known(uint16_t type) { return type > 0 && type < RIG_WIRE_TYPES && names[type]; }

const char *rig_wire_type_name(uint16_t type) {
  type &= (uint16_t)~RIG_WIRE_REPLY;
  return rig_wire_known(type) ? names[type] : "?";
}

uint64_t rig_wire_read(rig_wire_reader *r, unsigned bytes) {
  uint64_t v = 0;
  if (r->bad || r->n < bytes) {
    r->bad = true;
    return 0;
  }
  for (unsigned i = 0; i < bytes; i++)
    v |= (uint64_t)r->p[i] << (8 * i);
  r->p += bytes;
  r->n -= bytes;
  return v;
}

uint8_t *rig_wire_write(uint8_t *p, uint64_t v, unsigned bytes) {
  for (unsigned i = 0; i < bytes; i++)
    p[i] = (uint8_t)(v >> (8 * i));
  return p + bytes;
}

void rig_wire_header_put(uint8_t out[RIG_WIRE_HEADER], const rig_wire_header *h) {
  uint8_t *p = rig_wire_write(out, h->magic, 4);
  p = rig_wire_write(p, h->version, 2);
  p = rig_wire_write(p, h->type, 2);
  p = rig_wire_write(p, h->seq, 4);
  p = rig_wire_write(p, (uint32_t)h->status, 4);
  rig_wire_write(p, h->length, 8);
}

bool rig_wire_header_get(const uint8_t in[RIG_WIRE_HEADER], rig_wire_header *h, char *why,
                         size_t why_n) {
  rig_wire_reader r = {in, RIG_WIRE_HEADER, false};
  h->magic = (uint32_t)rig_wire_read(&r, 4);
  h->version = (uint16_t)rig_wire_read(&r, 2);
  h->type = (uint16_t)rig_wire_read(&r, 2);
  h->seq = (uint32_t)rig_wire_read(&r, 4);
  h->status = (int32_t)(uint32_t)rig_wire_read(&r, 4);
  h->length = rig_wire_read(&r, 8);
  uint16_t base = h->type & (uint16_t)~RIG_WIRE_REPLY;
  if (h->magic != RIG_WIRE_MAGIC)
    snprintf(why, why_n, "not a rig message (magic %#x)", h->magic);
  else if (h->version != RIG_WIRE_VERSION)
    snprintf(why, why_n, "protocol version %u, this side speaks %u", h->version,
             RIG_WIRE_VERSION);
  else if (!rig_wire_known(base))
    snprintf(why, why_n, "unknown message type %u", h->type);
  else if (h->length > RIG_WIRE_MAX_BODY)
    snprintf(why, why_n, "%s of %llu bytes, more than %u", rig_wire_type_name(h->type),
             (unsigned long long)h->length, RIG_WIRE_MAX_BODY);
  else
    return true;
  return false;
}

/* The fixed fields of a request, in wire order, with their widths: both
 * the decoder and the encoder walk this one list. */
typedef struct slot {
  uint64_t *at;
  unsigned bytes;
} slot;

#define MAX_FIELDS 9

static size_t fields(uint16_t type, rig_wire_msg *m, uint64_t v[5], slot out[MAX_FIELDS]) {
  size_t n = 0;
#define F(p, w) (out[n] = (slot){(p), (w)}, n++)
  switch (type) {
  case RIG_WIRE_HELLO: F(&v[0], 2); break;
  case RIG_WIRE_OPEN: F(&v[0], 1); break;
  case RIG_WIRE_CLOSE: F(&v[0], 4); break;
  case RIG_WIRE_ALLOC: F(&v[0], 4), F(&m->bytes, 8); break;
  case RIG_WIRE_RELEASE: F(&m->buf, 8); break;
  case RIG_WIRE_EXPOSE: F(&m->buf, 8); break;
  case RIG_WIRE_PUT: F(&m->buf, 8), F(&m->offset, 8); break;
  case RIG_WIRE_GET: F(&m->buf, 8), F(&m->offset, 8), F(&m->bytes, 8); break;
  case RIG_WIRE_FILL:
    F(&m->buf, 8), F(&m->offset, 8), F(&m->bytes, 8), F(&v[0], 4), F(&v[1], 4);
    break;
  case RIG_WIRE_COPY:
  case RIG_WIRE_PUSH:
    F(&m->buf, 8), F(&m->offset, 8), F(&m->dst, 8), F(&m->dst_offset, 8), F(&m->bytes, 8);
    break;
  case RIG_WIRE_LOAD:
  case RIG_WIRE_RUN: F(&v[0], 4); break;
  case RIG_WIRE_RESOLVE:
  case RIG_WIRE_UNLOAD: F(&m->image, 8); break;
  case RIG_WIRE_LAUNCH:
    F(&v[0], 4), F(&m->entry, 8), F(&v[1], 4);
    for (int a = 0; a < 3; a++)
      F(&m->groups[a], 8);
    for (int a = 0; a < 3; a++)
      F(&m->threads[a], 8);
    break;
  default: break;
  }
#undef F
  return n;
}

/* The narrow fields, which fields() keeps in v, to and from the message. */
static void narrow_in(rig_wire_msg *m, const uint64_t v[5]) {
  m->version = (uint16_t)v[0];
  m->host = m->type == RIG_WIRE_OPEN && v[0] != 0;
  m->dev = (uint32_t)v[0];
  m->pattern = (uint32_t)v[0];
  m->pattern_bytes = (uint32_t)v[1];
  m->shared_bytes = (uint32_t)v[1];
  m->count = (uint32_t)v[0];
}

static void narrow_out(const rig_wire_msg *m, uint64_t v[5]) {
  switch (m->type) {
  case RIG_WIRE_HELLO: v[0] = m->version; break;
  case RIG_WIRE_OPEN: v[0] = m->host; break;
  case RIG_WIRE_FILL: v[0] = m->pattern, v[1] = m->pattern_bytes; break;
  case RIG_WIRE_LAUNCH: v[0] = m->dev, v[1] = m->shared_bytes; break;
  case RIG_WIRE_RUN: v[0] = m->count; break;
  default: v[0] = m->dev; break;
  }
}

/* PUSH's data: u8 n, HOST:PORT in n bytes, then the packed rkey. */
static const char *check_push(const rig_wire_msg *m) {
  size_t n = m->data_n ? m->data[0] : 0;
  if (n == 0 || n > RIG_WIRE_PEER_MAX || m->data_n < 1 + n + 1)
    return "a peer address that is empty or too long, or no key";
  if (memchr(m->data + 1, 0, n))
    return "a peer address with a NUL";
  return m->data_n - 1 - n <= RIG_WIRE_RKEY_MAX ? NULL : "a key over 4096 bytes";
}

/* The checks beyond the layout: sizes and names within bounds. */
static const char *check(const rig_wire_msg *m) {
  switch (m->type) {
  case RIG_WIRE_HELLO:
    return m->data_n == RIG_WIRE_NONCE ? NULL : "a client nonce that is not 32 bytes";
  case RIG_WIRE_AUTH: return m->data_n == 32 ? NULL : "a MAC that is not 32 bytes";
  case RIG_WIRE_OPEN:
    if (m->host ? m->data_n != 0 : m->data_n == 0 || m->data_n > RIG_WIRE_NAME_MAX)
      return "a device name that is empty, too long or given with the host";
    return m->data_n && memchr(m->data, 0, m->data_n) ? "a device name with a NUL" : NULL;
  case RIG_WIRE_PUT: return m->data_n <= RIG_WIRE_CHUNK ? NULL : "more data than a chunk";
  case RIG_WIRE_GET: return m->bytes <= RIG_WIRE_CHUNK ? NULL : "more bytes than a chunk";
  case RIG_WIRE_FILL:
    return m->pattern_bytes == 1 || m->pattern_bytes == 2 || m->pattern_bytes == 4
               ? NULL : "a pattern that is not 1, 2 or 4 bytes";
  case RIG_WIRE_LOAD:
    return m->data_n > 0 && m->data_n <= RIG_WIRE_CHUNK ? NULL
                                                        : "an object that is empty or over a chunk";
  case RIG_WIRE_RESOLVE:
    if (m->data_n == 0 || m->data_n > RIG_WIRE_NAME_MAX)
      return "a function name that is empty or too long";
    return memchr(m->data, 0, m->data_n) ? "a function name with a NUL" : NULL;
  case RIG_WIRE_LAUNCH:
    return m->data_n <= RIG_WIRE_CHUNK ? NULL : "a parameter block over a chunk";
  case RIG_WIRE_RUN:
    return m->count > 0 && m->count <= m->data_n / RIG_WIRE_PART_HEADER
               ? NULL : "a count of parts its bytes cannot hold";
  case RIG_WIRE_PUSH: return check_push(m);
  default: return m->data_n == 0 ? NULL : "bytes left over";
  }
}

bool rig_wire_request_get(uint16_t type, const uint8_t *body, size_t n, rig_wire_msg *m,
                          char *why, size_t why_n) {
  memset(m, 0, sizeof *m);
  if (!rig_wire_known(type)) {
    snprintf(why, why_n, "unknown request type %u", type);
    return false;
  }
  m->type = type;
  uint64_t v[5] = {0};
  slot s[MAX_FIELDS];
  size_t k = fields(type, m, v, s);
  rig_wire_reader r = {body, n, false};
  for (size_t i = 0; i < k; i++)
    *s[i].at = rig_wire_read(&r, s[i].bytes);
  if (r.bad) {
    snprintf(why, why_n, "%s: a body of %zu bytes is too short", rig_wire_type_name(type), n);
    return false;
  }
  narrow_in(m, v);
  m->data = r.p;
  m->data_n = r.n;
  const char *bad = check(m);
  if (bad)
    snprintf(why, why_n, "%s: %s", rig_wire_type_name(type), bad);
  return bad == NULL;
}

size_t rig_wire_request_put(const rig_wire_msg *m, uint8_t *out) {
  rig_wire_msg copy = *m;
  uint64_t v[5] = {0};
  slot s[MAX_FIELDS];
  size_t k = fields(m->type, &copy, v, s);
  narrow_out(m, v);
  uint8_t *p = out;
  for (size_t i = 0; i < k; i++)
    p = rig_wire_write(p, *s[i].at, s[i].bytes);
  return (size_t)(p - out);
}

void rig_wire_facts_put(const rig_wire_facts *f, uint8_t out[RIG_WIRE_FACTS_BYTES]) {
  uint8_t *p = rig_wire_write(out, f->dev, 4);
  p = rig_wire_write(p, f->flags, 4);
  p = rig_wire_write(p, f->alignment, 8);
  p = rig_wire_write(p, f->cache_bytes, 8);
  p = rig_wire_write(p, f->budget, 8);
  memcpy(p, f->arch, RIG_WIRE_ARCH);
}

bool rig_wire_facts_get(const uint8_t *in, size_t n, rig_wire_facts *f) {
  rig_wire_reader r = {in, n, false};
  f->dev = (uint32_t)rig_wire_read(&r, 4);
  f->flags = (uint32_t)rig_wire_read(&r, 4);
  f->alignment = rig_wire_read(&r, 8);
  f->cache_bytes = rig_wire_read(&r, 8);
  f->budget = rig_wire_read(&r, 8);
  if (r.bad || r.n != RIG_WIRE_ARCH || memchr(r.p, 0, RIG_WIRE_ARCH) == NULL)
    return false;
  memcpy(f->arch, r.p, RIG_WIRE_ARCH);
  return true;
}

bool rig_wire_part_put(uint8_t *out, size_t cap, size_t *at, const rig_wire_msg *m,
                       const void *data, size_t data_n) {
  uint8_t fixed[64];
  size_t n = rig_wire_request_put(m, fixed);
  if (*at > cap || cap - *at < RIG_WIRE_PART_HEADER + n + data_n)
    return false;
  uint8_t *p = rig_wire_write(out + *at, m->type, 2);
  p = rig_wire_write(p, n + data_n, 4);
  memcpy(p, fixed, n);
  if (data_n)
    memcpy(p + n, data, data_n);
  *at += RIG_WIRE_PART_HEADER + n + data_n;
  return true;
}

bool rig_wire_part_get(rig_wire_reader *r, rig_wire_msg *m, char *why, size_t why_n) {
  uint16_t type = (uint16_t)rig_wire_read(r, 2);
  uint64_t n = rig_wire_read(r, 4);
  if (r->bad || n > r->n) {
    snprintf(why, why_n, "RUN: a part past the body's end");
    return false;
  }
  if (type != RIG_WIRE_COPY && type != RIG_WIRE_FILL && type != RIG_WIRE_LAUNCH) {
    snprintf(why, why_n, "RUN: a part of type %u, not COPY, FILL or LAUNCH", type);
    return false;
  }
  const uint8_t *body = r->p;
  r->p += n;
  r->n -= n;
  return rig_wire_request_get(type, body, (size_t)n, m, why, why_n);
}
