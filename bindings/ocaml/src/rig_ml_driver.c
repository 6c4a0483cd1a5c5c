/* rig_ml_driver.c: drivers written in OCaml (Rig_edge.Driver).
 *
 * Each OCaml driver gets a driver table of its own (the name is the
 * driver's, so that rig tells two drivers' devices apart), made once and
 * kept for the process, whose functions call the driver's closures. Its
 * devices are as a memory device's: memory the host addresses, which the
 * driver's allocate gives as a bigarray, and copies and fills that its
 * submit runs before it returns (RIG_EDGE_SYNCHRONOUS), on one queue.
 *
 * The runtime lock. Core calls a handle's functions on the thread that
 * called rig (its own threads run host launches only). A thread of the
 * stubs is either inside a call made with the runtime lock released
 * (rig_ml_state 2: the callback takes it back, and releases it again
 * without running pending actions, which would raise inside rig's C
 * frames), inside the collector hook (3: it holds it), or in a stub that
 * keeps it (0: it holds it). A thread OCaml does not know, such as a C
 * library's calling rig, gets a fault. The closures run inside rig's locks
 * and with signals blocked: a call of theirs to rig that may lock raises
 * Invalid_argument, as from a finaliser.
 *
 * Exceptions. Rig_edge.Fault why, or any other exception, that escapes a
 * closure is the driver's fault, with why or the exception's text: the
 * device is lost, as a fault of a C driver loses it. */
#include <stdlib.h>
#include <string.h>

#include <caml/bigarray.h>
#include <caml/printexc.h>
#include <rig/edge.h>

#include "rig_ml.h"

/* The driver record's fields (Rig_edge.Driver.t, rig_edge.ml). */
enum { F_OPEN, F_FACTS, F_ALLOCATE, F_SUBMIT, F_STOP };

typedef struct ml_dev {
  value closures; /* the driver record, a root */
  value h;        /* what its open made, a root */
  volatile uint64_t *word;
  uint64_t alignment; /* its facts' */
} ml_dev;

/* The record of the driver whose open runs on this thread (open is called
 * on the thread of rig_device_open_driver, inside it). */
static __thread value *opening;

/* What a closure's result is made into, with the runtime lock held, before
 * call gives it up (the collector may move the result afterwards). */
typedef int (*take_fn)(value r, void *ctx, rig_edge_error *err);

/* The error of an exception that escaped a closure: Rig_edge.Fault's
 * text, or the exception's. Runtime lock held. */
static int fault_of(value e, rig_edge_error *err) {
  const value *fault = caml_named_value("rig_edge.fault");
  if (fault && Is_block(e) && Tag_val(e) == 0 && Wosize_val(e) == 2 && Field(e, 0) == *fault)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s", String_val(Field(e, 1)));
  char *text = caml_format_exception(e);
  int st = rig_edge_fail(err, RIG_EDGE_FAULT, "%s", text ? text : "an exception");
  caml_stat_free(text);
  return st;
}

/* Takes the runtime lock where the thread released it (state 2); gives
 * back the state to restore. */
static int runtime_take(void) {
  int state = rig_ml_state;
  if (state == 2) {
    rig_ml_state = 0;
    caml_acquire_runtime_system();
  }
  return state;
}
static void runtime_give(int state) {
  if (state == 2) {
    caml_enter_blocking_section_no_pending(); /* raises nothing inside rig */
    rig_ml_state = state;
  }
}

/* Calls the driver's closure i on m's handle [and *b] with the runtime
 * lock held, and take on its result; RIG_EDGE_FAULT where it raises. The
 * roots are read only once the lock is held: the collector may move what
 * they hold meanwhile. */
static int call(const ml_dev *m, int i, value *b, take_fn take, void *ctx, rig_edge_error *err) {
  int state = runtime_take();
  value f = Field(m->closures, i), a = m->h;
  value r = b ? caml_callback2_exn(f, a, *b) : caml_callback_exn(f, a);
  int st = Is_exception_result(r) ? fault_of(Extract_exception(r), err)
           : take                 ? take(r, ctx, err)
                                  : RIG_EDGE_OK;
  runtime_give(state);
  return st;
}

/* Runs f(p) with the runtime lock held. */
static void with_runtime(void (*f)(void *), void *p) {
  int state = runtime_take();
  f(p);
  runtime_give(state);
}

static void drop_dev(void *p) {
  ml_dev *m = p;
  caml_remove_generational_global_root(&m->closures);
  caml_remove_generational_global_root(&m->h);
  free(m);
}

/* open's result, Ok h or Error why, into m. Runtime lock held. */
static int take_open(value r, void *ctx, rig_edge_error *err) {
  ml_dev *m = ctx;
  if (Tag_val(r) == 1) /* Error why */
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s", String_val(Field(r, 0)));
  caml_modify_generational_global_root(&m->h, Field(r, 0));
  return RIG_EDGE_OK;
}

static void open_roots(void *p) {
  ml_dev *m = p;
  m->closures = *opening;
  m->h = Val_unit;
  caml_register_generational_global_root(&m->closures);
  caml_register_generational_global_root(&m->h);
}

static int ml_open(const char *args, void **out, rig_edge_error *err) {
  if (!opening)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "an OCaml driver opens through Rig.open_");
  ml_dev *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "out of memory");
  with_runtime(open_roots, m);
  int state = runtime_take();
  value a = caml_copy_string(args); /* nothing allocates before the call */
  value r = caml_callback_exn(Field(m->closures, F_OPEN), a);
  int st = Is_exception_result(r) ? fault_of(Extract_exception(r), err) : take_open(r, m, err);
  runtime_give(state);
  if (st != RIG_EDGE_OK) {
    with_runtime(drop_dev, m);
    return st;
  }
  *out = m;
  return RIG_EDGE_OK;
}

/* facts h: (arch, alignment, budget, cache_bytes), an OCaml tuple, into
 * the facts of a device run as a memory device is. Runtime lock held. */
static int take_facts(value r, void *ctx, rig_edge_error *err) {
  (void)err;
  rig_edge_facts *f = ctx;
  snprintf(f->arch, sizeof f->arch, "%s", String_val(Field(r, 0)));
  f->alignment = (uint64_t)Long_val(Field(r, 1));
  f->budget = (uint64_t)Long_val(Field(r, 2));
  f->cache_bytes = Is_block(Field(r, 3)) ? (uint64_t)Long_val(Field(Field(r, 3), 0)) : 0;
  return RIG_EDGE_OK;
}

static int ml_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  ml_dev *m = h;
  int st = call(m, F_FACTS, NULL, take_facts, f, err);
  if (st != RIG_EDGE_OK)
    return st;
  m->alignment = f->alignment;
  f->flags = RIG_EDGE_MAPS_HOST | RIG_EDGE_HOST_ADDRESSES | RIG_EDGE_RUNS_ON_HOST |
             RIG_EDGE_COMPUTES | RIG_EDGE_SYNCHRONOUS;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
  f->commit_k = 1;
  f->type = RIG_EDGE_TYPE_CPU;
  return RIG_EDGE_OK;
}

static int ml_stop(void *h, rig_edge_error *err) {
  ml_dev *m = h;
  return call(m, F_STOP, NULL, NULL, NULL, err);
}

static void ml_destroy(void *h) { with_runtime(drop_dev, h); }

static void new_root(void *p) {
  value *root = p;
  *root = Val_unit;
  caml_register_generational_global_root(root);
}

static void drop_root(void *p) {
  caml_remove_generational_global_root(p);
  free(p);
}

static int ml_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  (void)err;
  ((ml_dev *)h)->word = word;
  return RIG_EDGE_OK;
}

/* What allocate's bigarray becomes: out, its bytes kept by root. */
typedef struct alloc_ctx {
  value *root;
  uint64_t bytes, alignment;
  rig_edge_alloc *out;
} alloc_ctx;

/* Runtime lock held. */
static int take_alloc(value r, void *ctx, rig_edge_error *err) {
  alloc_ctx *c = ctx;
  if (!Is_block(r)) /* None: no room, so rig reclaims and asks again */
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "no %llu bytes", (unsigned long long)c->bytes);
  r = Field(r, 0);
  struct caml_ba_array *ba = Caml_ba_array_val(r);
  uintptr_t p = (uintptr_t)ba->data;
  if ((uint64_t)caml_ba_byte_size(ba) < c->bytes)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "its allocate gave fewer bytes than asked");
  if (c->bytes && c->alignment && p % c->alignment != 0)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "its allocate gave memory not on its alignment");
  caml_modify_generational_global_root(c->root, r);
  *c->out = (rig_edge_alloc){.handle = c->root, .host = ba->data, .address = p,
                             .bytes = c->bytes};
  return RIG_EDGE_OK;
}

/* allocate h bytes: Some bigarray of at least that many bytes, kept by a
 * root (the allocation's handle) until release, or None. */
static int ml_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                       rig_edge_error *err) {
  ml_dev *m = h;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "an OCaml driver: only its own memory");
  if (bytes > (uint64_t)Max_long)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "no %llu bytes", (unsigned long long)bytes);
  value *root = malloc(sizeof *root);
  if (!root)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "out of memory");
  with_runtime(new_root, root);
  value n = Val_long((intnat)bytes);
  alloc_ctx c = {root, bytes, m->alignment, out};
  int st = call(m, F_ALLOCATE, &n, take_alloc, &c, err);
  if (st != RIG_EDGE_OK)
    with_runtime(drop_root, root);
  return st;
}

static int ml_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  (void)h;
  (void)err;
  with_runtime(drop_root, a->handle);
  return RIG_EDGE_OK;
}

/* The bytes of a range, as a bigarray over its host memory. */
static value range_array(const rig_edge_range *r) {
  char *p = (char *)r->alloc->host + r->offset;
  return caml_ba_alloc_dims(CAML_BA_UINT8 | CAML_BA_C_LAYOUT | CAML_BA_EXTERNAL, 1, p,
                            (intnat)r->bytes);
}

/* One part as Rig_edge.Driver.part: Copy (tag 0) of (src, dst), Fill (tag
 * 1) of (dst, pattern, size). */
static value part_value(const rig_edge_part *p) {
  CAMLparam0();
  CAMLlocal3(v, a, b);
  if (p->kind == RIG_EDGE_PART_COPY) {
    a = range_array(&p->u.copy.src);
    b = range_array(&p->u.copy.dst);
    v = caml_alloc_small(2, 0);
    Field(v, 0) = a;
    Field(v, 1) = b;
  } else {
    a = range_array(&p->u.fill.dst);
    v = caml_alloc_small(3, 1);
    Field(v, 0) = a;
    Field(v, 1) = Val_long((intnat)p->u.fill.pattern);
    Field(v, 2) = Val_long((intnat)p->u.fill.pattern_bytes);
  }
  CAMLreturn(v);
}

/* The work's parts as an OCaml array into *out, a root; memory the host
 * does not address is refused. Runtime lock held. */
static int parts_value(const rig_edge_work *w, value *out, rig_edge_error *err) {
  CAMLparam0();
  CAMLlocal2(arr, p);
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *q = &w->parts[i];
    bool copy = q->kind == RIG_EDGE_PART_COPY;
    if ((copy && (!q->u.copy.src.alloc->host || !q->u.copy.dst.alloc->host)) ||
        (!copy && q->kind != RIG_EDGE_PART_FILL) || (!copy && !q->u.fill.dst.alloc->host))
      CAMLreturnT(int, rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                                      "an OCaml driver runs copies and fills of host memory"));
  }
  arr = caml_alloc(w->nparts, 0);
  for (uint32_t i = 0; i < w->nparts; i++) {
    p = part_value(&w->parts[i]);
    Store_field(arr, i, p);
  }
  caml_modify_generational_global_root(out, arr);
  CAMLreturnT(int, RIG_EDGE_OK);
}

static int ml_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  ml_dev *m = h;
  int state = runtime_take();
  value parts = Val_unit;
  caml_register_generational_global_root(&parts);
  int st = parts_value(w, &parts, err);
  if (st == RIG_EDGE_OK) /* rig_ml_state is 0 now: call finds the runtime held */
    st = call(m, F_SUBMIT, &parts, NULL, NULL, err);
  caml_remove_generational_global_root(&parts);
  runtime_give(state);
  if (st == RIG_EDGE_OK)
    rig_edge_word_store(m->word, w->value); /* done before submit returns */
  return st;
}

/* Rig_edge.Driver.opener's make: opens name through the driver's table
 * (a nativeint), with the record's closures for its open. */
value rig_ml_driver_open(value table, value name, value args, value closures) {
  CAMLparam4(table, name, args, closures);
  char *n = rig_ml_strdup(name), *a = strdup(String_val(args));
  if (!a) {
    free(n);
    caml_raise_out_of_memory();
  }
  value *outer = opening;
  opening = &closures; /* a local root: ml_open reads it with the runtime held */
  rig_device *d = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_open_driver(n, (const void *)Nativeint_val(table), a, &d));
  opening = outer;
  free(n);
  free(a);
  CAMLreturn(rig_ml_opened(st, d));
}

/* A table for the driver named name, made once per Rig_edge.Driver.make
 * and kept for the process (rig tells drivers apart by their tables). */
value rig_ml_driver_table(value name) {
  rig_edge_driver *t = calloc(1, sizeof *t);
  char *n = strdup(String_val(name));
  if (!t || !n) {
    free(t);
    free(n);
    caml_raise_out_of_memory();
  }
  *t = (rig_edge_driver){RIG_EDGE_DRIVER_INIT(n),
                         .open = ml_open,
                         .facts = ml_facts,
                         .stop = ml_stop,
                         .destroy = ml_destroy,
                         .bind_word = ml_bind_word,
                         .submit = ml_submit,
                         .allocate = ml_allocate,
                         .release = ml_release};
  return caml_copy_nativeint((intnat)t);
}
