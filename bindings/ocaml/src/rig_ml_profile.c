/* rig_ml_profile.c: profiles (docs/profiling.md). A Profile.t is a custom
 * block holding a rig_profile, which its finaliser frees; its records
 * become OCaml records only when asked for. Every call but take is
 * lock-free and keeps the runtime lock; take may lock, so it releases it. */
#include <stdio.h>
#include <stdlib.h>

#include "rig_ml.h"

#define Profile_val(v) (*(rig_profile **)Data_custom_val(v))

static void profile_finalize(value v) { rig_profile_free(Profile_val(v)); }
RIG_ML_HANDLE_OPS(profile_ops, "rig.profile", profile_finalize);

value rig_ml_profile_start(value records) {
  if (Long_val(records) < 0)
    caml_invalid_argument("Rig.Profile.start: a negative count of records");
  size_t n = (size_t)Long_val(records);
  /* The start makes each open device's ring under its submit lock, and a
   * driver may set its clock up: it may block, so the runtime lock goes. */
  caml_release_runtime_system();
  rig_ml_state = 2;
  rig_profile_start(n);
  rig_ml_state = 0;
  caml_acquire_runtime_system();
  return Val_unit;
}
value rig_ml_profile_stop(value unit) {
  rig_profile_stop();
  return unit;
}
value rig_ml_profile_active(value unit) { return Val_bool(rig_profile_active()); }

value rig_ml_profile_take(value unit) {
  rig_profile *p = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_profile_take(&p));
  if (st == RIG_OUT_OF_MEMORY) /* of the process's own memory: no device's */
    caml_raise_out_of_memory();
  rig_ml_check(st);
  value v = caml_alloc_custom(&profile_ops, sizeof p, 0, 1);
  Profile_val(v) = p;
  return v;
}

value rig_ml_profile_dropped(value p) {
  uint64_t n = rig_profile_dropped(Profile_val(p));
  return Val_long(n > (uint64_t)Max_long ? Max_long : (intnat)n);
}

/* One record, as rig.ml's Profile.record reads it field by field:
 * { device : string; queue; kind (Copy | Fill | Launch | Words); part;
 *   name : string; point : Point.t; start_ns; end_ns }. */
static value record_of(const rig_profile *p, const rig_profile_record *r) {
  CAMLparam0();
  CAMLlocal3(v, dev, name);
  const char *d = rig_profile_device(p, r->device);
  dev = caml_copy_string(d ? d : "");
  name = caml_copy_string(r->name ? r->name : "");
  v = caml_alloc_tuple(8);
  Store_field(v, 0, dev);
  Store_field(v, 1, Val_long(r->queue));
  Store_field(v, 2, Val_int((int)r->kind));
  Store_field(v, 3, Val_long(r->part));
  Store_field(v, 4, name);
  Store_field(v, 5, Val_long((intnat)r->point));
  Store_field(v, 6, Val_long((intnat)r->start_ns));
  Store_field(v, 7, Val_long((intnat)r->end_ns));
  CAMLreturn(v);
}

value rig_ml_profile_records(value p) {
  CAMLparam1(p);
  CAMLlocal2(arr, r);
  size_t n = 0;
  const rig_profile_record *recs = rig_profile_records(Profile_val(p), &n);
  arr = n ? caml_alloc_tuple(n) : Atom(0);
  for (size_t i = 0; i < n; i++) {
    r = record_of(Profile_val(p), &recs[i]);
    Store_field(arr, i, r);
  }
  CAMLreturn(arr);
}

/* The Chrome trace as a string: written into a C buffer (the OCaml heap
 * may not be written from C stdio), then copied. */
value rig_ml_profile_chrome(value p) {
  CAMLparam1(p);
  CAMLlocal1(s);
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  if (!f)
    caml_raise_out_of_memory();
  rig_status st = rig_profile_write_chrome(Profile_val(p), f);
  int closed = fclose(f);
  if (st == RIG_OK && closed != 0) {
    free(text);
    caml_raise_out_of_memory();
  }
  if (st != RIG_OK) {
    free(text);
    rig_ml_raise(st);
  }
  s = caml_alloc_initialized_string(n, text);
  free(text);
  CAMLreturn(s);
}

value rig_ml_profile_save_chrome(value p, value path) {
  CAMLparam2(p, path);
  char *file = rig_ml_strdup(path);
  rig_profile *prof = Profile_val(p);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_profile_save_chrome(prof, file));
  free(file);
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}
