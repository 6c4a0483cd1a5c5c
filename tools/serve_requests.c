/* SPDX-License-Identifier: MIT */
/* serve_requests.c: what `rig serve` does for each request of an
 * authenticated client, with this machine's librig-core (docs/remote.md).
 * Every id a client names is checked against its own tables, and every
 * range against its buffer: a bad one is an error reply, never a crash. */
#include "serve_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reply status for a failed rig call: its message goes with it. */
static int refuse(serve_reply *out, rig_status st) {
  out->status = st == RIG_OUT_OF_MEMORY ? RIG_EDGE_NO_ROOM
                : st == RIG_INVALID     ? RIG_EDGE_UNSUPPORTED
                                        : RIG_EDGE_FAULT;
  snprintf(out->text, sizeof out->text, "%.200s", rig_error_last()->message);
  return out->status;
}

static int bad(serve_reply *out, const char *fmt, unsigned long long v) {
  out->status = RIG_EDGE_UNSUPPORTED;
  snprintf(out->text, sizeof out->text, fmt, v);
  return out->status;
}

/* Grows a table of pointers by one free entry; returns its index or -1. */
static long add(void ***table, size_t *n, void *p) {
  for (size_t i = 0; i < *n; i++)
    if (!(*table)[i]) {
      (*table)[i] = p;
      return (long)i;
    }
  void **t = realloc(*table, (*n + 16) * sizeof *t);
  if (!t)
    return -1;
  memset(t + *n, 0, 16 * sizeof *t);
  *table = t;
  t[*n] = p;
  return (long)(*n += 16) - 16;
}

static rig_buffer *buffer(serve_client *c, uint64_t id) {
  return id >= 1 && id <= c->nbufs ? c->bufs[id - 1] : NULL;
}

static rig_device *device(serve_client *c, uint32_t id) {
  return id >= 1 && id <= c->ndevs ? c->devs[id - 1] : NULL;
}

/* Whether [off, off+n) lies in b. */
static bool inside(rig_buffer *b, uint64_t off, uint64_t n) {
  return off <= rig_buffer_length(b) && n <= rig_buffer_length(b) - off;
}

static int do_open(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  char name[RIG_WIRE_NAME_MAX + 1];
  rig_device *d = rig_device_host();
  memcpy(name, m->data, m->data_n);
  name[m->data_n] = 0;
  if (!m->host && strchr(name, '@')) {
    out->status = RIG_EDGE_UNSUPPORTED;
    snprintf(out->text, sizeof out->text, "%.100s: this server opens its own machine's devices only",
             name);
    return out->status;
  }
  rig_status st = m->host ? RIG_OK : rig_device_open(name, &d);
  if (st)
    return refuse(out, st);
  long i = add((void ***)&c->devs, &c->ndevs, d);
  if (i < 0) {
    rig_device_release(d);
    return bad(out, "out of memory for device %llu", c->ndevs);
  }
  const char *arch = rig_device_arch(d);
  rig_wire_facts f = {.dev = (uint32_t)i + 1, .alignment = rig_device_alignment(d),
                      .budget = rig_device_budget(d)};
  f.flags = (rig_device_computes(d) ? RIG_EDGE_COMPUTES : 0) |
            (rig_device_runs_on_host(d) ? RIG_EDGE_RUNS_ON_HOST : 0);
  if (!rig_device_cache_bytes(d, &f.cache_bytes))
    f.cache_bytes = 0;
  snprintf(f.arch, sizeof f.arch, "%s", arch ? arch : "");
  rig_wire_facts_put(&f, out->body);
  out->body_n = RIG_WIRE_FACTS_BYTES;
  serve_log(c, "opened %s", m->host ? "its host" : name);
  return 0;
}

/* The address d's code uses for b, which the client's launch refs store
 * (docs/remote.md, "Launches on another machine's GPU"): its host address
 * for a device that runs on the host (0 where the host does not address
 * it); else the device's own (a Vulkan buffer device address, a CUDA
 * pointer), which core gives through a submission of d: a fill, which
 * every such device runs. 0 where it has none: launches refuse it. */
static uint64_t code_address(rig_device *d, const rig_buffer *b) {
  if (rig_device_runs_on_host(d))
    return (uint64_t)(uintptr_t)rig_buffer_host_address(b);
  rig_part fill = rig_part_fill(0, 0, 1);
  rig_submission *s = NULL;
  uint64_t at = 0;
  if (rig_submission_make(d, &fill, 1, &s) != RIG_OK || rig_submission_address(s, b, &at) != RIG_OK)
    at = 0;
  rig_submission_release(s);
  return at;
}

static int do_alloc(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_device *d = device(c, m->dev);
  rig_buffer *b = NULL;
  if (!d)
    return bad(out, "no device %llu", m->dev);
  if (m->bytes > SIZE_MAX)
    return bad(out, "%llu bytes do not fit this machine", m->bytes);
  rig_status st = rig_buffer_create(d, (size_t)m->bytes, &b);
  if (st)
    return refuse(out, st);
  long i = add((void ***)&c->bufs, &c->nbufs, b);
  if (i < 0) {
    rig_buffer_release(b);
    return bad(out, "out of memory for buffer %llu", c->nbufs);
  }
  uint8_t *p = rig_wire_write(out->body, (uint64_t)i + 1, 8);
  rig_wire_write(p, code_address(d, b), 8);
  out->body_n = 16;
  return 0;
}

/* A view of [off, off+n) of buffer id, or NULL with the reply set. */
static rig_buffer *view(serve_client *c, uint64_t id, uint64_t off, uint64_t n, serve_reply *out) {
  rig_buffer *b = buffer(c, id), *v = NULL;
  if (!b || !inside(b, off, n)) {
    bad(out, b ? "a range past the end of buffer %llu" : "no buffer %llu", id);
    return NULL;
  }
  rig_status st = rig_buffer_view(b, (size_t)off, (size_t)n, RIG_READ_WRITE, &v);
  if (st)
    refuse(out, st);
  return st ? NULL : v;
}

static int do_fill(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_buffer *v = view(c, m->buf, m->offset, m->bytes, out);
  if (!v)
    return out->status;
  rig_status st = rig_buffer_fill(v, m->pattern, m->pattern_bytes);
  rig_buffer_release(v);
  return st ? refuse(out, st) : 0;
}

static int do_copy(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_buffer *s = view(c, m->buf, m->offset, m->bytes, out), *d = NULL;
  if (s && !(d = view(c, m->dst, m->dst_offset, m->bytes, out))) {
    rig_buffer_release(s);
    return out->status;
  }
  if (!s)
    return out->status;
  rig_status st = rig_buffer_copy(s, d);
  rig_buffer_release(s);
  rig_buffer_release(d);
  return st ? refuse(out, st) : 0;
}

static int do_put_get(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  bool is_put = m->type == RIG_WIRE_PUT;
  uint64_t n = is_put ? m->data_n : m->bytes;
  rig_buffer *b = buffer(c, m->buf);
  if (!b || !inside(b, m->offset, n))
    return bad(out, b ? "a range past the end of buffer %llu" : "no buffer %llu", m->buf);
  rig_status st = is_put ? rig_buffer_put(b, (size_t)m->offset, m->data, (size_t)n)
                         : rig_buffer_get(b, (size_t)m->offset, out->body, (size_t)n);
  if (st)
    return refuse(out, st);
  out->body_n = is_put ? 0 : (size_t)n;
  return 0;
}

int serve_request(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  switch (m->type) {
  case RIG_WIRE_OPEN: return do_open(c, m, out);
  case RIG_WIRE_CLOSE: {
    rig_device *d = device(c, m->dev);
    if (!d)
      return bad(out, "no device %u", m->dev);
    c->devs[m->dev - 1] = NULL;
    rig_device_release(d);
    return 0;
  }
  case RIG_WIRE_ALLOC: return do_alloc(c, m, out);
  case RIG_WIRE_RELEASE: {
    rig_buffer *b = buffer(c, m->buf);
    if (!b)
      return bad(out, "no buffer %llu", m->buf);
    serve_unexpose(c, m->buf); /* the registration goes before the memory */
    c->bufs[m->buf - 1] = NULL;
    rig_buffer_release(b);
    return 0;
  }
  case RIG_WIRE_PUT:
  case RIG_WIRE_GET: return do_put_get(c, m, out);
  case RIG_WIRE_FILL: return do_fill(c, m, out);
  case RIG_WIRE_COPY: return do_copy(c, m, out);
  case RIG_WIRE_PING: return 0;
  case RIG_WIRE_LOAD:
  case RIG_WIRE_RESOLVE:
  case RIG_WIRE_UNLOAD:
  case RIG_WIRE_LAUNCH:
  case RIG_WIRE_RUN: return serve_code_request(c, m, out);
  case RIG_WIRE_LIST: return serve_list(out);
  case RIG_WIRE_EXPOSE: return serve_expose(c, m, out);
  case RIG_WIRE_PUSH: return serve_push(c, m, out);
  default: return bad(out, "request %u out of order", m->type);
  }
}

void serve_client_forget(serve_client *c) {
  serve_code_forget(c); /* its code first: launches held by nothing now */
  serve_unexpose_all(c);
  for (size_t i = 0; i < c->nbufs; i++)
    if (c->bufs[i])
      rig_buffer_release(c->bufs[i]);
  for (size_t i = 0; i < c->ndevs; i++)
    if (c->devs[i])
      rig_device_release(c->devs[i]);
  free(c->bufs);
  free(c->devs);
  c->bufs = NULL;
  c->devs = NULL;
  c->nbufs = c->ndevs = 0;
}

int serve_refuse(serve_reply *out, rig_status st) { return refuse(out, st); }
int serve_bad(serve_reply *out, const char *fmt, unsigned long long v) { return bad(out, fmt, v); }
long serve_add(void ***table, size_t *n, void *p) { return add(table, n, p); }
rig_device *serve_device(serve_client *c, uint32_t id) { return device(c, id); }
