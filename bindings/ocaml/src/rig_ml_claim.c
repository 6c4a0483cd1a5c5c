/* rig_ml_claim.c: claims. A Claim.t is a custom block holding a rig_claim:
 * Claim.with_'s, valid while its function runs (emptied after), or a hold,
 * which its finaliser releases (a hold's release only queues, so that a
 * finaliser may make it). Every call here is lock-free. */
#include "rig_ml.h"

typedef struct ml_claim {
  rig_claim *c; /* NULL once Claim.with_ has returned or Claim.read ended */
  int hold;     /* 1 a hold, 2 Claim.read's: the finaliser releases it */
} ml_claim;
#define Claim_val(v) ((ml_claim *)Data_custom_val(v))

static void claim_finalize(value v) {
  if (Claim_val(v)->hold && Claim_val(v)->c)
    rig_claim_release(Claim_val(v)->c);
}
static struct custom_operations claim_ops = {
    "rig.claim",         claim_finalize,           custom_compare_default,
    custom_hash_default, custom_serialize_default, custom_deserialize_default,
    custom_compare_ext_default, custom_fixed_length_default};

static value claim_alloc(rig_claim *c, int hold) {
  value v = caml_alloc_custom(&claim_ops, sizeof(ml_claim), 0, 1);
  Claim_val(v)->c = c;
  Claim_val(v)->hold = hold;
  return v;
}

static rig_claim *claim_of(value v) {
  if (!Claim_val(v)->c)
    caml_invalid_argument("Rig.Claim: a claim whose Claim.with_ or Claim.read has returned");
  return Claim_val(v)->c;
}

/* The roots of one Claim.with_: its function, the claim and the result. */
typedef struct with_ctx {
  value *f, *claim, *result;
} with_ctx;

static void with_fn(rig_claim *c, rig_buffer *b, void *ctx) {
  (void)b;
  with_ctx *w = ctx;
  *w->claim = claim_alloc(c, 0);
  *w->result = caml_callback_exn(*w->f, *w->claim);
}

value rig_ml_claim_with(value b, value f) {
  CAMLparam2(b, f);
  CAMLlocal2(claim, result);
  claim = Val_unit;
  result = Val_unit;
  with_ctx w = {&f, &claim, &result};
  rig_status st = rig_claim_with(Rig_buffer_val(b), with_fn, &w);
  if (claim != Val_unit)
    Claim_val(claim)->c = NULL;
  rig_ml_check(st);
  if (Is_exception_result(result))
    caml_raise(Extract_exception(result));
  CAMLreturn(result);
}

value rig_ml_claim_only(value c) { return Val_bool(rig_claim_only(claim_of(c))); }

value rig_ml_claim_consume(value c) {
  rig_buffer *b = NULL;
  rig_ml_check(rig_claim_consume(claim_of(c), &b));
  return rig_ml_buffer_alloc(b);
}

value rig_ml_claim_hold(value b) {
  rig_claim *c = NULL;
  rig_ml_check(rig_claim_hold(Rig_buffer_val(b), &c));
  return claim_alloc(c, 1);
}

/* ---- read claims (Claim.read) -------------------------------------------- */

/* A claim that reads b's memory (rig_buffer_claim): Lost where a read of
 * it would be. Claim.read ends it when its function returns; the
 * finaliser releases one it never ended (a release is lock-free). */
value rig_ml_claim_read(value b) {
  rig_claim *c = NULL;
  rig_ml_check(rig_buffer_claim(Rig_buffer_val(b), &c));
  return claim_alloc(c, 2);
}

value rig_ml_claim_read_end(value c) {
  rig_claim *claim = Claim_val(c)->c;
  Claim_val(c)->c = NULL;
  if (claim)
    rig_claim_release(claim);
  return Val_unit;
}
