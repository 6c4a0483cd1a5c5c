/* test_launch.c: host code: images, launches, the pool of performance
 * cores (Running work, Images, Host code, Launches, Performance cores,
 * Objects).
 *
 * The kernels are C sources in tests/kernels, compiled at build time with
 * clang -c -O2 -fPIC -ffreestanding --target=x86_64-none-unknown-elf (the
 * arm64 target on arm64) into $RIG_KERNELS.
 *
 * Rules: RUN-1..7 HOST-1..4 LAUNCH-1 LAUNCH-3..10 LAUNCH-12..14 PERF-1..5
 * OBJ-3..6 SYM-1 SYM-2 ERR-19 OPEN-42
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels.h"
#include "util.h"

/* OBJ-3..6, RUN-1..7, LAUNCH-3..5, HOST-2, HOST-3: the seed's add example
 * as written: z = x + y over n floats, in 64 groups; then a second run of
 * the same submission with new parameters. */
static void obj_3_6_the_add_example(void **state) {
  rig_image *image = kernel_load("add");
  rig_function *add = resolve_ok(image, "add");
  assert_string_equal(rig_function_name(add), "add");
  assert_ptr_equal(rig_function_image(add), image);
  assert_ptr_equal(rig_image_device(image), rig_device_host());
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)}; /* OBJ-4 */
  rig_submission *s = launch_make_ok(rig_device_host(), add, refs, 3, 32);
  rig_image_release(image); /* the submission holds the code (RUN-8) */
  for (int64_t n = 1000; n <= 4096; n += 3096) {
    rig_buffer *x = create_ok(rig_device_host(), n * 4), *y = create_ok(rig_device_host(), n * 4),
               *z = create_ok(rig_device_host(), n * 4);
    float *xs = rig_buffer_host_address(x), *ys = rig_buffer_host_address(y),
          *zs = rig_buffer_host_address(z);
    add_example_inputs(xs, ys, zs, n);
    rig_point p = add_example_run(s, x, y, z, n);
    assert_true(rig_point_reached(p));                       /* LAUNCH-3: done at return */
    add_example_expect(zs, n, "the host");
    rig_buffer_release(x);
    rig_buffer_release(y);
    rig_buffer_release(z);
  }
  rig_submission_release(s);
}

/* HOST-2, HOST-3, OPEN-42, SYM-1: what loads and resolves, and what not. */
static void host_2_3_load_and_resolve(void **state) {
  rig_image *im = kernel_load("libm");
  rig_function *f = NULL;
  ok(rig_image_resolve(im, "no_such_function", &f));
  assert_null(f);                                            /* None */
  rig_function *a = resolve_ok(im, "sin_exp"), *b = resolve_ok(im, "sin_exp");
  assert_ptr_equal(a, b);
  assert_int_equal(rig_function_entry(a) != 0, 1);
  rig_image_release(im);
  size_t n;
  void *bytes = kernel_object("add", &n);
  rig_device *m = open_ok("memory:launch");
  rig_image *none = NULL;
  assert_int_equal(rig_image_load(m, bytes, n, &none), RIG_INVALID); /* OPEN-42 */
  assert_null(none);
  free(bytes);
  bytes = kernel_object("bad_writable", &n);
  assert_int_equal(rig_image_load(rig_device_host(), bytes, n, &none), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "LINK-4"));   /* the text's Error */
  assert_null(none);
  free(bytes);
  close_release(m);
}

/* A misspelt name: resolve answers RIG_OK and NULL (None), and the make of
 * a launch of that NULL names the name this thread resolved in vain, so
 * the error is told where it surfaces. */
static void a_launch_of_a_missing_name_names_it(void **state) {
  rig_image *im = kernel_load("add");
  rig_function *f = (rig_function *)1;
  ok(rig_image_resolve(im, "ad_misspelt", &f));
  assert_null(f);
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part part = rig_part_launch(f, refs, 3, 32);
  rig_submission *s = NULL;
  assert_int_equal(rig_submission_make(rig_device_host(), &part, 1, &s), RIG_INVALID);
  assert_null(s);
  if (!strstr(rig_error_last()->message, "part 0 launches no function") ||
      !strstr(rig_error_last()->message, "'ad_misspelt' on CPU"))
    fail_msg("the make does not name the missing function: %s", rig_error_last()->message);
  rig_image_release(im);
}

/* An object whose `add` is a GNU indirect function (STT_GNU_IFUNC): the
 * symbol's value is a resolver, which returns the function rather than
 * computing anything. Image.load refuses it with the linker's message,
 * which names the symbol (LINK-7), so there is no image to resolve `add`
 * in and no launch that would call the resolver and silently compute
 * nothing. */
static void host_3_an_indirect_function_is_refused(void **state) {
  size_t n;
  void *bytes = kernel_object("bad_ifunc", &n);
  rig_image *im = NULL;
  assert_int_equal(rig_image_load(rig_device_host(), bytes, n, &im), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "symbol add: an indirect function"));
  assert_non_null(strstr(rig_error_last()->message, "LINK-7"));
  assert_null(im);
  free(bytes);
}

/* SYM-1 in a launch: the kernel calls sinf and expf through stubs. */
static void sym_1_a_launch_calls_the_c_library(void **state) {
  rig_image *im = kernel_load("libm");
  rig_function *f = resolve_ok(im, "sin_exp");
  rig_ref refs[2] = {rig_ref_read(0, 0), rig_ref_write(1, 8)};
  rig_submission *s = launch_make_ok(rig_device_host(), f, refs, 2, 24);
  rig_buffer *x = create_ok(rig_device_host(), 256 * 4), *y = create_ok(rig_device_host(), 256 * 4);
  float *xs = rig_buffer_host_address(x), *ys = rig_buffer_host_address(y);
  for (int i = 0; i < 256; i++)
    xs[i] = (float)i / 64;
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 4, 64);
  ok(rig_run_int64(run, 0, 16, 256));
  rig_buffer *bufs[2] = {x, y};
  rig_point p;
  ok(rig_run_submit(run, bufs, 2, NULL, 0, &p));
  for (int i = 0; i < 256; i++) {
    float want = sinf(xs[i]) + expf(xs[i]);
    assert_true(ys[i] > want - 1e-4f && ys[i] < want + 1e-4f);
  }
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_submission_release(s);
  rig_image_release(im);
}

/* Launches ids over groups g and threads t; returns the threads. */
static int64_t launch_ids(rig_function *f, const uint64_t g[3], const uint64_t t[3],
                          int64_t *count, int64_t *bad, int64_t *calls) {
  rig_submission *s = launch_make_ok(rig_device_host(), f, NULL, 0, sizeof(struct ids));
  rig_run *run = take_ok(s);
  ok(rig_run_groups(run, 0, g[0], g[1], g[2]));
  ok(rig_run_threads(run, 0, t[0], t[1], t[2]));
  struct ids p = {count, (int64_t)(t[0] * t[1] * t[2]), bad, calls};
  ok(rig_run_bytes(run, 0, 0, &p, sizeof p));
  rig_point pt;
  ok(rig_run_submit(run, NULL, 0, NULL, 0, &pt));
  rig_submission_release(s);
  return (int64_t)(g[0] * g[1] * g[2] * t[0] * t[1] * t[2]);
}

/* LAUNCH-5: each ref's slot of the parameter block holds the host address
 * of what the ref names: a view's own first byte, not its allocation's.
 * add runs over views that start 64 floats into x, 128 into y and 192 into
 * z; the floats before and after z's view stay as they were. */
static void launch_5_refs_hold_the_address_of_what_they_name(void **state) {
  enum { N = 1024, M = 256 };
  rig_image *image = kernel_load("add");
  rig_function *add = resolve_ok(image, "add");
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *s = launch_make_ok(rig_device_host(), add, refs, 3, 32);
  rig_buffer *x = create_ok(rig_device_host(), N * 4), *y = create_ok(rig_device_host(), N * 4),
             *z = create_ok(rig_device_host(), N * 4), *v[3];
  float *xs = rig_buffer_host_address(x), *ys = rig_buffer_host_address(y),
        *zs = rig_buffer_host_address(z);
  for (int i = 0; i < N; i++) {
    xs[i] = (float)i;
    ys[i] = 1000.f * (float)i;
    zs[i] = -1;
  }
  ok(rig_buffer_view(x, 64 * 4, M * 4, RIG_READ, &v[0]));
  ok(rig_buffer_view(y, 128 * 4, M * 4, RIG_READ, &v[1]));
  ok(rig_buffer_view(z, 192 * 4, M * 4, RIG_READ_WRITE, &v[2]));
  rig_run *run;
  uint32_t k;
  ok(rig_submission_take(s, &run));
  ok(rig_submission_block(s, 0, &k));
  grid_ok(run, k, 4, M / 4);
  ok(rig_run_int64(run, k, 24, M));
  rig_point p;
  ok(rig_run_submit(run, v, 3, NULL, 0, &p));
  for (int i = 0; i < N; i++) {
    float want = i >= 192 && i < 192 + M ? (float)(i - 128) + 1000.f * (float)(i - 64) : -1.f;
    if (zs[i] != want)
      fail_msg("z[%d] is %g, want %g", i, (double)zs[i], (double)want);
  }
  for (int i = 0; i < 3; i++)
    rig_buffer_release(v[i]);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  rig_submission_release(s);
  rig_image_release(image);
}

/* LAUNCH-6, LAUNCH-7, LAUNCH-8: every thread number g * t + i runs exactly
 * once (LAUNCH-8: all calls together cover every thread once), each call
 * covers whole groups, over grids of one, two and three axes. */
static void launch_6_8_each_thread_once_in_whole_groups(void **state) {
  rig_image *im = kernel_load("launch_ids");
  rig_function *f = resolve_ok(im, "ids");
  const uint64_t shapes[][6] = {
      {1, 1, 1, 1, 1, 1}, {1000, 1, 1, 3, 1, 1}, {7, 5, 1, 4, 2, 1}, {3, 4, 5, 2, 3, 2},
      {100000, 1, 1, 1, 1, 1},
  };
  for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
    int64_t total = (int64_t)(shapes[c][0] * shapes[c][1] * shapes[c][2] * shapes[c][3] *
                              shapes[c][4] * shapes[c][5]);
    int64_t *count = calloc((size_t)total, sizeof *count), bad = 0, calls = 0;
    launch_ids(f, shapes[c], shapes[c] + 3, count, &bad, &calls);
    for (int64_t i = 0; i < total; i++)
      if (count[i] != 1)
        fail_msg("shape %zu: thread %lld ran %lld times", c, (long long)i, (long long)count[i]);
    assert_int_equal(bad, 0);                                /* LAUNCH-7 */
    assert_true(calls >= 1);
    free(count);
  }
  rig_image_release(im);
}

/* LAUNCH-12..14, VALID-20: a launch with shared memory, which the host
 * cannot run, an axis of zero, or more than 2^62 threads never runs, and
 * submit refuses it; the run is freed. */
static void launch_12_14_refused_launches_never_run(void **state) {
  rig_image *im = kernel_load("launch_ids");
  rig_function *f = resolve_ok(im, "ids");
  rig_submission *s = launch_make_ok(rig_device_host(), f, NULL, 0, sizeof(struct ids));
  int64_t count[8] = {0}, bad = 0, calls = 0;
  struct ids p = {count, 1, &bad, &calls};
  const uint64_t cases[][7] = {
      {1, 1, 1, 1, 1, 1, 16},                                /* LAUNCH-12: shared memory */
      {0, 1, 1, 1, 1, 1, 0},                                 /* LAUNCH-13: zero groups */
      {1, 1, 1, 1, 0, 1, 0},                                 /* LAUNCH-13: zero threads */
      {1u << 31, 1u << 31, 2, 1, 1, 1, 0},                   /* 2^63 threads */
      {1ull << 62, 1, 1, 2, 1, 1, 0},                        /* LAUNCH-14 */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    rig_run *run = take_ok(s);
    ok(rig_run_groups(run, 0, cases[c][0], cases[c][1], cases[c][2]));
    ok(rig_run_threads(run, 0, cases[c][3], cases[c][4], cases[c][5]));
    ok(rig_run_shared(run, 0, (uint32_t)cases[c][6]));
    ok(rig_run_bytes(run, 0, 0, &p, sizeof p));
    rig_point pt = 0;
    assert_int_equal(rig_run_submit(run, NULL, 0, NULL, 0, &pt), RIG_INVALID);
    assert_int_equal(calls, 0);                              /* never ran */
  }
  rig_run *run = take_ok(s); /* each refused submit freed its run */
  assert_int_equal(rig_run_int64(run, 0, sizeof(struct ids) - 4, 1), RIG_INVALID);
  assert_int_equal(rig_run_groups(run, 1, 1, 1, 1), RIG_INVALID);
  uint32_t k;
  assert_int_equal(rig_submission_block(s, 1, &k), RIG_INVALID);
  rig_point pt;
  assert_int_equal(rig_run_submit(run, NULL, 0, NULL, 0, &pt), RIG_INVALID); /* grid never set */
  rig_submission_release(s);
  rig_image_release(im);
}

/* LAUNCH-1, LAUNCH-9, LAUNCH-10, ERR-19, PERF-1: a launch runs on the
 * submitting thread and the pool, on at most rig_host_cores() threads at
 * once; the pool's workers block every signal, the fault ones included.
 * The workers' calls wait for one on this thread (caller_ran), so that a
 * loaded machine, which may run this thread late, cannot leave it none. */
static void launch_1_10_the_pool(void **state) {
  rig_image *im = kernel_load("launch_pool");
  rig_function *f = resolve_ok(im, "pool");
  rig_submission *s = launch_make_ok(rig_device_host(), f, NULL, 0, sizeof(struct pool));
  int64_t active = 0, peak = 0, calls = 0, segv[4096] = {0};
  uint64_t thread[4096] = {0};
  int64_t caller_ran = 0;
  struct pool p = {&active, &peak, 200000, thread, segv, &calls,
                   (uint64_t)pthread_self(), &caller_ran};
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 512, 1);
  ok(rig_run_bytes(run, 0, 0, &p, sizeof p));
  rig_point pt;
  ok(rig_run_submit(run, NULL, 0, NULL, 0, &pt));
  unsigned cores = rig_host_cores();
  assert_true(cores >= 1);
  assert_true(peak >= 1 && peak <= (int64_t)cores);          /* LAUNCH-10 */
  bool on_me = false;
  uint64_t me = (uint64_t)pthread_self();
  for (int64_t i = 0; i < calls && i < 4096; i++) {
    if (thread[i] == me)
      on_me = true;                                          /* LAUNCH-1 */
    else
      assert_int_equal(segv[i], 1);                          /* ERR-19 */
  }
  assert_true(on_me);
  rig_submission_release(s);
  rig_image_release(im);
}

static struct {
  _Atomic int64_t calls;
  int64_t count[10000];
  uint64_t thread[10000];
} par;

static void parallel_part(const void *ctx, int64_t first, int64_t end) {
  int64_t me = atomic_fetch_add(&par.calls, 1);
  for (int64_t i = first; i < end; i++)
    __atomic_fetch_add(&par.count[i], 1, __ATOMIC_RELAXED);
  if (me < 10000)
    par.thread[me] = (uint64_t)pthread_self();
  for (volatile int i = 0; i < 20000; i++)
    ;
}

/* LAUNCH-2: other parallel host code runs on the pool that launches use:
 * every index once, on this thread and threads a launch also ran on. */
static void launch_2_the_pool_is_shared(void **state) {
  rig_host_parallel(parallel_part, NULL, 10000);
  for (int i = 0; i < 10000; i++)
    assert_int_equal(par.count[i], 1);
  /* The threads of a launch over many groups, for comparison. */
  rig_image *im = kernel_load("launch_pool");
  rig_function *f = resolve_ok(im, "pool");
  rig_submission *s = launch_make_ok(rig_device_host(), f, NULL, 0, sizeof(struct pool));
  int64_t active = 0, peak = 0, calls = 0, segv[4096] = {0};
  uint64_t thread[4096] = {0};
  struct pool p = {&active, &peak, 200000, thread, segv, &calls, 0, NULL};
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 1024, 1);
  ok(rig_run_bytes(run, 0, 0, &p, sizeof p));
  rig_point pt;
  ok(rig_run_submit(run, NULL, 0, NULL, 0, &pt));
  /* One pool: the threads of both together are at most the cores (the
   * caller and rig_host_cores() - 1 workers); a second pool would add its
   * own workers. */
  uint64_t seen[64];
  unsigned nseen = 0;
  int64_t total = atomic_load(&par.calls) < 10000 ? atomic_load(&par.calls) : 10000;
  for (int64_t i = 0; i < total + (calls < 4096 ? calls : 4096); i++) {
    uint64_t t = i < total ? par.thread[i] : thread[i - total];
    bool known = false;
    for (unsigned k = 0; k < nseen && !known; k++)
      known = seen[k] == t;
    if (!known && nseen < 64)
      seen[nseen++] = t;
  }
  assert_true(nseen <= rig_host_cores());
  assert_true(atomic_load(&par.calls) >= 1);
  rig_submission_release(s);
  rig_image_release(im);
}

/* SYM-2: another image's function, called through the address an entry
 * ref stores. */
static void sym_2_entry_refs(void **state) {
  rig_image *a = kernel_load("launch_entry"), *b = kernel_load("launch_entry");
  rig_function *caller = resolve_ok(a, "caller"), *seven = resolve_ok(b, "seven");
  rig_ref refs[2] = {rig_ref_entry(seven, 0), rig_ref_write(0, 8)};
  rig_submission *s = launch_make_ok(rig_device_host(), caller, refs, 2, 16);
  rig_buffer *z = create_ok(rig_device_host(), 64 * 4);
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 8, 8);
  rig_point pt;
  ok(rig_run_submit(run, &z, 1, NULL, 0, &pt));
  float *zs = rig_buffer_host_address(z);
  for (int i = 0; i < 64; i++)
    assert_true(zs[i] == 7.0f + (float)i);
  rig_buffer_release(z);
  rig_submission_release(s);
  rig_image_release(a);
  rig_image_release(b);
}

/* A launch's refs and slots are checked at make. */
static void valid_launch_parts_at_make(void **state) {
  rig_image *im = kernel_load("add");
  rig_function *add = resolve_ok(im, "add");
  rig_submission *s = NULL;
  rig_ref off[1] = {rig_ref_read(0, 4)};                     /* not on 8 bytes */
  rig_part p = rig_part_launch(add, off, 1, 32);
  assert_int_equal(rig_submission_make(rig_device_host(), &p, 1, &s), RIG_INVALID);
  rig_ref past[1] = {rig_ref_read(0, 32)};                   /* past the block */
  p = rig_part_launch(add, past, 1, 32);
  assert_int_equal(rig_submission_make(rig_device_host(), &p, 1, &s), RIG_INVALID);
  rig_ref sparse[1] = {rig_ref_read(1, 0)};                  /* slot 0 unnamed (VALID-8) */
  p = rig_part_launch(add, sparse, 1, 32);
  assert_int_equal(rig_submission_make(rig_device_host(), &p, 1, &s), RIG_INVALID);
  p = rig_part_launch(NULL, NULL, 0, 0);
  assert_int_equal(rig_submission_make(rig_device_host(), &p, 1, &s), RIG_INVALID);
  assert_null(s);
  rig_image_release(im);
}

/* Fixed memory (BUF-1, VALID-4, VALID-7): the add example with x fixed at
 * make and y, z in slots; a written fixed Read buffer and a dead one are
 * refused at make, one freed after make at submit. VALID-3: the submission
 * holds its image, released by the program after make. */
static void valid_3_4_7_fixed_memory(void **state) {
  rig_image *im = kernel_load("add");
  rig_function *add = resolve_ok(im, "add");
  int n = 256;
  rig_buffer *x = create_ok(rig_device_host(), n * 4), *y = create_ok(rig_device_host(), n * 4),
             *z = create_ok(rig_device_host(), n * 4), *xr;
  float *xs = rig_buffer_host_address(x), *ys = rig_buffer_host_address(y),
        *zs = rig_buffer_host_address(z);
  for (int i = 0; i < n; i++) {
    xs[i] = 2.0f * (float)i;
    ys[i] = 1.0f;
  }
  ok(rig_buffer_view(x, 0, n * 4, RIG_READ, &xr));
  rig_ref bad_write[3] = {rig_ref_fixed(xr, RIG_READ_WRITE, 0), rig_ref_read(0, 8),
                          rig_ref_write(1, 16)};
  rig_part p = rig_part_launch(add, bad_write, 3, 32);
  rig_submission *s = NULL;
  assert_int_equal(rig_submission_make(rig_device_host(), &p, 1, &s), RIG_INVALID); /* VALID-7 */
  assert_null(s);
  rig_ref refs[3] = {rig_ref_fixed(xr, RIG_READ, 0), rig_ref_read(0, 8), rig_ref_write(1, 16)};
  p = rig_part_launch(add, refs, 3, 32);
  ok(rig_submission_make(rig_device_host(), &p, 1, &s));
  assert_int_equal(rig_submission_slots(s), 2);             /* x has no slot */
  rig_image_release(im);                                    /* VALID-3: s holds it */
  rig_buffer_release(xr);                                   /* s holds the fixed buffer */
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 4, 64);
  ok(rig_run_int64(run, 0, 24, n));
  rig_buffer *bufs[2] = {y, z};
  rig_point pt;
  ok(rig_run_submit(run, bufs, 2, NULL, 0, &pt));
  for (int i = 0; i < n; i++)
    assert_true(zs[i] == 2.0f * (float)i + 1.0f);
  ok(rig_buffer_free(x));                                   /* the fixed memory dies */
  run = take_ok(s);
  grid_ok(run, 0, 4, 64);
  assert_int_equal(rig_run_submit(run, bufs, 2, NULL, 0, &pt), RIG_INVALID); /* VALID-4 */
  rig_submission_release(s);
  rig_submission *s2 = NULL;
  rig_ref dead[1] = {rig_ref_fixed(x, RIG_READ, 0)};
  p = rig_part_launch(add, dead, 1, 32);
  assert_int_equal(rig_submission_make(rig_device_host(), &p, 1, &s2), RIG_INVALID); /* VALID-4 */
  assert_null(s2);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
}

/* VALID-10: a submission's launches and fills take at most 2^31 - 1 bytes,
 * each 16 + its parameters rounded up to 16; VALID-1: an io device runs no
 * work. */
static void valid_1_10_submission_limits(void **state) {
  rig_image *im = kernel_load("launch_ids");
  rig_function *f = resolve_ok(im, "ids");
  static rig_part parts[2100];
  for (int i = 0; i < 2100; i++)
    parts[i] = rig_part_launch(f, NULL, 0, 1u << 20);       /* 2100 x (16 + 2^20) > 2^31 */
  rig_submission *s = NULL;
  assert_int_equal(rig_submission_make(rig_device_host(), parts, 2100, &s), RIG_INVALID);
  assert_null(s);
  ok(rig_submission_make(rig_device_host(), parts, 2000, &s));       /* 2000 x (16 + 2^20) fits */
  rig_submission_release(s);
  char path[256];
  const char *t = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/rig-launch-io-%d", t && *t ? t : "/tmp", (int)getpid());
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_CREATE, .size = 64};
  rig_device *io;
  ok(rig_device_open_io(&o, &io));
  s = NULL;
  assert_int_equal(rig_submission_make(io, parts, 1, &s), RIG_INVALID); /* VALID-1 */
  assert_null(s);
  close_release(io);
  unlink(path);
  rig_image_release(im);
}

/* HOST-4, VALID-2, ERR-1, TL-3: the host's queue runs only launches: a host
 * submission with a copy, fill or words part lacks a queue for it, and
 * make refuses it, writing no out-parameter and allocating nothing; so
 * does one whose launch comes with such a part. A launch part alone is
 * accepted. The same copy is accepted on a memory device, whose queue
 * takes copies; and the host's copies and fills of the Buffer module,
 * which are no submissions (TL-3), run. */
static void host_4_the_hosts_queue_runs_only_launches(void **state) {
  rig_submission *const untouched = (rig_submission *)(uintptr_t)0x5eed;
  const uint32_t words[1] = {0};
  rig_part others[4] = {rig_part_copy(0, 1), rig_part_fill(0, 0x11, 1),
                        rig_part_words(words, 1), rig_part_unordered(rig_part_copy(0, 1))};
  rig_image *im = kernel_load("add");
  rig_function *add = resolve_ok(im, "add");
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(add, refs, 3, 32);
  uint64_t allocated = rig_device_allocated(rig_device_host()), submitted = rig_device_submitted(rig_device_host());
  for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
    rig_submission *s = untouched;
    assert_int_equal(rig_submission_make(rig_device_host(), &others[i], 1, &s), RIG_INVALID);
    assert_ptr_equal(s, untouched);                              /* ERR-1 */
    assert_int_equal(rig_error_last()->status, RIG_INVALID);
    assert_non_null(strstr(rig_error_last()->message, "no queue for part 0"));
    assert_non_null(strstr(rig_error_last()->message, "only launches"));
    rig_part mixed[2] = {launch, others[i]};                     /* after a launch */
    assert_int_equal(rig_submission_make(rig_device_host(), mixed, 2, &s), RIG_INVALID);
    assert_ptr_equal(s, untouched);
    assert_non_null(strstr(rig_error_last()->message, "no queue for part 1"));
  }
  assert_int_equal(rig_device_allocated(rig_device_host()), allocated);
  assert_int_equal(rig_device_submitted(rig_device_host()), submitted);
  rig_submission *s = NULL;
  ok(rig_submission_make(rig_device_host(), &launch, 1, &s));           /* a launch: accepted */
  assert_non_null(s);
  assert_int_equal(rig_submission_slots(s), 3);
  uint32_t k = 7;
  ok(rig_submission_block(s, 0, &k));
  assert_int_equal(k, 0);
  rig_submission_release(s);
  rig_image_release(im);
  /* The same copy on a memory device, whose queue takes copies. */
  rig_device *m = open_ok("memory:host-4");
  s = NULL;
  ok(rig_submission_make(m, &others[0], 1, &s));
  rig_submission_release(s);
  close_release(m);
  /* TL-3: the host's copies and fills through the Buffer module. */
  rig_buffer *a = create_ok(rig_device_host(), 64), *b = create_ok(rig_device_host(), 64);
  rig_point p;
  ok(rig_buffer_submit_fill(a, 0x5c, 1, &p));
  assert_true(rig_point_reached(p));
  ok(rig_buffer_submit_copy(a, b, &p));
  ok(rig_buffer_fill(a, 0x5d, 1));
  ok(rig_buffer_copy(a, b));
  uint8_t got[64];
  ok(rig_buffer_get(b, 0, got, 64));
  for (int i = 0; i < 64; i++)
    assert_int_equal(got[i], 0x5d);
  rig_buffer_release(a);
  rig_buffer_release(b);
}

/* The code counts in the host's budget while the image lives (Image.load). */
static void image_code_counts_in_the_budget(void **state) {
  uint64_t before = rig_device_allocated(rig_device_host());
  rig_image *im = kernel_load("launch_ids");
  assert_true(rig_device_allocated(rig_device_host()) > before);
  rig_image_release(im);
  rig_buffer *b = create_ok(rig_device_host(), 16); /* moves kept values (RECLAIM-17) */
  rig_buffer_release(b);
  b = create_ok(rig_device_host(), 16);
  rig_buffer_release(b);
  assert_true(rig_device_allocated(rig_device_host()) <= before + 64);
}

/* Runs this test program again as `test-launch what`, a fresh process
 * whose count of cores no call took yet; returns its exit status. */
static int fresh_process(const char *what) {
  char *argv[] = {"test-launch", (char *)what, NULL};
  return run_self(argv, NULL);
}

/* As fresh_process, asserting it exits 0. */
static void in_fresh_process(const char *what) { assert_int_equal(fresh_process(what), 0); }

static void *ask(void *out) {
  *(unsigned *)out = rig_host_cores();
  return NULL;
}

/* PERF-2, PERF-3: the count comes from the affinity mask of the first
 * thread that asks, and stays. */
static int first_asker_decides(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0)
    return 10;
  unsigned first = rig_host_cores();
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 64; c++)
    CPU_SET(c, &all);
  sched_setaffinity(0, sizeof all, &all);
  unsigned later = 0;
  pthread_t t;
  pthread_create(&t, NULL, ask, &later);
  pthread_join(t, NULL);
  return first == 1 && later == 1 ? 0 : 11;
}

static void perf_2_3_the_first_asker_decides(void **state) { in_fresh_process("perf-first"); }

/* PERF-5: a cgroup v2 quota of 1.5 CPUs (cpu.max "150000 100000") in the
 * process's cgroup or a parent caps the count at 2; one of 0.5 at 1. The
 * cgroup tree is a copy under $TMPDIR that RIG_CGROUP_ROOT names, since
 * this machine may not let a test make cgroups. */
/* Makes a copy of the process's cgroup v2 path under root, with a quota
 * of 0.5 CPU at its top; 0 when made. */
static int quota_tree(const char *root) {
  FILE *c = fopen("/proc/self/cgroup", "r");
  char line[512] = "0::/";
  while (c && fgets(line, sizeof line, c) && strncmp(line, "0::", 3) != 0)
    ;
  if (c)
    fclose(c);
  line[strcspn(line, "\n")] = 0;
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s%s' && echo '50000 100000' > '%s/cpu.max'", root,
           line + 3, root);
  return system(cmd);
}

static int quota_caps(void) {
  char root[256];
  const char *t = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/rig-cgroup-%d", t && *t ? t : "/tmp", (int)getpid());
  char cmd[2048];
  if (quota_tree(root) != 0)
    return 20;
  setenv("RIG_CGROUP_ROOT", root, 1);
  unsigned n = rig_host_cores();
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  (void)system(cmd);
  return n == 1 ? 0 : 21;
}

static void perf_5_cgroup_quota(void **state) { in_fresh_process("perf-quota"); }

/* The CPUs of mask whose sysfs cpuN/file is over half the largest, read
 * here independently of rig; 0 where none states one. */
static unsigned sysfs_over_half(const cpu_set_t *mask, const char *file) {
  long v[CPU_SETSIZE], top = -1;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    char path[128];
    v[c] = -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/%s", c, file);
    FILE *f = CPU_ISSET(c, mask) ? fopen(path, "r") : NULL;
    if (f) {
      if (fscanf(f, "%ld", &v[c]) != 1)
        v[c] = -1;
      fclose(f);
    }
    top = v[c] > top ? v[c] : top;
  }
  unsigned n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    n += CPU_ISSET(c, mask) && top > 0 && 2 * v[c] > top;
  return n;
}

/* PERF-1, PERF-3, PERF-4: with no cgroup quota (an empty cgroup tree),
 * the count is the CPUs of the mask whose stated capacity (else cpufreq's
 * maximum frequency) is over half the largest, or all of them where
 * neither is stated, read here from this machine's sysfs. test-perf-cores
 * checks the same on prepared trees. */
static int capacity_decides(void) {
  char root[256];
  const char *t = getenv("TMPDIR");
  snprintf(root, sizeof root, "%s/rig-nocgroup-%d", t && *t ? t : "/tmp", (int)getpid());
  if (mkdir(root, 0700) != 0)
    return 30;
  setenv("RIG_CGROUP_ROOT", root, 1);
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0)
    return 31;
  unsigned want = sysfs_over_half(&mask, "cpu_capacity");
  if (!want)
    want = sysfs_over_half(&mask, "cpufreq/cpuinfo_max_freq");
  if (!want)
    want = (unsigned)CPU_COUNT(&mask);
  unsigned n = rig_host_cores();
  rmdir(root);
  return n == want ? 0 : 32;
}

static void perf_1_4_capacity_decides(void **state) { in_fresh_process("perf-capacity"); }

/* The count of a fresh process run as "test-launch what", as its exit code. */
static int count_in_fresh_process(const char *what) {
  int count = fresh_process(what);
  assert_true(count < 200);
  return count;
}

/* A relative RIG_CGROUP_ROOT, which would name a folder under whatever the
 * current directory is, counts as unset: a relative tree of a quota of 0.5
 * CPU in the current directory changes nothing. */
static int relative_cgroup_root(void) {
  char dir[256], tree[300];
  const char *t = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/rig-cgroup-rel-%d", t && *t ? t : "/tmp", (int)getpid());
  snprintf(tree, sizeof tree, "%s/tree", dir);
  char cmd[2048];
  if (quota_tree(tree) != 0 || chdir(dir) != 0)
    return 250;
  setenv("RIG_CGROUP_ROOT", "tree", 1);
  unsigned n = rig_host_cores();
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  (void)system(cmd);
  return n < 200 ? (int)n : 199;
}

static void perf_5_relative_cgroup_root_is_ignored(void **state) {
  int plain = count_in_fresh_process("perf-plain");
  if (plain <= 1)
    skip(); /* a quota of 0.5 would give 1 as well: nothing to tell apart */
  assert_int_equal(count_in_fresh_process("perf-relative"), plain);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "perf-first") == 0)
    return first_asker_decides();
  if (argc == 2 && strcmp(argv[1], "perf-quota") == 0)
    return quota_caps();
  if (argc == 2 && strcmp(argv[1], "perf-capacity") == 0)
    return capacity_decides();
  if (argc == 2 && strcmp(argv[1], "perf-plain") == 0) {
    unsetenv("RIG_CGROUP_ROOT");
    return (int)(rig_host_cores() < 200 ? rig_host_cores() : 199);
  }
  if (argc == 2 && strcmp(argv[1], "perf-relative") == 0)
    return relative_cgroup_root();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(obj_3_6_the_add_example),
      cmocka_unit_test(launch_5_refs_hold_the_address_of_what_they_name),
      cmocka_unit_test(host_2_3_load_and_resolve),
      cmocka_unit_test(a_launch_of_a_missing_name_names_it),
      cmocka_unit_test(host_3_an_indirect_function_is_refused),
      cmocka_unit_test(sym_1_a_launch_calls_the_c_library),
      cmocka_unit_test(launch_6_8_each_thread_once_in_whole_groups),
      cmocka_unit_test(launch_12_14_refused_launches_never_run),
      cmocka_unit_test(launch_1_10_the_pool),
      cmocka_unit_test(sym_2_entry_refs),
      cmocka_unit_test(launch_2_the_pool_is_shared),
      cmocka_unit_test(valid_launch_parts_at_make),
      cmocka_unit_test(host_4_the_hosts_queue_runs_only_launches),
      cmocka_unit_test(image_code_counts_in_the_budget),
      cmocka_unit_test(valid_3_4_7_fixed_memory),
      cmocka_unit_test(valid_1_10_submission_limits),
      cmocka_unit_test(perf_2_3_the_first_asker_decides),
      cmocka_unit_test(perf_5_cgroup_quota),
      cmocka_unit_test(perf_1_4_capacity_decides),
      cmocka_unit_test(perf_5_relative_cgroup_root_is_ignored),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
