/* bench_c.c: the C side of bench.ml, the same loops over <rig/rig.h>,
 * timed here so that the two run in one process. */
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

/* ns per rig_buffer_create + rig_buffer_release of n bytes on host, from
 * its cache after the first. */
value bench_c_create(value iters, value bytes) {
  long n = Long_val(iters);
  rig_device *h = rig_device_host();
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    rig_buffer *b;
    if (rig_buffer_create(h, (size_t)Long_val(bytes), &b) != RIG_OK)
      caml_failwith(rig_error_last()->message);
    rig_buffer_release(b);
  }
  return caml_copy_double((now_ns() - t0) / (double)n);
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
  double t0 = now_ns();
  for (long i = 0; i < n; i++) {
    rig_run *r;
    rig_point pt;
    uint32_t k = 0;
    if (rig_submission_take(s, &r) != RIG_OK || rig_submission_block(s, 0, &k) != RIG_OK ||
        rig_run_groups(r, k, 1, 1, 1) != RIG_OK || rig_run_threads(r, k, 1, 1, 1) != RIG_OK ||
        rig_run_submit(r, NULL, 0, NULL, 0, &pt) != RIG_OK)
      caml_failwith(rig_error_last()->message);
  }
  double t = (now_ns() - t0) / (double)n;
  rig_submission_release(s);
  return caml_copy_double(t);
}

/* ns per rig_buffer_create of n bytes on host, taken from its cache: the
 * cache is filled first (count buffers made and released), and the buffers
 * are released after the timing. */
value bench_c_create_cached(value count, value bytes) {
  long n = Long_val(count);
  rig_device *h = rig_device_host();
  rig_buffer *b[1024];
  if (n > 1024)
    caml_invalid_argument("bench_c_create_cached: at most 1024");
  for (int round = 0; round < 2; round++) {
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
      if (rig_buffer_create(h, (size_t)Long_val(bytes), &b[i]) != RIG_OK)
        caml_failwith(rig_error_last()->message);
    double t = (now_ns() - t0) / (double)n;
    for (long i = 0; i < n; i++)
      rig_buffer_release(b[i]);
    if (round == 1)
      return caml_copy_double(t);
  }
  return caml_copy_double(0);
}
