/* test_amdgpu.c: the amdgpu driver through rig's API (suite driver-amdgpu).
 *
 * `test-amdgpu paths WANT` runs where no AMD GPU opens, as on every machine
 * of ours: arguments the driver refuses are RIG_INVALID before any library
 * or node is looked for; amdgpu:0 is RIG_UNAVAILABLE with WANT in its
 * message ("no library" with RIG_AMDGPU_LIBRARY naming no file, "no
 * device" with no render node, "is not a DRM device" with RIG_AMDGPU_NODE
 * naming /dev/null); and rig_device_list lists amdgpu as not opening, with
 * the same reason.
 *
 * `test-amdgpu` (on "amdgpu:0" or RIG_AMDGPU_DEVICE; 77 with the reason
 * where it does not open): its facts; fills of each pattern and copies
 * both ways (DMA_DATA), a fill not of whole words (its tail copied); the
 * seed's add example from add-ARCH.co ($RIG_AMDGPU_KERNELS, else
 * drivers/amdgpu/kernels); an image of another target and one whose kernel
 * uses scratch refused by name; a kernel that runs for far longer than
 * hang_ms=500, lost by the hang bound (HANG-6); work of a second open of the
 * GPU after the first's (SUBMIT-2, a wait in the queue); a profile of a fill
 * whose times fall in the host's window; and a child of fork, which
 * opens no amdgpu device while its parent holds one (test_fork.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rig/profile.h>
#include <rig/rig.h>

#include "check.h"

/* ---- without a GPU ----------------------------------------------------------------- */

static int refuse(const char *what, const char *detail) {
  printf("FAIL: %s: %s\n", what, detail);
  return 1;
}

/* The list's entry of the amdgpu driver: not opening, with want in why. */
static int listed(const char *want) {
  rig_device_entry e[64];
  size_t n = 0;
  if (rig_device_list(e, 64, &n) != RIG_OK)
    return refuse("rig_device_list", rig_error_last()->message);
  for (size_t i = 0; i < n && i < 64; i++) {
    if (strcmp(e[i].driver, "amdgpu") != 0)
      continue;
    printf("listed %s: opens %d: %s\n", e[i].name, e[i].opens, e[i].why);
    if (e[i].opens)
      return 77;
    return strstr(e[i].why, want) ? 0 : refuse("list's why", e[i].why);
  }
  return refuse("rig_device_list", "no entry of the amdgpu driver (is the plugin on the path?)");
}

static int paths(const char *want) {
  static const char *bad[] = {"amdgpu:",
                              "amdgpu:x",
                              "amdgpu:64",
                              "amdgpu:0,colour=1",
                              "amdgpu:0,hang_ms=-1",
                              "amdgpu:0,hang_ms=1,hang_ms=2"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_device *d = NULL;
    rig_status s = rig_device_open(bad[i], &d);
    printf("%s: %s: %s\n", bad[i], rig_status_name(s), rig_error_last()->message);
    if (s != RIG_INVALID)
      return refuse(bad[i], "not RIG_INVALID");
  }
  rig_device *d = NULL;
  rig_status s = rig_device_open("amdgpu:0", &d);
  printf("amdgpu:0: %s: %s\n", rig_status_name(s), rig_error_last()->message);
  if (s == RIG_OK) {
    close_release(d);
    printf("skip: amdgpu:0 opened: this machine has an AMD GPU\n");
    return 77;
  }
  if (s != RIG_UNAVAILABLE || !strstr(rig_error_last()->message, want))
    return refuse("amdgpu:0", "not RIG_UNAVAILABLE with the reason wanted");
  /* A second open says the same: the first one's result is kept. */
  s = rig_device_open("amdgpu:0", &d);
  if (s != RIG_UNAVAILABLE || !strstr(rig_error_last()->message, want))
    return refuse("amdgpu:0 again", rig_error_last()->message);
  return listed(want);
}

/* ---- on a GPU ------------------------------------------------------------------------ */

/* The bytes of NAME-TARGET.co, or NULL where none is committed. */
static void *code_object(const char *name, const char *target, size_t *n) {
  const char *dir = getenv("RIG_AMDGPU_KERNELS");
  char path[512];
  snprintf(path, sizeof path, "%s/%s-%s.co", dir && *dir ? dir : "drivers/amdgpu/kernels", name,
           target);
  FILE *f = fopen(path, "rb");
  void *b = malloc(1 << 20);
  *n = f && b ? fread(b, 1, 1 << 20, f) : 0;
  if (f)
    fclose(f);
  if (!*n) {
    free(b);
    return NULL;
  }
  return b;
}

/* Kernel fn of NAME-ARCH.co loaded onto d, asserting it loads; NULL (and
 * a note) where no object for d's arch is committed. */
static rig_function *load_kernel(rig_device *d, const char *name, const char *fn, rig_image **im) {
  size_t n;
  void *bytes = code_object(name, rig_device_arch(d), &n);
  if (!bytes) {
    print_message("no %s-%s.co committed: skipped\n", name, rig_device_arch(d));
    return NULL;
  }
  ok(rig_image_load(d, bytes, n, im));
  free(bytes);
  return resolve_ok(*im, fn);
}

static void facts(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  const char *arch = rig_device_arch(d);
  print_message("%s: arch %s bus %s budget %llu\n", rig_device_name(d), arch,
                rig_device_bus(d) ? rig_device_bus(d) : "",
                (unsigned long long)rig_device_budget(d));
  assert_memory_equal(arch, "gfx", 3);
  assert_int_equal(rig_device_type_of(d), RIG_DEVICE_TYPE_GPU);
  assert_true(rig_device_budget(d) > 0);
  assert_true(rig_device_computes(d));
  assert_false(rig_device_runs_on_host(d));
  assert_int_equal(rig_device_alignment(d), 4096);
  close_release(d);
}

static void fills_and_copies(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  enum { N = 3u << 20 }; /* past GFX9's DMA_DATA limit: two packets */
  rig_buffer *a = create_ok(d, N), *b = create_ok(d, N);
  ok(rig_buffer_fill(a, 0xab, 1));
  expect_bytes(a, 0, N, 0xab);
  ok(rig_buffer_fill(a, 0x5a5a, 2));
  expect_bytes(a, 0, N, 0x5a);
  ok(rig_buffer_fill(a, 0x11111111u, 4));
  ok(rig_buffer_copy(a, b));
  expect_bytes(b, 0, N, 0x11);
  uint8_t *host = malloc(N);
  for (uint32_t i = 0; i < N; i++)
    host[i] = (uint8_t)(i * 7);
  ok(rig_buffer_put(a, 0, host, N));
  ok(rig_buffer_copy(a, b));
  memset(host, 0, N);
  ok(rig_buffer_get(b, 0, host, N));
  for (uint32_t i = 0; i < N; i += 4093)
    assert_int_equal(host[i], (uint8_t)(i * 7));
  free(host);
  rig_buffer *odd = create_ok(d, 6); /* not whole words: its tail is copied */
  ok(rig_buffer_fill(odd, 0x1234, 2));
  uint8_t six[6];
  ok(rig_buffer_get(odd, 0, six, sizeof six));
  for (int i = 0; i < 6; i++)
    assert_int_equal(six[i], i & 1 ? 0x12 : 0x34);
  assert_null(rig_device_lost(d));
  rig_buffer_release(odd);
  rig_buffer_release(a);
  rig_buffer_release(b);
  close_release(d);
}

static void the_add_example(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  rig_image *im;
  rig_function *add = load_kernel(d, "add", "add", &im);
  if (!add) {
    close_release(d);
    return;
  }
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(add, refs, 3, 32);
  rig_submission *s;
  ok(rig_submission_make(d, &launch, 1, &s));
  rig_image_release(im);
  enum { N = 5000 };
  static float xs[N], ys[N], zs[N];
  add_example_inputs(xs, ys, zs, N);
  rig_buffer *x = create_ok(d, sizeof xs), *y = create_ok(d, sizeof ys),
             *z = create_ok(d, sizeof zs);
  ok(rig_buffer_put(x, 0, xs, sizeof xs));
  ok(rig_buffer_put(y, 0, ys, sizeof ys));
  rig_point p = add_example_run(s, x, y, z, N);
  ok(rig_point_wait(p));
  ok(rig_buffer_get(z, 0, zs, sizeof zs));
  add_example_expect(zs, N, rig_device_name(d));
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  rig_submission_release(s);
  close_release(d);
}

/* Images the driver refuses, by name: another target, scratch. */
static void refused_images(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  const char *arch = rig_device_arch(d), *other = strcmp(arch, "gfx900") ? "gfx900" : "gfx1030";
  size_t n;
  rig_image *im;
  void *bytes = code_object("add", other, &n);
  assert_non_null(bytes);
  assert_int_equal(rig_image_load(d, bytes, n, &im), RIG_UNAVAILABLE);
  print_message("%s\n", rig_error_last()->message);
  assert_non_null(strstr(rig_error_last()->message, "not for this device's"));
  free(bytes);
  if ((bytes = code_object("scratch", arch, &n)) != NULL) {
    assert_int_equal(rig_image_load(d, bytes, n, &im), RIG_UNAVAILABLE);
    assert_non_null(strstr(rig_error_last()->message, "kernel sum_private uses"));
    free(bytes);
  }
  assert_null(rig_device_lost(d));
  close_release(d);
}

/* HANG-6: spin for 4 billion rounds a thread, far past hang_ms=500. */
static void hang_6_a_kernel_past_the_bound(void **st) {
  (void)st;
  rig_device *d = open_under_test(",hang_ms=500");
  rig_image *im;
  rig_function *f = load_kernel(d, "spin", "spin", &im);
  if (!f) {
    close_release(d);
    return;
  }
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *s = launch_make_ok(d, f, &ref, 1, 16);
  rig_image_release(im);
  rig_buffer *out = create_ok(d, 4096);
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 16, 64);
  ok(rig_run_int32(run, 0, 8, -1));
  ok(rig_run_int32(run, 0, 12, 1));
  rig_point p;
  ok(rig_run_submit(run, &out, 1, NULL, 0, &p));
  assert_int_not_equal(rig_point_wait(p), RIG_OK);
  print_message("lost: %s\n", rig_device_lost(d));
  assert_non_null(rig_device_lost(d));
  rig_buffer_release(out);
  rig_submission_release(s);
  close_release(d);
}

/* A profile of a fill: its record's times, by the GPU clock converted to
 * rig's, fall within the host's window around it (profile.c). */
static void a_profile_of_a_fill(void **st) {
  (void)st;
  rig_device *d = open_under_test("");
  rig_buffer *b = create_ok(d, 16u << 20);
  rig_profile_start(0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  rig_point p;
  ok(rig_buffer_submit_fill(b, 7, 4, &p));
  ok(rig_point_wait(p));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  rig_profile_stop();
  rig_profile *prof;
  ok(rig_profile_take(&prof));
  size_t n = 0, fills = 0;
  const rig_profile_record *r = rig_profile_records(prof, &n);
  uint64_t lo = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
  uint64_t hi = (uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec;
  for (size_t i = 0; i < n; i++)
    if (r[i].kind == RIG_PART_FILL && r[i].point == p) {
      print_message("fill: %llu ns on the GPU's clock\n",
                    (unsigned long long)(r[i].end_ns - r[i].start_ns));
      assert_true(r[i].start_ns <= r[i].end_ns);
      assert_true(r[i].start_ns + 1000000 >= lo && r[i].end_ns <= hi + 1000000); /* 1 ms slack */
      fills++;
    }
  assert_int_equal(fills, 1);
  rig_profile_free(prof);
  rig_buffer_release(b);
  close_release(d);
}

/* SUBMIT-2: two opens of one GPU (two names: two contexts); b's launch
 * waits for a's long spin: b's queue waits on a's syncobj (waits.c), so
 * once b's point is reached, a's is too. */
static void submit_2_a_peer_wait_in_the_queue(void **st) {
  (void)st;
  rig_device *a = open_under_test(""), *b = open_under_test(",hang_ms=9999");
  rig_image *ia, *ib;
  rig_function *fa = load_kernel(a, "spin", "spin", &ia), *fb = load_kernel(b, "spin", "spin", &ib);
  if (!fa || !fb) {
    close_release(b);
    close_release(a);
    return;
  }
  rig_ref ref = rig_ref_write(0, 0);
  rig_submission *sa = launch_make_ok(a, fa, &ref, 1, 16), *sb = launch_make_ok(b, fb, &ref, 1, 16);
  rig_image_release(ia);
  rig_image_release(ib);
  rig_buffer *oa = create_ok(a, 64 * 64 * 4), *ob = create_ok(b, 4 * 64);
  rig_run *ra = take_ok(sa), *rb = take_ok(sb);
  grid_ok(ra, 0, 64, 64);
  ok(rig_run_int32(ra, 0, 8, 1 << 22));
  ok(rig_run_int32(ra, 0, 12, 3));
  grid_ok(rb, 0, 1, 64);
  ok(rig_run_int32(rb, 0, 8, 1));
  ok(rig_run_int32(rb, 0, 12, 3));
  rig_point p, q;
  ok(rig_run_submit(ra, &oa, 1, NULL, 0, &p));
  ok(rig_run_submit(rb, &ob, 1, &p, 1, &q));
  ok(rig_point_wait(q));
  assert_true(rig_point_reached(p));
  rig_buffer_release(oa);
  rig_buffer_release(ob);
  rig_submission_release(sa);
  rig_submission_release(sb);
  close_release(b);
  close_release(a);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "paths") == 0)
    return paths(argv[2]);
  device_under_test_from("RIG_AMDGPU_DEVICE", "amdgpu:0");
  rig_device *d = NULL;
  if (rig_device_open(device_under_test(""), &d) != RIG_OK) {
    printf("skip: %s does not open here: %s\n", device_under_test(""), rig_error_last()->message);
    return 77;
  }
  close_release(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(facts),
      cmocka_unit_test(fills_and_copies),
      cmocka_unit_test(the_add_example),
      cmocka_unit_test(refused_images),
      cmocka_unit_test(a_profile_of_a_fill),
      cmocka_unit_test(submit_2_a_peer_wait_in_the_queue),
      cmocka_unit_test(hang_6_a_kernel_past_the_bound),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
