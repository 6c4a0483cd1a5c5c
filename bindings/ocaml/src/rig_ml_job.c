/* rig_ml_job.c: Rig_remote's jobs over <rig/job.h>.
 *
 * A job is a custom block holding one reference to a rig_job. A step's
 * setup is an OCaml closure, which rig_job_run calls back on the calling
 * thread, just before the step's submit, while the stub has released the
 * runtime lock: the callback takes the runtime lock back for the closure's
 * run and releases it again before it returns to rig. The closures live in
 * an OCaml array that Rig_remote keeps (indexed by step) and passes to
 * each run; the run registers it, and the place for a closure's exception,
 * as roots for its length, so neither needs a root when no run is under
 * way (a root freed from a finaliser would be unsafe on OCaml 5). */
#include <stdlib.h>

#include "rig_ml.h"

#define Rig_job_val(v) (*(rig_job **)Data_custom_val(v))

static void job_finalize(value v) { rig_job_release(Rig_job_val(v)); }
RIG_ML_HANDLE_OPS(job_ops, "rig.job", job_finalize);

value rig_ml_job_make(value unit) {
  rig_job *j = NULL;
  rig_ml_check(rig_job_make(&j));
  value v = caml_alloc_custom(&job_ops, sizeof j, 0, 1);
  Rig_job_val(v) = j;
  return v;
}

/* What a run's setups see: the closures, and the first exception one
 * raised (Val_unit while none). Both are roots while the run lasts. */
typedef struct run_ctx {
  value setups;
  value exn;
} run_ctx;

static __thread run_ctx *current;

/* rig_job_setup: runs setups.(step) on the run's pointer, holding the
 * runtime lock meanwhile. An exception stops the run (RIG_INVALID), and the
 * stub raises it once rig_job_run has returned. */
static rig_status setup(rig_run *r, void *ctx) {
  size_t step = (size_t)(uintptr_t)ctx;
  run_ctx *c = current;
  int state = rig_ml_state;
  rig_ml_state = 0;
  caml_acquire_runtime_system();
  rig_status st = RIG_INVALID;
  if (c && step < Wosize_val(c->setups)) {
    value res = caml_callback_exn(Field(c->setups, step), Val_rig_ptr(r));
    if (Is_exception_result(res))
      caml_modify_generational_global_root(&c->exn, Extract_exception(res));
    else
      st = RIG_OK;
  }
  caml_enter_blocking_section_no_pending(); /* raises nothing inside rig */
  rig_ml_state = state;
  return st;
}

/* The buffers of an OCaml array, as a C array the caller frees. */
static rig_buffer **buffers_of(value bufs, size_t n) {
  rig_buffer **b = malloc((n ? n : 1) * sizeof *b);
  if (!b)
    caml_raise_out_of_memory();
  for (size_t i = 0; i < n; i++)
    b[i] = Rig_buffer_val(Field(bufs, i));
  return b;
}

/* add j s bufs with_setup: the new step's index. Its setup, where
 * with_setup, is the closure at that index of the array a run passes. */
value rig_ml_job_add(value j, value s, value bufs, value with_setup) {
  rig_job *job = Rig_job_val(j);
  size_t n = Wosize_val(bufs), step = rig_job_steps(job), out = 0;
  rig_buffer **b = buffers_of(bufs, n);
  rig_status st = rig_job_add(job, Rig_submission_val(s), b, n, Bool_val(with_setup) ? setup : NULL,
                              (void *)(uintptr_t)step, &out);
  free(b);
  rig_ml_check(st);
  return Val_long((intnat)out);
}

value rig_ml_job_add_copy(value j, value src, value dst) {
  size_t out = 0;
  rig_ml_check(rig_job_add_copy(Rig_job_val(j), Rig_buffer_val(src), Rig_buffer_val(dst), &out));
  return Val_long((intnat)out);
}

/* run j setups: true once every step is reached, false where steps were
 * lost (Rig_remote.run lists them); raises another status, or the
 * exception a setup raised. Blocks, with the runtime lock released. */
value rig_ml_job_run(value j, value setups) {
  CAMLparam2(j, setups);
  CAMLlocal1(exn);
  run_ctx *c = malloc(sizeof *c);
  if (!c)
    caml_raise_out_of_memory();
  c->setups = setups;
  c->exn = Val_unit;
  caml_register_generational_global_root(&c->setups);
  caml_register_generational_global_root(&c->exn);
  run_ctx *outer = current; /* a setup that runs another job */
  current = c;
  rig_job *job = Rig_job_val(j);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_job_run(job));
  current = outer;
  exn = c->exn;
  caml_remove_generational_global_root(&c->setups);
  caml_remove_generational_global_root(&c->exn);
  free(c);
  if (exn != Val_unit)
    caml_raise(exn);
  if (st == RIG_LOST)
    CAMLreturn(Val_false);
  rig_ml_check(st);
  CAMLreturn(Val_true);
}

/* step j i, Rig_remote.step: Reached (tag 0) of its point's option (None
 * for work that took no point), Lost (tag 1) of why, or Pending (the
 * constant 0), not yet reached. */
value rig_ml_job_step(value j, value i) {
  CAMLparam2(j, i);
  CAMLlocal2(r, x);
  rig_job *job = Rig_job_val(j);
  if (Long_val(i) < 0 || (size_t)Long_val(i) >= rig_job_steps(job))
    caml_invalid_argument("Rig_remote.step: no such step");
  rig_point p = RIG_POINT_NONE;
  rig_status st = rig_job_step(job, (size_t)Long_val(i), &p);
  if (st != RIG_OK && st != RIG_LOST)
    CAMLreturn(Val_int(0)); /* RIG_INVALID: in range, so not yet reached */
  if (st == RIG_OK)
    x = p == RIG_POINT_NONE ? Val_int(0) : rig_ml_some(Val_long((intnat)p));
  else
    x = caml_copy_string(rig_error_last()->message);
  r = caml_alloc_small(1, st == RIG_OK ? 0 : 1);
  Field(r, 0) = x;
  CAMLreturn(r);
}

value rig_ml_job_steps(value j) { return Val_long((intnat)rig_job_steps(Rig_job_val(j))); }
