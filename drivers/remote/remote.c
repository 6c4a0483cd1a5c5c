/* SPDX-License-Identifier: MIT */
/* remote.c: the remote driver proper (docs/remote.md), librig-remote-ucx.so,
 * which librig-driver-remote.so (shim.c) opens at the first open of another
 * machine's device, so that UCX loads only then. Its devices are another
 * machine's: that machine's host (MACH-5, MACH-21) and the devices its
 * `rig serve` opens there, each reached over the machine's one link
 * (link.c). Core opens them through rig_device_open_host and
 * rig_device_open_on, which make the arguments RIG_EDGE_MACHINE_ARGS_PREFIX
 * begins; the driver refuses any other.
 *
 * Work runs before submit returns (SYNCHRONOUS): each copy, fill or launch
 * part is a request that the server runs with its own librig-core, and the reply
 * comes once its bytes are in place, so the word this side keeps is the
 * remote work's progress. Bytes between this machine's memory (staging
 * that the driver "maps" by its address alone) and the other's travel
 * through UCX in chunks; a copy between two of the other machine's
 * devices that reach each other runs there and never passes through this
 * one. Code loads there (code.c): the object travels, and a launch's refs
 * are the addresses of that machine's buffers there. A broken link faults
 * every call with "MACHINE lost: CAUSE".
 */
#include <rig/edge.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "code.h"
#include "link.h"
#include "list.h"
#include "move.h"

typedef struct rdev {
  rig_link *link;
  bool host;                /* the machine's host: OWN_WORD, read by PING */
  rig_wire_facts facts;     /* the remote device's, from its OPEN */
  volatile uint64_t *word;  /* core's, for every other device */
  _Atomic uint64_t done;    /* the last value whose work the server finished */
  uint8_t *batch;           /* RUN's body (BATCH_BYTES), made at the first */
  pthread_mutex_t list_lock;
  rig_remote_machine *list; /* the host's RIG_REMOTE_MACHINE, asked once */
} rdev;

typedef rig_remote_buf rbuf; /* move.h */

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
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "remote: malformed machine arguments '%s'",
                         args); /* the shim refused any other already */
  bool host = strcmp(kind, "host") == 0;
  if (host && (!word(&s, hang, sizeof hang) || !word(&s, address, sizeof address) ||
               !rig_edge_args_number(hang, strlen(hang), 1, UINT32_MAX, &hang_ms) || !*s))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "remote: bad host arguments '%s'", args);
  rdev *d = calloc(1, sizeof *d);
  if (!d)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "remote: out of memory");
  d->host = host;
  pthread_mutex_init(&d->list_lock, NULL);
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
    pthread_mutex_destroy(&d->list_lock);
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
  f->type = RIG_EDGE_TYPE_REMOTE;                           /* whatever it is there */
  snprintf(f->arch, sizeof f->arch, "%s", d->facts.arch); /* the remote device's (PROP-12) */
  f->alignment = d->facts.alignment;                        /* PROP-28 */
  f->cache_bytes = d->facts.cache_bytes;                    /* PROP-32 */
  f->budget = d->facts.budget;
  f->commit_k = 1;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = d->facts.flags & RIG_EDGE_COMPUTES ? 0 : RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE; /* another driver's words: no meaning here */
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
  free(d->batch);
  pthread_mutex_destroy(&d->list_lock);
  free(d->list);
  free(d);
}

/* The host's RIG_REMOTE_MACHINE: its machine's devices, asked once; any
 * device's RIG_REMOTE_BYTES: the driver's count (move.c). */
static const void *capability(void *h, const char *key) {
  rdev *d = h;
  if (strcmp(key, RIG_REMOTE_BYTES) == 0)
    return (const void *)&rig_remote_bytes_here;
  if (!d->host || strcmp(key, RIG_REMOTE_MACHINE) != 0)
    return NULL;
  pthread_mutex_lock(&d->list_lock);
  if (!d->list)
    d->list = rig_remote_list(d->link);
  const void *r = d->list;
  pthread_mutex_unlock(&d->list_lock);
  return r;
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
  uint8_t reply[16];
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
  if (r == RIG_EDGE_OK && got != 8 && got != 16)
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: an ALLOC reply of %zu bytes",
                      rig_link_machine(d->link), got);
  if (r != RIG_EDGE_OK) {
    free(b);
    return r;
  }
  rig_wire_reader rd = {reply, got, false};
  b->id = rig_wire_read(&rd, 8);
  b->link = d->link;
  /* The address that machine's code uses for it, which a launch's refs
   * store (0 from a server that sends none: launches refuse the buffer). */
  uint64_t there = got == 16 ? rig_wire_read(&rd, 8) : 0;
  if (bytes >= RIG_REMOTE_RMA_MIN && rig_link_expose(d->link, b->id, &b->rma, err) == RIG_EDGE_FAULT) {
    free(b);
    return RIG_EDGE_FAULT; /* lost; otherwise its bytes travel in chunks */
  }
  *out = (rig_edge_alloc){.handle = b, .host = NULL, .address = there, .bytes = bytes};
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

/* A device of another machine than h's, whose buffers' bytes h's copies
 * take in (edge.h's copies_from, ABI 1.8): the source machine's server
 * puts them into h's (move.c), or, where it cannot, they pass through
 * this host. Not a peer: neither device's work addresses the other's
 * memory (MACH-18). */
static bool copies_from(void *h, void *other) {
  return !rig_link_same(((rdev *)h)->link, ((rdev *)other)->link);
}

/* ---- work ---- */

static uint64_t id_of(const rig_edge_range *r) { return ((const rbuf *)r->alloc->handle)->id; }

/* The request of a copy between two buffers of the other machine, which
 * runs there, and of a fill there. */
static rig_wire_msg copy_msg(const rig_edge_part *part) {
  const rig_edge_range *src = &part->u.copy.src, *dst = &part->u.copy.dst;
  return (rig_wire_msg){.type = RIG_WIRE_COPY, .buf = id_of(src), .offset = src->offset,
                        .dst = id_of(dst), .dst_offset = dst->offset, .bytes = src->bytes};
}

static rig_wire_msg fill_msg(const rig_edge_part *part) {
  const rig_edge_range *dst = &part->u.fill.dst;
  return (rig_wire_msg){.type = RIG_WIRE_FILL, .buf = id_of(dst), .offset = dst->offset,
                        .bytes = dst->bytes, .pattern = part->u.fill.pattern,
                        .pattern_bytes = part->u.fill.pattern_bytes};
}

/* Whether r is a buffer of another machine than d's (copies_from). */
static bool elsewhere(const rdev *d, const rig_edge_range *r) {
  return !r->alloc->host && !rig_link_same(((const rbuf *)r->alloc->handle)->link, d->link);
}

static int copy(rdev *d, const rig_edge_part *part, rig_edge_error *err) {
  const rig_edge_range *src = &part->u.copy.src, *dst = &part->u.copy.dst;
  bool src_here = src->alloc->host != NULL, dst_here = dst->alloc->host != NULL;
  if (src_here && dst_here)
    return rig_edge_run_on_host(part, err);
  if (src_here)
    return rig_remote_put(d->link, src, dst, err);
  if (dst_here)
    return rig_remote_get(d->link, src, dst, err);
  if (elsewhere(d, src) || elsewhere(d, dst))
    return rig_remote_copy_across(src, dst, err);
  rig_wire_msg m = copy_msg(part);
  return rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
}

static int fill(rdev *d, const rig_edge_part *part, rig_edge_error *err) {
  const rig_edge_range *dst = &part->u.fill.dst;
  if (dst->alloc->host)
    return rig_edge_run_on_host(part, err);
  rig_wire_msg m = fill_msg(part);
  return rig_link_call(d->link, &m, NULL, 0, NULL, 0, NULL, err);
}

/* Refused before a value is taken, so that nothing is lost: what the
 * server's core would refuse once the launch is there. */
static int check(void *h, const rig_edge_work *w, rig_edge_error *err) {
  rdev *d = h;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (p->kind == RIG_EDGE_PART_LAUNCH && p->u.launch.shared_bytes &&
        (d->facts.flags & RIG_EDGE_RUNS_ON_HOST))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: part %u asks for shared memory, which a host has none of",
                           rig_link_machine(d->link), i); /* LAUNCH-12 there */
  }
  return RIG_EDGE_OK;
}

/* One part, one request (a copy of more than a chunk, several). */
static int run_part(rdev *d, const rig_edge_part *p, rig_edge_error *err) {
  switch (p->kind) {
  case RIG_EDGE_PART_COPY: return copy(d, p, err);
  case RIG_EDGE_PART_FILL: return fill(d, p, err);
  case RIG_EDGE_PART_LAUNCH: return rig_remote_launch(d->link, d->facts.dev, p, err);
  default:
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: a part of kind %u", rig_link_machine(d->link),
                         p->kind);
  }
}

/* ---- several parts in one request (RUN) ---- */

#define BATCH_BYTES (64u << 10)

/* Whether p runs wholly on d's machine: no bytes of this one or another. */
static bool there(const rdev *d, const rig_edge_part *p) {
  switch (p->kind) {
  case RIG_EDGE_PART_COPY:
    return !p->u.copy.src.alloc->host && !p->u.copy.dst.alloc->host &&
           !elsewhere(d, &p->u.copy.src) && !elsewhere(d, &p->u.copy.dst);
  case RIG_EDGE_PART_FILL: return !p->u.fill.dst.alloc->host;
  default: return p->kind == RIG_EDGE_PART_LAUNCH;
  }
}

/* Appends p to d's batch; false where it does not fit. */
static bool batch_put(rdev *d, const rig_edge_part *p, size_t *at) {
  rig_wire_msg m = p->kind == RIG_EDGE_PART_COPY   ? copy_msg(p)
                   : p->kind == RIG_EDGE_PART_FILL ? fill_msg(p)
                                                   : rig_remote_launch_msg(d->facts.dev, p);
  const void *data = p->kind == RIG_EDGE_PART_LAUNCH ? p->u.launch.params : NULL;
  size_t n = p->kind == RIG_EDGE_PART_LAUNCH ? p->u.launch.params_bytes : 0;
  return rig_wire_part_put(d->batch, BATCH_BYTES, at, &m, data, n);
}

static int batch_send(rdev *d, uint32_t count, size_t bytes, rig_edge_error *err) {
  rig_wire_msg m = {.type = RIG_WIRE_RUN, .count = count};
  return rig_link_call(d->link, &m, d->batch, bytes, NULL, 0, NULL, err);
}

/* Runs n parts that run there (there()) in as few requests as fit: one
 * RUN per BATCH_BYTES of them, a part too big for one alone. The server
 * runs a RUN's parts in order, as the queue would. */
static int run_there(rdev *d, const rig_edge_part *parts, uint32_t n, rig_edge_error *err) {
  if (n > 1 && !d->batch)
    d->batch = malloc(BATCH_BYTES);
  if (n == 1 || !d->batch) { /* no memory for a batch: each alone */
    int r = RIG_EDGE_OK;
    for (uint32_t k = 0; k < n && r == RIG_EDGE_OK; k++)
      r = run_part(d, &parts[k], err);
    return r;
  }
  size_t at = 0;
  uint32_t count = 0;
  int r = RIG_EDGE_OK;
  for (uint32_t k = 0; k < n && r == RIG_EDGE_OK; k++) {
    if (batch_put(d, &parts[k], &at)) {
      count++;
      continue;
    }
    if (count)
      r = batch_send(d, count, at, err);
    at = 0;
    count = 0;
    if (r == RIG_EDGE_OK && batch_put(d, &parts[k], &at))
      count = 1;
    else if (r == RIG_EDGE_OK)
      r = run_part(d, &parts[k], err); /* too big for a batch: alone */
  }
  return r == RIG_EDGE_OK && count ? batch_send(d, count, at, err) : r;
}

/* Runs the parts in order: those with bytes of this machine each alone,
 * each stretch of those that run there together, then says the value is
 * reached. A failure faults: core loses the device with the reason. */
static int submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  rdev *d = h;
  for (uint32_t i = 0; i < w->nparts;) {
    uint32_t j = i;
    while (j < w->nparts && there(d, &w->parts[j]))
      j++;
    int r = j > i ? run_there(d, w->parts + i, j - i, err) : run_part(d, &w->parts[i], err);
    if (r != RIG_EDGE_OK)
      return RIG_EDGE_FAULT;
    i = j > i ? j : i + 1;
  }
  atomic_store(&d->done, w->value);
  if (d->word)
    rig_edge_word_store(d->word, w->value);
  return RIG_EDGE_OK;
}

/* ---- code (code.c) ---- */

static int load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
                rig_edge_error *err) {
  rdev *d = h;
  return rig_remote_load(d->link, d->facts.dev, bytes, n, out_image, out_code_bytes, err);
}

static int resolve(void *h, void *image, const char *name, void **out_function,
                   rig_edge_error *err) {
  return rig_remote_resolve(((rdev *)h)->link, image, name, out_function, err);
}

static int unload(void *h, void *image, rig_edge_error *err) {
  return rig_remote_unload(((rdev *)h)->link, image, err);
}

static const rig_edge_driver table = {
    RIG_EDGE_DRIVER_INIT("remote"),
    .open = open_, .facts = facts, .stop = stop, .destroy = destroy,
    .bind_word = bind_word, .signaled = signaled, .wait = wait_,
    .submit = submit, .allocate = allocate, .release = release,
    .map = map, .unmap = unmap, .peer = peer, .check = check,
    .load = load, .resolve = resolve, .unload = unload,
    .capability = capability, .copies_from = copies_from,
};

/* The table, for librig-driver-remote.so (shim.c), which opens this
 * library at the first open of another machine's device. */
RIG_EDGE_PLUGIN_EXPORT const rig_edge_driver *rig_remote_ucx_driver(void);
RIG_EDGE_PLUGIN_EXPORT const rig_edge_driver *rig_remote_ucx_driver(void) {
  return &table;
}
