/* rig_ml_local.c: values per device (Local). A key keeps its init, an
 * OCaml closure, in a global root for the life of the process, as rig keeps
 * keys; a device's value is a global root in a C cell, which rig drops once
 * the device's stop has returned. */
#include <stdlib.h>

#include "rig_ml.h"

typedef struct ml_key {
  rig_local_key *key;
  value init; /* a generational global root */
} ml_key;

/* The init of rig_local_get, on the getting thread, which holds the runtime
 * lock: rig_ml_local_get keeps it, as the call waits for nothing. */
static void *key_init(rig_device *d, void *ctx) {
  CAMLparam0();
  CAMLlocal2(dv, r);
  ml_key *k = ctx;
  value *cell = malloc(sizeof *cell);
  if (!cell)
    CAMLreturnT(void *, NULL);
  dv = rig_ml_device_value(d);
  r = caml_callback_exn(k->init, dv); /* rig.ml's init: Ok v or Error e */
  *cell = Is_exception_result(r) ? Val_unit : r;
  caml_register_generational_global_root(cell);
  CAMLreturnT(void *, cell);
}

/* Drops a value at its device's stop: on a thread of the stubs, with the
 * runtime lock taken back; elsewhere the cell stays (the runtime's roots
 * are not to be changed without it). */
static void key_release(void *v, void *ctx) {
  (void)ctx;
  value *cell = v;
  if (rig_ml_state == 2) {
    caml_acquire_runtime_system();
    caml_remove_generational_global_root(cell);
    caml_enter_blocking_section_no_pending();
    free(cell);
  }
}

value rig_ml_local_new_key(value init) {
  CAMLparam1(init);
  ml_key *k = malloc(sizeof *k);
  if (!k)
    caml_raise_out_of_memory();
  k->init = init;
  caml_register_generational_global_root(&k->init);
  rig_status st = rig_local_new_key(key_init, key_release, k, &k->key);
  if (st != RIG_OK) {
    caml_remove_generational_global_root(&k->init);
    free(k);
    rig_ml_raise(st);
  }
  CAMLreturn(Val_rig_ptr(k));
}

value rig_ml_local_get(value key, value d) {
  CAMLparam2(key, d);
  ml_key *k = Rig_ptr_val(key);
  void *cell = NULL;
  rig_ml_check(rig_local_get(k->key, Rig_device_val(d), &cell));
  if (!cell)
    caml_failwith("Rig.Local.get: no memory for the value");
  CAMLreturn(*(value *)cell);
}
