/* test_shaders.c: shaders written the way public projects write them
 * (tests/kernels/vulkan/public: Kompute's first example, a uniform block,
 * ggml-style push constants with aliased bindings and a specialization
 * constant, a tiled matrix product sized by specialization constants, a
 * reduction with barriers, a grid over 65,535 groups), each run through
 * rig unchanged on vulkan:0 and checked against C; and every form rig
 * refuses, checked for its message and for leaving the device usable.
 * The suite runs it under the validation layer (its count must stay 0).
 *
 * The driver's convention (README, "Shaders with bindings"): a launch's
 * refs at bytes 0, 8, ... of its block are the shader's bindings in
 * (set, binding) order; its push-constant block follows them. A machine
 * with no Vulkan device skips (exit 77) and says why.
 */
#define _GNU_SOURCE /* dladdr */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/rig.h>

#include "check.h"
#include "kernel_file.h"
#include <rig/drivers/rig-vulkan.h>
#include "test_vk.h"

#ifndef PUBLIC_SHADERS_SRC
#define PUBLIC_SHADERS_SRC "tests/kernels/vulkan/public"
#endif

/* ---- counting what rig allocates ------------------------------------------ */

#if !defined(UNDER_ASAN)
/* Calls of malloc and the rest made by rig's own code (a caller in a
 * librig library) on the thread that counts: lavapipe's own allocations
 * in vkQueueSubmit are Mesa's, not rig's. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
static __thread bool counting;
static atomic_long rig_allocs;

static void note(void *caller) {
  Dl_info info;
  if (!counting)
    return;
  counting = false; /* dladdr may allocate */
  if (dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "librig"))
    atomic_fetch_add(&rig_allocs, 1);
  counting = true;
}
#define EXPORTED __attribute__((visibility("default")))
EXPORTED void *malloc(size_t n) {
  note(__builtin_return_address(0));
  return __libc_malloc(n);
}
EXPORTED void *calloc(size_t k, size_t n) {
  note(__builtin_return_address(0));
  return __libc_calloc(k, n);
}
EXPORTED void *realloc(void *p, size_t n) {
  note(__builtin_return_address(0));
  return __libc_realloc(p, n);
}
#endif

/* ---- helpers ------------------------------------------------------------------ */

/* Shader NAME's SPIR-V: the build's, else the one committed beside it. */
static rig_image *load_public(rig_device *d, const char *name) {
  char file[160];
  size_t n = 0;
  snprintf(file, sizeof file, "kernels/vulkan/public/%s.spv", name);
  void *b = kernel_file_read(file, &n);
  if (!b) {
    snprintf(file, sizeof file, "%s/%s.spv", PUBLIC_SHADERS_SRC, name);
    FILE *f = fopen(file, "rb");
    if (!f)
      fail_msg("no shader %s", file);
    b = malloc(1 << 16);
    n = fread(b, 1, 1 << 16, f);
    fclose(f);
  }
  rig_image *im = NULL;
  ok(rig_image_load(d, b, n, &im));
  free(b);
  return im;
}

/* Submits a run of s over bufs and waits for it. */
static rig_status run_wait(rig_run *r, rig_buffer **bufs, size_t n) {
  rig_point p;
  rig_status st = rig_run_submit(r, bufs, n, NULL, 0, &p);
  if (st == RIG_OK)
    ok(rig_point_wait(p));
  return st;
}

/* The message of the last error holds want. */
static void said(const char *want) {
  const char *m = rig_error_last()->message;
  print_message("  refused: %s\n", m);
  if (!strstr(m, want))
    fail_msg("'%s' is not in '%s'", want, m);
}

/* Kompute's mult over n floats: the device still runs shaders. */
static void mult_runs(rig_device *d, uint32_t n) {
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (uint32_t i = 0; i < n; i++) {
    a[i] = (float)i;
    b[i] = (float)(i % 7) - 3.0f;
  }
  rig_buffer *bufs[3] = {vk_buffer_of(d, a, n * 4), vk_buffer_of(d, b, n * 4), NULL};
  ok(rig_buffer_create(d, n * 4, &bufs[2]));
  rig_image *im = load_public(d, "mult");
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *s = launch_make_ok(d, resolve_ok(im, "main"), refs, 3, 24);
  rig_run *r = take_ok(s);
  grid_ok(r, 0, n, 1); /* local_size_x = 1: a group a element */
  ok(run_wait(r, bufs, 3));
  ok(rig_buffer_get(bufs[2], 0, c, n * 4));
  for (uint32_t i = 0; i < n; i++)
    if (c[i] != a[i] * b[i])
      fail_msg("mult: c[%u] = %g, want %g", i, c[i], a[i] * b[i]);
  rig_submission_release(s);
  rig_image_release(im);
  for (int i = 0; i < 3; i++)
    rig_buffer_release(bufs[i]);
  free(a), free(b), free(c);
}

/* ---- shaders that run unchanged ------------------------------------------------ */

static void kompute_mult_runs_unchanged(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  mult_runs(d, 1000);
  vk_close_dev(d);
}

/* A uniform block at binding 0, two storage buffers, push constants after
 * the refs; run twice, the second time from the replayed command buffer,
 * and a submit that allocates nothing in rig. */
static void saxpy_uniform_block_and_push_constants(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  enum { N = 1000 };
  float x[N], y[N], got[N];
  struct {
    float a;
    uint32_t n;
  } params = {0.5f, N - 3}; /* the last 3 stay */
  for (int i = 0; i < N; i++)
    x[i] = (float)(2 * i), y[i] = (float)(i % 11);
  rig_buffer *bufs[3] = {vk_buffer_of(d, &params, sizeof params), vk_buffer_of(d, x, sizeof x),
                         vk_buffer_of(d, y, sizeof y)};
  rig_image *im = load_public(d, "saxpy");
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_read_write(2, 16)};
  rig_function *f = resolve_ok(im, "main");
  rig_submission *s = launch_make_ok(d, f, refs, 3, 28);
  rig_run *r = take_ok(s);
  grid_ok(r, 0, (N + 63) / 64, 64);
  ok(rig_run_int32(r, 0, 24, 0)); /* pc.first */
  for (int run = 0; run < 3; run++) {
#if !defined(UNDER_ASAN)
    atomic_store(&rig_allocs, 0);
    counting = run == 2; /* the third: its pipeline and command buffer kept */
#endif
    ok(run_wait(r, bufs, 3));
#if !defined(UNDER_ASAN)
    counting = false;
    if (run == 2)
      assert_int_equal(atomic_load(&rig_allocs), 0);
#endif
  }
  ok(rig_buffer_get(bufs[2], 0, got, sizeof got));
  for (int i = 0; i < N; i++) {
    float want = (float)(i % 11);
    for (int k = 0; k < 3 && i < N - 3; k++)
      want = 0.5f * (float)(2 * i) + want;
    if (got[i] != want)
      fail_msg("saxpy: y[%d] = %g, want %g", i, got[i], want);
  }
  rig_submission_release(s);
  rig_image_release(im);
  for (int i = 0; i < 3; i++)
    rig_buffer_release(bufs[i]);
  vk_close_dev(d);
}

/* ggml's manner: bindings with no set, a block of sizes and parameters,
 * one binding read through two aliased declarations, a bool constant
 * choosing which: set either way by resolve's option, or kept at its
 * default only where the name says so; unset, refused by name. */
static void ggml_scale_aliased_bindings_and_a_spec_constant(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  enum { N = 1000 };
  float a[N], got[N];
  for (int i = 0; i < N; i++)
    a[i] = (float)(i - 500);
  rig_buffer *bufs[2] = {vk_buffer_of(d, a, sizeof a), NULL};
  ok(rig_buffer_create(d, sizeof got, &bufs[1]));
  rig_image *im = load_public(d, "scale");
  rig_function *f = NULL;
  assert_int_equal(rig_image_resolve(im, "main", &f), RIG_INVALID);
  said("specialization constant 0 is not set (resolve \"main:0=VALUE\", or \"main:0=default\"");
  assert_int_equal(rig_image_resolve(im, "main:0=maybe", &f), RIG_INVALID);
  said("'maybe' is no value of specialization constant 0 (bool");
  assert_int_equal(rig_image_resolve(im, "main:7=1", &f), RIG_INVALID);
  said("declares no specialization constant 7");
  const char *names[3] = {"main:0=true", "main:0=false", "main:0=default"};
  for (int k = 0; k < 3; k++) {
    rig_ref refs[2] = {rig_ref_read(0, 0), rig_ref_write(1, 8)};
    rig_submission *s = launch_make_ok(d, resolve_ok(im, names[k]), refs, 2, 32);
    rig_run *r = take_ok(s);
    grid_ok(r, 0, (N + 63) / 64, 64);
    ok(rig_run_int32(r, 0, 16, N)); /* KX */
    ok(rig_run_int32(r, 0, 20, 1)); /* KY */
    ok(rig_run_float(r, 0, 24, 2.0f + (float)k)); /* param1 */
    ok(rig_run_float(r, 0, 28, 1.0f)); /* param2 */
    ok(rig_buffer_fill(bufs[1], 0, 1));
    ok(run_wait(r, bufs, 2));
    ok(rig_buffer_get(bufs[1], 0, got, sizeof got));
    for (int i = 0; i < N; i++)
      if (got[i] != a[i] * (2.0f + (float)k) + 1.0f)
        fail_msg("scale %s: d[%d] = %g", names[k], i, got[i]);
    rig_submission_release(s);
  }
  rig_image_release(im);
  rig_buffer_release(bufs[0]);
  rig_buffer_release(bufs[1]);
  vk_close_dev(d);
}

/* C = A * B through tiles in shared memory: the group's shape from the
 * run's threads, the depth of a tile from resolve's option, both sizing
 * the shared arrays; a depth whose tiles pass the device's shared memory
 * is refused at the submit, and the device runs on. */
static void tiled_matmul_with_shared_memory(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  enum { M = 37, N = 29, K = 53 };
  float a[M * K], b[K * N], c[M * N];
  for (int i = 0; i < M * K; i++)
    a[i] = (float)(i % 13 - 6);
  for (int i = 0; i < K * N; i++)
    b[i] = (float)(i % 7 - 3);
  rig_buffer *bufs[3] = {vk_buffer_of(d, a, sizeof a), vk_buffer_of(d, b, sizeof b), NULL};
  ok(rig_buffer_create(d, sizeof c, &bufs[2]));
  rig_image *im = load_public(d, "matmul");
  const char *names[2] = {"main:2=8", "main:2=16"};
  const uint32_t shape[2][2] = {{8, 8}, {16, 4}};
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  for (int k = 0; k < 2; k++) {
    rig_submission *s = launch_make_ok(d, resolve_ok(im, names[k]), refs, 3, 36);
    rig_run *r = take_ok(s);
    uint32_t tn = shape[k][0], tm = shape[k][1];
    ok(rig_run_groups(r, 0, (N + tn - 1) / tn, (M + tm - 1) / tm, 1));
    ok(rig_run_threads(r, 0, tn, tm, 1));
    uint32_t sizes[3] = {M, N, K};
    ok(rig_run_bytes(r, 0, 24, sizes, sizeof sizes));
    ok(run_wait(r, bufs, 3));
    ok(rig_buffer_get(bufs[2], 0, c, sizeof c));
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        float want = 0;
        for (int q = 0; q < K; q++)
          want += a[i * K + q] * b[q * N + j];
        if (c[i * N + j] != want)
          fail_msg("matmul %s: c[%d][%d] = %g, want %g", names[k], i, j, c[i * N + j], want);
      }
    rig_submission_release(s);
  }
  /* tiles of 16x16 threads and depth 1024: 128 KiB of shared memory */
  rig_submission *s = launch_make_ok(d, resolve_ok(im, "main:2=1024"), refs, 3, 36);
  rig_run *r = take_ok(s);
  ok(rig_run_groups(r, 0, 2, 3, 1));
  ok(rig_run_threads(r, 0, 16, 16, 1));
  assert_int_equal(run_wait(r, bufs, 3), RIG_INVALID);
  said("groups of 16x16x1 threads take 131072 bytes of shared memory");
  rig_submission_release(s);
  rig_image_release(im);
  for (int i = 0; i < 3; i++)
    rig_buffer_release(bufs[i]);
  mult_runs(d, 100);
  vk_close_dev(d);
}

/* A sum by groups: a grid-stride loop over gl_NumWorkGroups and a tree in
 * shared memory sized by gl_WorkGroupSize, barriers between its steps.
 * Over 65,535 groups its grid would be split, which gl_NumWorkGroups
 * would misstate: refused at the submit, and the device runs on. */
static void reduction_with_barriers(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  enum { N = 100000, G = 100, T = 64 };
  uint32_t *in = malloc(N * sizeof *in), partial[G], want = 0, sum = 0;
  for (uint32_t i = 0; i < N; i++)
    want += in[i] = i * 7919u + 13u;
  rig_buffer *bufs[2] = {vk_buffer_of(d, in, N * sizeof *in), NULL};
  ok(rig_buffer_create(d, 70000 * sizeof(uint32_t), &bufs[1]));
  rig_image *im = load_public(d, "reduce");
  rig_ref refs[2] = {rig_ref_read(0, 0), rig_ref_write(1, 8)};
  rig_submission *s = launch_make_ok(d, resolve_ok(im, "main"), refs, 2, 20);
  rig_run *r = take_ok(s);
  grid_ok(r, 0, G, T);
  ok(rig_run_int32(r, 0, 16, N));
  ok(run_wait(r, bufs, 2));
  ok(rig_buffer_get(bufs[1], 0, partial, sizeof partial));
  for (int g = 0; g < G; g++)
    sum += partial[g];
  assert_int_equal(sum, want);
  grid_ok(r, 0, 70000, T);
  assert_int_equal(run_wait(r, bufs, 2), RIG_INVALID);
  said("main reads gl_NumWorkGroups, which a grid of 70000x1x1 groups split into 2 dispatches");
  rig_submission_release(s);
  rig_image_release(im);
  rig_buffer_release(bufs[0]);
  rig_buffer_release(bufs[1]);
  free(in);
  mult_runs(d, 100);
  vk_close_dev(d);
}

/* 70,000 groups: split into dispatches with a base, each group's ID the
 * grid's own, so every element once and right. */
static void grid_over_65535_groups(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  enum { G = 70000, T = 4, N = G * T };
  uint32_t *got = malloc(N * sizeof *got);
  rig_buffer *out;
  ok(rig_buffer_create(d, N * sizeof *got, &out));
  rig_image *im = load_public(d, "grid");
  rig_ref refs[1] = {rig_ref_write(0, 0)};
  rig_submission *s = launch_make_ok(d, resolve_ok(im, "main"), refs, 1, 16);
  rig_run *r = take_ok(s);
  grid_ok(r, 0, G, T);
  ok(rig_run_int32(r, 0, 8, N));
  ok(rig_run_int32(r, 0, 12, 0x5eed));
  ok(run_wait(r, &out, 1));
  ok(rig_buffer_get(out, 0, got, N * sizeof *got));
  for (uint32_t i = 0; i < N; i++)
    if (got[i] != ((i * 2654435761u) ^ 0x5eedu))
      fail_msg("grid: o[%u] = %u", i, got[i]);
  rig_submission_release(s);
  rig_image_release(im);
  rig_buffer_release(out);
  free(got);
  vk_close_dev(d);
}

/* ---- what rig refuses, by name -------------------------------------------------- */

static void refused_at_resolve(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  static const struct {
    const char *shader, *says;
  } forms[] = {
      {"refused_image", "binding 0 of set 0 'img' is a storage image; rig binds storage and "
                        "uniform buffers only"},
      {"refused_sampler", "binding 1 of set 0 'tex' is a combined image sampler"},
      {"refused_set1", "binding 0 of set 1 'Out': rig binds descriptor set 0 only"},
      {"refused_array", "binding 0 of set 0 'bufs' is an array of descriptors"},
      {"refused_push", "its push-constant block is 256 bytes; the device takes at most"},
      {"refused_shared", "its shared memory is 131072 bytes; the device gives a group at most"},
      {"refused_many", "binding 32 'B32': more than 32 bindings"},
  };
  for (size_t k = 0; k < sizeof forms / sizeof *forms; k++) {
    rig_image *im = load_public(d, forms[k].shader);
    rig_function *f = (rig_function *)1;
    print_message("%s:\n", forms[k].shader);
    assert_int_equal(rig_image_resolve(im, "main", &f), RIG_INVALID);
    said(forms[k].says);
    said("rig_image_resolve: vulkan:0");
    rig_image_release(im);
  }
  mult_runs(d, 100); /* the device runs on */
  vk_close_dev(d);
}

/* A launch whose block does not hold its refs where the bindings are, or
 * is too short for them and the push constants: refused at the submit. */
static void refused_at_submit(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  rig_buffer *bufs[2];
  ok(rig_buffer_create(d, 4096, &bufs[0]));
  ok(rig_buffer_create(d, 4096, &bufs[1]));
  rig_image *im = load_public(d, "reduce");
  rig_function *f = resolve_ok(im, "main");
  rig_ref late[2] = {rig_ref_read(0, 8), rig_ref_write(1, 16)}; /* bytes 8 and 16 */
  rig_submission *s = launch_make_ok(d, f, late, 2, 24);
  rig_run *r = take_ok(s);
  grid_ok(r, 0, 1, 64);
  assert_int_equal(run_wait(r, bufs, 2), RIG_INVALID);
  said("bytes 0..7 of the parameter block hold no buffer of this device: binding 0's buffer is "
       "ref 0, at byte 0");
  rig_submission_release(s);
  rig_ref refs[2] = {rig_ref_read(0, 0), rig_ref_write(1, 8)};
  s = launch_make_ok(d, f, refs, 2, 16); /* no room for pc.n */
  r = take_ok(s);
  grid_ok(r, 0, 1, 64);
  assert_int_equal(run_wait(r, bufs, 2), RIG_INVALID);
  said("a parameter block of 16 bytes; it takes 2 refs (bytes 0..15) and 4 bytes of push "
       "constants after them");
  rig_submission_release(s);
  /* a view 4 bytes into its buffer: no descriptor starts there */
  rig_buffer *view;
  ok(rig_buffer_view(bufs[0], 4, 64, RIG_READ_WRITE, &view));
  s = launch_make_ok(d, f, refs, 2, 20);
  r = take_ok(s);
  grid_ok(r, 0, 1, 64);
  rig_buffer *viewed[2] = {view, bufs[1]};
  assert_int_equal(run_wait(r, viewed, 2), RIG_INVALID);
  said("binding 0's buffer starts 4 bytes into its memory; a descriptor starts on a multiple of");
  rig_submission_release(s);
  rig_buffer_release(view);
  rig_image_release(im);
  rig_buffer_release(bufs[0]);
  rig_buffer_release(bufs[1]);
  mult_runs(d, 100);
  vk_close_dev(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kompute_mult_runs_unchanged),
      cmocka_unit_test(saxpy_uniform_block_and_push_constants),
      cmocka_unit_test(ggml_scale_aliased_bindings_and_a_spec_constant),
      cmocka_unit_test(tiled_matmul_with_shared_memory),
      cmocka_unit_test(reduction_with_barriers),
      cmocka_unit_test(grid_over_65535_groups),
      cmocka_unit_test(refused_at_resolve),
      cmocka_unit_test(refused_at_submit),
  };
  const char *only = getenv("RIG_TEST_FILTER");
  if (only && *only)
    cmocka_set_test_filter(only);
  return cmocka_run_group_tests(tests, vk_test_setup, NULL);
}
