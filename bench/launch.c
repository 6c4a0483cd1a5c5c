/* launch.c: benches P1, P4 and P5 of host code (the host-code issue).
 *
 * P1: submit of an empty launch with 3 buffer refs vs calling the same
 *     function directly through the pool (rig_host_parallel), with the
 *     mallocs per submit counted; and vs the field's anchor, an OpenMP
 *     parallel region with an empty body over rig_host_cores() threads,
 *     beside an empty launch of that many groups, which runs on as many.
 * P4: an add over 256 MiB (z = x + y, 2^26 floats) as a launch on the
 *     performance cores vs OpenMP over as many threads running the same
 *     machine code: the anchor calls the linked kernel itself, on static
 *     ranges, so both sides run the code clang built with the kernels'
 *     flags, in the same pages (docs/benchmarks.md says why).
 * P5: Image.load of the 200-function object vs dlopen of the same code
 *     built as a .so.
 * The kernels are built into the bench's folder; RIG_BENCH_KERNELS names
 * another. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <rig/rig.h>

#include "bench.h"

void *rig_bench_read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = malloc(*n ? *n : 1);
  if (b && fread(b, 1, *n, f) != *n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  return b;
}

static void *object(const char *name, size_t *n) {
  char path[512];
  const char *dir = getenv("RIG_BENCH_KERNELS");
  snprintf(path, sizeof path, "%s/%s", dir ? dir : RIG_BENCH_KERNEL_DIR, name);
  return rig_bench_read_file(path, n);
}

static rig_function *function_of(const char *obj, const char *name, rig_image **im) {
  size_t n;
  void *b = object(obj, &n);
  rig_function *f = NULL;
  if (b && rig_image_load(rig_device_host(), b, n, im) == RIG_OK &&
      rig_image_resolve(*im, name, &f) != RIG_OK)
    f = NULL;
  free(b);
  return f;
}

/* ---- P1 ---------------------------------------------------------------- */

struct p1 {
  rig_submission *s;
  rig_buffer *bufs[3];
  void (*fn)(const void *, int64_t, int64_t);
  int failed;
};

static void p1_rig(void *p, uint64_t iters) {
  struct p1 *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->s, &r) || rig_run_groups(r, 0, 1, 1, 1) ||
        rig_run_threads(r, 0, 1, 1, 1) || rig_run_submit(r, c->bufs, 3, NULL, 0, &pt))
      c->failed = 1;
  }
}

static void p1_direct(void *p, uint64_t iters) {
  struct p1 *c = p;
  static char params[32];
  for (uint64_t i = 0; i < iters; i++)
    rig_host_parallel(c->fn, params, 1);
}

/* The field's anchor: an OpenMP parallel region with an empty body over
 * rig_host_cores() threads. */
static void p1_openmp(void *p, uint64_t iters) {
  (void)p;
  for (uint64_t i = 0; i < iters; i++) {
#pragma omp parallel num_threads(rig_host_cores())
    __asm__ volatile("");
  }
}

/* An empty launch of rig_host_cores() groups: on as many threads as the
 * OpenMP region, the pool's workers woken for it. */
static void p1_rig_wide(void *p, uint64_t iters) {
  struct p1 *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->s, &r) || rig_run_groups(r, 0, rig_host_cores(), 1, 1) ||
        rig_run_threads(r, 0, 1, 1, 1) || rig_run_submit(r, c->bufs, 3, NULL, 0, &pt))
      c->failed = 1;
  }
}

static int bench_p1(FILE *out) {
  rig_image *im = NULL;
  rig_function *f = function_of("empty.o", "empty", &im);
  struct p1 c = {0};
  if (!f) {
    fprintf(out, "bench P1: no kernel: %s\n", rig_error_last()->message);
    return 1;
  }
  c.fn = (void (*)(const void *, int64_t, int64_t))(uintptr_t)rig_function_entry(f);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(f, refs, 3, 32);
  bool made = true;
  for (int i = 0; i < 3; i++)
    made = made && rig_buffer_create(rig_device_host(), 4096, &c.bufs[i]) == RIG_OK;
  if (!made || rig_submission_make(rig_device_host(), &launch, 1, &c.s) != RIG_OK) {
    fprintf(out, "bench P1: %s\n", rig_error_last()->message);
    return 1;
  }
  p1_rig(&c, 1); /* the first take makes the run: a submission's one-time cost */
  struct mallinfo2 before = mallinfo2();
  p1_rig(&c, 10000);
  struct mallinfo2 after = mallinfo2();
  rig_bench_compare(out, "P1 submit empty launch, 3 refs vs direct call", p1_rig, p1_direct, &c,
                    200000, 7);
  char name[96];
  snprintf(name, sizeof name, "P1 the same vs OpenMP empty region, %u thr", rig_host_cores());
  rig_bench_compare(out, name, p1_rig, p1_openmp, &c, 2000, 7);
  snprintf(name, sizeof name, "P1 empty launch of %u groups vs the same", rig_host_cores());
  rig_bench_compare(out, name, p1_rig_wide, p1_openmp, &c, 2000, 7);
  fprintf(out, "%-44s %zu bytes malloc'd over 10000 submits\n", "P1 allocations",
          after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0);
  rig_submission_release(c.s);
  for (int i = 0; i < 3; i++)
    rig_buffer_release(c.bufs[i]);
  rig_image_release(im);
  return c.failed;
}

/* ---- P4 ---------------------------------------------------------------- */

#define P4_N ((int64_t)1 << 26) /* floats: 256 MiB per array */

/* The kernel's parameter block (tests/kernels/add.c). */
struct add_params {
  const float *x, *y;
  float *z;
  int64_t n;
};

struct p4 {
  rig_submission *s;
  rig_buffer *x, *y, *z;
  float *xs, *ys, *zs;
  void (*fn)(const void *, int64_t, int64_t); /* the linked kernel */
  int failed;
};

static void p4_rig(void *p, uint64_t iters) {
  struct p4 *c = p;
  rig_buffer *bufs[3] = {c->x, c->y, c->z};
  for (uint64_t i = 0; i < iters; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->s, &r) || rig_run_groups(r, 0, P4_N / 4096, 1, 1) ||
        rig_run_threads(r, 0, 4096, 1, 1) || rig_run_int64(r, 0, 24, P4_N) ||
        rig_run_submit(r, bufs, 3, NULL, 0, &pt))
      c->failed = 1;
  }
}

/* OpenMP's static schedule: one range per thread, each run by the kernel
 * rig linked, with the parameters rig's launch passes. */
static void p4_openmp(void *p, uint64_t iters) {
  struct p4 *c = p;
  struct add_params params = {c->xs, c->ys, c->zs, P4_N};
  for (uint64_t k = 0; k < iters; k++) {
#pragma omp parallel num_threads(rig_host_cores())
    {
      int64_t t = 0, n = 1;
#ifdef _OPENMP
      t = omp_get_thread_num();
      n = omp_get_num_threads();
#endif
      c->fn(&params, P4_N * t / n, P4_N * (t + 1) / n);
    }
  }
}

static int bench_p4(FILE *out) {
  rig_image *im = NULL;
  rig_function *f = function_of("add.o", "add", &im);
  struct p4 c = {0};
  if (!f || rig_buffer_create(rig_device_host(), P4_N * 4, &c.x) ||
      rig_buffer_create(rig_device_host(), P4_N * 4, &c.y) || rig_buffer_create(rig_device_host(), P4_N * 4, &c.z)) {
    fprintf(out, "bench P4: %s\n", rig_error_last()->message);
    return 1;
  }
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(f, refs, 3, 32);
  if (rig_submission_make(rig_device_host(), &launch, 1, &c.s) != RIG_OK) {
    fprintf(out, "bench P4: %s\n", rig_error_last()->message);
    return 1;
  }
  c.fn = (void (*)(const void *, int64_t, int64_t))(uintptr_t)rig_function_entry(f);
  c.xs = rig_buffer_host_address(c.x);
  c.ys = rig_buffer_host_address(c.y);
  c.zs = rig_buffer_host_address(c.z);
  for (int64_t i = 0; i < P4_N; i++) { /* fault every page in before timing */
    c.xs[i] = (float)i;
    c.ys[i] = 1;
    c.zs[i] = 0;
  }
  /* 20 rounds, each side first in 10: a round is memory-bound, and on a
   * shared machine the same round took 44 to 88 ms of CPU time on one core
   * with what else ran, so a median of 5 could stand 20% off either way
   * (docs/benchmarks.md, P4 on one core). */
  rig_bench_compare(out, "P4 add 256 MiB on the cores vs OpenMP", p4_rig, p4_openmp, &c, 1, 20);
  rig_submission_release(c.s);
  rig_buffer_release(c.x);
  rig_buffer_release(c.y);
  rig_buffer_release(c.z);
  rig_image_release(im);
  return c.failed;
}

/* ---- P5 ---------------------------------------------------------------- */

struct p5 {
  void *obj;
  size_t n;
  char so[512];
  int failed;
};

static void p5_rig(void *p, uint64_t iters) {
  struct p5 *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    rig_image *im;
    if (rig_image_load(rig_device_host(), c->obj, c->n, &im) != RIG_OK) {
      c->failed = 1;
      return;
    }
    rig_image_release(im);
  }
  if (rig_device_free_cache(rig_device_host()) != RIG_OK) /* the released images' code goes */
    c->failed = 1;
}

static void p5_dlopen(void *p, uint64_t iters) {
  struct p5 *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    void *h = dlopen(c->so, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      c->failed = 1;
      return;
    }
    dlclose(h);
  }
}

static int bench_p5(FILE *out) {
  struct p5 c = {0};
  const char *dir = getenv("RIG_BENCH_KERNELS");
  snprintf(c.so, sizeof c.so, "%s/libmany.so", dir ? dir : RIG_BENCH_KERNEL_DIR);
  if (!(c.obj = object("many.o", &c.n))) {
    fprintf(out, "bench P5: no many.o\n");
    return 1;
  }
  rig_bench_compare(out, "P5 Image.load 200 functions vs dlopen", p5_rig, p5_dlopen, &c, 200, 7);
  free(c.obj);
  return c.failed;
}

int rig_bench_launch(FILE *out) { return bench_p1(out) | bench_p4(out) | bench_p5(out); }
