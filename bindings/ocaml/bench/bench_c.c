/* bench_c.c: the C side of bench.ml, the same loops over <rig/rig.h>,
 * timed here so that the two run in one process. */
#include <stdlib.h>
#include <time.h>

#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/mlvalues.h>

#include <rig/rig.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

double bench_now(value unit) { return now_ns(); }
value bench_now_byte(value unit) { return caml_copy_double(now_ns()); }

static rig_buffer *create(size_t bytes) {
  rig_buffer *b;
  if (rig_buffer_create(rig_device_host(), bytes, &b) != RIG_OK)
    caml_failwith(rig_error_last()->message);
  return b;
}

/* ns per rig_buffer_create + rig_buffer_release of n bytes on host, from
 * its cache after the first. */
value bench_c_create(value iters, value bytes) {
  long n = Long_val(iters);
  double t0 = now_ns();
  for (long i = 0; i < n; i++)
    rig_buffer_release(create((size_t)Long_val(bytes)));
  return caml_copy_double((now_ns() - t0) / (double)n);
}

/* The same, creating batch buffers, then releasing them, as the OCaml
 * collector releases them: a minor collection's worth at a time. */
value bench_c_create_batches(value iters, value bytes, value batch) {
  long n = Long_val(iters), k = Long_val(batch);
  rig_buffer **b = malloc((size_t)k * sizeof *b);
  if (!b)
    caml_raise_out_of_memory();
  double t0 = now_ns();
  for (long i = 0; i < n; i += k) {
    for (long j = 0; j < k; j++)
      b[j] = create((size_t)Long_val(bytes));
    for (long j = 0; j < k; j++)
      rig_buffer_release(b[j]);
  }
  double t = (now_ns() - t0) / (double)((n + k - 1) / k * k);
  free(b);
  return caml_copy_double(t);
}

/* Fills this thread's share of the host's cache with count buffers of n
 * bytes, made and released. */
value bench_c_fill_cache(value count, value bytes) {
  rig_buffer *b[64];
  long n = Long_val(count) < 64 ? Long_val(count) : 64;
  for (long i = 0; i < n; i++)
    b[i] = create((size_t)Long_val(bytes));
  for (long i = 0; i < n; i++)
    rig_buffer_release(b[i]);
  return Val_unit;
}

/* ns per rig_buffer_create of 64 KiB on host from the cache: rounds of
 * batch creates, each timed alone, the buffers released after it. */
value bench_c_create_cached(value rounds, value batch) {
  long r = Long_val(rounds), k = Long_val(batch) < 64 ? Long_val(batch) : 64;
  rig_buffer *b[64];
  double total = 0;
  for (long i = 0; i < r; i++) {
    double t0 = now_ns();
    for (long j = 0; j < k; j++)
      b[j] = create(65536);
    total += now_ns() - t0;
    for (long j = 0; j < k; j++)
      rig_buffer_release(b[j]);
  }
  return caml_copy_double(total / (double)(r * k));
}

/* ns per take + submit of the one-launch submission of f, a function of
 * an image of host (an int, as Rig's stubs keep it), over no buffer. */
value bench_c_submit(value iters, value fn) {
  long n = Long_val(iters);
  const rig_function *f = (const rig_function *)(Long_val(fn) << 1);
  rig_part p = rig_part_launch(f, NULL, 0, 0);
  rig_submission *s;
  if (rig_submission_make(rig_device_host(), &p, 1, &s) != RIG_OK)
    caml_failwith(rig_error_last()->message);
  uint32_t k = 0;
  if (rig_submission_block(s, 0, &k) != RIG_OK)
    caml_failwith(rig_error_last()->message);
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(s, &r) != RIG_OK || rig_run_groups(r, k, 1, 1, 1) != RIG_OK ||
        rig_run_threads(r, k, 1, 1, 1) != RIG_OK ||
        rig_run_submit(r, NULL, 0, NULL, 0, &pt) != RIG_OK)
      caml_failwith(rig_error_last()->message);
  }
  double t = (now_ns() - t0) / (double)n;
  rig_submission_release(s);
  return caml_copy_double(t);
}
