/* rig_ml_host.c: buffers over OCaml's memory (Buffer.of_bigarray,
 * Buffer.of_string) and Submission.address.
 *
 * Buffer.of_bigarray lends rig the bigarray's data, which the OCaml heap
 * does not move. A generational global root keeps the bigarray, and so its
 * data, alive until rig says it no longer uses the memory
 * (rig_buffer_of_host's release). That release runs inside a lock of
 * rig's, on whichever thread moves the host's memory, maybe with no
 * runtime lock held: it only pushes the root on a lock-free list. The
 * roots on the list go with the runtime held, at the next of_bigarray and
 * at the end of each major cycle of the collector (Rig.Buffer's alarm
 * calls rig_ml_host_drain). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <caml/bigarray.h>

#include "rig_ml.h"

/* A bigarray rig holds: its root, and the list of those rig let go. */
typedef struct held {
  value array;
  struct held *next;
} held;

static _Atomic(held *) let_go;

/* rig_buffer_of_host's release: only queues (any thread, inside a lock). */
static void release_held(void *ctx) {
  held *h = ctx;
  held *head = atomic_load(&let_go);
  do
    h->next = head;
  while (!atomic_compare_exchange_weak(&let_go, &head, h));
}

/* Drops the roots rig let go; the runtime lock held. */
value rig_ml_host_drain(value unit) {
  held *h = atomic_exchange(&let_go, NULL);
  while (h) {
    held *next = h->next;
    caml_remove_generational_global_root(&h->array);
    free(h);
    h = next;
  }
  return Val_unit;
}

/* Buffer.of_bigarray ?device a: on the host it takes no lock and keeps the
 * runtime; on another device the borrow may lock, so it runs released (the
 * data is outside the OCaml heap). */
value rig_ml_buffer_of_bigarray(value d, value a) {
  CAMLparam2(d, a);
  rig_ml_host_drain(Val_unit);
  struct caml_ba_array *ba = Caml_ba_array_val(a);
  size_t n = (size_t)caml_ba_byte_size(ba);
  if (!ba->data && n == 0)
    caml_invalid_argument("Rig.Buffer.of_bigarray: an array with no data");
  held *h = malloc(sizeof *h);
  if (!h)
    caml_raise_out_of_memory();
  h->array = a;
  caml_register_generational_global_root(&h->array);
  rig_device *dev = Rig_device_val(d);
  rig_buffer *b = NULL;
  rig_status st;
  if (dev == rig_device_host())
    st = rig_buffer_of_host(dev, ba->data, n, release_held, h, &b);
  else
    RIG_ML_BLOCKING(st, rig_buffer_of_host(dev, ba->data, n, release_held, h, &b));
  if (st != RIG_OK) { /* rig holds nothing: the root goes now */
    caml_remove_generational_global_root(&h->array);
    free(h);
    rig_ml_raise(st);
  }
  CAMLreturn(rig_ml_buffer_alloc(b));
}

/* Buffer.of_string ?device s: a copy. The string may move while the
 * runtime is released, so its bytes go through memory of the C heap. */
value rig_ml_buffer_of_string(value d, value s) {
  CAMLparam2(d, s);
  size_t n = caml_string_length(s);
  void *tmp = malloc(n ? n : 1);
  if (!tmp)
    caml_raise_out_of_memory();
  memcpy(tmp, String_val(s), n);
  rig_device *dev = Rig_device_val(d);
  rig_buffer *b = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_of_bytes(dev, tmp, n, &b));
  free(tmp);
  rig_ml_check(st);
  CAMLreturn(rig_ml_buffer_alloc(b));
}

/* Submission.address s b: takes no lock. */
value rig_ml_submission_address(value s, value b) {
  uint64_t a = 0;
  rig_ml_check(rig_submission_address(Rig_submission_val(s), Rig_buffer_val(b), &a));
  return caml_copy_int64((int64_t)a);
}

/* Submission.make ~keep: s keeps v until rig lets go of it (its keep's
 * release, inside a lock, after s is released and its work done), through
 * a root on the same list as of_bigarray's. Takes no lock. */
value rig_ml_submission_keep(value s, value v) {
  CAMLparam2(s, v);
  held *h = malloc(sizeof *h);
  if (!h)
    caml_raise_out_of_memory();
  h->array = v;
  caml_register_generational_global_root(&h->array);
  rig_status st = rig_submission_keep(Rig_submission_val(s), h, release_held);
  if (st != RIG_OK) {
    caml_remove_generational_global_root(&h->array);
    free(h);
    rig_ml_raise(st);
  }
  CAMLreturn(Val_unit);
}
