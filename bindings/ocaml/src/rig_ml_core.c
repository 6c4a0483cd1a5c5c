/* rig_ml_core.c: errors, the two hooks, points, and the lock of rig.ml's
 * table of devices. */
#include <pthread.h>
#include <string.h>

#include "rig_ml.h"

__thread int rig_ml_state;

/* The lock of Rig's table of devices (rig.ml), held for a lookup or an add.
 * A mutex of C's, so that the library needs no threads library: OCaml 4's
 * Mutex is in it, and ocamlfind links it only for a program built with
 * -thread ("No implementations provided for Mutex" otherwise). A thread
 * that finds it held waits with the runtime released, so that the holder,
 * which may have let the runtime go meanwhile, can take it back and unlock. */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

value rig_ml_devices_lock(value unit) {
  if (pthread_mutex_trylock(&devices_lock) != 0) {
    caml_release_runtime_system();
    pthread_mutex_lock(&devices_lock);
    caml_acquire_runtime_system();
  }
  return Val_unit;
}

value rig_ml_devices_unlock(value unit) {
  pthread_mutex_unlock(&devices_lock);
  return Val_unit;
}

/* The exceptions of Rig (Callback.register_exception in rig.ml). */
static const value *exn(const char *name) {
  const value *e = caml_named_value(name);
  if (!e)
    caml_failwith("rig: the Rig module is not initialised");
  return e;
}

static _Noreturn void raise_device(const char *name, const rig_device *d, value second) {
  CAMLparam1(second);
  CAMLlocal1(dv);
  dv = rig_ml_device_value((rig_device *)d);
  value args[2] = {dv, second};
  caml_raise_with_args(*exn(name), 2, args);
  CAMLnoreturn;
}

_Noreturn void rig_ml_raise(rig_status st) {
  const rig_error *e = rig_error_last();
  char msg[RIG_MESSAGE_BYTES];
  memcpy(msg, e->message, sizeof msg);
  msg[sizeof msg - 1] = 0;
  const rig_device *d = e->device;
  uint64_t bytes = e->bytes;
  switch (st) {
  case RIG_LOST:
    if (d) {
      const char *why = rig_device_lost(d);
      raise_device("rig.lost", d, caml_copy_string(why ? why : msg));
    }
    break;
  case RIG_OUT_OF_MEMORY:
    if (d)
      raise_device("rig.out_of_memory", d, Val_long((intnat)bytes));
    break;
  case RIG_IO:
    caml_raise_sys_error(caml_copy_string(msg));
  case RIG_INTERRUPTED:
    caml_process_pending_actions();
    break;
  default:
    break;
  }
  if (st == RIG_INVALID)
    caml_invalid_argument(msg);
  caml_failwith(msg);
}

value rig_ml_some(value v) {
  CAMLparam1(v);
  CAMLlocal1(s);
  s = caml_alloc_small(1, 0);
  Field(s, 0) = v;
  CAMLreturn(s);
}

value rig_ml_result(int tag, value v) {
  CAMLparam1(v);
  CAMLlocal1(r);
  r = caml_alloc_small(1, tag);
  Field(r, 0) = v;
  CAMLreturn(r);
}

/* ---- hooks -------------------------------------------------------------- */

/* The wait hook: non-zero where the OCaml runtime has an action pending,
 * such as Ctrl-C's signal, on a thread the stubs released. It takes the
 * runtime lock to ask (OCaml 5 has no domain state without it; rig holds
 * no lock of its own here), and gives it back without running the actions
 * (_no_pending), which the stub runs once rig has returned. */
static int ml_wait_hook(void *ctx) {
  (void)ctx;
  if (rig_ml_state != 2)
    return 0;
  caml_acquire_runtime_system();
  int pending = caml_check_pending_actions();
  caml_enter_blocking_section_no_pending();
  return pending;
}

/* The collector hook: the OCaml collector, a full major cycle through
 * Gc.full_major, whose custom blocks' finalisers release the buffers the
 * program let go. It runs inside a lock of rig's, where a call of the
 * program's finalisers to rig raises Invalid_argument (the Domains rule);
 * an exception they raise is dropped here, as rig's C frames lie below. */
static void ml_collector(void *ctx) {
  (void)ctx;
  int s = rig_ml_state;
  if (s != 2)
    return; /* not a thread of the stubs, or the hook again */
  caml_acquire_runtime_system();
  rig_ml_state = 3;
  const value *f = caml_named_value("rig.collect");
  if (f)
    (void)caml_callback_exn(*f, Val_unit);
  rig_ml_state = s;
  caml_enter_blocking_section_no_pending(); /* raises nothing inside rig */
}

value rig_ml_init(value unit) {
  rig_runtime_set_wait_hook(ml_wait_hook, NULL);
  rig_runtime_set_collector(ml_collector, NULL);
  return unit;
}

value rig_ml_version(value unit) { return caml_copy_string(rig_version()); }

/* ---- points: an OCaml int, slot << 47 | value ------------------------------ */

value rig_ml_point_device(value p) {
  CAMLparam1(p);
  CAMLlocal1(d);
  rig_device *dev = rig_point_device((rig_point)Long_val(p));
  if (!dev)
    CAMLreturn(Val_int(0));
  d = rig_ml_device_value(dev);
  rig_device_release(dev);
  CAMLreturn(rig_ml_some(d));
}

value rig_ml_point_reached(value p) { return Val_bool(rig_point_reached((rig_point)Long_val(p))); }

value rig_ml_point_wait(value p) {
  rig_status st;
  RIG_ML_BLOCKING(st, rig_point_wait((rig_point)Long_val(p)));
  rig_ml_check(st);
  return Val_unit;
}

value rig_ml_point_to_string(value p) {
  char s[256];
  (void)rig_point_format((rig_point)Long_val(p), s, sizeof s);
  return caml_copy_string(s);
}

/* ---- C copies of OCaml strings ---------------------------------------------- */

char *rig_ml_strdup(value s) {
  char *c = strdup(String_val(s));
  if (!c)
    caml_raise_out_of_memory();
  return c;
}
