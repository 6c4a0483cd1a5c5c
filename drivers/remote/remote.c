/* remote.c: the remote driver (docs/remote.md). Its devices are another
 * machine's: that machine's host (MACH-5, MACH-21) and the devices its
 * `rig serve` opens there, each reached over the machine's one link
 * (link.c). Core opens them through rig_device_open_host and
 * rig_device_open_on, which make the arguments RIG_EDGE_MACHINE_ARGS_PREFIX
 * begins; the driver refuses any other.
 *
 * Work runs before submit returns (SYNCHRONOUS): each copy or fill part is
 * a request that the server runs with its own librig-core, and the reply
 * comes once its bytes are in place, so the word this side keeps is the
 * remote work's progress. Bytes between this machine's memory (staging
 * that the driver "maps" by its address alone) and the other's travel
 * through UCX in chunks; a copy between two of the other machine's
 * devices that reach each other runs there and never passes through this
 * one. A broken link faults every call with "MACHINE lost: CAUSE".
 */
#include <rig/edge.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "link.h"

typedef struct rdev {
  rig_link *link;
  bool host;                /* the machine's host: OWN_WORD, read by PING */
  rig_wire_facts facts;     /* the remote device's, from its OPEN */
  volatile uint64_t *word;  /* core's, for every other device */
  _Atomic uint64_t done;    /* the last value whose work the server finished */
} rdev;

/* A remote allocation: the server's buffer on this handle's link, and
 * where it is large and in the server's host memory, its exposure for
 * RMA (rma.rkey not NULL; link_rma.c). */
typedef struct rbuf {
  uint64_t id;
  rig_link *link;
  rig_link_rma rma;
} rbuf;

/* Allocations from this size on are exposed for RMA: below it a chunk's
 * one round trip costs less than the EXPOSE. */
#define RMA_MIN ((uint64_t)256 << 10)

#define HANG_MS_DEFAULT 30000u

/* Splits off the next space-separated word of *s into out. */
static bool word(const char **s, char *out, size_t n) {
  const char *sp = strchr(*s, ' ');
  size_t len = sp ? (size_t)(sp - *s) : strlen(*s);
  if (len == 0 || len >= n || !sp)
    return false;
  memcpy(out, *s, len);
  out[len] = 0;
  *s = sp + 1;
  return true;
}

static int open_facts(rdev *d, bool host, const char *name, rig_edge_error *err) {
  uint8_t reply[RIG_WIRE_FACTS_BYTES];
  size_t got = 0;
  rig_wire_msg m = {.type = RIG_WIRE_OPEN, .host = host};
  size_t n = host ? 0 : strlen(name);
  int r = rig_link_call(d->link, &m, name, n, reply, sizeof reply, &got, err);
  if (r == RIG_EDGE_OK && !rig_wire_facts_get(reply, got, &d->facts))
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: facts that do not parse",
                      rig_link_machine(d->link));
  return r == RIG_EDGE_FAULT ? RIG_EDGE_UNAVAILABLE : r;
}

/* "rig-machine1 host MACHINE HANG_MS ADDRESS KEYFILE" or
 * "rig-machine1 device MACHINE NAME" (edge.h). */
static int open_(const char *args, void **out, rig_edge_error *err) {
  const char *s = args;
  char kind[8], machine[64], hang[16], address[256];
  size_t pre = strlen(RIG_EDGE_MACHINE_ARGS_PREFIX);
  uint64_t hang_ms = HANG_MS_DEFAULT;
  if (strncmp(s, RIG_EDGE_MACHINE_ARGS_PREFIX, pre) != 0 || (s += pre, !word(&s, kind, sizeof kind)) ||
      !word(&s, machine, sizeof machine))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "remote: open another machine's devices with rig_device_open_host and "
                         "rig_device_open_on, not as '%s'", args);
  bool host = strcmp(kind, "host") == 0;
  if (host && (!word(&s, hang, sizeof hang) || !word(&s, address, sizeof address) ||
               !rig_edge_args_number(hang, strlen(hang), 1, UINT32_MAX, &hang_ms) || !*s))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "remote: bad host arguments '%s'", args);
  rdev *d = calloc(1, sizeof *d);
  if (!d)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "remote: out of memory");
  d->host = host;
  int r = RIG_EDGE_OK;
  if (host && rig_link_find(machine))
    r = rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: already connected", machine);
  else if (host)
    r = rig_link_open(machine, address, s, (uint32_t)hang_ms, &d->link, err);
  else if (!(d->link = rig_link_find(machine)))
    r = rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: no host of that machine is open", machine);
  if (r == RIG_EDGE_OK)
    r = open_facts(d, host, s, err);
  if (r != RIG_EDGE_OK) {
    if (d->link)
      rig_link_drop(d->link);
    free(d);
    return r;
  }
  *out = d;
  return RIG_EDGE_OK;
}

static int facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  rdev *d = h;
  (void)err;
  f->flags = RIG_EDGE_SYNCHRONOUS | RIG_EDGE_MAY_BLOCK | (d->host ? RIG_EDGE_OWN_WORD : 0) |
             (d->facts.flags & RIG_EDGE_COMPUTES);
  snprintf(f->arch, sizeof f->arch, "%s", d->facts.arch); /* the remote device's (PROP-12) */
  f->alignment = d->facts.alignment;                        /* PROP-28 */
  f->cache_bytes = d->facts.cache_bytes;                    /* PROP-32 */
  f->budget = d->facts.budget;
  f->commit_k = 1;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE; /* not carried yet */
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
  return RIG_EDGE_OK;
}

/* Tells the server this side is done with the device; a broken link has
 * nothing left to tell. */
static int stop(void *h, rig_edge_error *err) {
  rdev *d = h;
  rig_wire_msg m = {.type = RIG_WIRE_CLOSE, .dev = d->facts.dev};
  int r = rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
  return r == RIG_EDGE_FAULT ? RIG_EDGE_OK : r;
}

static void destroy(void *h) {
  rdev *d = h;
  rig_link_drop(d->link);
  free(d);
}

static int bind_word(void *h, volatile uint64_t *w, rig_edge_error *err) {
  (void)err;
  ((rdev *)h)->word = w;
  return RIG_EDGE_OK;
}

/* The host's word: a round trip says the machine still answers. */
static int signaled(void *h, uint64_t *out, rig_edge_error *err) {
  rdev *d = h;
  rig_wire_msg m = {.type = RIG_WIRE_PING};
  int r = rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
  *out = atomic_load(&d->done);
  return r;
}

/* Work finishes inside its submit: a value not yet done is one whose
 * submit runs on another thread now, so the wait sleeps a slice. */
static int wait_(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  (void)err;
  if (atomic_load(&((rdev *)h)->done) >= value)
    return RIG_EDGE_OK;
  struct timespec t = {0, (timeout_ms < 1 ? timeout_ms : 1) * 1000000L};
  nanosleep(&t, NULL);
  return atomic_load(&((rdev *)h)->done) >= value ? RIG_EDGE_OK : RIG_EDGE_TIMEOUT;
}

/* ---- memory ---- */

static int allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                    rig_edge_error *err) {
  rdev *d = h;
  uint8_t reply[8];
  size_t got = 0;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: a device of another machine has only its own memory",
                         rig_link_machine(d->link));
  rbuf *b = calloc(1, sizeof *b);
  if (!b)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "remote: out of memory");
  rig_wire_msg m = {.type = RIG_WIRE_ALLOC, .dev = d->facts.dev, .bytes = bytes};
  int r = rig_link_call(d->link, &m, NULL, 0, reply, sizeof reply, &got, err);
  if (r == RIG_EDGE_OK && got != sizeof reply)
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: an ALLOC reply of %zu bytes",
                      rig_link_machine(d->link), got);
  if (r != RIG_EDGE_OK) {
    free(b);
    return r;
  }
  rig_wire_reader rd = {reply, sizeof reply, false};
  b->id = rig_wire_read(&rd, 8);
  b->link = d->link;
  if (bytes >= RMA_MIN && rig_link_expose(d->link, b->id, &b->rma, err) == RIG_EDGE_FAULT) {
    free(b);
    return RIG_EDGE_FAULT; /* lost; otherwise its bytes travel in chunks */
  }
  *out = (rig_edge_alloc){.handle = b, .host = NULL, .address = 0, .bytes = bytes};
  return RIG_EDGE_OK;
}

/* Gives the server's buffer back; on a broken link it went with the
 * connection, and nothing is left to give. */
static int release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  rdev *d = h;
  rbuf *b = a->handle;
  rig_wire_msg m = {.type = RIG_WIRE_RELEASE, .buf = b->id};
  rig_link_rma_drop(&b->rma);
  int r = rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
  free(b);
  return r == RIG_EDGE_FAULT ? RIG_EDGE_OK : r;
}

/* Staging: host memory that this driver reads and writes by its address,
 * sending the bytes over the link. */
static int map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err) {
  (void)h, (void)err;
  *out = (rig_edge_alloc){.handle = NULL, .host = host, .address = 0, .bytes = bytes};
  return RIG_EDGE_OK;
}

static int unmap(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  (void)h, (void)a, (void)err;
  return RIG_EDGE_OK;
}

/* Another device of the same machine whose memory this one's work there
 * addresses as it is: both run on that machine's host (its host and its
 * memory devices, MACH-13, MACH-16 there; MACH-21). */
static bool peer(void *h, void *other) {
  rdev *a = h, *b = other;
  return rig_link_same(a->link, b->link) && (a->facts.flags & RIG_EDGE_RUNS_ON_HOST) &&
         (b->facts.flags & RIG_EDGE_RUNS_ON_HOST);
}

/* ---- work ---- */

static uint64_t id_of(const rig_edge_range *r) { return ((const rbuf *)r->alloc->handle)->id; }

/* The exposure through which n bytes at offset of r's buffer move by
 * RMA, or NULL: a small move, or a buffer not exposed. */
static const rig_link_rma *by_rma(const rig_edge_range *r) {
  const rbuf *b = r->alloc->handle;
  bool fits = r->offset <= b->rma.bytes && r->bytes <= b->rma.bytes - r->offset;
  return b->rma.rkey && r->bytes >= RMA_MIN && fits ? &b->rma : NULL;
}

/* Host bytes to the remote range: by RMA, else chunk by chunk. */
static int put(rdev *d, const rig_edge_range *src, const rig_edge_range *dst, rig_edge_error *err) {
  const uint8_t *p = (const uint8_t *)src->alloc->host + src->offset;
  if (by_rma(dst))
    return rig_link_rma_move(d->link, by_rma(dst), true, (void *)p, dst->offset, src->bytes,
                             err);
  for (uint64_t done = 0; done < src->bytes;) {
    uint64_t n = src->bytes - done < RIG_WIRE_CHUNK ? src->bytes - done : RIG_WIRE_CHUNK;
    rig_wire_msg m = {.type = RIG_WIRE_PUT, .buf = id_of(dst), .offset = dst->offset + done};
    int r = rig_link_call(d->link, &m, p + done, n, NULL, 0, NULL, err);
    if (r != RIG_EDGE_OK)
      return r;
    done += n;
  }
  return RIG_EDGE_OK;
}

/* The remote range to host bytes: by RMA, else chunk by chunk. */
static int get(rdev *d, const rig_edge_range *src, const rig_edge_range *dst, rig_edge_error *err) {
  uint8_t *p = (uint8_t *)dst->alloc->host + dst->offset;
  if (by_rma(src))
    return rig_link_rma_move(d->link, by_rma(src), false, p, src->offset, src->bytes, err);
  for (uint64_t done = 0; done < src->bytes;) {
    uint64_t n = src->bytes - done < RIG_WIRE_CHUNK ? src->bytes - done : RIG_WIRE_CHUNK;
    size_t got = 0;
    rig_wire_msg m = {.type = RIG_WIRE_GET, .buf = id_of(src), .offset = src->offset + done,
                      .bytes = n};
    int r = rig_link_call(d->link, &m, NULL, 0, p + done, n, &got, err);
    if (r == RIG_EDGE_OK && got != n)
      r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: a GET reply of %zu bytes, not %llu",
                        rig_link_machine(d->link), got, (unsigned long long)n);
    if (r != RIG_EDGE_OK)
      return r;
    done += n;
  }
  return RIG_EDGE_OK;
}

static int copy(rdev *d, const rig_edge_part *part, rig_edge_error *err) {
  const rig_edge_range *src = &part->u.copy.src, *dst = &part->u.copy.dst;
  bool src_here = src->alloc->host != NULL, dst_here = dst->alloc->host != NULL;
  if (src_here && dst_here)
    return rig_edge_run_on_host(part, err);
  if (src_here)
    return put(d, src, dst, err);
  if (dst_here)
    return get(d, src, dst, err);
  rig_wire_msg m = {.type = RIG_WIRE_COPY, .buf = id_of(src), .offset = src->offset,
                    .dst = id_of(dst), .dst_offset = dst->offset, .bytes = src->bytes};
  return rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
}

static int fill(rdev *d, const rig_edge_part *part, rig_edge_error *err) {
  const rig_edge_range *dst = &part->u.fill.dst;
  if (dst->alloc->host)
    return rig_edge_run_on_host(part, err);
  rig_wire_msg m = {.type = RIG_WIRE_FILL, .buf = id_of(dst), .offset = dst->offset,
                    .bytes = dst->bytes, .pattern = part->u.fill.pattern,
                    .pattern_bytes = part->u.fill.pattern_bytes};
  return rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
}

static int check(void *h, const rig_edge_work *w, rig_edge_error *err) {
  for (uint32_t i = 0; i < w->nparts; i++)
    if (w->parts[i].kind != RIG_EDGE_PART_COPY && w->parts[i].kind != RIG_EDGE_PART_FILL)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: only copies and fills run on another machine yet",
                           rig_link_machine(((rdev *)h)->link));
  return RIG_EDGE_OK;
}

/* Runs the parts in order, each a round trip, then says the value is
 * reached. A failure faults: core loses the device with the reason. */
static int submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  rdev *d = h;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    int r = p->kind == RIG_EDGE_PART_COPY   ? copy(d, p, err)
            : p->kind == RIG_EDGE_PART_FILL ? fill(d, p, err)
                                            : check(h, w, err);
    if (r != RIG_EDGE_OK)
      return RIG_EDGE_FAULT;
  }
  atomic_store(&d->done, w->value);
  if (d->word)
    rig_edge_word_store(d->word, w->value);
  return RIG_EDGE_OK;
}

static const rig_edge_driver table = {
    RIG_EDGE_DRIVER_INIT("remote"),
    .open = open_, .facts = facts, .stop = stop, .destroy = destroy,
    .bind_word = bind_word, .signaled = signaled, .wait = wait_,
    .submit = submit, .allocate = allocate, .release = release,
    .map = map, .unmap = unmap, .peer = peer, .check = check,
};
RIG_EDGE_DRIVER(table)
