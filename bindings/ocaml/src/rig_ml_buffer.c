/* rig_ml_buffer.c: buffers, host access, copies and fills.
 *
 * A buffer is a custom block holding one reference; its finaliser drops it
 * once the OCaml value is unreachable, which is when rig collects the
 * allocation (with its other buffers'). Its bytes pace the OCaml
 * collector by rig's bound (rig_ml_pace.c). */
#include <stdlib.h>
#include <string.h>

#include "rig_ml.h"

static void buffer_finalize(value v) { rig_buffer_release(Rig_buffer_val(v)); }

RIG_ML_HANDLE_OPS(buffer_ops, "rig.buffer", buffer_finalize);

value rig_ml_buffer_alloc(rig_buffer *b) {
  value v = rig_ml_alloc_paced(&buffer_ops, b);
  Rig_buffer_val(v) = b;
  return v;
}

/* A buffer whose bytes hold no memory of rig's, such as an io device's
 * contents (Buffer.of_io): its collection returns nothing, so it paces
 * nothing. */
value rig_ml_buffer_alloc_unpaced(rig_buffer *b) {
  value v = caml_alloc_custom(&buffer_ops, sizeof b, 0, 1);
  Rig_buffer_val(v) = b;
  return v;
}

static rig_access access_of(value a) { return Int_val(a) == 0 ? RIG_READ : RIG_READ_WRITE; }

/* A hit in this thread's share of the cache takes no lock and never
 * blocks, so it keeps the runtime lock; only a miss, which may reclaim,
 * releases it. */
value rig_ml_buffer_create(value d, value n, value kind) {
  if (Long_val(n) < 0)
    caml_invalid_argument("Rig.Buffer.create: a negative length");
  rig_device *dev = Rig_device_val(d);
  size_t bytes = (size_t)Long_val(n);
  rig_kind k = (rig_kind)Int_val(kind);
  rig_buffer *b = rig_buffer_create_cached(dev, bytes, k);
  if (!b) {
    rig_status st;
    RIG_ML_BLOCKING(st, rig_buffer_create_kind(dev, bytes, k, &b));
    rig_ml_check(st);
  }
  return rig_ml_buffer_alloc(b);
}

value rig_ml_buffer_view(value b, value off, value len, value access) {
  if (Long_val(off) < 0 || Long_val(len) < 0)
    caml_invalid_argument("Rig.Buffer.view: a negative offset or length");
  rig_buffer *v = NULL;
  rig_ml_check(rig_buffer_view(Rig_buffer_val(b), (size_t)Long_val(off), (size_t)Long_val(len),
                               access_of(access), &v));
  return rig_ml_buffer_alloc(v);
}

value rig_ml_buffer_borrow(value d, value b) {
  CAMLparam2(d, b);
  rig_device *dev = Rig_device_val(d);
  rig_buffer *src = Rig_buffer_val(b), *v = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_borrow(dev, src, &v));
  rig_ml_check(st);
  CAMLreturn(rig_ml_buffer_alloc(v));
}

value rig_ml_buffer_free(value b) {
  CAMLparam1(b);
  rig_buffer *buf = Rig_buffer_val(b);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_free(buf));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}

value rig_ml_buffer_length(value b) { return Val_long((intnat)rig_buffer_length(Rig_buffer_val(b))); }
value rig_ml_buffer_device(value b) { return rig_ml_device_value(rig_buffer_device(Rig_buffer_val(b))); }
value rig_ml_buffer_access(value b) { return Val_int(rig_buffer_access(Rig_buffer_val(b)) == RIG_READ ? 0 : 1); }
value rig_ml_buffer_kind(value b) { return Val_int((int)rig_buffer_kind(Rig_buffer_val(b))); }
value rig_ml_buffer_dead(value b) { return Val_bool(rig_buffer_dead(Rig_buffer_val(b))); }
value rig_ml_buffer_overlaps(value a, value b) {
  return Val_bool(rig_buffer_overlaps(Rig_buffer_val(a), Rig_buffer_val(b)));
}
value rig_ml_buffer_share_byte(value a, value b) {
  return Val_bool(rig_buffer_share_byte(Rig_buffer_val(a), Rig_buffer_val(b)));
}
value rig_ml_buffer_host_address(value b) {
  return caml_copy_nativeint((intnat)rig_buffer_host_address(Rig_buffer_val(b)));
}

value rig_ml_buffer_wait(value b, value access) {
  CAMLparam2(b, access);
  rig_buffer *buf = Rig_buffer_val(b);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_wait(buf, access_of(access)));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}
value rig_ml_buffer_reached(value b, value access) {
  return Val_bool(rig_buffer_reached(Rig_buffer_val(b), access_of(access)));
}

value rig_ml_buffer_copy(value src, value dst) {
  CAMLparam2(src, dst);
  rig_buffer *s = Rig_buffer_val(src), *d = Rig_buffer_val(dst);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_copy(s, d));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}
value rig_ml_buffer_submit_copy(value src, value dst) {
  CAMLparam2(src, dst);
  rig_buffer *s = Rig_buffer_val(src), *d = Rig_buffer_val(dst);
  rig_point p = 0;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_submit_copy(s, d, &p));
  rig_ml_check(st);
  CAMLreturn(Val_long((intnat)p));
}

static uint32_t pattern_size(value size) {
  intnat n = Long_val(size);
  if (n != 1 && n != 2 && n != 4)
    caml_invalid_argument("Rig.Buffer.fill: a pattern of 1, 2 or 4 bytes");
  return (uint32_t)n;
}
value rig_ml_buffer_fill(value b, value size, value pattern) {
  CAMLparam3(b, size, pattern);
  rig_buffer *buf = Rig_buffer_val(b);
  uint32_t n = pattern_size(size), p = (uint32_t)Long_val(pattern);
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_fill(buf, p, n));
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}
value rig_ml_buffer_submit_fill(value b, value size, value pattern) {
  CAMLparam3(b, size, pattern);
  rig_buffer *buf = Rig_buffer_val(b);
  uint32_t n = pattern_size(size), p = (uint32_t)Long_val(pattern);
  rig_point pt = 0;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_submit_fill(buf, p, n, &pt));
  rig_ml_check(st);
  CAMLreturn(Val_long((intnat)pt));
}

/* The blits. The OCaml string or bytes may move while the runtime lock is
 * released, so rig never gets a pointer into them then: where the host
 * addresses the buffer, the wait runs released and the copy, which then
 * has nothing to wait for, holds the lock; elsewhere the bytes pass
 * through a C copy, and the blit through staging runs released. */
static void check_range(value s, value soff, value len, const char *fn) {
  if (Long_val(soff) < 0 || Long_val(len) < 0 ||
      Long_val(soff) > (intnat)caml_string_length(s) - Long_val(len))
    caml_invalid_argument(fn);
}

value rig_ml_buffer_blit_to_bytes(value b, value boff, value bytes, value off, value len) {
  CAMLparam5(b, boff, bytes, off, len);
  check_range(bytes, off, len, "Rig.Buffer.blit_to_bytes: a range out of the bytes");
  if (Long_val(boff) < 0)
    caml_invalid_argument("Rig.Buffer.blit_to_bytes: a negative offset");
  rig_buffer *buf = Rig_buffer_val(b);
  size_t o = (size_t)Long_val(boff), n = (size_t)Long_val(len);
  rig_status st;
  if (rig_buffer_host_address(buf)) {
    RIG_ML_BLOCKING(st, rig_buffer_wait(buf, RIG_READ));
    if (st == RIG_OK)
      st = rig_buffer_get(buf, o, Bytes_val(bytes) + Long_val(off), n);
  } else {
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
      caml_raise_out_of_memory();
    RIG_ML_BLOCKING(st, rig_buffer_get(buf, o, tmp, n));
    if (st == RIG_OK)
      memcpy(Bytes_val(bytes) + Long_val(off), tmp, n);
    free(tmp);
  }
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}

value rig_ml_buffer_blit_from_string(value s, value soff, value b, value boff, value len) {
  CAMLparam5(s, soff, b, boff, len);
  check_range(s, soff, len, "Rig.Buffer.blit_from_string: a range out of the string");
  if (Long_val(boff) < 0)
    caml_invalid_argument("Rig.Buffer.blit_from_string: a negative offset");
  rig_buffer *buf = Rig_buffer_val(b);
  size_t o = (size_t)Long_val(boff), n = (size_t)Long_val(len);
  rig_status st;
  if (rig_buffer_host_address(buf)) {
    RIG_ML_BLOCKING(st, rig_buffer_wait(buf, RIG_READ_WRITE));
    if (st == RIG_OK)
      st = rig_buffer_put(buf, o, String_val(s) + Long_val(soff), n);
  } else {
    void *tmp = malloc(n ? n : 1);
    if (!tmp)
      caml_raise_out_of_memory();
    memcpy(tmp, String_val(s) + Long_val(soff), n);
    RIG_ML_BLOCKING(st, rig_buffer_put(buf, o, tmp, n));
    free(tmp);
  }
  rig_ml_check(st);
  CAMLreturn(Val_unit);
}

/* ---- host access: bigarrays over the buffer's bytes, in place ------------- */

#include <caml/bigarray.h>

/* An array of b's n bytes at p, which the OCaml heap does not own. */
static value bytes_array(void *p, size_t n) {
  return caml_ba_alloc_dims(CAML_BA_UINT8 | CAML_BA_C_LAYOUT | CAML_BA_EXTERNAL, 1, p, (intnat)n);
}

/* Buffer.read and Buffer.write: waits, released, for the last writes
 * (Read) or every use (Read_write), then gives the bytes in place. */
value rig_ml_buffer_host_array(value b, value access) {
  CAMLparam2(b, access);
  rig_buffer *buf = Rig_buffer_val(b);
  void *p = rig_buffer_host_address(buf);
  if (!p)
    caml_invalid_argument("Rig.Buffer.read: memory the host does not address");
  if (access_of(access) == RIG_READ_WRITE && rig_buffer_access(buf) == RIG_READ)
    caml_invalid_argument("Rig.Buffer.write: a buffer that admits reads only");
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_wait(buf, access_of(access)));
  rig_ml_check(st);
  CAMLreturn(bytes_array(p, rig_buffer_length(buf)));
}

/* Buffer.export: (the bytes for good, a token holding the export's
 * reference, which rig.ml keeps with the array until it is collected). */
value rig_ml_buffer_export(value b) {
  CAMLparam1(b);
  CAMLlocal3(arr, token, pair);
  rig_buffer *buf = Rig_buffer_val(b);
  void *p = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_export(buf, &p));
  rig_ml_check(st);
  token = caml_alloc_custom(&buffer_ops, sizeof buf, 0, 1);
  Rig_buffer_val(token) = buf; /* the export's reference */
  arr = bytes_array(p, rig_buffer_length(buf));
  pair = caml_alloc_tuple(2);
  Store_field(pair, 0, arr);
  Store_field(pair, 1, token);
  CAMLreturn(pair);
}
