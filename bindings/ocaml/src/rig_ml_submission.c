/* rig_ml_submission.c: images, submissions, runs and submit.
 *
 * OCaml's parts and refs (rig.ml's Submission.part and ref) are turned
 * into rig_part and rig_ref arrays at make, which rig copies; a submit
 * reads its buffers into a C array, tries the submit that never waits
 * with the runtime lock held, and releases that lock only where the try
 * is busy (below). It allocates nothing on the OCaml heap: its result is
 * an int. */
#include <stdlib.h>
#include <string.h>

#include "rig_ml.h"

/* ---- images ------------------------------------------------------------- */

static void image_finalize(value v) { rig_image_release(Rig_image_val(v)); }
RIG_ML_HANDLE_OPS(image_ops, "rig.image", image_finalize);

value rig_ml_image_alloc(rig_image *im) {
  value v = caml_alloc_custom(&image_ops, sizeof im, 0, 1);
  Rig_image_val(v) = im;
  return v;
}

/* Ok image, or Error why where the object breaks the linking rules. */
value rig_ml_image_load(value d, value obj) {
  CAMLparam2(d, obj);
  size_t n = caml_string_length(obj);
  void *bytes = malloc(n ? n : 1);
  if (!bytes)
    caml_raise_out_of_memory();
  memcpy(bytes, String_val(obj), n);
  rig_device *dev = Rig_device_val(d);
  rig_image *im = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_image_load(dev, bytes, n, &im));
  free(bytes);
  if (st == RIG_UNAVAILABLE)
    CAMLreturn(rig_ml_result(1, caml_copy_string(rig_error_last()->message)));
  rig_ml_check(st);
  CAMLreturn(rig_ml_result(0, rig_ml_image_alloc(im)));
}

/* The function's pointer as an int, or 0 where the image has none. */
value rig_ml_image_resolve(value im, value name) {
  CAMLparam2(im, name);
  char *n = strdup(String_val(name));
  if (!n)
    caml_raise_out_of_memory();
  rig_image *image = Rig_image_val(im);
  rig_function *f = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_image_resolve(image, n, &f));
  free(n);
  rig_ml_check(st);
  CAMLreturn(Val_rig_ptr(f));
}

value rig_ml_image_device(value im) { return rig_ml_device_value(rig_image_device(Rig_image_val(im))); }
value rig_ml_function_name(value f) { return caml_copy_string(rig_function_name(Rig_ptr_val(f))); }
value rig_ml_function_params(value f) { return Val_long((intnat)rig_function_params(Rig_ptr_val(f))); }
value rig_ml_function_threads(value f) {
  uint64_t t = rig_function_threads(Rig_ptr_val(f));
  return Val_long(t > (uint64_t)Max_long ? Max_long : (intnat)t);
}
value rig_ml_function_entry(value f) { return caml_copy_int64((int64_t)rig_function_entry(Rig_ptr_val(f))); }

/* ---- submissions ---------------------------------------------------------- */

static void submission_finalize(value v) { rig_submission_release(Rig_submission_val(v)); }
RIG_ML_HANDLE_OPS(submission_ops, "rig.submission", submission_finalize);

/* rig.ml's types, field by field:
 *   ref  = { kind : int; slot : int; at : int; unordered : bool;
 *            entry : int (a function, 0: none); fixed : Buffer.t option }
 *   part = Copy of { src; dst; unordered }             (tag 0)
 *        | Fill of { dst; pattern; size; unordered }   (tag 1)
 *        | Launch of { fn : int; refs : ref array; params : int; unordered } (tag 2)
 *        | Words of int array                          (tag 3) */
static rig_ref ref_of(value r) {
  rig_ref c = {.kind = (rig_ref_kind)Int_val(Field(r, 0)), .slot = (uint32_t)Long_val(Field(r, 1)),
               .at = (uint32_t)Long_val(Field(r, 2)),
               .flags = Bool_val(Field(r, 3)) ? RIG_PART_UNORDERED : 0u,
               .entry = Rig_ptr_val(Field(r, 4))};
  if (Is_block(Field(r, 5)))
    c.fixed = Rig_buffer_val(Field(Field(r, 5), 0));
  return c;
}

/* The C parts of OCaml's, with the refs and words they point to in one
 * block that the caller frees after make (rig copies them). */
static rig_part *parts_of(value parts, size_t n, void **extra) {
  size_t nrefs = 0, nwords = 0;
  for (size_t i = 0; i < n; i++) {
    value p = Field(parts, i);
    if (Tag_val(p) == 2)
      nrefs += Wosize_val(Field(p, 1));
    else if (Tag_val(p) == 3)
      nwords += Wosize_val(Field(p, 0));
  }
  rig_part *c = calloc(n ? n : 1, sizeof *c);
  rig_ref *refs = calloc(nrefs ? nrefs : 1, sizeof *refs);
  uint32_t *words = calloc(nwords ? nwords : 1, sizeof *words);
  if (!c || !refs || !words) {
    free(c), free(refs), free(words);
    caml_raise_out_of_memory();
  }
  extra[0] = refs, extra[1] = words;
  for (size_t i = 0; i < n; i++) {
    value p = Field(parts, i);
    switch (Tag_val(p)) {
    case 0:
      c[i] = rig_part_copy((uint32_t)Long_val(Field(p, 0)), (uint32_t)Long_val(Field(p, 1)));
      c[i].flags = Bool_val(Field(p, 2)) ? RIG_PART_UNORDERED : 0u;
      break;
    case 1:
      c[i] = rig_part_fill((uint32_t)Long_val(Field(p, 0)), (uint32_t)Long_val(Field(p, 1)),
                           (uint32_t)Long_val(Field(p, 2)));
      c[i].flags = Bool_val(Field(p, 3)) ? RIG_PART_UNORDERED : 0u;
      break;
    case 2: {
      value rs = Field(p, 1);
      size_t k = Wosize_val(rs);
      for (size_t j = 0; j < k; j++)
        refs[j] = ref_of(Field(rs, j));
      c[i] = rig_part_launch(Rig_ptr_val(Field(p, 0)), refs, (uint32_t)k,
                             (uint32_t)Long_val(Field(p, 2)));
      c[i].flags = Bool_val(Field(p, 3)) ? RIG_PART_UNORDERED : 0u;
      refs += k;
      break;
    }
    default: {
      value ws = Field(p, 0);
      size_t k = Wosize_val(ws);
      for (size_t j = 0; j < k; j++)
        words[j] = (uint32_t)Long_val(Field(ws, j));
      c[i] = rig_part_words(words, (uint32_t)k);
      words += k;
    }
    }
  }
  return c;
}

value rig_ml_submission_make(value d, value parts) {
  CAMLparam2(d, parts);
  CAMLlocal1(v);
  size_t n = Wosize_val(parts);
  void *extra[2];
  rig_part *c = parts_of(parts, n, extra);
  rig_device *dev = Rig_device_val(d);
  rig_submission *s = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_submission_make(dev, c, n, &s));
  free(c), free(extra[0]), free(extra[1]);
  rig_ml_check(st);
  v = caml_alloc_custom(&submission_ops, sizeof s, 0, 1);
  Rig_submission_val(v) = s;
  CAMLreturn(v);
}

value rig_ml_submission_slots(value s) { return Val_long(rig_submission_slots(Rig_submission_val(s))); }

value rig_ml_submission_block(value s, value part) {
  uint32_t k = 0;
  if (Long_val(part) < 0)
    caml_invalid_argument("Rig.Submission.block: a negative part");
  rig_ml_check(rig_submission_block(Rig_submission_val(s), (uint32_t)Long_val(part), &k));
  return Val_long(k);
}

/* The run, as an int. It takes a lock of rig's briefly and waits for
 * nothing, so it keeps the runtime lock. */
value rig_ml_submission_take(value s) {
  rig_run *r = NULL;
  rig_ml_check(rig_submission_take(Rig_submission_val(s), &r));
  return Val_rig_ptr(r);
}

/* ---- runs: each touches only the caller's run -------------------------------- */

static uint32_t u32(value v, const char *fn) {
  if (Long_val(v) < 0 || Long_val(v) > (intnat)UINT32_MAX)
    caml_invalid_argument(fn);
  return (uint32_t)Long_val(v);
}
static uint64_t u64(value v, const char *fn) {
  if (Long_val(v) < 0)
    caml_invalid_argument(fn);
  return (uint64_t)Long_val(v);
}
#define RUN(r) ((rig_run *)Rig_ptr_val(r))

value rig_ml_run_groups(value r, value k, value x, value y, value z) {
  const char *fn = "Rig.Submission.Run.groups: a negative argument";
  rig_ml_check(rig_run_groups(RUN(r), u32(k, fn), u64(x, fn), u64(y, fn), u64(z, fn)));
  return Val_unit;
}
value rig_ml_run_threads(value r, value k, value x, value y, value z) {
  const char *fn = "Rig.Submission.Run.threads: a negative argument";
  rig_ml_check(rig_run_threads(RUN(r), u32(k, fn), u64(x, fn), u64(y, fn), u64(z, fn)));
  return Val_unit;
}
#define OFF(k, off, name)                                                                    \
  u32(k, "Rig.Submission.Run." name ": a negative block"),                                  \
      u32(off, "Rig.Submission.Run." name ": a negative offset")
value rig_ml_run_int64(value r, value k, value off, value v) {
  rig_ml_check(rig_run_int64(RUN(r), OFF(k, off, "int64"), Int64_val(v)));
  return Val_unit;
}
value rig_ml_run_int(value r, value k, value off, value v) {
  rig_ml_check(rig_run_int64(RUN(r), OFF(k, off, "int"), (int64_t)Long_val(v)));
  return Val_unit;
}
value rig_ml_run_int32(value r, value k, value off, value v) {
  rig_ml_check(rig_run_int32(RUN(r), OFF(k, off, "int32"), Int32_val(v)));
  return Val_unit;
}
value rig_ml_run_float(value r, value k, value off, value v) {
  rig_ml_check(rig_run_float(RUN(r), OFF(k, off, "float"), (float)Double_val(v)));
  return Val_unit;
}
value rig_ml_run_double(value r, value k, value off, value v) {
  rig_ml_check(rig_run_double(RUN(r), OFF(k, off, "double"), Double_val(v)));
  return Val_unit;
}
value rig_ml_run_string(value r, value k, value off, value s) {
  uint32_t n = u32(Val_long(caml_string_length(s)), "Rig.Submission.Run.string: too long");
  rig_ml_check(rig_run_bytes(RUN(r), OFF(k, off, "string"), String_val(s), n));
  return Val_unit;
}
value rig_ml_run_shared(value r, value k, value bytes) {
  rig_ml_check(rig_run_shared(RUN(r), u32(k, "Rig.Submission.Run.shared: a negative block"),
                              u32(bytes, "Rig.Submission.Run.shared: a negative size")));
  return Val_unit;
}

/* ---- submit ---------------------------------------------------------------
 *
 * A submit first tries rig_run_submit_try, keeping the runtime lock: where
 * nothing would wait (a one-group host launch, a device with room and no
 * point of another device to follow) it runs at once, and the binding adds
 * only the call and the arrays below, the runtime lock never given up. Only
 * where the try answers RIG_BUSY, having done nothing, does the stub give
 * the lock up and make the submit that may wait. A host launch's code then
 * runs holding the runtime lock, as a C function an OCaml program calls
 * does: a launch of more than one group is run by the blocking path (the
 * try is busy while its thread would wait for the pool's workers). */

#define SUBMIT_STACK 64

/* The blocking submit of the run, with the runtime lock released: the
 * buffers and the submission stay reachable across it, since their
 * finalisers would release what rig is using. RIG_INTERRUPTED from a wait
 * on the host: submit freed the run, so it is not made again; the pending
 * action raises, or Failure does. */
static rig_status submit_released(value waits, value sub, value buffers, rig_run *run,
                                  rig_buffer *const *b, size_t nb, const rig_point *w, size_t nw,
                                  rig_point *p) {
  CAMLparam3(waits, sub, buffers);
  caml_release_runtime_system();
  rig_ml_state = 2;
  rig_status st = rig_run_submit(run, b, nb, w, nw, p);
  rig_ml_state = 0;
  caml_acquire_runtime_system();
  CAMLreturnT(rig_status, st);
}

/* The C arrays of buffers and waits, into b and w (room for nb and nw). */
static inline __attribute__((always_inline)) void submit_arrays(value waits, value buffers, rig_buffer **b, size_t nb, rig_point *w,
                          size_t nw) {
  for (size_t i = 0; i < nb; i++)
    b[i] = Rig_buffer_val(Field(buffers, i));
  for (size_t i = 0; i < nw; i++)
    w[i] = (rig_point)Long_val(Field(waits, i));
}

/* The try, then the blocking submit where it is busy: the point. Inline,
 * as a call here costs as much as the rest of the stub. */
static inline __attribute__((always_inline)) rig_status submit(value waits, value sub, value r, value buffers, rig_buffer **b,
                         rig_point *w, rig_point *p) {
  size_t nb = Wosize_val(buffers), nw = Wosize_val(waits);
  submit_arrays(waits, buffers, b, nb, w, nw);
  rig_status st = rig_run_submit_try(RUN(r), b, nb, w, nw, p);
  if (st == RIG_BUSY)
    st = submit_released(waits, sub, buffers, RUN(r), b, nb, w, nw, p);
  return st;
}

/* Allocates nothing on the OCaml heap; a submit of more than SUBMIT_STACK
 * buffers or waits mallocs its arrays. */
value rig_ml_submit(value waits, value sub, value r, value buffers) {
  size_t nb = Wosize_val(buffers), nw = Wosize_val(waits);
  rig_point p = 0;
  rig_status st;
  if (nb <= SUBMIT_STACK && nw <= SUBMIT_STACK) {
    rig_buffer *b[SUBMIT_STACK];
    rig_point w[SUBMIT_STACK];
    st = submit(waits, sub, r, buffers, b, w, &p);
  } else {
    rig_buffer **b = malloc((nb ? nb : 1) * sizeof *b);
    rig_point *w = malloc((nw ? nw : 1) * sizeof *w);
    if (!b || !w) {
      free(b), free(w);
      caml_raise_out_of_memory();
    }
    st = submit(waits, sub, r, buffers, b, w, &p);
    free(b), free(w);
  }
  rig_ml_check(st);
  return Val_long((intnat)p);
}
