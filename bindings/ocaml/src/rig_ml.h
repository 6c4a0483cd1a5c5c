/* rig_ml.h: what the stubs of the Rig module share.
 *
 * The stubs are plain C over <rig/rig.h> and the OCaml runtime's public
 * headers, which OCaml 4.13 and 5.x both have, so one set builds on both.
 *
 * The runtime lock. Every call of rig's that blocks or may lock (it may
 * wait for a lock of rig's that a reclamation round holds while it runs
 * the collector hook) runs inside RIG_ML_BLOCKING, which releases the
 * runtime lock (caml_release_runtime_system) around it: other threads and
 * domains run meanwhile, and a stop-the-world collection of OCaml 5 never
 * waits for a domain parked inside rig. Lock-free getters keep it, and so
 * does a submit's first try, rig_run_submit_try, which waits for nothing
 * and takes only locks that no thread holds across a wait or a hook
 * (rig_ml_submission.c).
 *
 * Sys.Break. rig calls its wait hook at least every 200 ms while a call
 * blocks. The hook answers non-zero where the OCaml runtime has an action
 * pending, such as a signal it recorded, and the call returns
 * RIG_INTERRUPTED having done nothing (rig's rule). RIG_ML_BLOCKING then
 * takes the runtime back, runs the pending actions, whose handler raises
 * Sys.Break where Ctrl-C came, and otherwise makes the call again. */
#ifndef RIG_ML_H
#define RIG_ML_H

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/callback.h>
#include <caml/custom.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <caml/signals.h>
#include <caml/threads.h>

#include <rig/rig.h>

/* What the calling thread is doing, for the hooks: 0 outside the stubs
 * (rig's own threads), 2 inside a call made with the runtime lock
 * released, 3 inside the collector hook. */
extern __thread int rig_ml_state;

/* Runs expr, a call of rig's that returns a rig_status, with the runtime
 * lock released; runs the pending actions of OCaml and calls again while
 * the wait hook ended the call (RIG_INTERRUPTED). The arguments of expr
 * must not point into the OCaml heap: the collector may move it meanwhile. */
#define RIG_ML_BLOCKING(st, expr)                                                            \
  do {                                                                                       \
    for (;;) {                                                                               \
      caml_release_runtime_system();                                                         \
      rig_ml_state = 2;                                                                      \
      (st) = (expr);                                                                         \
      rig_ml_state = 0;                                                                      \
      caml_acquire_runtime_system();                                                         \
      if ((st) != RIG_INTERRUPTED)                                                           \
        break;                                                                               \
      caml_process_pending_actions(); /* Sys.Break raises here */                          \
    }                                                                                        \
  } while (0)

/* Raises the exception of the failed status st from rig_error_last():
 * Invalid_argument, Rig.Lost (d, why), Rig.Out_of_memory (d, n), Sys_error
 * for an io library's error, Failure otherwise. Never returns. */
_Noreturn void rig_ml_raise(rig_status st);
/* Raises unless st is RIG_OK. */
static inline void rig_ml_check(rig_status st) {
  if (st != RIG_OK)
    rig_ml_raise(st);
}

/* The custom operations of a handle: a finaliser that releases it, and
 * comparison and hashing by its pointer. */
#define RIG_ML_HANDLE_OPS(ops, id, finalize)                                                   \
  static int ops##_compare(value a, value b) {                                              \
    void *x = *(void **)Data_custom_val(a), *y = *(void **)Data_custom_val(b);              \
    return x == y ? 0 : x < y ? -1 : 1;                                                     \
  }                                                                                          \
  static intnat ops##_hash(value v) { return (intnat)(*(void **)Data_custom_val(v)) >> 4; } \
  static struct custom_operations ops = {                                                   \
      id, finalize, ops##_compare, ops##_hash, custom_serialize_default,                     \
      custom_deserialize_default, custom_compare_ext_default, custom_fixed_length_default}

/* A C copy of s, which the caller frees, for a call that releases the
 * runtime lock (the collector may move s meanwhile). Raises Out_of_memory
 * where there is no memory for it. */
char *rig_ml_strdup(value s);

/* Some v, and Ok v (tag 0) or Error v (tag 1). */
value rig_ml_some(value v);
value rig_ml_result(int tag, value v);

/* Devices: a custom block holding one reference. */
#define Rig_device_val(v) (*(rig_device **)Data_custom_val(v))
/* Takes the caller's reference to d into a new custom block. */
value rig_ml_device_alloc(rig_device *d);
/* An open's result: Ok (a new device block taking d's reference) or, for
 * RIG_UNAVAILABLE, Error why (the reference's Error); raises otherwise. */
value rig_ml_opened(rig_status st, rig_device *d);
/* The OCaml device for d, the one value Rig keeps for it (Rig.equal is ==).
 * Retains d as it needs. */
value rig_ml_device_value(rig_device *d);

/* Buffers: a custom block holding one reference, whose finaliser drops it
 * once the OCaml value is unreachable; its bytes pace the collector. */
#define Rig_buffer_val(v) (*(rig_buffer **)Data_custom_val(v))
value rig_ml_buffer_alloc(rig_buffer *b);
value rig_ml_buffer_alloc_unpaced(rig_buffer *b);
/* A custom block of ops for b, whose bytes pace the collector by rig's
 * bound (rig_ml_pace.c); the caller stores b in it. */
value rig_ml_alloc_paced(struct custom_operations *ops, rig_buffer *b);

/* Images and functions: an image is a custom block holding a reference;
 * a function is a pointer that lives as long as its image, kept with it
 * by the OCaml record Image.fn. */
#define Rig_image_val(v) (*(rig_image **)Data_custom_val(v))
value rig_ml_image_alloc(rig_image *im);

/* A submission: a custom block holding one reference. */
#define Rig_submission_val(v) (*(rig_submission **)Data_custom_val(v))

/* A pointer kept in an OCaml int (the pointers of rig's handles are
 * aligned, so the low bit a tagged int loses is 0). */
#define Rig_ptr_val(v) ((void *)(Long_val(v) << 1))
#define Val_rig_ptr(p) Val_long((intnat)(p) >> 1)

#endif
