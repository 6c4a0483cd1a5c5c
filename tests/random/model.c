/* model.c: one thread's random program run against rig and, beside it, a
 * sequential model of the bytes each of its allocations must hold.
 *
 * Every op is drawn from the op's random numbers against the thread's
 * state at the time (its buffers, its points), so a program with ops
 * dropped still runs. Each call's status is checked against what the
 * rules say of it: RIG_OK where the call is valid, RIG_INVALID with a
 * message where it is not (a dead buffer, a write through a Read one, a
 * range out of the buffer, a copy of buffers sharing a byte, a fill of a
 * length its pattern does not divide, a foreign buffer in a submission),
 * and either where the rules leave it to the device (a borrow, a
 * submission's parts the device may have no queue for). Every get and
 * host read is compared with the model; nothing waits between ops but
 * where the op itself is a wait, so only the stamps order the work.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum {
  OP_CREATE, OP_VIEW, OP_BORROW, OP_OF_IO, OP_PUT, OP_GET, OP_READ, OP_COPY, OP_FILL,
  OP_SUBMISSION, OP_WAIT, OP_RELEASE, OP_FREE, OP_FREE_CACHE, OP_WRITE, OP_BUDGET, OP_CONSUME, OPS
};
static const unsigned weight[OPS] = {9, 8, 11, 3, 10, 12, 3, 16, 9, 12, 3, 6, 2, 1, 3, 1, 2};

uint64_t rnd_next(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void rnd_generate(uint64_t seed, unsigned t, size_t n, rnd_program *out) {
  uint64_t s = seed * 0x100000001b3ull + t * 0x9e37ull + 1, total = 0;
  for (unsigned k = 0; k < OPS; k++)
    total += weight[k];
  out->ops = calloc(n ? n : 1, sizeof *out->ops);
  out->n = n;
  for (size_t i = 0; i < n; i++) {
    uint64_t x = rnd_next(&s) % total;
    unsigned k = 0;
    while (x >= weight[k])
      x -= weight[k++];
    out->ops[i].kind = k;
    for (int j = 0; j < 8; j++)
      out->ops[i].r[j] = (uint32_t)rnd_next(&s);
  }
}

/* ---- the trace and failures ---------------------------------------------- */

void say(worker *w, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
  if (w->tlen + len + 2 > w->tcap) {
    w->tcap = (w->tcap + len + 2) * 2;
    w->trace = realloc(w->trace, w->tcap);
  }
  memcpy(w->trace + w->tlen, line, len);
  w->tlen += len;
  w->trace[w->tlen++] = '\n';
  w->trace[w->tlen] = 0;
  if (w->verbose)
    fprintf(stderr, "t%u %s\n", w->t, line);
}

void fail(worker *w, const char *fmt, ...) {
  if (w->failed)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  w->failed = true;
  fprintf(stderr, "FAIL thread %u op %zu: %s\nops of thread %u:\n%s", w->t, w->op, msg, w->t,
          w->trace ? w->trace : "");
}


/* Whether the program lowered the tight device's budget: from then on
 * RIG_OUT_OF_MEMORY, with a message, may answer any valid call. */
static _Atomic bool pressed;

/* Whether st is what the rules say: RIG_OK (MUST), RIG_INVALID with a
 * message (MUST_FAIL), or either (MAY). Returns st == RIG_OK. */
bool expect(worker *w, rig_status st, int valid, const char *what) {
  say(w, "  -> %s %s", rig_status_name(st), st ? rig_error_last()->message : "");
  const char *msg = rig_error_last()->message;
  if (st == RIG_INVALID && !*msg)
    fail(w, "%s: RIG_INVALID with no message", what);
  else if (st == RIG_OUT_OF_MEMORY && valid != MUST_FAIL && atomic_load(&pressed) && *msg)
    return false; /* a budget lowered: refused, changing nothing */
  else if (valid == MUST && st != RIG_OK)
    fail(w, "%s: %s (%s), expected RIG_OK", what, rig_status_name(st), msg);
  else if (valid == MUST_FAIL && st != RIG_INVALID)
    fail(w, "%s: %s, expected RIG_INVALID", what, rig_status_name(st));
  else if (valid == MAY && st != RIG_OK && st != RIG_INVALID)
    fail(w, "%s: %s (%s)", what, rig_status_name(st), msg);
  return st == RIG_OK;
}

/* ---- the model ------------------------------------------------------------- */

store *store_new(size_t n) {
  store *s = calloc(1, sizeof *s);
  s->bytes = calloc(n ? n : 1, 1);
  s->known = calloc(n ? n : 1, 1);
  s->n = n;
  s->refs = 1;
  return s;
}

void store_drop(store *s) {
  if (s && --s->refs == 0) {
    free(s->bytes);
    free(s->known);
    free(s);
  }
}

/* The model's byte i of h. */
size_t at(const handle *h, size_t i) { return h->a->base + h->off + i; }

void written(handle *h, size_t off, size_t n) {
  memset(h->a->s->known + at(h, off), 1, n);
}

void model_put(handle *h, size_t off, const uint8_t *src, size_t n) {
  memcpy(h->a->s->bytes + at(h, off), src, n);
  written(h, off, n);
}

void model_fill(handle *h, size_t off, size_t n, uint32_t pattern, unsigned size) {
  uint8_t p[4];
  memcpy(p, &pattern, 4);
  for (size_t i = 0; i < n; i++)
    h->a->s->bytes[at(h, off + i)] = p[i % size];
  written(h, off, n);
}

void model_copy(handle *src, size_t so, handle *dst, size_t dof, size_t n) {
  memmove(dst->a->s->bytes + at(dst, dof), src->a->s->bytes + at(src, so), n);
  memmove(dst->a->s->known + at(dst, dof), src->a->s->known + at(src, so), n);
}

/* Compares n bytes got from h at off with the model. */
void compare(worker *w, const handle *h, size_t off, const uint8_t *got, size_t n,
                    const char *what) {
  const store *s = h->a->s;
  for (size_t i = 0; i < n; i++) {
    size_t k = at(h, off + i);
    if (s->known[k] && s->bytes[k] != got[i]) {
      fail(w, "%s of b%u on %s: byte %zu is 0x%02x, the model says 0x%02x", what, h->id,
           rig_device_name(h->dev), off + i, got[i], s->bytes[k]);
      return;
    }
  }
}

/* ---- the thread's buffers and points ----------------------------------------- */

handle *add(worker *w, rig_buffer *b, alloc *a, size_t off, size_t len, rig_device *d,
                   rig_access acc) {
  handle *h = &w->h[w->nh++];
  *h = (handle){b, a, off, len, d, acc, w->next_id++};
  a->handles++;
  return h;
}

void drop(worker *w, unsigned i) {
  handle *h = &w->h[i];
  rig_buffer_release(h->b);
  alloc *a = h->a;
  if (--a->handles == 0) {
    if (w->io_alloc == a)
      w->io_alloc = NULL;
    store_drop(a->s);
    free(a);
  }
  w->h[i] = w->h[--w->nh];
}

/* Buffer r of the thread's, mostly a live one: uses of dead buffers are
 * drawn too, but not so often as to crowd out the rest. */
handle *pick(worker *w, uint32_t r) {
  if (!w->nh)
    return NULL;
  unsigned i = r % w->nh;
  for (unsigned k = 0; k < w->nh && w->h[i].a->dead && (r >> 24) % 5; k++)
    i = (i + 1) % w->nh;
  return &w->h[i];
}

/* A buffer to write: mostly one that admits writes. */
handle *pick_writable(worker *w, uint32_t r) {
  handle *h = pick(w, r);
  for (unsigned k = 1; k < w->nh && h->acc != RIG_READ_WRITE && (r >> 20) % 5; k++)
    h = pick(w, r + k);
  return h;
}

void remember(worker *w, rig_point p) {
  if (w->npts == MAX_PTS) {
    rig_status st = rig_point_wait(w->pts[0]);
    if (st)
      fail(w, "rig_point_wait of an old point: %s", rig_status_name(st));
    memmove(w->pts, w->pts + 1, (MAX_PTS - 1) * sizeof *w->pts);
    w->npts--;
  }
  w->pts[w->npts++] = p;
}

void wait_all(worker *w) {
  for (unsigned i = 0; i < w->npts; i++) {
    rig_status st = rig_point_wait(w->pts[i]);
    if (st)
      fail(w, "rig_point_wait: %s (%s)", rig_status_name(st), rig_error_last()->message);
  }
  w->npts = 0;
}

/* A view of h's [off, off + len) with h's access, or NULL for a dead h. */
/* What a call over h that the rules admit (valid) or refuse must return:
 * another thread may free a doomed buffer at any time, so a call over
 * one may be refused as well. */
int rules(const handle *h, bool valid) {
  return !valid ? MUST_FAIL : h->a->doomed ? MAY : MUST;
}

rig_buffer *view_of(worker *w, handle *h, size_t off, size_t len) {
  rig_buffer *v = NULL;
  rig_status st = rig_buffer_view(h->b, off, len, h->acc, &v);
  if (h->a->doomed && st == RIG_INVALID)
    return NULL;
  if (st != (h->a->dead ? RIG_INVALID : RIG_OK))
    fail(w, "a view of b%u: %s", h->id, rig_status_name(st));
  return st ? NULL : v;
}

/* A range [off, off + n) of a buffer of len bytes: n at least 1 where it
 * can be. */
void range(size_t len, uint32_t r1, uint32_t r2, size_t *off, size_t *n) {
  *n = len ? 1 + r1 % len : 0;
  *off = len - *n ? r2 % (len - *n + 1) : 0;
}

bool shares_byte(const handle *a, size_t ao, const handle *b, size_t bo, size_t n) {
  if (a->a != b->a || !n)
    return false;
  size_t x = a->off + ao, y = b->off + bo;
  return x < y + n && y < x + n;
}

/* ---- the ops ------------------------------------------------------------------ */

/* Small and odd ones; 64 KiB and more start on a page on the host (PROP-30),
 * which other devices may borrow (MACH-23). */
static const size_t sizes[] = {1,    3,    4,    7,    16,   64,    100,   255,
                               256,  1000, 4096, 5000, 8192, 65536, 70001, 131072};

static void op_create(worker *w, const uint32_t *r) {
  rig_device *d = w->ds->d[r[0] % w->ds->n];
  size_t n = r[4] % 64 ? sizes[r[1] % (sizeof sizes / sizeof *sizes)] : (1u << 20) + 5;
  rig_kind kind = r[2] % 4 ? RIG_KIND_DEVICE : 1 + r[3] % 2; /* pinned or mapped */
  static const char *const kinds[] = {"", " pinned", " mapped"};
  say(w, "%zu create %zu%s bytes on %s -> b%u", w->op, n, kinds[kind], rig_device_name(d), w->next_id);
  rig_buffer *b = NULL;
  if (!expect(w, rig_buffer_create_kind(d, n, kind, &b), kind ? MAY : MUST, "create"))
    return;
  alloc *a = calloc(1, sizeof *a);
  *a = (alloc){.s = store_new(n), .n = n, .owner = d};
  add(w, b, a, 0, n, d, RIG_READ_WRITE);
}

static void op_view(worker *w, const uint32_t *r) {
  handle *h = pick(w, r[0]);
  size_t off, n;
  range(h->len, r[1], r[2], &off, &n);
  if (r[3] % 8 == 0)
    n = h->len - off + 1 + r[4] % 3; /* out of the buffer */
  rig_access acc = r[5] % 3 == 0 ? RIG_READ : h->acc;
  if (r[5] % 11 == 0)
    acc = RIG_READ_WRITE; /* wider than a Read buffer's */
  bool valid = !h->a->dead && off + n <= h->len && (acc & ~h->acc) == 0;
  say(w, "%zu view b%u [%zu, +%zu) %s -> b%u", w->op, h->id, off, n,
      acc == RIG_READ ? "read" : "read-write", w->next_id);
  rig_buffer *v = NULL;
  if (expect(w, rig_buffer_view(h->b, off, n, acc, &v), rules(h, valid), "view"))
    add(w, v, h->a, h->off + off, n, h->dev, acc);
}

/* Whether d may borrow h's memory by the rules, as far as the public
 * facts say: MUST where d runs on the host and the host addresses it,
 * MUST_FAIL where d reaches neither its device nor the host, else MAY. */
static int may_borrow(const handle *h, rig_device *d) {
  if (h->a->dead)
    return MUST_FAIL;
  if (!h->a->io && rig_device_runs_on_host(d) && rig_buffer_host_address(h->b))
    return MUST;
  if (!rig_device_runs_on_host(d) && !rig_device_reaches(d, rig_device_host()) && !rig_device_reaches(d, h->a->owner))
    return MUST_FAIL;
  return MAY;
}

static void op_borrow(worker *w, const uint32_t *r) {
  handle *h = pick(w, r[0]);
  /* Now and then onto the io device, which reaches no other (MACH-19). */
  /* Mostly a buffer on a page: one other devices may map. */
  for (unsigned k = 0; k < w->nh && r[2] % 4 && (uintptr_t)rig_buffer_host_address(h->b) % 4096;
       k++)
    h = &w->h[(h - w->h + 1) % w->nh];
  rig_device *d = r[3] % 16 == 0 && w->ds->io ? w->ds->io : w->ds->d[r[1] % w->ds->n];
  say(w, "%zu borrow b%u onto %s -> b%u", w->op, h->id, rig_device_name(d), w->next_id);
  rig_buffer *v = NULL;
  int valid = may_borrow(h, d);
  if (!expect(w, rig_buffer_borrow(d, h->b, &v), valid == MUST ? rules(h, true) : valid,
              "borrow"))
    return;
  if (rig_buffer_access(v) != h->acc || rig_buffer_length(v) != h->len)
    fail(w, "a borrow's access or length differs from its buffer's");
  add(w, v, h->a, h->off, h->len, d, h->acc);
}

/* A buffer over the thread's region of the io file. One allocation over
 * it at a time: two would keep stamps of their own over the same bytes. */
static void op_of_io(worker *w, const uint32_t *r) {
  if (!w->ds->io || w->io_alloc)
    return;
  size_t off = r[0] % 2 ? (r[1] % 3) * 4096 : r[1] % RND_REGION;
  size_t n = 1 + r[2] % (RND_REGION - off < 8192 ? RND_REGION - off : 8192);
  say(w, "%zu of_io [%zu, +%zu) -> b%u", w->op, off, n, w->next_id);
  wait_all(w); /* the work of a freed allocation over the file is done */
  rig_buffer *b = NULL;
  if (!expect(w, rig_buffer_of_io(w->ds->io, (uint64_t)w->t * RND_REGION + off, n, &b), MUST,
              "of_io"))
    return;
  alloc *a = calloc(1, sizeof *a);
  *a = (alloc){.s = w->io, .base = off, .n = n, .owner = w->ds->io, .io = true};
  w->io->refs++;
  w->io_alloc = a;
  add(w, b, a, 0, n, w->ds->io, RIG_READ_WRITE);
}

/* A put's or get's range: now and then one byte past h. */
static void blit_range(const handle *h, const uint32_t *r, size_t *off, size_t *n) {
  range(h->len, r[1], r[2], off, n);
  if (r[3] % 10 == 0)
    *n = h->len - *off + 1;
}

static void op_put(worker *w, const uint32_t *r) {
  handle *h = pick_writable(w, r[0]);
  size_t off, n;
  blit_range(h, r, &off, &n);
  bool valid = !h->a->dead && h->acc == RIG_READ_WRITE && off + n <= h->len;
  uint8_t *src = malloc(n + 1);
  uint64_t s = r[4];
  for (size_t i = 0; i < n; i++)
    src[i] = (uint8_t)rnd_next(&s);
  say(w, "%zu put b%u [%zu, +%zu) seed %u", w->op, h->id, off, n, r[4]);
  if (expect(w, rig_buffer_put(h->b, off, src, n), rules(h, valid), "put"))
    model_put(h, off, src, n);
  free(src);
}

static void op_get(worker *w, const uint32_t *r) {
  handle *h = pick(w, r[0]);
  size_t off, n;
  blit_range(h, r, &off, &n);
  if (r[4] % 2)
    off = 0, n = h->len;
  bool valid = !h->a->dead && off + n <= h->len;
  uint8_t *got = malloc(n + 1);
  say(w, "%zu get b%u [%zu, +%zu)", w->op, h->id, off, n);
  if (expect(w, rig_buffer_get(h->b, off, got, n), rules(h, valid), "get"))
    compare(w, h, off, got, n, "get");
  free(got);
}

typedef struct read_ctx {
  worker *w;
  handle *h;
} read_ctx;

static void check_bytes(void *bytes, size_t n, void *ctx) {
  read_ctx *c = ctx;
  if (n != c->h->len)
    fail(c->w, "rig_buffer_read gave %zu bytes of b%u's %zu", n, c->h->id, c->h->len);
  else
    compare(c->w, c->h, 0, bytes, n, "rig_buffer_read");
}

static void op_read(worker *w, const uint32_t *r) {
  handle *h = pick(w, r[0]);
  say(w, "%zu read b%u", w->op, h->id);
  read_ctx c = {w, h};
  expect(w, rig_buffer_read(h->b, check_bytes, &c), h->a->dead ? MUST_FAIL : MAY, "read");
}

typedef struct write_ctx {
  worker *w;
  handle *h;
  uint64_t seed;
} write_ctx;

static void write_bytes(void *bytes, size_t n, void *ctx) {
  write_ctx *c = ctx;
  uint8_t *b = bytes;
  for (size_t i = 0; i < n; i++)
    b[i] = (uint8_t)rnd_next(&c->seed);
}

/* rig_buffer_write: bytes written in place; the model takes the same. */
static void op_write(worker *w, const uint32_t *r) {
  handle *h = pick_writable(w, r[0]);
  say(w, "%zu write b%u seed %u", w->op, h->id, r[1]);
  write_ctx c = {w, h, r[1]};
  int valid = h->a->dead || h->acc != RIG_READ_WRITE ? MUST_FAIL : MAY;
  if (!expect(w, rig_buffer_write(h->b, write_bytes, &c), valid, "write"))
    return;
  uint8_t *src = malloc(h->len + 1);
  c.seed = r[1];
  write_bytes(src, h->len, &c);
  model_put(h, 0, src, h->len);
  free(src);
}

static void op_copy(worker *w, const uint32_t *r) {
  handle *s = pick(w, r[0]), *d = pick_writable(w, r[1]);
  for (unsigned k = 1; k < 4 && d->a == s->a && r[6] % 4; k++)
    d = pick_writable(w, r[1] + k); /* mostly another allocation */
  size_t n = 1 + r[2] % (s->len < d->len ? s->len : d->len);
  size_t so = r[3] % (s->len - n + 1), dof = r[4] % (d->len - n + 1);
  bool submit = r[5] % 3 != 0;
  say(w, "%zu %s b%u [%zu, +%zu) -> b%u [%zu]", w->op, submit ? "submit_copy" : "copy", s->id,
      so, n, d->id, dof);
  rig_buffer *vs = view_of(w, s, so, n), *vd = view_of(w, d, dof, n);
  rig_buffer *bs = vs ? vs : s->b, *bd = vd ? vd : d->b;
  bool valid = vs && vd && d->acc == RIG_READ_WRITE && !shares_byte(s, so, d, dof, n);
  rig_point p = 0;
  rig_status st = submit ? rig_buffer_submit_copy(bs, bd, &p) : rig_buffer_copy(bs, bd);
  if (expect(w, st, rules(s->a->doomed ? s : d, valid), "copy")) {
    model_copy(s, so, d, dof, n);
    if (p)
      remember(w, p);
  }
  rig_buffer_release(vs);
  rig_buffer_release(vd);
}

static void op_fill(worker *w, const uint32_t *r) {
  handle *h = pick_writable(w, r[0]);
  size_t off, n;
  range(h->len, r[1], r[2], &off, &n);
  unsigned size = 1u << (r[3] % 3);
  if (r[4] % 2)
    n -= n % size; /* mostly whole patterns */
  bool submit = r[5] % 3 != 0;
  say(w, "%zu %s b%u [%zu, +%zu) 0x%08x/%u", w->op, submit ? "submit_fill" : "fill", h->id, off,
      n, r[6], size);
  rig_buffer *v = view_of(w, h, off, n);
  bool valid = v && h->acc == RIG_READ_WRITE && n % size == 0;
  rig_point p = 0;
  rig_buffer *b = v ? v : h->b;
  rig_status st = submit ? rig_buffer_submit_fill(b, r[6], size, &p) : rig_buffer_fill(b, r[6], size);
  if (expect(w, st, rules(h, valid), "fill")) {
    model_fill(h, off, n, r[6], size);
    if (p)
      remember(w, p);
  }
  rig_buffer_release(v);
}

static void op_wait(worker *w, const uint32_t *r) {
  if (!w->npts)
    return;
  rig_point p = w->pts[r[0] % w->npts];
  char name[64];
  rig_point_format(p, name, sizeof name);
  say(w, "%zu wait %s", w->op, name);
  expect(w, rig_point_wait(p), MUST, "rig_point_wait");
}

static void op_release(worker *w, const uint32_t *r) {
  unsigned i = r[0] % w->nh;
  say(w, "%zu release b%u", w->op, w->h[i].id);
  drop(w, i);
}

static void op_free(worker *w, const uint32_t *r) {
  handle *h = pick(w, r[0]);
  if (h->a->shared && !h->a->doomed)
    return;
  say(w, "%zu free b%u", w->op, h->id);
  expect(w, rig_buffer_free(h->b), h->a->dead ? MUST_FAIL : rules(h, true), "free");
  h->a->dead = true;
  if (!rig_buffer_dead(h->b))
    fail(w, "b%u is not dead after a free", h->id);
}

/* Lowers the tight device's budget (RECLAIM-69: its cache goes), or gives
 * it back; the program's end gives it back too (rnd_unpress). */
static void op_budget(worker *w, const uint32_t *r) {
  rig_device *d = w->ds->tight;
  uint64_t n = r[0] % 2 ? (r[1] % 8 + 1) * 32768 : w->ds->tight_budget;
  say(w, "%zu budget of %s: %" PRIu64, w->op, rig_device_name(d), n);
  if (n < w->ds->tight_budget)
    atomic_store(&pressed, true);
  expect(w, rig_device_set_budget(d, n), MUST, "set_budget");
}

void rnd_unpress(const rnd_devices *ds) {
  if (rig_device_set_budget(ds->tight, ds->tight_budget) != RIG_OK) {
    fprintf(stderr, "random: budget back: %s\n", rig_error_last()->message);
    abort();
  }
  atomic_store(&pressed, false);
}

typedef struct consume_ctx {
  rig_buffer *out;
  rig_status st;
  bool only;
} consume_ctx;

static void consume(rig_claim *c, rig_buffer *b, void *ctx) {
  (void)b;
  consume_ctx *x = ctx;
  x->only = rig_claim_only(c);
  if (x->only)
    x->st = rig_claim_consume(c, &x->out);
}

/* rig_claim_with and, where its claim is the only one, rig_claim_consume:
 * every buffer over the allocation is dead from then on, and a new one
 * over all of it holds its bytes (PRE-26). */
static void op_consume(worker *w, const uint32_t *r) {
  handle *h = pick_writable(w, r[0]);
  if (h->a->shared || h->a->io)
    return;
  say(w, "%zu claim_with b%u, consumed -> b%u", w->op, h->id, w->next_id);
  consume_ctx x = {NULL, RIG_OK, false};
  if (!expect(w, rig_claim_with(h->b, consume, &x), rules(h, !h->a->dead), "claim_with") ||
      !x.only)
    return;
  if (!expect(w, x.st, MUST, "consume"))
    return;
  alloc *a = calloc(1, sizeof *a);
  *a = *h->a;
  a->handles = 0;
  a->s->refs++;
  h->a->dead = true;
  if (rig_buffer_length(x.out) != a->n)
    fail(w, "a consumed buffer of %zu bytes, not %zu", rig_buffer_length(x.out), a->n);
  add(w, x.out, a, 0, a->n, rig_buffer_device(x.out), rig_buffer_access(x.out));
}

static void op_free_cache(worker *w, const uint32_t *r) {
  rig_device *d = w->ds->d[r[0] % w->ds->n];
  say(w, "%zu free_cache %s", w->op, rig_device_name(d));
  expect(w, rig_device_free_cache(d), MUST, "free_cache");
}


static void run_op(worker *w, const rnd_op *o) {
  unsigned k = o->kind;
  if (w->nh == MAX_H - 4 && (k == OP_CREATE || k == OP_VIEW || k == OP_BORROW || k == OP_OF_IO))
    k = OP_RELEASE;
  if (!w->nh && k != OP_CREATE && k != OP_OF_IO && k != OP_FREE_CACHE && k != OP_WAIT)
    k = OP_CREATE;
  switch (k) {
  case OP_CREATE: op_create(w, o->r); break;
  case OP_VIEW: op_view(w, o->r); break;
  case OP_BORROW: op_borrow(w, o->r); break;
  case OP_OF_IO: op_of_io(w, o->r); break;
  case OP_PUT: op_put(w, o->r); break;
  case OP_GET: op_get(w, o->r); break;
  case OP_READ: op_read(w, o->r); break;
  case OP_COPY: op_copy(w, o->r); break;
  case OP_FILL: op_fill(w, o->r); break;
  case OP_SUBMISSION: op_submission(w, o->r); break;
  case OP_WAIT: op_wait(w, o->r); break;
  case OP_RELEASE: op_release(w, o->r); break;
  case OP_FREE: op_free(w, o->r); break;
  case OP_FREE_CACHE: op_free_cache(w, o->r); break;
  case OP_WRITE: op_write(w, o->r); break;
  case OP_BUDGET: op_budget(w, o->r); break;
  case OP_CONSUME: op_consume(w, o->r); break;
  }
}

/* A view of each shared buffer, its model the bytes it was given. */
static void add_shared(worker *w, const rnd_shared *sh) {
  for (unsigned k = 0; k < sh->n; k++) {
    /* The scratch: this thread's 4 KiB of it, which it alone writes. */
    bool doomed = k >= RND_DOOMED, scratch = k == RND_SCRATCH;
    size_t n = scratch ? RND_SCRATCH_SHARE : rig_buffer_length(sh->b[k]);
    size_t off = scratch ? w->t * n : 0;
    rig_access acc = scratch ? RIG_READ_WRITE : RIG_READ;
    rig_buffer *v = NULL;
    if (!expect(w, rig_buffer_view(sh->b[k], off, n, acc, &v), doomed ? MAY : MUST,
                "a shared view"))
      continue; /* another thread freed it already */
    alloc *a = calloc(1, sizeof *a);
    *a = (alloc){.s = store_new(n), .n = n, .owner = rig_buffer_device(sh->b[k]), .shared = true,
                 .doomed = doomed};
    for (size_t i = 0; i < n; i++)
      a->s->bytes[i] = rnd_shared_byte(sh->seed, k, i);
    memset(a->s->known, !scratch, n);
    say(w, "shared%s b%u: %zu bytes on %s", scratch ? ", scratch" : doomed ? ", doomed" : "",
        w->next_id, n, rig_device_name(a->owner));
    add(w, v, a, 0, n, a->owner, acc);
  }
}

bool rnd_run(const rnd_devices *ds, const rnd_shared *sh, unsigned t, const rnd_program *p,
             bool verbose) {
  worker *w = calloc(1, sizeof *w);
  w->ds = ds;
  w->t = t;
  w->verbose = verbose;
  w->io = store_new(RND_REGION);
  add_shared(w, sh);
  for (size_t i = 0; i < p->n && !w->failed; i++) {
    w->op = i;
    run_op(w, &p->ops[i]);
  }
  /* At the end: every live buffer's bytes, once all is done. */
  wait_all(w);
  for (unsigned i = 0; i < w->nh && !w->failed; i++) {
    handle *h = &w->h[i];
    if (h->a->dead || h->a->doomed)
      continue;
    uint8_t *got = malloc(h->len + 1);
    rig_status st = rig_buffer_get(h->b, 0, got, h->len);
    if (st)
      fail(w, "the last get of b%u: %s (%s)", h->id, rig_status_name(st),
           rig_error_last()->message);
    else
      compare(w, h, 0, got, h->len, "the last get");
    free(got);
  }
  while (w->nh)
    drop(w, 0);
  store_drop(w->io);
  bool good = !w->failed;
  free(w->trace);
  free(w);
  return good;
}
