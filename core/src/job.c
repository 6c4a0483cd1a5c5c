/* SPDX-License-Identifier: MIT */
/* job.c: jobs (Rig_remote, <rig/job.h>): steps on devices of several
 * machines, submitted in order, each one's fate kept so that a program can
 * tell what a lost machine took with it and run that part again
 * (docs/remote.md). A thin layer over submissions and copies: it takes no
 * lock of its own and keeps nothing on devices; it is in core only because
 * it reads which slots a submission writes (docs/decisions.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/job.h>

#include "submit.h"

/* A step's states, in the order a run takes it through them. */
typedef enum { STEP_NEW, STEP_SUBMITTED, STEP_REACHED, STEP_LOST } step_state;

typedef struct step {
  rig_submission *s;             /* NULL: a copy of bufs[0] into bufs[1] */
  rig_buffer **bufs;             /* held */
  uint8_t *writes;               /* per buffer: the step writes it */
  size_t n;
  rig_job_setup setup;
  void *ctx;
  step_state state;
  rig_point point;
  char why[RIG_MESSAGE_BYTES];   /* a lost step's reason */
} step;

struct rig_job {
  _Atomic uint32_t refs;
  atomic_flag busy;              /* a run or an add under way */
  step *steps;
  size_t n, cap;
};

RIG_API rig_status rig_job_make(rig_job **out) {
  if (!out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_job_make: NULL out");
  rig_job *j = calloc(1, sizeof *j);
  if (!j)
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), sizeof *j,
                     "rig_job_make: out of memory");
  atomic_init(&j->refs, 1);
  atomic_flag_clear(&j->busy);
  *out = j;
  return RIG_OK;
}

RIG_API rig_job *rig_job_retain(rig_job *j) {
  if (j)
    atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
  return j;
}

static void step_drop(step *t) {
  for (size_t i = 0; i < t->n; i++)
    rig_buffer_release(t->bufs[i]);
  if (t->s)
    rig_submission_release(t->s);
  free(t->bufs);
  free(t->writes);
}

RIG_API void rig_job_release(rig_job *j) {
  if (!j || atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) != 1)
    return;
  for (size_t i = 0; i < j->n; i++)
    step_drop(&j->steps[i]);
  free(j->steps);
  free(j);
}

RIG_API size_t rig_job_steps(const rig_job *j) { return j ? j->n : 0; }

/* ---- adding steps ---- */

/* The step's buffers checked and held, and which of them it writes: a
 * copy writes its second; a submission the slots its parts write. */
static rig_status step_fill(step *t, rig_submission *s, rig_buffer *const *bufs, size_t n,
                            const char *fn) {
  for (size_t i = 0; i < n; i++)
    if (!bufs || rig_buffer_dead(bufs[i]))
      return rig__fail(RIG_INVALID, NULL, 0, "%s: buffer %zu is NULL or dead", fn, i);
  t->bufs = calloc(n + 1, sizeof *t->bufs); /* + 1: a step of no slots too */
  t->writes = calloc(n + 1, 1);
  if (!t->bufs || !t->writes) {
    free(t->bufs);
    free(t->writes);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), n * 9, "%s: out of memory", fn);
  }
  for (size_t i = 0; i < n; i++) {
    t->bufs[i] = rig_buffer_retain(bufs[i]);
    t->writes[i] = s ? s->slot_writes[i] : i == 1;
  }
  t->n = n;
  t->s = s ? rig_submission_retain(s) : NULL;
  return RIG_OK;
}

/* Appends a step to j; its index through *out_step. */
static rig_status add(rig_job *j, rig_submission *s, rig_buffer *const *bufs, size_t n,
                      rig_job_setup setup, void *ctx, size_t *out_step, const char *fn) {
  if (j->n == j->cap) {
    size_t cap = j->cap ? 2 * j->cap : 8;
    step *grown = realloc(j->steps, cap * sizeof *grown);
    if (!grown)
      return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), cap * sizeof *grown,
                       "%s: out of memory", fn);
    j->steps = grown;
    j->cap = cap;
  }
  step *t = &j->steps[j->n];
  memset(t, 0, sizeof *t);
  rig_status st = step_fill(t, s, bufs, n, fn);
  if (st)
    return st;
  t->setup = setup;
  t->ctx = ctx;
  t->point = RIG_POINT_NONE;
  *out_step = j->n++;
  return RIG_OK;
}

/* add, with the job taken against a run or add in another thread. */
static rig_status add_taken(rig_job *j, rig_submission *s, rig_buffer *const *bufs, size_t n,
                            rig_job_setup setup, void *ctx, size_t *out_step, const char *fn) {
  if (!j || !out_step)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: NULL argument", fn);
  if (atomic_flag_test_and_set(&j->busy))
    return rig__fail(RIG_INVALID, NULL, 0, "%s: the job is in use (a run or an add under way)", fn);
  rig_status st = add(j, s, bufs, n, setup, ctx, out_step, fn);
  atomic_flag_clear(&j->busy);
  return st;
}

RIG_API rig_status rig_job_add(rig_job *j, rig_submission *s, rig_buffer *const *buffers,
                               size_t n, rig_job_setup setup, void *ctx, size_t *out_step) {
  if (!s)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_job_add: NULL submission");
  if (n != s->nslots)
    return rig__fail(RIG_INVALID, s->dev, 0, "rig_job_add: %zu buffers for %u slots", n,
                     s->nslots);
  return add_taken(j, s, buffers, n, setup, ctx, out_step, "rig_job_add");
}

RIG_API rig_status rig_job_add_copy(rig_job *j, rig_buffer *src, rig_buffer *dst,
                                    size_t *out_step) {
  rig_buffer *const bufs[2] = {src, dst};
  return add_taken(j, NULL, bufs, 2, NULL, NULL, out_step, "rig_job_add_copy");
}

/* ---- what a loss takes ---- */

/* The lost device a step's buffer is on, or NULL. */
static const rig_device *lost_device(const rig_buffer *b) {
  if (rig_device_lost(b->alloc->dev))
    return b->alloc->dev;
  return rig_device_lost(b->dev) ? b->dev : NULL;
}

/* Marks t lost, its reason "step I: " and the rest. */
static void lose(step *t, size_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lose(step *t, size_t i, const char *fmt, ...) {
  t->state = STEP_LOST;
  int at = snprintf(t->why, sizeof t->why, "step %zu: ", i);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->why + at, sizeof t->why - (size_t)at, fmt, ap);
  va_end(ap);
}

/* Whether step i of j must not run: its device or a buffer's is lost, or it
 * shares memory with what a lost earlier step writes. Marks it lost so. */
static bool lost_before(rig_job *j, size_t i) {
  step *t = &j->steps[i];
  if (t->s && rig_device_lost(t->s->dev))
    lose(t, i, "not submitted: %s lost: %s", rig_device_name(t->s->dev),
         rig_device_lost(t->s->dev));
  for (size_t k = 0; t->state != STEP_LOST && k < t->n; k++) {
    const rig_device *d = lost_device(t->bufs[k]); /* a dead buffer: submit's RIG_INVALID */
    if (d)
      lose(t, i, "not submitted: a buffer on %s: %s", rig_device_name(d), rig_device_lost(d));
  }
  for (size_t e = 0; t->state != STEP_LOST && e < i; e++) {
    const step *u = &j->steps[e];
    for (size_t a = 0; u->state == STEP_LOST && t->state != STEP_LOST && a < u->n; a++)
      for (size_t k = 0; u->writes[a] && k < t->n; k++)
        if (rig_buffer_overlaps(u->bufs[a], t->bufs[k])) {
          lose(t, i, "not submitted: uses memory that step %zu, lost, writes", e);
          break;
        }
  }
  return t->state == STEP_LOST;
}

/* ---- running ---- */

/* Submits step t: its submission's run, set up, or the copy. */
static rig_status submit(step *t) {
  if (!t->s)
    return rig_buffer_submit_copy(t->bufs[0], t->bufs[1], &t->point);
  rig_run *r = NULL;
  rig_status st = rig_submission_take(t->s, &r);
  if (st == RIG_OK && t->setup && (st = t->setup(r, t->ctx)) != RIG_OK) {
    rig__run_free(r); /* never submitted: back to the pool */
    return st;
  }
  if (st == RIG_OK)
    st = rig_run_submit(r, t->bufs, t->n, NULL, 0, &t->point);
  return st;
}

/* Submits step i, unless it must not run (then lost, with RIG_OK). */
static rig_status submit_step(rig_job *j, size_t i) {
  return lost_before(j, i) ? RIG_OK : submit(&j->steps[i]);
}

/* Waits for step i's point. */
static rig_status wait_step(rig_job *j, size_t i) {
  rig_point p = j->steps[i].point;
  return p == RIG_POINT_NONE ? RIG_OK : rig_point_wait(p);
}

/* Takes each step in state `from`, in order, one state on by act (new to
 * submitted, submitted to reached); a step act finds lost is kept so and
 * the next goes on, another failure stops there. */
static rig_status advance(rig_job *j, step_state from, rig_status (*act)(rig_job *, size_t)) {
  for (size_t i = 0; i < j->n; i++) {
    step *t = &j->steps[i];
    if (t->state != from)
      continue;
    rig_status st = act(j, i);
    if (st == RIG_LOST)
      lose(t, i, "%s", rig_error_last()->message);
    else if (st)
      return st;
    else if (t->state == from)
      t->state = from + 1;
  }
  return RIG_OK;
}

/* The lost device that holds a buffer reached step t wrote, or NULL: its
 * results went with that machine. */
static const rig_device *results_lost(const step *t) {
  const rig_device *d = NULL;
  for (size_t k = 0; !d && t->state == STEP_REACHED && k < t->n; k++)
    d = t->writes[k] ? lost_device(t->bufs[k]) : NULL;
  return d;
}

/* Whether step t (index i) is lost, in a run or since, its results gone
 * with a lost machine; its reason into why and, for the latter, the
 * device into *d. */
static bool step_reason(const step *t, size_t i, char *why, size_t n, const rig_device **d) {
  *d = results_lost(t);
  if (t->state == STEP_LOST)
    snprintf(why, n, "%s", t->why);
  else if (*d)
    snprintf(why, n, "step %zu: its results were on %s: %s", i, rig_device_name(*d),
             rig_device_lost(*d));
  return t->state == STEP_LOST || *d;
}

/* RIG_LOST naming how many steps of j are lost and the first's reason. */
static rig_status job_lost(const rig_job *j) {
  size_t lost = 0, first = 0;
  const rig_device *d;
  char why[RIG_MESSAGE_BYTES] = "";
  for (size_t i = j->n; i-- > 0;)
    if (step_reason(&j->steps[i], i, why, sizeof why, &d))
      lost++, first = i;
  if (!lost)
    return RIG_OK;
  step_reason(&j->steps[first], first, why, sizeof why, &d);
  return rig__fail(RIG_LOST, d, 0, "rig_job_run: %zu of %zu steps lost; %s", lost, j->n, why);
}

RIG_API rig_status rig_job_run(rig_job *j) {
  rig_status st = rig__may_lock("rig_job_run");
  if (st)
    return st;
  if (!j)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_job_run: NULL job");
  if (atomic_flag_test_and_set(&j->busy))
    return rig__fail(RIG_INVALID, NULL, 0, "rig_job_run: the job is in use (a run or an add under way)");
  st = advance(j, STEP_NEW, submit_step);
  if (st == RIG_OK)
    st = advance(j, STEP_SUBMITTED, wait_step);
  if (st == RIG_OK)
    st = job_lost(j);
  atomic_flag_clear(&j->busy);
  return st;
}

/* ---- asking ---- */

RIG_API rig_status rig_job_step(const rig_job *j, size_t i, rig_point *out) {
  if (!j || i >= j->n)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_job_step: no step %zu", i);
  const step *t = &j->steps[i];
  if (t->state != STEP_REACHED && t->state != STEP_LOST)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_job_step: step %zu is not reached yet", i);
  const rig_device *d;
  char why[RIG_MESSAGE_BYTES];
  if (step_reason(t, i, why, sizeof why, &d))
    return rig__fail(RIG_LOST, d, 0, "%s", why);
  if (out)
    *out = t->point;
  return RIG_OK;
}
