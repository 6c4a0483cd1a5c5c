/* test_thirdparty.c: host kernels as people write them (docs/kernels.md).
 * llama.c and polybench.c hold C loops written the way llama2.c and
 * PolyBench/C write them, with <math.h>, <string.h>, <stdint.h> and
 * <stddef.h>; the build compiles each with the documented command (rig's
 * kernel headers on -isystem) and this program compiles the same sources
 * natively. Each kernel runs linked, in uneven chunks of its threads as a
 * pool would, and natively over all of them: the outputs must be bit for
 * bit the same. The refusals a kernel's author meets first (a variable of
 * the process such as stderr, a relro table of pointers, -fopenmp) must
 * say what to change in the source. */
#include <stdint.h>
#include <string.h>

#include "common.h"

/* The native builds of the same kernels. */
#include "kernels/llama.c"
#include "kernels/polybench.c"

typedef void kernel_fn(const void *params, int64_t first, int64_t end);

/* Fills a with n values in [-2, 2) from a fixed seed. */
static void fill_float(float *a, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (float)(seed >> 8) / (float)(1u << 24) * 4.0f - 2.0f;
  }
}
static void fill_double(double *a, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (double)(seed >> 8) / (double)(1u << 24) * 4.0 - 2.0;
  }
}

/* Runs f over threads [0, n) in chunks of 1, 2, 3, ... threads. */
static void run_chunked(kernel_fn *f, const void *params, int64_t n) {
  for (int64_t at = 0, step = 1; at < n; at += step, step++)
    f(params, at, at + step < n ? at + step : n);
}

/* Resolves name in the object `object` (loaded once per test). */
static kernel_fn *linked(rig_link_image *im, const char *name) {
  return im ? (kernel_fn *)rig_link_resolve(im, name) : NULL;
}

/* llama2.c's rmsnorm, softmax, matmul, RoPE with SwiGLU: linked = native. */
static void llama_kernels_match_native(void) {
  enum { ROWS = 7, DIM = 64, N = 96 };
  rig_link_image *im = load_kernel("llama", NULL);
  CHECK(im);
  static float x[ROWS * N], w[DIM * N], gate[ROWS * DIM], weight[DIM];
  static float a[ROWS * DIM], b[ROWS * DIM];
  fill_float(x, ROWS * N, 1), fill_float(w, DIM * N, 2), fill_float(gate, ROWS * DIM, 3);
  fill_float(weight, DIM, 4);

  struct llama_rmsnorm rn = {a, x, weight, DIM}, rn2 = {b, x, weight, DIM};
  run_chunked(linked(im, "llama_rmsnorm"), &rn, ROWS);
  llama_rmsnorm(&rn2, 0, ROWS);
  CHECK(memcmp(a, b, sizeof a) == 0);

  memcpy(a, x, sizeof a), memcpy(b, x, sizeof b);
  struct llama_softmax sm = {a, DIM}, sm2 = {b, DIM};
  run_chunked(linked(im, "llama_softmax"), &sm, ROWS);
  llama_softmax(&sm2, 0, ROWS);
  CHECK(memcmp(a, b, sizeof a) == 0);

  struct llama_matmul mm = {a, x, w, N}, mm2 = {b, x, w, N};
  run_chunked(linked(im, "llama_matmul"), &mm, DIM);
  llama_matmul(&mm2, 0, DIM);
  CHECK(memcmp(a, b, DIM * sizeof *a) == 0);

  struct llama_block bl = {a, x, gate, DIM, 16, 5}, bl2 = {b, x, gate, DIM, 16, 5};
  run_chunked(linked(im, "llama_block"), &bl, ROWS);
  llama_block(&bl2, 0, ROWS);
  CHECK(memcmp(a, b, sizeof a) == 0);
  rig_link_free(im);
}

/* PolyBench/C's gemm, jacobi-2d and correlation: linked = native. */
static void polybench_kernels_match_native(void) {
  enum { NI = 20, NJ = 24, NK = 28, JN = 30, M = 12, NR = 40 };
  rig_link_image *im = load_kernel("polybench", NULL);
  CHECK(im);
  static double A[NI * NK], B[NK * NJ], C1[NI * NJ], C2[NI * NJ];
  fill_double(A, NI * NK, 5), fill_double(B, NK * NJ, 6), fill_double(C1, NI * NJ, 7);
  memcpy(C2, C1, sizeof C1);
  struct pb_gemm g = {C1, A, B, NI, NJ, NK, 1.5, 1.2}, g2 = {C2, A, B, NI, NJ, NK, 1.5, 1.2};
  run_chunked(linked(im, "pb_gemm"), &g, NI);
  pb_gemm(&g2, 0, NI);
  CHECK(memcmp(C1, C2, sizeof C1) == 0);

  static double JA[JN * JN], JB1[JN * JN], JB2[JN * JN];
  fill_double(JA, JN * JN, 8);
  struct pb_jacobi j = {JA, JB1, JN}, j2 = {JA, JB2, JN};
  run_chunked(linked(im, "pb_jacobi"), &j, JN - 2);
  pb_jacobi(&j2, 0, JN - 2);
  CHECK(memcmp(JB1, JB2, sizeof JB1) == 0);

  static double data[NR * M], mean1[M], mean2[M], sd1[M], sd2[M];
  fill_double(data, NR * M, 9);
  /* Column 3 is near constant: its stddev takes the eps branch. */
  for (int i = 0; i < NR; i++)
    data[i * M + 3] = 0.01 * (i & 1);
  struct pb_corr c = {data, mean1, sd1, M, NR}, c2 = {data, mean2, sd2, M, NR};
  run_chunked(linked(im, "pb_corr"), &c, M);
  pb_corr(&c2, 0, M);
  CHECK(memcmp(mean1, mean2, sizeof mean1) == 0);
  CHECK(memcmp(sd1, sd2, sizeof sd1) == 0);
  CHECK(sd1[3] == 1.0);
  rig_link_free(im);
}

/* Whether kernel NAME is refused with a message that holds each of the
 * NULL-ended words; prints the message where not. */
static bool refused_saying(const char *name, const char *const *words) {
  size_t n;
  unsigned char *bytes = kernel(name, &n);
  rig_link_image *im = (rig_link_image *)&n;
  char err[RIG_LINK_ERROR_BYTES] = "";
  if (!bytes)
    return false;
  rig_link_status st = rig_link_load(bytes, n, NULL, &im, err, sizeof err);
  free(bytes);
  bool ok = st == RIG_LINK_REFUSED && im == (rig_link_image *)&n;
  for (size_t i = 0; ok && words[i]; i++)
    ok = strstr(err, words[i]) != NULL;
  /* Core passes a refusal on in a driver's message of 256 bytes: the
   * advice must fit it, its rule's tag included. */
  ok = ok && strlen(err) < 256;
  if (!ok)
    fprintf(stderr, "%s: status %d, message (%zu bytes): %s\n", name, st, strlen(err), err);
  return ok;
}

/* A kernel that prints to stderr reaches the process's variable through a
 * GOT: the message names it and says to pass what it needs. */
static void stderr_says_pass_it_in_the_parameters(void) {
  const char *const words[] = {"variable stderr", "pass what the kernel needs in its parameters",
                               "(LINK-6)", NULL};
  CHECK(refused_saying("bad_stderr", words));
}

/* A global table (default visibility) read through the GOT: make it static
 * or hidden. */
static void global_says_make_it_static(void) {
  const char *const words[] = {"global_table", "static", "hidden", "(LINK-6)", NULL};
  CHECK(refused_saying("bad_global", words));
}

/* A static const table of pointers lands in .data.rel.ro on x86_64. On
 * aarch64 clang makes it a table of offsets in .rodata (R_AARCH64_PREL32,
 * RELOC-1's read of the object's own data), which links and runs. */
static void relro_says_hold_indexes(void) {
#if defined(__x86_64__)
  const char *const words[] = {".data.rel.ro", "table of pointers", "indexes or offsets",
                               "(LINK-4)", NULL};
  CHECK(refused_saying("bad_relro", words));
#else
  rig_link_image *im = load_kernel("bad_relro", NULL);
  CHECK(im);
  const char *out[5] = {0};
  struct {
    const char **out;
  } pk = {out};
  run_chunked(linked(im, "pick"), &pk, 5);
  CHECK(out[0] && strcmp(out[0], "rms") == 0 && strcmp(out[2], "matmul") == 0 &&
        strcmp(out[4], "softmax") == 0);
  rig_link_free(im);
#endif
}

/* A loop under #pragma omp parallel for, built with -fopenmp. */
static void openmp_says_build_without_it(void) {
  const char *const words[] = {"-fopenmp", "__kmpc_fork_call", "without -fopenmp", "(LINK-", NULL};
  CHECK(refused_saying("bad_openmp", words));
}

int main(int argc, char **argv) {
  static const check_test tests[] = {
      TEST(llama_kernels_match_native),
      TEST(polybench_kernels_match_native),
      TEST(stderr_says_pass_it_in_the_parameters),
      TEST(global_says_make_it_static),
      TEST(relro_says_hold_indexes),
      TEST(openmp_says_build_without_it),
  };
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
