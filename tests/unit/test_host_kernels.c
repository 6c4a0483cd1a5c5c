/* test_host_kernels.c: kernels as people write them run on rig's host
 * (issue 26): llama2.c's matmul and softmax (host-linker/tests/kernels/
 * llama.c, built with the documented clang command and rig's kernel
 * headers), loaded with rig_image_load, launched through a submission on
 * the host's pool in many groups, bit for bit the same as the same source
 * compiled natively into this test. argv[1] is the object's folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>
#include <rig/submission.h>

/* The native build of the same kernels. */
#include "../../host-linker/tests/kernels/llama.c"

static const char *folder;

#define ok(e) assert_int_equal((e), RIG_OK)

static rig_image *load_llama(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/llama.%s.o", folder,
#if defined(__x86_64__)
           "x86_64"
#else
           "aarch64"
#endif
  );
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static unsigned char bytes[1 << 20];
  size_t n = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  rig_image *im;
  ok(rig_image_load(rig_device_host(), bytes, n, &im));
  return im;
}

static rig_buffer *filled(size_t n, uint32_t seed) {
  rig_buffer *b;
  ok(rig_buffer_create(rig_device_host(), n * sizeof(float), &b));
  float *a = rig_buffer_host_address(b);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (float)(seed >> 8) / (float)(1u << 24) * 4.0f - 2.0f;
  }
  return b;
}

/* Launches function name of im over rows (groups of 8 threads), with a
 * 32-byte block: bufs[i] at 8 * i, n at 24 where nbufs is 3. */
static void launch_rows(rig_image *im, const char *name, rig_buffer **bufs, size_t nbufs, int64_t n,
                        int64_t rows) {
  rig_function *f;
  ok(rig_image_resolve(im, name, &f));
  assert_non_null(f);
  rig_ref refs[3] = {rig_ref_read_write(0, 0), rig_ref_read(1, 8), rig_ref_read(2, 16)};
  rig_part part = rig_part_launch(f, refs, nbufs, nbufs == 3 ? 32 : 16);
  rig_submission *s;
  rig_run *run;
  uint32_t k;
  rig_point p;
  ok(rig_submission_make(rig_device_host(), &part, 1, &s));
  ok(rig_submission_take(s, &run));
  ok(rig_submission_block(s, 0, &k));
  ok(rig_run_groups(run, k, (uint64_t)rows / 8, 1, 1));
  ok(rig_run_threads(run, k, 8, 1, 1));
  ok(rig_run_int64(run, k, nbufs == 3 ? 24 : 8, n));
  ok(rig_run_submit(run, bufs, nbufs, NULL, 0, &p));
  ok(rig_point_wait(p));
  rig_submission_release(s);
}

static void llama_matmul_and_softmax_as_native(void **state) {
  enum { D = 256, N = 96 };
  rig_image *im = load_llama();
  rig_buffer *out = filled(D, 1), *x = filled(N, 2), *w = filled((size_t)D * N, 3);
  rig_buffer *bufs[3] = {out, x, w};
  launch_rows(im, "llama_matmul", bufs, 3, N, D);
  static float want[D];
  struct llama_matmul mm = {want, rig_buffer_host_address(x), rig_buffer_host_address(w), N};
  llama_matmul(&mm, 0, D);
  assert_memory_equal(rig_buffer_host_address(out), want, sizeof want);

  /* Softmax over D / 16 rows of 16 scores, in place. */
  float *att = rig_buffer_host_address(out);
  static float native[D];
  memcpy(native, att, sizeof native);
  rig_buffer *one[1] = {out};
  launch_rows(im, "llama_softmax", one, 1, 16, D / 16);
  struct llama_softmax sm = {native, 16};
  llama_softmax(&sm, 0, D / 16);
  assert_memory_equal(att, native, sizeof native);
  rig_buffer_release(out);
  rig_buffer_release(x);
  rig_buffer_release(w);
  rig_image_release(im);
}

int main(int argc, char **argv) {
  folder = argc > 1 ? argv[1] : ".";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(llama_matmul_and_softmax_as_native),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
