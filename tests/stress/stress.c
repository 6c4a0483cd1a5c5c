/* stress.c: a stress test of order across threads and devices.
 *
 * T threads share allocations on D devices: the host, memory devices and
 * asynchronous test devices, with queue waits (SUBMIT-2) and without
 * (SUBMIT-3), whose work lands after submit returns. Each thread owns one
 * word-aligned region of every allocation, so threads share allocations,
 * and with them stamps, but never a word: ORDER-27..29 then say each thread
 * sees its own bytes as if it ran alone. Each thread runs random chains of
 * copies and fills over its regions, asynchronous and blocking, prepared
 * and not, on every device, and keeps a host model of its regions (the
 * oracle). Every read through rig, and a last read of each whole allocation
 * once all threads are done, must match the model byte for byte: the last
 * fill, copy or put into each byte in the thread's program order.
 *
 * Nothing waits on a point between ops: only the stamps order them, so a
 * missed stamp shows as stale bytes. The test devices' delays make their
 * work land late, and the threads' submits interleave on every allocation.
 *
 * The host's queue runs only launches (HOST-4): its prepared submissions
 * launch host kernels that copy and fill as the other devices' parts do,
 * tests/kernels/copy_bytes.c and fill_bytes.c, loaded from $RIG_KERNELS.
 * Without RIG_KERNELS (`rig bench stress`) the host's prepared work goes
 * through the Buffer module's submit_copy and submit_fill instead (TL-3),
 * one call per part, in the parts' order.
 *
 * Rules: ORDER-1 ORDER-2 ORDER-3 ORDER-8 ORDER-9 ORDER-12 ORDER-15
 * ORDER-18 ORDER-21 ORDER-22 ORDER-26 ORDER-27 ORDER-28 ORDER-29 ORDER-33
 * SUBMIT-2 SUBMIT-3 STAMP-11 HOST-4 TL-3
 */
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rig/rig.h>

#include "clock.h"
#include "host_launch.h"
#include "stress.h"

#define ALLOCS_PER_DEVICE 2
#define MAX_ALLOCS (RIG_STRESS_MAX_DEVICES * ALLOCS_PER_DEVICE)
#define REPORTS 8 /* wrong reads reported; the rest are counted */
#define HANG_S 60  /* no op finished in any thread for this long: a hang */
#define ANY RIG_STRESS_MAX_DEVICES /* pick_spans: in any allocation */

/* Prepared submissions, one of each per device, shared by every thread so
 * that their runs are taken concurrently. */
enum { SUB_COPY, SUB_CHAIN, SUB_FILL_COPY, SUBS };
static const unsigned sub_slots[SUBS] = {2, 3, 2};

enum {
  OP_SUBMIT_FILL, OP_FILL, OP_SUBMIT_COPY, OP_COPY, OP_PREPARED, OP_PUT, OP_GET, OP_READ, OPS
};
static const char *const op_names[OPS] = {"submit_fill", "fill", "submit_copy", "copy",
                                          "submit",      "put",  "get",         "read"};
/* Out of 100: mostly asynchronous submits, so that chains build up on the
 * devices' queues, with blocking calls and host reads between them. */
static const unsigned op_weight[OPS] = {18, 5, 28, 7, 17, 7, 14, 4};

typedef struct span {
  unsigned a;      /* the allocation */
  size_t off, len; /* in the thread's region of it */
} span;

typedef struct stress {
  const rig_stress_params *p;
  FILE *log;
  rig_device *dev[RIG_STRESS_MAX_DEVICES];
  rig_buffer *alloc[MAX_ALLOCS];
  unsigned nalloc;
  /* Per device, the allocations its work addresses; row ANY: all. */
  unsigned reach[ANY + 1][MAX_ALLOCS], nreach[ANY + 1];
  /* Per device, its borrow of each allocation of another driver's device
   * it reaches, or NULL: a GPU's work addresses such memory only through a
   * mapping of its own, and the seams between drivers are what this tests. */
  rig_buffer *on[RIG_STRESS_MAX_DEVICES][MAX_ALLOCS];
  rig_submission *sub[RIG_STRESS_MAX_DEVICES][SUBS];
  bool host_launches; /* the host's prepared submissions are launches */
  pthread_barrier_t start;
  atomic_int reports;
  atomic_uint finished;
} stress;

typedef struct worker {
  stress *s;
  unsigned id;
  pthread_t thread;
  uint64_t rng;
  rig_buffer *mine[MAX_ALLOCS]; /* this thread's region of each allocation */
  rig_buffer *mine_on[RIG_STRESS_MAX_DEVICES][MAX_ALLOCS]; /* ... of each borrow */
  uint8_t *model[MAX_ALLOCS];   /* the oracle: what each region must hold */
  uint32_t *writer[MAX_ALLOCS]; /* per byte: the op that wrote it last */
  rig_point *points;            /* per op: its point, where it returned one */
  uint8_t *kinds;               /* per op: its kind */
  uint8_t *scratch;             /* host bytes of puts and gets */
  atomic_uint_fast64_t op;      /* the op under way, for the watchdog */
  uint64_t submits, accesses, checked, violations, errors;
} worker;

/* ---- draws ------------------------------------------------------------------ */

static uint64_t next(uint64_t *x) { /* splitmix64 */
  uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static size_t below(uint64_t *x, size_t n) { return (size_t)(next(x) % n); }

/* Mostly short spans, whose ops cost little next to rig's own work, and
 * some long ones, whose work lands late. */
static size_t draw_len(worker *w, size_t max, size_t multiple) {
  size_t r = below(&w->rng, 64);
  size_t n = 1 + below(&w->rng, r < 48 ? 64 : r < 62 ? 1024 : max);
  n = n > max ? max : n;
  n -= n % multiple;
  return n ? n : multiple;
}

static unsigned draw_op(worker *w) {
  size_t r = below(&w->rng, 100);
  unsigned k = 0;
  while (r >= op_weight[k])
    r -= op_weight[k++];
  return k;
}

static bool disjoint(span x, span y) {
  return x.a != y.a || x.off + x.len <= y.off || y.off + y.len <= x.off;
}

/* k spans of len bytes that share no byte, in allocations device d
 * reaches (any for ANY), so that a copy may run between them (WORD-5).
 * False when none is found quickly. */
static bool pick_spans(worker *w, unsigned d, unsigned k, size_t len, span *out) {
  stress *s = w->s;
  for (int tries = 0; tries < 64; tries++) {
    unsigned i = 0;
    for (; i < k; i++) {
      unsigned a = s->reach[d][below(&w->rng, s->nreach[d])];
      out[i] = (span){a, below(&w->rng, s->p->region - len + 1), len};
      bool ok = true;
      for (unsigned j = 0; j < i && ok; j++)
        ok = disjoint(out[i], out[j]);
      if (!ok)
        break;
    }
    if (i == k)
      return true;
  }
  return false;
}

/* ---- the oracle ------------------------------------------------------------- */

static void model_fill(worker *w, span sp, uint32_t pattern, uint32_t size, uint64_t op) {
  uint8_t p[4];
  memcpy(p, &pattern, sizeof p); /* the bytes the driver lays down */
  if (size == 1)
    p[0] = (uint8_t)(pattern & 0xff);
  for (size_t i = 0; i < sp.len; i++) {
    w->model[sp.a][sp.off + i] = p[i % size];
    w->writer[sp.a][sp.off + i] = (uint32_t)op;
  }
}

static void model_copy(worker *w, span src, span dst, uint64_t op) {
  memcpy(w->model[dst.a] + dst.off, w->model[src.a] + src.off, src.len);
  for (size_t i = 0; i < dst.len; i++)
    w->writer[dst.a][dst.off + i] = (uint32_t)op;
}

static void model_put(worker *w, span sp, const uint8_t *bytes, uint64_t op) {
  memcpy(w->model[sp.a] + sp.off, bytes, sp.len);
  for (size_t i = 0; i < sp.len; i++)
    w->writer[sp.a][sp.off + i] = (uint32_t)op;
}

/* Reports a read's first wrong byte, and how many more it found. */
static void report_violation(worker *w, unsigned a, size_t at, uint8_t got, size_t bad,
                             uint64_t op, const char *how) {
  stress *s = w->s;
  if (atomic_fetch_add(&s->reports, 1) >= REPORTS)
    return;
  uint32_t by = w->writer[a][at];
  char point[96] = "none: it returned once done";
  if (w->points[by])
    rig_point_format(w->points[by], point, sizeof point);
  fprintf(s->log,
          "ORDER violation: thread %u, op %" PRIu64 " (%s): %zu bytes differ; byte %zu of its "
          "region of allocation %u (on %s) is 0x%02x, want 0x%02x, written last by op %" PRIu32
          " (%s, point %s)\n",
          w->id, op, how, bad, at, a, rig_device_name(rig_buffer_device(s->alloc[a])), got,
          w->model[a][at], by, op_names[w->kinds[by]], point);
}

/* Compares bytes read at region offset off of allocation a with the model
 * (ORDER-8, ORDER-12, ORDER-28); counts each that differs. */
static void check(worker *w, unsigned a, size_t off, const uint8_t *got, size_t n, uint64_t op,
                  const char *how) {
  w->checked += n;
  if (memcmp(got, w->model[a] + off, n) == 0)
    return;
  size_t first = n, bad = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != w->model[a][off + i]) {
      first = first < n ? first : i;
      bad++;
    }
  w->violations += bad;
  report_violation(w, a, off + first, got[first], bad, op, how);
}

static bool fail(worker *w, const char *call) {
  w->errors++;
  fprintf(w->s->log, "stress: thread %u: %s: %s: %s\n", w->id, call,
          rig_status_name(rig_error_last()->status), rig_error_last()->message);
  return false;
}

/* ---- ops ---------------------------------------------------------------------- */

/* A view of sp in the allocation itself, or in device d's borrow of it
 * where d has one (ANY: the allocation). */
static rig_buffer *view_on(worker *w, unsigned d, span sp) {
  rig_buffer *v = NULL, *of = d < ANY && w->mine_on[d][sp.a] ? w->mine_on[d][sp.a] : w->mine[sp.a];
  if (rig_buffer_view(of, sp.off, sp.len, RIG_READ_WRITE, &v) != RIG_OK)
    fail(w, "rig_buffer_view");
  return v;
}

static rig_buffer *view(worker *w, span sp) { return view_on(w, ANY, sp); }

/* A fill of 1, 2 or 4 bytes' pattern, submitted or blocking (ORDER-15). */
static bool op_fill(worker *w, uint64_t op, bool blocking) {
  uint32_t size = 1u << below(&w->rng, 3), pattern = (uint32_t)next(&w->rng);
  span sp;
  if (!pick_spans(w, ANY, 1, draw_len(w, w->s->p->region / 4, size), &sp))
    return true;
  rig_buffer *v = view(w, sp);
  if (!v)
    return false;
  rig_status st = blocking ? rig_buffer_fill(v, pattern, size)
                           : rig_buffer_submit_fill(v, pattern, size, &w->points[op]);
  rig_buffer_release(v); /* the region's view keeps the allocation */
  if (st)
    return fail(w, blocking ? "rig_buffer_fill" : "rig_buffer_submit_fill");
  w->submits++;
  model_fill(w, sp, pattern, size, op);
  return true;
}

/* A copy between two spans, of one allocation or two: it runs on the
 * destination's device, the source's, or the host (ORDER-15, STAMP-11). */
static bool op_copy(worker *w, uint64_t op, bool blocking) {
  span sp[2];
  if (!pick_spans(w, ANY, 2, draw_len(w, w->s->p->region / 8, 1), sp))
    return true;
  rig_buffer *src = view(w, sp[0]), *dst = src ? view(w, sp[1]) : NULL;
  rig_status st = RIG_INVALID;
  if (dst)
    st = blocking ? rig_buffer_copy(src, dst) : rig_buffer_submit_copy(src, dst, &w->points[op]);
  rig_buffer_release(src);
  rig_buffer_release(dst);
  if (!dst)
    return false;
  if (st)
    return fail(w, blocking ? "rig_buffer_copy" : "rig_buffer_submit_copy");
  w->submits++;
  model_copy(w, sp[0], sp[1], op);
  return true;
}

/* The fills' pattern in device d's prepared submissions. */
static uint32_t sub_pattern(unsigned d) { return UINT32_C(0xc0de0000) | (d << 8) | (0xa0 + d); }

/* What a prepared submission did, part after part (ORDER-3). */
static void model_prepared(worker *w, unsigned d, unsigned k, const span *sp, uint64_t op) {
  switch (k) {
  case SUB_COPY:
    model_copy(w, sp[0], sp[1], op);
    break;
  case SUB_CHAIN: /* the second copy reads the first's bytes; the fill follows its read */
    model_copy(w, sp[0], sp[1], op);
    model_copy(w, sp[1], sp[2], op);
    model_fill(w, sp[0], sub_pattern(d), 1, op);
    break;
  case SUB_FILL_COPY: /* the copy reads the fill's bytes */
    model_fill(w, sp[0], sub_pattern(d), 4, op);
    model_copy(w, sp[0], sp[1], op);
    break;
  }
}

/* The parts of device d's prepared submission k; returns their count. */
static size_t sub_parts(unsigned d, unsigned k, rig_part *out) {
  switch (k) {
  case SUB_COPY:
    out[0] = rig_part_copy(0, 1);
    return 1;
  case SUB_CHAIN:
    out[0] = rig_part_copy(0, 1);
    out[1] = rig_part_copy(1, 2);
    out[2] = rig_part_fill(0, sub_pattern(d), 1);
    return 3;
  default:
    out[0] = rig_part_fill(0, sub_pattern(d), 4);
    out[1] = rig_part_copy(0, 1);
    return 2;
  }
}

/* Sets the blocks of r, a run of the host's prepared submission k, whose
 * parts are launches, for spans of len bytes: a thread per byte. */
static rig_status set_launches(rig_run *r, unsigned k, size_t len) {
  rig_part parts[3];
  size_t n = sub_parts(0, k, parts);
  rig_status st = RIG_OK;
  for (uint32_t i = 0; i < n && !st; i++) {
    uint32_t b;
    if ((st = rig_submission_block(rig_run_submission(r), i, &b)) == RIG_OK)
      st = host_launch_set(r, b, &parts[i], len);
  }
  return st;
}

/* The host's prepared work without its kernels: each part through the
 * Buffer module (TL-3), in order; the last call's point is the op's. */
static rig_status buffer_parts(worker *w, unsigned k, rig_buffer *const *b, uint64_t op) {
  rig_part parts[3];
  size_t n = sub_parts(0, k, parts);
  rig_status st = RIG_OK;
  for (size_t i = 0; i < n && !st; i++) {
    if (parts[i].kind == RIG_PART_COPY)
      st = rig_buffer_submit_copy(b[parts[i].src], b[parts[i].dst], &w->points[op]);
    else
      st = rig_buffer_submit_fill(b[parts[i].dst], parts[i].pattern, parts[i].pattern_bytes,
                                  &w->points[op]);
    w->submits += st == RIG_OK && i + 1 < n; /* the op's last one counts below */
  }
  return st;
}

/* A prepared submission on a random device, through a run this thread
 * takes (SUBMIT-6), with no waits: the stamps alone order it. On the host
 * its parts are launches, whose blocks this thread fills in (RUN-7). */
static bool op_prepared(worker *w, uint64_t op) {
  stress *s = w->s;
  unsigned d = (unsigned)below(&w->rng, s->p->devices), k = (unsigned)below(&w->rng, SUBS);
  span sp[3];
  rig_buffer *b[3] = {NULL, NULL, NULL};
  size_t len = draw_len(w, s->p->region / 8, k == SUB_FILL_COPY ? 4 : 1);
  if (!pick_spans(w, d, sub_slots[k], len, sp))
    return true;
  bool ok = true;
  for (unsigned i = 0; i < sub_slots[k] && ok; i++)
    ok = (b[i] = view_on(w, d, sp[i])) != NULL;
  rig_run *r;
  rig_status st = RIG_INVALID;
  const char *call = "rig_run_submit";
  if (ok && !s->sub[d][k]) {
    call = "rig_buffer_submit_copy/fill (the host's prepared work)";
    st = buffer_parts(w, k, b, op);
  } else if (ok && (st = rig_submission_take(s->sub[d][k], &r)) == RIG_OK) {
    if (d == 0 && s->host_launches && (st = set_launches(r, k, len)))
      call = "rig_run (the host's launches)";
    else
      st = rig_run_submit(r, b, sub_slots[k], NULL, 0, &w->points[op]);
  }
  for (unsigned i = 0; i < sub_slots[k]; i++)
    rig_buffer_release(b[i]);
  if (!ok)
    return false;
  if (st)
    return fail(w, call);
  w->submits++;
  model_prepared(w, d, k, sp, op);
  return true;
}

static bool op_put(worker *w, uint64_t op, span sp) {
  for (size_t i = 0; i < sp.len; i++)
    w->scratch[i] = (uint8_t)next(&w->rng);
  if (rig_buffer_put(w->mine[sp.a], sp.off, w->scratch, sp.len) != RIG_OK)
    return fail(w, "rig_buffer_put");
  w->accesses++;
  model_put(w, sp, w->scratch, op);
  return true;
}

/* A blit to host bytes: follows every device's last write (ORDER-8, 15). */
static bool op_get(worker *w, uint64_t op) {
  span sp;
  if (!pick_spans(w, ANY, 1, draw_len(w, w->s->p->region, 1), &sp))
    return true;
  if (rig_buffer_get(w->mine[sp.a], sp.off, w->scratch, sp.len) != RIG_OK)
    return fail(w, "rig_buffer_get");
  w->accesses++;
  check(w, sp.a, sp.off, w->scratch, sp.len, op, "get");
  return true;
}

struct reading {
  worker *w;
  span sp;
  uint64_t op;
};

static void read_bytes(void *bytes, size_t n, void *ctx) {
  struct reading *r = ctx;
  check(r->w, r->sp.a, r->sp.off, bytes, n, r->op, "read");
}

/* Buffer.read's callback: follows every device's last write (ORDER-12). */
static bool op_read(worker *w, uint64_t op) {
  struct reading r = {w, {0, 0, 0}, op};
  if (!pick_spans(w, ANY, 1, draw_len(w, w->s->p->region, 1), &r.sp))
    return true;
  rig_buffer *v = view(w, r.sp);
  if (!v)
    return false;
  rig_status st = rig_buffer_read(v, read_bytes, &r);
  rig_buffer_release(v);
  if (st)
    return fail(w, "rig_buffer_read");
  w->accesses++;
  return true;
}

static bool run_op(worker *w, unsigned kind, uint64_t op) {
  span sp;
  switch (kind) {
  case OP_SUBMIT_FILL:
  case OP_FILL:
    return op_fill(w, op, kind == OP_FILL);
  case OP_SUBMIT_COPY:
  case OP_COPY:
    return op_copy(w, op, kind == OP_COPY);
  case OP_PREPARED:
    return op_prepared(w, op);
  case OP_PUT:
    return !pick_spans(w, ANY, 1, draw_len(w, w->s->p->region, 1), &sp) || op_put(w, op, sp);
  case OP_GET:
    return op_get(w, op);
  default:
    return op_read(w, op);
  }
}

/* A thread: random bytes in each of its regions (op 0), then its ops. */
static void *work(void *arg) {
  worker *w = arg;
  stress *s = w->s;
  pthread_barrier_wait(&s->start);
  bool ok = true;
  for (unsigned a = 0; a < s->nalloc && ok; a++)
    ok = op_put(w, 0, (span){a, 0, s->p->region});
  w->kinds[0] = OP_PUT;
  for (uint64_t op = 1; op <= s->p->ops && ok; op++) {
    unsigned kind = draw_op(w);
    w->kinds[op] = (uint8_t)kind;
    ok = run_op(w, kind, op);
    atomic_store(&w->op, op);
  }
  atomic_fetch_add(&s->finished, 1);
  return NULL;
}

/* ---- setup ------------------------------------------------------------------- */

/* Device i: the host, then in turn a memory device, a test device whose
 * queue waits (SUBMIT-2) and two queues, whose parts core orders across
 * queues (ORDER-3), and one whose submits wait on the host (SUBMIT-3),
 * each test device with its own small delay. */
static rig_status open_device(stress *s, unsigned i, uint64_t *rng) {
  char name[96];
  unsigned delay = (unsigned)below(rng, s->p->max_delay_us + 1);
  if (i == 0) {
    s->dev[0] = rig_device_host();
    return RIG_OK;
  }
  if (i % 3 == 1)
    snprintf(name, sizeof name, "memory:stress-%u", i);
  else
    snprintf(name, sizeof name, "test:stress-%u,delay_us=%u%s", i, delay,
             i % 3 == 0 ? ",waits=0" : ",queues=2"); /* copies on a queue of their own */
  fprintf(s->log, "  device %u: %s\n", i, name);
  return rig_device_open(name, &s->dev[i]);
}

/* The host's prepared submissions: its queue runs only launches (HOST-4),
 * so each copy and fill part becomes a launch of copy_bytes or fill_bytes
 * over the same slots; without RIG_KERNELS, none (buffer_parts). */
static rig_status make_host_submissions(stress *s) {
  const char *dir = getenv("RIG_KERNELS");
  if (!dir || !*dir) {
    fprintf(s->log, "    (no RIG_KERNELS: the host's prepared work goes through "
                    "rig_buffer_submit_copy and _fill)\n");
    return RIG_OK;
  }
  host_kernels kernels;
  rig_status st = host_kernels_load(&kernels);
  for (unsigned k = 0; k < SUBS && !st; k++) {
    rig_part parts[3], launches[3];
    rig_ref refs[3][2];
    size_t n = sub_parts(0, k, parts);
    for (size_t i = 0; i < n; i++)
      launches[i] = host_launch_of(&kernels, &parts[i], refs[i]);
    st = rig_submission_make(s->dev[0], launches, n, &s->sub[0][k]);
  }
  host_kernels_release(&kernels); /* the submissions hold their code (RUN-8) */
  s->host_launches = st == RIG_OK;
  if (!st)
    fprintf(s->log, "    (the host's prepared work: launches of copy_bytes and fill_bytes)\n");
  return st;
}

static rig_status make_submissions(stress *s, unsigned d) {
  if (d == 0)
    return make_host_submissions(s);
  rig_status st = RIG_OK;
  for (unsigned k = 0; k < SUBS && !st; k++) {
    rig_part parts[3];
    size_t n = sub_parts(d, k, parts);
    st = rig_submission_make(s->dev[d], parts, n, &s->sub[d][k]);
  }
  return st;
}

/* Opens the devices and makes ALLOCS_PER_DEVICE allocations on each, of a
 * region per thread, zeroed; and each device's prepared submissions. */
/* Whether device d's work may use allocation a: its own, any the host
 * addresses where d runs on the host, else through a borrow on d. */
static bool borrow_for(stress *s, unsigned d, unsigned a) {
  rig_device *on = s->dev[d];
  if (rig_buffer_device(s->alloc[a]) == on || rig_device_runs_on_host(on))
    return true;
  return rig_buffer_borrow(on, s->alloc[a], &s->on[d][a]) == RIG_OK;
}

static rig_status set_up(stress *s, uint64_t *rng) {
  const rig_stress_params *p = s->p;
  rig_status st = RIG_OK;
  fprintf(s->log, "  device 0: CPU\n");
  for (unsigned i = 0; i < p->devices && !st; i++)
    if ((st = open_device(s, i, rng)) == RIG_OK)
      st = make_submissions(s, i);
  for (unsigned a = 0; a < p->devices * ALLOCS_PER_DEVICE && !st; a++) {
    /* 64 KiB at least, so that allocations start on a page and the test
     * devices borrow the memory devices' (MACH-23). */
    size_t n = p->threads * p->region < 65536 ? 65536 : p->threads * p->region;
    st = rig_buffer_create(s->dev[a / ALLOCS_PER_DEVICE], n, &s->alloc[a]);
    if (st == RIG_OK && (st = rig_buffer_fill(s->alloc[a], 0, 1)) == RIG_OK)
      s->nalloc++;
  }
  for (unsigned a = 0; a < s->nalloc; a++) {
    s->reach[ANY][s->nreach[ANY]++] = a;
    for (unsigned d = 0; d < p->devices && !st; d++)
      if (rig_device_reaches(s->dev[d], rig_buffer_device(s->alloc[a])) && borrow_for(s, d, a))
        s->reach[d][s->nreach[d]++] = a;
  }
  unsigned borrows = 0;
  for (unsigned d = 0; d < p->devices; d++)
    for (unsigned a = 0; a < s->nalloc; a++)
      borrows += s->on[d][a] != NULL;
  fprintf(s->log, "  %u borrows between devices\n", borrows);
  if (st)
    fprintf(s->log, "stress: set-up: %s: %s\n", rig_status_name(st), rig_error_last()->message);
  return st;
}

static bool worker_init(worker *w, stress *s, unsigned id) {
  const rig_stress_params *p = s->p;
  *w = (worker){.s = s, .id = id, .rng = p->seed ^ (UINT64_C(0x5eed) * (id + 1))};
  w->points = calloc(p->ops + 1, sizeof *w->points);
  w->kinds = calloc(p->ops + 1, 1);
  w->scratch = malloc(p->region);
  bool ok = w->points && w->kinds && w->scratch;
  for (unsigned a = 0; a < s->nalloc && ok; a++) {
    w->model[a] = calloc(p->region, 1);
    w->writer[a] = calloc(p->region, sizeof *w->writer[a]);
    ok = w->model[a] && w->writer[a] &&
         rig_buffer_view(s->alloc[a], id * p->region, p->region, RIG_READ_WRITE, &w->mine[a]) ==
             RIG_OK;
    for (unsigned d = 0; d < p->devices && ok; d++)
      ok = !s->on[d][a] || rig_buffer_view(s->on[d][a], id * p->region, p->region,
                                           RIG_READ_WRITE, &w->mine_on[d][a]) == RIG_OK;
  }
  return ok;
}

static void worker_free(worker *w) {
  for (unsigned a = 0; a < MAX_ALLOCS; a++) {
    rig_buffer_release(w->mine[a]);
    for (unsigned d = 0; d < RIG_STRESS_MAX_DEVICES; d++)
      rig_buffer_release(w->mine_on[d][a]);
    free(w->model[a]);
    free(w->writer[a]);
  }
  free(w->points);
  free(w->kinds);
  free(w->scratch);
}

static void tear_down(stress *s) {
  for (unsigned a = 0; a < s->nalloc; a++) {
    rig_buffer_release(s->alloc[a]);
    for (unsigned d = 0; d < s->p->devices; d++)
      rig_buffer_release(s->on[d][a]);
  }
  for (unsigned d = 0; d < s->p->devices; d++) {
    for (unsigned k = 0; k < SUBS; k++)
      rig_submission_release(s->sub[d][k]);
    if (d > 0 && s->dev[d]) {
      if (rig_device_close(s->dev[d]) != RIG_OK)
        fprintf(stderr, "stress: close: %s\n", rig_error_last()->message);
      rig_device_release(s->dev[d]);
    }
  }
}

/* ---- the run ------------------------------------------------------------------ */

/* Waits for the threads; aborts, saying where each stands, when none
 * finished an op for HANG_S seconds: a lost wake-up or a wait cycle. */
static void watch(stress *s, worker *w) {
  uint64_t last = UINT64_MAX;
  double since = now_s();
  while (atomic_load(&s->finished) < s->p->threads) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    uint64_t sum = 0;
    for (unsigned t = 0; t < s->p->threads; t++)
      sum += atomic_load(&w[t].op);
    if (sum != last) {
      last = sum;
      since = now_s();
    } else if (now_s() - since > HANG_S) {
      for (unsigned t = 0; t < s->p->threads; t++) {
        uint64_t op = atomic_load(&w[t].op) + 1;
        fprintf(s->log, "stress: hang: thread %u in op %" PRIu64 " (%s)\n", t, op,
                op <= s->p->ops ? op_names[w[t].kinds[op]] : "done");
      }
      fflush(s->log);
      abort();
    }
  }
}

/* ORDER-28: a read that starts after every thread's submits returned
 * follows all their work; each thread's region holds its model. */
static void check_final(stress *s, worker *w) {
  size_t n = s->p->threads * s->p->region;
  uint8_t *all = malloc(n);
  for (unsigned a = 0; a < s->nalloc && all; a++) {
    if (rig_buffer_get(s->alloc[a], 0, all, n) != RIG_OK) {
      fail(&w[0], "rig_buffer_get (final)");
      continue;
    }
    for (unsigned t = 0; t < s->p->threads; t++)
      check(&w[t], a, 0, all + t * s->p->region, s->p->region, s->p->ops + 1, "final get");
  }
  free(all);
}

static void add_totals(rig_stress_totals *out, const worker *w) {
  out->submits += w->submits;
  out->accesses += w->accesses;
  out->checked += w->checked;
  out->violations += w->violations;
  out->errors += w->errors;
}

static bool params_ok(const rig_stress_params *p) {
  return p->threads >= 1 && p->threads <= RIG_STRESS_MAX_THREADS && p->devices >= 1 &&
         p->devices <= RIG_STRESS_MAX_DEVICES && p->ops >= 1 && p->ops < UINT32_MAX &&
         p->region >= 64 && p->region % RIG_WORD == 0;
}

int rig_stress_run(const rig_stress_params *p, rig_stress_totals *out, FILE *log) {
  *out = (rig_stress_totals){0};
  if (!params_ok(p)) {
    fprintf(log, "stress: bad parameters\n");
    return 1;
  }
  stress s = {.p = p, .log = log};
  worker *w = calloc(p->threads, sizeof *w);
  uint64_t rng = p->seed;
  bool ok = w && set_up(&s, &rng) == RIG_OK;
  out->errors += !ok;
  unsigned started = 0;
  for (unsigned t = 0; t < p->threads && ok; t++)
    ok = worker_init(&w[t], &s, t);
  if (ok) {
    pthread_barrier_init(&s.start, NULL, p->threads + 1);
    for (; started < p->threads; started++)
      if (pthread_create(&w[started].thread, NULL, work, &w[started]) != 0)
        abort(); /* the barrier would wait for it for good */
    pthread_barrier_wait(&s.start);
    double t0 = now_s();
    watch(&s, w);
    for (unsigned t = 0; t < started; t++)
      pthread_join(w[t].thread, NULL);
    out->seconds = now_s() - t0;
    pthread_barrier_destroy(&s.start);
    check_final(&s, w);
  }
  for (unsigned t = 0; w && t < p->threads; t++) {
    add_totals(out, &w[t]);
    worker_free(&w[t]);
  }
  free(w);
  tear_down(&s);
  return !ok || out->violations || out->errors;
}

#ifndef RIG_STRESS_NO_MAIN

/* stress [THREADS [DEVICES [OPS [SEED [MAX_DELAY_US]]]]]: a seed of 0 or
 * none is drawn from the clock; the seed is printed, so that a run that
 * found something can be run again with the same ops. */
int main(int argc, char **argv) {
  rig_stress_params p = {4, 5, 20000, 0, 40, 4096};
  if (argc > 6) {
    fprintf(stderr, "usage: %s [THREADS [DEVICES [OPS [SEED [MAX_DELAY_US]]]]]\n", argv[0]);
    return 2;
  }
  if (argc > 1)
    p.threads = (unsigned)strtoul(argv[1], NULL, 10);
  if (argc > 2)
    p.devices = (unsigned)strtoul(argv[2], NULL, 10);
  if (argc > 3)
    p.ops = strtoull(argv[3], NULL, 10);
  if (argc > 4)
    p.seed = strtoull(argv[4], NULL, 0);
  if (argc > 5)
    p.max_delay_us = (unsigned)strtoul(argv[5], NULL, 10);
  if (!p.seed) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    p.seed = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
  printf("stress: seed %" PRIu64 ", %u threads x %u devices x %" PRIu64 " ops\n", p.seed,
         p.threads, p.devices, p.ops);
  rig_stress_totals t;
  int rc = rig_stress_run(&p, &t, stdout);
  printf("stress: %" PRIu64 " submits, %" PRIu64 " host accesses, %" PRIu64
         " bytes checked, %" PRIu64 " order violations, %" PRIu64 " errors, %.2f s, %.0f "
         "submits/s (seed %" PRIu64 ")\n",
         t.submits, t.accesses, t.checked, t.violations, t.errors, t.seconds,
         t.seconds > 0 ? (double)t.submits / t.seconds : 0.0, p.seed);
  return rc;
}

#endif
