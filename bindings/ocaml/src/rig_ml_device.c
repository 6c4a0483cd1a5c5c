/* rig_ml_device.c: devices, their properties, budgets and failure. */
#include <stdlib.h>
#include <string.h>

#include "rig_ml.h"

static void device_finalize(value v) { rig_device_release(Rig_device_val(v)); }

/* Devices compare and hash by their record: one per device (Rig.equal). */
RIG_ML_HANDLE_OPS(device_ops, "rig.device", device_finalize);

value rig_ml_device_alloc(rig_device *d) {
  value v = caml_alloc_custom(&device_ops, sizeof d, 0, 1);
  Rig_device_val(v) = d;
  return v;
}

/* The one OCaml value of d: rig.ml's table (Rig.equal is ==). */
value rig_ml_device_value(rig_device *d) {
  const value *f = caml_named_value("rig.device_of_ptr");
  if (!f)
    caml_failwith("rig: the Rig module is not initialised");
  return caml_callback(*f, Val_rig_ptr(d));
}

/* rig.ml's table calls this for a device it does not hold yet. */
value rig_ml_device_wrap(value p) { return rig_ml_device_alloc(rig_device_retain(Rig_ptr_val(p))); }
value rig_ml_device_key(value d) { return Val_rig_ptr(Rig_device_val(d)); }
value rig_ml_device_host(value unit) { return rig_ml_device_alloc(rig_device_host()); }


/* Ok raw or Error why: an open's RIG_UNAVAILABLE is the text's Error. */
value rig_ml_opened(rig_status st, rig_device *d) {
  if (st == RIG_UNAVAILABLE)
    return rig_ml_result(1, caml_copy_string(rig_error_last()->message));
  rig_ml_check(st);
  return rig_ml_result(0, rig_ml_device_alloc(d));
}

value rig_ml_device_open(value name) {
  char *n = strdup(String_val(name)); /* the heap may move while released */
  if (!n)
    caml_raise_out_of_memory();
  rig_device *d = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_open(n, &d));
  free(n);
  return rig_ml_opened(st, d);
}

value rig_ml_device_open_io(value path, value flags, value size) {
  char *t = strdup(String_val(path));
  if (!t)
    caml_raise_out_of_memory();
  rig_io_opener o = {.library = "io", .target = t, .flags = (uint32_t)Long_val(flags),
                     .size = (uint64_t)Long_val(size)};
  rig_device *d = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_open_io(&o, &d));
  free(t);
  return rig_ml_opened(st, d);
}

value rig_ml_device_close(value d) {
  CAMLparam1(d);
  rig_device *dev = Rig_device_val(d);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_close(dev));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}

value rig_ml_device_name(value d) { return caml_copy_string(rig_device_name(Rig_device_val(d))); }
value rig_ml_device_arch(value d) { return caml_copy_string(rig_device_arch(Rig_device_val(d))); }
value rig_ml_device_instruction_set(value d) {
  return caml_copy_string(rig_device_instruction_set(Rig_device_val(d)));
}
value rig_ml_device_bus(value d) {
  const char *b = rig_device_bus(Rig_device_val(d));
  return b ? rig_ml_some(caml_copy_string(b)) : Val_int(0);
}
value rig_ml_device_runs_on_host(value d) { return Val_bool(rig_device_runs_on_host(Rig_device_val(d))); }
value rig_ml_device_computes(value d) { return Val_bool(rig_device_computes(Rig_device_val(d))); }
value rig_ml_device_is_io(value d) { return Val_bool(rig_device_is_io(Rig_device_val(d))); }
value rig_ml_device_alignment(value d) { return Val_long((intnat)rig_device_alignment(Rig_device_val(d))); }
value rig_ml_device_cache_bytes(value d) {
  uint64_t n;
  return rig_device_cache_bytes(Rig_device_val(d), &n) ? rig_ml_some(Val_long((intnat)n)) : Val_int(0);
}
value rig_ml_device_reaches(value d, value e) {
  return Val_bool(rig_device_reaches(Rig_device_val(d), Rig_device_val(e)));
}
value rig_ml_device_to_string(value d) {
  char s[512];
  (void)rig_device_format(Rig_device_val(d), s, sizeof s);
  return caml_copy_string(s);
}
value rig_ml_device_submitted(value d) { return Val_long((intnat)rig_device_submitted(Rig_device_val(d))); }
value rig_ml_device_signaled(value d) {
  uint64_t v = 0;
  rig_ml_check(rig_device_signaled(Rig_device_val(d), &v));
  return Val_long((intnat)v);
}
value rig_ml_device_lost(value d) {
  const char *why = rig_device_lost(Rig_device_val(d));
  return why ? rig_ml_some(caml_copy_string(why)) : Val_int(0);
}

/* Budgets: OCaml ints, max_int for host's unbounded budget. */
static intnat bytes_int(uint64_t n) { return n > (uint64_t)Max_long ? Max_long : (intnat)n; }
value rig_ml_device_budget(value d) { return Val_long(bytes_int(rig_device_budget(Rig_device_val(d)))); }
value rig_ml_device_allocated(value d) {
  return Val_long(bytes_int(rig_device_allocated(Rig_device_val(d))));
}
value rig_ml_device_set_budget(value d, value n) {
  CAMLparam2(d, n);
  if (Long_val(n) < 0)
    caml_invalid_argument("Rig.set_budget: a negative budget");
  rig_device *dev = Rig_device_val(d);
  uint64_t bytes = (uint64_t)Long_val(n);
  if (Long_val(n) == Max_long)
    bytes = INT64_MAX; /* max_int: no bound, as host's starts */
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_set_budget(dev, bytes));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}
value rig_ml_device_free_cache(value d) {
  CAMLparam1(d);
  rig_device *dev = Rig_device_val(d);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_free_cache(dev));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}

value rig_ml_fail(value why) {
  rig_runtime_fail(String_val(why));
  return Val_unit;
}
value rig_ml_failure(value unit) {
  const char *f = rig_runtime_failure();
  return f ? rig_ml_some(caml_copy_string(f)) : Val_int(0);
}

/* The host of d's machine: Rig.host for this machine's devices. */
value rig_ml_device_host_of(value d) { return rig_ml_device_value(rig_device_host_of(Rig_device_val(d))); }

/* The address of the record d's driver declares under key, 0 for none.
 * The driver's function may lock, and block (the remote driver's first
 * query asks the machine's server), so it runs with the runtime lock
 * released, over a C copy of key; rig's own part takes no lock. */
value rig_ml_device_capability(value d, value key) {
  char *k = rig_ml_strdup(key);
  rig_device *dev = Rig_device_val(d);
  int state = rig_ml_state;
  caml_enter_blocking_section_no_pending(); /* raises nothing: k is held */
  rig_ml_state = 2;
  const void *r = rig_device_capability(dev, k);
  rig_ml_state = state;
  caml_acquire_runtime_system();
  free(k);
  return caml_copy_nativeint((intnat)r);
}
