/* test_fault_matrix.c: the fault matrix (the loss issue, item 9). A
 * pipeline of four devices copies and fills through shared buffers: the
 * host, a memory device M, and two asynchronous test devices
 * (tests/driver/testdev.c) whose queues wait on each other's words: T,
 * a GPU whose memory the host does not address (host=0: its copies to and
 * from host and M memory pass through staging), and U, whose memory the
 * host addresses. Borrows put host memory on T and on U.
 *
 * The pipeline runs once without a fault, which gives N_max, the values T
 * takes. Then, for every N in 1..N_max, at two speeds of T, it runs again
 * with T losing itself at its N-th value (fault_nth=N, fault_halts=1: the
 * driver refuses the work and its queue dies, so no value is reported
 * after the fault, as a GPU whose queue faulted). The pipeline stops at
 * the loss. Which of T's earlier values were reached when the loss was
 * recorded depends on timing; the test reads that cut, L, from T's points
 * once (LOSS-15: fixed for good), and from it predicts, for every buffer
 * and each kind of use, whether the use is Lost (LMEM-1: a use depends on
 * a set of points):
 *   - every use of T, of its memory and of a borrow on it (LMEM-7..9);
 *   - a read of other memory whose last write is a point T never reached,
 *     for good (LMEM-2, LMEM-3, LMEM-10..12);
 *   - every other use (a write, a wait for Read_write, an export, even of
 *     a Read view, a claim_with, a borrow) of memory whose uses include a
 *     point T never reached, until T has stopped (LMEM-5, LMEM-6, LMEM-13,
 *     LMEM-14);
 *   - U, whose queue waits for a value T never reached, is lost "T lost"
 *     (LOSS-6, LOSS-19, ERR-31), and then the same holds for its points;
 *     no other device is lost (LOSS-13).
 * Every other use succeeds, and every buffer a read succeeds on holds the
 * bytes the pipeline's completed steps put there. The checks run three
 * times: after the loss, after T's close (its stop), after U's close. Once
 * every reference is released, each device's rig_device_allocated is 0 and the
 * host's is back where it started (LOSS-18, STOP-2, OPEN-49).
 *
 * Every blocking call is bounded by the deadline that arm_deadline sets,
 * through the wait hook (util.h).
 *
 * Beside it, ERR-35: the lost reason where the C heap has no room for it,
 * by a strdup of this file's that fails on demand.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdatomic.h>

#include <rig/rig.h>

#include "util.h"

#define S 65536u /* every buffer: host buffers of 64 KiB start on a page (MACH-23) */

/* ---- the buffers ---------------------------------------------------------- */

enum dev { H, M, T, U, NDEV };

enum buf { H0, H1, H2, HB, HC, M0, M1, M2, T0, T1, T2, U0, U1, BT, BU, NBUF };
static const char *const buf_name[NBUF] = {"h0", "h1", "h2", "hb", "hc", "m0", "m1", "m2",
                                           "t0", "t1", "t2", "u0", "u1", "bt", "bu"};
/* The device each buffer is on, and the allocation (a buffer's index) it
 * is over: bt borrows hb on T, bu borrows hc on U. */
static const enum dev buf_dev[NBUF] = {H, H, H, H, H, M, M, M, T, T, T, U, U, T, U};
static const enum buf buf_alloc[NBUF] = {H0, H1, H2, HB, HC, M0, M1, M2,
                                         T0, T1, T2, U0, U1, HB, HC};
static enum dev alloc_dev(enum buf a) { return buf_dev[buf_alloc[a]]; }

/* ---- the pipeline ------------------------------------------------------------ */

typedef struct op {
  bool fill;
  enum buf src, dst;
  uint8_t pattern;
} op;

#define COPY(s, d) {false, s, d, 0}
#define FILL(d, p) {true, d, d, p}

/* Each step's runner follows from the copy rules (docs/copying.md): T's
 * memory the host does not address, so copies between it and host or M
 * memory pass through staging, T's copy engine doing one step (a T
 * value); copies between T and U run on the destination's queue, which
 * waits for the other's points (SUBMIT-2); copies of host-addressed memory
 * run on M or the host, which wait on the host. */
static const op pipeline[] = {
    COPY(H0, M0),   /* M */
    COPY(M0, T0),   /* staged in: T writes t0 */
    FILL(T1, 0x5a), /* T */
    COPY(T0, U0),   /* U, its queue waiting for T */
    COPY(T1, T2),   /* T */
    COPY(U0, T1),   /* T, its queue waiting for U */
    COPY(T2, BT),   /* T writes hb through its borrow */
    COPY(U0, BU),   /* U writes hc through its borrow */
    COPY(T1, M1),   /* staged out: T reads t1, the host writes m1 once done */
    COPY(H1, U1),   /* the host */
    COPY(T0, U1),   /* U */
    FILL(T0, 0x3c), /* T, after U's read of t0 */
    COPY(BT, M2),   /* M, waiting on the host for T's write of hb */
    COPY(U1, T2),   /* T */
    COPY(T2, U0),   /* U */
    COPY(H2, BT),   /* the host writes hb */
    FILL(BU, 0x77), /* U */
    COPY(BT, T1),   /* T reads hb */
    COPY(T2, BT),   /* T writes hb */
    COPY(T0, T1),   /* T */
    COPY(M2, T2),   /* staged in */
    COPY(BU, U1),   /* U reads hc */
    COPY(T1, H2),   /* staged out */
    COPY(U1, T0),   /* T */
    COPY(T0, U0),   /* U */
    COPY(H0, BU),   /* the host writes hc */
    FILL(T1, 0x99), /* T */
    COPY(T1, BT),   /* T writes hb */
    COPY(U0, M0),   /* M */
    COPY(BT, T2),   /* T reads hb: its last use */
    COPY(BU, U1),   /* U reads hc: its last use */
    COPY(T2, U1),   /* U */
};
#define NOPS (sizeof pipeline / sizeof pipeline[0])

/* ---- the model ------------------------------------------------------------------ */

/* What the rules say of an allocation: its bytes as the steps that
 * completed left them, the point of its last write by T or U (none for the
 * host's and M's, which are done when they return), and the highest value
 * of T and of U that used it. Values count from each device's start. */
typedef struct alloc_model {
  uint8_t bytes[S];
  bool known;
  enum dev wdev; /* T, U, or H for none */
  uint64_t wval, tuse, uuse;
} alloc_model;

typedef struct run {
  bool fault;          /* a run with a fault at T's value n */
  uint64_t n;
  bool slow;
  rig_device *dev[NDEV];
  uint64_t start[NDEV];
  char tname[96], uname[96];
  rig_buffer *b[NBUF];
  rig_buffer *scratch;   /* a host buffer reads are copied into */
  rig_buffer *mscratch;  /* an M buffer a submit on M writes */
  rig_submission *mcopy; /* M: copy slot 0 into slot 1 */
  rig_submission *mfill; /* M: fill slot 0 */
  alloc_model *m;        /* per allocation (a buffer index) */
  uint64_t udep[NOPS];   /* per U value (index), the highest T value it follows */
  uint64_t unvalues;
  /* after the loss */
  uint64_t lost_at_t, lost_at_u;
  bool u_lost, t_stopped, u_stopped;
  int phase;
} run;

static uint8_t scratch_bytes[S];

static void ramp(uint8_t *p, unsigned seed) {
  for (unsigned i = 0; i < S; i++)
    p[i] = (uint8_t)(i * (2 * seed + 1) + seed * 13 + (i >> 8));
}

/* Opens the pipeline's devices and buffers, the buffers holding known
 * bytes where the host addresses them. */
static void setup_run(run *r) {
  snprintf(r->tname, sizeof r->tname, "test:fm-t-%llu-%c,host=0,fault_halts=1,delay_us=%u%s",
           (unsigned long long)r->n, r->slow ? 's' : 'f', r->slow ? 1500u : 0u,
           r->fault ? ",fault_nth=" : "");
  if (r->fault)
    snprintf(r->tname + strlen(r->tname), sizeof r->tname - strlen(r->tname), "%llu",
             (unsigned long long)r->n);
  snprintf(r->uname, sizeof r->uname, "test:fm-u-%llu-%c,delay_us=%u", (unsigned long long)r->n,
           r->slow ? 's' : 'f', r->slow ? 300u : 0u);
  r->dev[H] = rig_device_host();
  r->dev[M] = open_ok("memory:fm");
  r->dev[T] = open_ok(r->tname);
  r->dev[U] = open_ok(r->uname);
  for (int d = 0; d < NDEV; d++)
    r->start[d] = rig_device_submitted(r->dev[d]);
  r->m = calloc(NBUF, sizeof *r->m);
  assert_non_null(r->m);
  for (int i = 0; i < NBUF; i++) {
    if (i == BT || i == BU)
      continue;
    r->b[i] = create_ok(r->dev[buf_dev[i]], S);
    r->m[i].wdev = H;
    if (buf_dev[i] != T) { /* the host addresses it: known bytes */
      ramp(r->m[i].bytes, (unsigned)i + 1);
      check_ok(rig_buffer_put(r->b[i], 0, r->m[i].bytes, S), "put");
      r->m[i].known = true;
    }
  }
  check_ok(rig_buffer_borrow(r->dev[T], r->b[HB], &r->b[BT]), "borrow hb on T");
  check_ok(rig_buffer_borrow(r->dev[U], r->b[HC], &r->b[BU]), "borrow hc on U");
  r->scratch = create_ok(rig_device_host(), S);
  r->mscratch = create_ok(r->dev[M], S);
  rig_part cp = rig_part_copy(0, 1), fp = rig_part_fill(0, 0xee, 1);
  check_ok(rig_submission_make(r->dev[M], &cp, 1, &r->mcopy), "make copy on M");
  check_ok(rig_submission_make(r->dev[M], &fp, 1, &r->mfill), "make fill on M");
  assert_true(rig_device_submitted(r->dev[T]) == r->start[T]); /* setup took no value of T or U */
  assert_true(rig_device_submitted(r->dev[U]) == r->start[U]);
  r->start[H] = rig_device_submitted(r->dev[H]);
  r->start[M] = rig_device_submitted(r->dev[M]);
}

static uint64_t taken(const run *r, enum dev d) { return rig_device_submitted(r->dev[d]) - r->start[d]; }

/* Runs step i; returns its status. The model takes what the rules give it:
 * stamps for each value assigned (even to refused work, SUBMIT-22,
 * SUBMIT-23), bytes for the steps that returned RIG_OK. */
static rig_status run_step(run *r, size_t i) {
  const op *o = &pipeline[i];
  uint64_t t0 = taken(r, T), u0 = taken(r, U);
  rig_point p = RIG_POINT_NONE;
  rig_status st = o->fill ? rig_buffer_submit_fill(r->b[o->dst], o->pattern, 1, &p)
                          : rig_buffer_submit_copy(r->b[o->src], r->b[o->dst], &p);
  uint64_t t1 = taken(r, T), u1 = taken(r, U);
  assert_true(t1 - t0 + u1 - u0 <= 1); /* one device step at most */
  alloc_model *src = &r->m[buf_alloc[o->src]], *dst = &r->m[buf_alloc[o->dst]];
  /* Staged out, T's step reads the source and the host writes the
   * destination; staged in, the host reads the source and T's step writes
   * the destination. */
  bool staged_out = !o->fill && alloc_dev(o->src) == T && buf_dev[o->dst] != T &&
                    buf_dev[o->dst] != U;
  bool staged_in = !o->fill && (buf_dev[o->src] == H || buf_dev[o->src] == M) &&
                   alloc_dev(o->dst) == T;
  if (t1 > t0) { /* a step of T at value t1 */
    if (!o->fill && !staged_in)
      src->tuse = t1 > src->tuse ? t1 : src->tuse;
    if (!staged_out) { /* staged out, the host writes the destination */
      dst->wdev = T;
      dst->wval = t1;
      dst->tuse = t1 > dst->tuse ? t1 : dst->tuse;
    }
  } else if (u1 > u0) { /* a step of U at value u1: what of T does it follow? */
    uint64_t dep = 0;
    if (!o->fill && src->wdev == T)
      dep = src->wval;
    if (dst->wdev == T && dst->wval > dep)
      dep = dst->wval;
    if (dst->tuse > dep)
      dep = dst->tuse;
    r->udep[u1 - 1] = dep;
    r->unvalues = u1;
    if (!o->fill)
      src->uuse = u1 > src->uuse ? u1 : src->uuse;
    dst->wdev = U;
    dst->wval = u1;
    dst->uuse = u1 > dst->uuse ? u1 : dst->uuse;
  } else if (st == RIG_OK) { /* the host or M: done, no point of T or U */
    dst->wdev = H;
  }
  if (st == RIG_OK && p != RIG_POINT_NONE) {
    /* The point is the step's device's: T's for a staged copy. */
    rig_device *pd = rig_point_device(p);
    if (t1 > t0)
      assert_true(pd == r->dev[T] && rig_point_value(p) == r->start[T] + t1);
    else if (u1 > u0)
      assert_true(pd == r->dev[U] && rig_point_value(p) == r->start[U] + u1);
    if (pd)
      rig_device_release(pd);
  }
  if (st == RIG_OK) {
    if (o->fill)
      memset(dst->bytes, o->pattern, S);
    else
      memmove(dst->bytes, src->bytes, S);
    dst->known = o->fill || src->known;
  }
  return st;
}

/* ---- what the rules predict -------------------------------------------------------- */

static bool dev_lost(const run *r, enum dev d) {
  return (d == T && r->fault) || (d == U && r->u_lost);
}

/* Whether value v of device d was never reached (LMEM-11). */
static bool dropped(const run *r, enum dev d, uint64_t v) {
  if (d == T)
    return r->fault && v > r->lost_at_t;
  if (d == U)
    return r->u_lost && v > r->lost_at_u;
  return false;
}

/* LMEM-7..9: the buffer's device or its memory's device is lost. LMEM-2,
 * LMEM-10, LMEM-12: a read depends on the last writes. */
static bool read_lost(const run *r, enum buf b) {
  const alloc_model *a = &r->m[buf_alloc[b]];
  return dev_lost(r, buf_dev[b]) || dev_lost(r, alloc_dev(b)) ||
         (a->wdev != H && dropped(r, a->wdev, a->wval));
}

/* LMEM-5, LMEM-6: every other use depends on every point; LMEM-13,
 * LMEM-14: a use a lost device never reached stops counting once it has
 * stopped. */
static bool write_lost(const run *r, enum buf b) {
  const alloc_model *a = &r->m[buf_alloc[b]];
  return read_lost(r, b) || (dropped(r, T, a->tuse) && !r->t_stopped) ||
         (dropped(r, U, a->uuse) && !r->u_stopped);
}

/* ---- the checks ----------------------------------------------------------------------- */

static void expect(const run *r, enum buf b, const char *use, rig_status st, bool lost) {
  rig_status want = lost ? RIG_LOST : RIG_OK;
  if (st != want)
    fail_msg("N=%llu %s, phase %d: %s of %s returned %s, want %s (%s); L(T)=%llu L(U)=%llu%s",
             (unsigned long long)r->n, r->slow ? "slow" : "fast", r->phase, use, buf_name[b],
             rig_status_name(st), rig_status_name(want), rig_error_last()->message,
             (unsigned long long)r->lost_at_t, (unsigned long long)r->lost_at_u,
             r->u_lost ? " (U lost)" : "");
}

static void same_bytes(const run *r, enum buf b, const uint8_t *got, const char *how) {
  const alloc_model *a = &r->m[buf_alloc[b]];
  if (!a->known)
    return;
  if (memcmp(got, a->bytes, S) != 0) {
    size_t i = 0;
    while (got[i] == a->bytes[i])
      i++;
    fail_msg("N=%llu %s, phase %d: %s of %s: byte %zu is %#x, want %#x", (unsigned long long)r->n,
             r->slow ? "slow" : "fast", r->phase, how, buf_name[b], i, got[i], a->bytes[i]);
  }
}

static void cmp_fn(void *bytes, size_t n, void *ctx) {
  assert_int_equal(n, S);
  memcpy(ctx, bytes, S);
}

static int claimed;
static void claim_fn(rig_claim *c, rig_buffer *b, void *ctx) { claimed++; }

/* Every kind of use of buffer b, each against its prediction. */
static void check_buffer(run *r, enum buf b) {
  rig_buffer *x = r->b[b];
  bool rl = read_lost(r, b), wl = write_lost(r, b);
  assert_true(r->fault); /* checks follow a loss of T */
  static uint8_t got[S];
  /* Reads (LMEM-2, LMEM-3). */
  expect(r, b, "wait Read", rig_buffer_wait(x, RIG_READ), rl);
  memset(got, 0xcd, S);
  rig_status st = rig_buffer_get(x, 0, got, S);
  expect(r, b, "get", st, rl);
  if (st == RIG_OK)
    same_bytes(r, b, got, "get");
  {
    st = rig_buffer_read(x, cmp_fn, got);
    expect(r, b, "read", st, rl);
    if (st == RIG_OK)
      same_bytes(r, b, got, "read");
  }
  rig_claim *c = NULL;
  st = rig_buffer_claim(x, &c);
  expect(r, b, "claim", st, rl);
  rig_claim_release(c);
  st = rig_buffer_copy(x, r->scratch); /* a copy's source */
  expect(r, b, "copy from", st, rl);
  if (st == RIG_OK) {
    check_ok(rig_buffer_get(r->scratch, 0, scratch_bytes, S), "get scratch");
    same_bytes(r, b, scratch_bytes, "copy");
  }
  enum dev ad = alloc_dev(b);
  if (ad == H || ad == M) { /* a submit's read, on M (LMEM-3) */
    rig_run *run_;
    rig_point p;
    rig_buffer *bufs[2] = {x, r->mscratch};
    check_ok(rig_submission_take(r->mcopy, &run_), "take");
    st = rig_run_submit(run_, bufs, 2, NULL, 0, &p);
    expect(r, b, "submit reading", st, rl);
  }
  /* Every other use (LMEM-5, LMEM-6). */
  expect(r, b, "wait Read_write", rig_buffer_wait(x, RIG_READ_WRITE), wl);
  {
    rig_buffer *view = NULL;
    void *bytes = NULL;
    check_ok(rig_buffer_view(x, 0, S, RIG_READ, &view), "view");
    st = rig_buffer_export(view, &bytes); /* an export depends on every point */
    expect(r, b, "export of a Read view", st, wl);
    if (st == RIG_OK)
      rig_buffer_release(view); /* the export's reference */
    rig_buffer_release(view);
    st = rig_buffer_export(x, &bytes);
    expect(r, b, "export", st, wl);
    if (st == RIG_OK)
      rig_buffer_release(x);
  }
  int before = claimed;
  st = rig_claim_with(x, claim_fn, NULL);
  expect(r, b, "claim_with", st, wl);
  assert_int_equal(claimed - before, st == RIG_OK);
  rig_buffer *borrowed = NULL;
  st = rig_buffer_borrow(r->dev[M], x, &borrowed);
  expect(r, b, "borrow on M", st, wl);
  rig_buffer_release(borrowed);
  if (ad == H || ad == M) { /* a submit's write, on M */
    rig_run *run_;
    rig_point p;
    check_ok(rig_submission_take(r->mfill, &run_), "take");
    st = rig_run_submit(run_, &x, 1, NULL, 0, &p);
    expect(r, b, "submit writing", st, wl);
    if (st == RIG_OK)
      memset(r->m[buf_alloc[b]].bytes, 0xee, S);
  }
  /* A write: the bytes change where it succeeds. */
  uint8_t *next = malloc(S);
  assert_non_null(next);
  ramp(next, 100u + 17u * (unsigned)r->phase + (unsigned)b);
  st = rig_buffer_put(x, 0, next, S);
  expect(r, b, "put", st, wl);
  if (st == RIG_OK) {
    memcpy(r->m[buf_alloc[b]].bytes, next, S);
    r->m[buf_alloc[b]].known = true;
  }
  free(next);
}

static void check_all(run *r) {
  for (int b = 0; b < NBUF; b++)
    check_buffer(r, (enum buf)b);
}

/* The cut of a lost device d: the last value reached, which must be the
 * values up to it and none after (LOSS-15, LMEM-11). */
static uint64_t cut_of(run *r, enum dev d) {
  uint64_t n = taken(r, d), cut = 0;
  while (cut < n && rig_point_reached(rig_device_point(r->dev[d], r->start[d] + cut + 1)))
    cut++;
  for (uint64_t v = cut + 1; v <= n; v++)
    assert_false(rig_point_reached(rig_device_point(r->dev[d], r->start[d] + v)));
  return cut;
}

/* The points of d: reached exactly up to the cut, for good; a wait, and a
 * submit that waits for one, are Lost past it (LMEM-11, SUBMIT-31). */
static void check_points(run *r, enum dev d, uint64_t cut, bool lost) {
  for (uint64_t v = 1; v <= taken(r, d); v++) {
    rig_point p = rig_device_point(r->dev[d], r->start[d] + v);
    bool gone = lost && v > cut;
    assert_int_equal(rig_point_reached(p), !gone);
    assert_int_equal(rig_point_wait(p), gone ? RIG_LOST : RIG_OK);
    rig_run *run_;
    rig_point q;
    check_ok(rig_submission_take(r->mfill, &run_), "take");
    assert_int_equal(rig_run_submit(run_, &r->mscratch, 1, &p, 1, &q), gone ? RIG_LOST : RIG_OK);
  }
}

/* The points each test device's queue waited for itself, over all runs
 * (SUBMIT-2): where T is slow, U's queue waits for T's and T's for U's. */
static uint64_t queue_waits[NDEV];

static void teardown_run(run *r, uint64_t host_before) {
  for (int d = T; d <= U; d++) {
    rig_stats st;
    rig_device_stats(r->dev[d], &st);
    queue_waits[d] += st.queue_waits;
  }
  for (int i = 0; i < NBUF; i++)
    rig_buffer_release(r->b[i]);
  rig_buffer_release(r->scratch);
  rig_buffer_release(r->mscratch);
  rig_submission_release(r->mcopy);
  rig_submission_release(r->mfill);
  check_ok(rig_device_close(r->dev[T]), "close T");
  check_ok(rig_device_close(r->dev[U]), "close U");
  check_ok(rig_device_close(r->dev[M]), "close M");
  check_ok(rig_device_free_cache(rig_device_host()), "free_cache");
  /* LOSS-18, STOP-2, OPEN-49: every byte comes back. */
  for (int d = M; d < NDEV; d++) {
    if (rig_device_allocated(r->dev[d]) != 0)
      fail_msg("N=%llu: %s holds %llu bytes", (unsigned long long)r->n, rig_device_name(r->dev[d]),
               (unsigned long long)rig_device_allocated(r->dev[d]));
    rig_device_release(r->dev[d]);
  }
  assert_true(rig_device_allocated(rig_device_host()) == host_before);
  free(r->m);
}

/* The pipeline without a fault: every step succeeds, every buffer holds
 * the model's bytes, and both test devices' queues waited for the other's
 * points (SUBMIT-2). Returns N_max. */
static uint64_t fault_free(uint64_t host_before) {
  run r = {.fault = false, .n = 0, .slow = true};
  setup_run(&r);
  for (size_t i = 0; i < NOPS; i++)
    check_ok(run_step(&r, i), "a step without a fault");
  uint64_t nmax = taken(&r, T);
  assert_null(rig_device_lost(r.dev[T]));
  assert_null(rig_device_lost(r.dev[U]));
  static uint8_t got[S];
  for (int b = 0; b < NBUF; b++) {
    check_ok(rig_buffer_get(r.b[b], 0, got, S), buf_name[b]);
    same_bytes(&r, (enum buf)b, got, "get");
  }
  teardown_run(&r, host_before);
  return nmax;
}

/* One run with T lost at its n-th value. */
static void with_fault(uint64_t n, bool slow, uint64_t host_before, unsigned *cuts) {
  run r = {.fault = true, .n = n, .slow = slow};
  arm_deadline(30.0);
  setup_run(&r);
  size_t i = 0;
  rig_status st = RIG_OK;
  for (; i < NOPS; i++) {
    uint64_t before = taken(&r, T);
    st = run_step(&r, i);
    if (st != RIG_OK)
      break;
    assert_true(before < n); /* a step before the n-th value of T */
  }
  /* The step of T's n-th value is refused (LOSS-2, SUBMIT-30), and only
   * it: ERR-28, ERR-36. */
  assert_true(i < NOPS);
  assert_int_equal(st, RIG_LOST);
  assert_true(taken(&r, T) == n);
  char want[256];
  snprintf(want, sizeof want, "injected fault at %llu", (unsigned long long)(r.start[T] + n));
  assert_string_equal(rig_device_lost(r.dev[T]), want);
  snprintf(want, sizeof want, "%s lost: injected fault at %llu", r.tname,
           (unsigned long long)(r.start[T] + n));
  assert_string_equal(rig_error_last()->message, want);

  /* T's cut (LOSS-15), and U: lost iff its queue waits for a value of T
   * past the cut (LOSS-6, LOSS-19). A wait for its last value finds it. */
  r.lost_at_t = cut_of(&r, T);
  cuts[r.lost_at_t < n - 1 ? 1 : 0]++;
  uint64_t doomed = 0;
  for (uint64_t u = 1; u <= r.unvalues && !doomed; u++)
    if (r.udep[u - 1] > r.lost_at_t)
      doomed = u;
  if (taken(&r, U)) {
    st = rig_point_wait(rig_device_point(r.dev[U], r.start[U] + taken(&r, U)));
    assert_int_equal(st, doomed ? RIG_LOST : RIG_OK);
  }
  if (doomed) {
    snprintf(want, sizeof want, "%s lost", r.tname);
    assert_string_equal(rig_device_lost(r.dev[U]), want);           /* ERR-31 */
    r.u_lost = true;
    r.lost_at_u = cut_of(&r, U);
    assert_true(r.lost_at_u < doomed);
    cuts[2]++;
  } else {
    assert_null(rig_device_lost(r.dev[U]));
    r.lost_at_u = taken(&r, U);
  }
  assert_null(rig_device_lost(r.dev[M]));                             /* LOSS-13 */
  assert_null(rig_device_lost(rig_device_host()));

  /* Uses of T itself (LMEM-7). */
  rig_buffer *x = NULL;
  assert_int_equal(rig_buffer_create(r.dev[T], 64, &x), RIG_LOST);
  rig_part fp = rig_part_fill(0, 1, 1);
  rig_submission *s = NULL;
  assert_int_equal(rig_submission_make(r.dev[T], &fp, 1, &s), RIG_LOST);
  check_points(&r, T, r.lost_at_t, true);
  check_points(&r, U, r.lost_at_u, r.u_lost);

  /* Phase 1: T lost, not stopped. */
  r.phase = 1;
  check_all(&r);
  /* Phase 2: T closed: it has stopped, its unreached reads count as done
   * (LMEM-14); what it never wrote stays Lost (LMEM-12); its points and
   * reason stay (LOSS-10). */
  check_ok(rig_device_close(r.dev[T]), "close T");
  snprintf(want, sizeof want, "injected fault at %llu", (unsigned long long)(r.start[T] + n));
  assert_string_equal(rig_device_lost(r.dev[T]), want);
  r.t_stopped = true;
  r.phase = 2;
  check_all(&r);
  check_points(&r, T, r.lost_at_t, true);
  /* Phase 3: U closed too; closed, it is lost ("closed" unless lost
   * before) once its work is done (OPEN-45, OPEN-46). */
  check_ok(rig_device_close(r.dev[U]), "close U");
  if (!r.u_lost) {
    assert_string_equal(rig_device_lost(r.dev[U]), "closed");
    r.lost_at_u = taken(&r, U);
  }
  r.u_lost = r.u_stopped = true;
  r.phase = 3;
  check_all(&r);
  teardown_run(&r, host_before);
}

static int arm(void **state) {
  (void)state;
  arm_deadline(30.0);
  return 0;
}

/* LMEM-1..14, LOSS-2, LOSS-6, LOSS-10, LOSS-13, LOSS-15, LOSS-17, LOSS-18,
 * LOSS-19, STOP-1, STOP-2, SUBMIT-30, SUBMIT-31, ERR-28, ERR-31, ERR-36:
 * the fault matrix. */
static void fault_matrix_lose_t_at_every_value(void **state) {
  (void)state;
  check_ok(rig_device_free_cache(rig_device_host()), "free_cache");
  uint64_t host_before = rig_device_allocated(rig_device_host());
  double t0 = now_s();
  uint64_t nmax = fault_free(host_before);
  assert_true(nmax >= 10);
  unsigned cuts[3] = {0}, runs = 0;
  for (uint64_t n = 1; n <= nmax; n++)
    for (int slow = 0; slow < 2; slow++, runs++)
      with_fault(n, slow, host_before, cuts);
  assert_true(queue_waits[T] > 0 && queue_waits[U] > 0);
  print_message("fault matrix: N_max %llu, %u runs (%u with values in flight dropped, %u with "
                "U lost along its queue's waits), %.1f s\n",
                (unsigned long long)nmax, runs, cuts[1], cuts[2], now_s() - t0);
}

/* ---- ERR-35 ---------------------------------------------------------------------- */

/* Fault injection for the C heap: strdup of exactly this string fails.
 * Defined with default visibility, the executable exports it, so that it
 * interposes the C library's for librig-core too. */
static _Atomic(const char *) strdup_fails_for;
__attribute__((visibility("default"))) char *strdup(const char *s) {
  const char *f = atomic_load(&strdup_fails_for);
  if (f && strcmp(s, f) == 0)
    return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p)
    memcpy(p, s, n);
  return p;
}

/* ERR-35, OPEN-26: where the C heap cannot hold a lost device's reason
 * (its record, kept for the process once a later device takes its slot),
 * its dropped points raise Lost with "out of memory"; the device's own
 * record keeps its reason. */
static void err_35_no_heap_for_the_reason(void **state) {
  (void)state;
  arm_deadline(30.0);
  uint64_t s = probe_start("fm-probe-35");
  rig_device *d = open_ok("test:e35,fault_nth=1");
  assert_true(rig_device_submitted(d) == s);
  uint32_t slot = slot_of(d);
  rig_buffer *b = create_ok(d, 64);
  assert_int_equal(rig_buffer_fill(b, 1, 1), RIG_LOST);
  rig_buffer_release(b);
  rig_point p = rig_device_point(d, s + 1);
  char why[64];
  snprintf(why, sizeof why, "%s", rig_device_lost(d));
  atomic_store(&strdup_fails_for, why);
  check_ok(rig_device_close(d), "close"); /* it leaves its slot: the record is made */
  atomic_store(&strdup_fails_for, NULL);
  rig_device *n = open_ok("memory:e35-next");
  assert_int_equal(slot_of(n), slot);
  assert_false(rig_point_reached(p));
  assert_int_equal(rig_point_wait(p), RIG_LOST);
  assert_string_equal(rig_error_last()->message, "test:e35,fault_nth=1 lost: out of memory");
  assert_string_equal(rig_device_lost(d), why);
  close_release(n);
  rig_device_release(d);
}

int main(void) {
  rig_runtime_set_wait_hook(past_deadline, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(fault_matrix_lose_t_at_every_value, arm),
      cmocka_unit_test_setup(err_35_no_heap_for_the_reason, arm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
