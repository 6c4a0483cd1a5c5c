/* test_alloc_count.c: submit's fast path and a create from the cache
 * allocate nothing (SUBMIT-20, RECLAIM-7).
 *
 * The executable defines malloc, calloc, realloc, free, posix_memalign,
 * aligned_alloc and memalign, forwarding each to glibc's own (__libc_*), and
 * counts the calls made while counting is on. Definitions in the executable
 * take the place of the C library's for every library of the process,
 * librig-core and the drivers it opens included; the first tests prove it.
 * ASan owns malloc, so under it the test skips (77).
 *
 * Rules: SUBMIT-20 SUBMIT-21 RECLAIM-7 LIFE-5 PRE-22
 */
#include <rig/rig.h>

#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ASan and TSan own malloc: counting through glibc's is not possible there. */
#if !defined(UNDER_ASAN) && !defined(UNDER_TSAN)

/* ---- the counting allocator ---------------------------------------------- */

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);

enum { MALLOC, CALLOC, REALLOC, FREE, POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN, FNS };
static const char *const fn_names[FNS] = {"malloc",         "calloc",        "realloc", "free",
                                          "posix_memalign", "aligned_alloc", "memalign"};
static atomic_bool counting;
static atomic_long calls[FNS];

static inline void note(int fn) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&calls[fn], 1, memory_order_relaxed);
}

/* Default visibility: the project builds with -fvisibility=hidden, and a
 * hidden definition would not take the C library's place. */
#define EXPORTED __attribute__((visibility("default")))

EXPORTED void *malloc(size_t n) {
  note(MALLOC);
  return __libc_malloc(n);
}
EXPORTED void *calloc(size_t k, size_t n) {
  note(CALLOC);
  return __libc_calloc(k, n);
}
EXPORTED void *realloc(void *p, size_t n) {
  note(REALLOC);
  return __libc_realloc(p, n);
}
EXPORTED void free(void *p) {
  note(FREE);
  __libc_free(p);
}
EXPORTED int posix_memalign(void **out, size_t align, size_t n) {
  note(POSIX_MEMALIGN);
  if (align < sizeof(void *) || (align & (align - 1)) != 0)
    return EINVAL;
  void *p = __libc_memalign(align, n);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
EXPORTED void *aligned_alloc(size_t align, size_t n) {
  note(ALIGNED_ALLOC);
  return __libc_memalign(align, n);
}
EXPORTED void *memalign(size_t align, size_t n) {
  note(MEMALIGN);
  return __libc_memalign(align, n);
}

static void count_start(void) {
  for (int i = 0; i < FNS; i++)
    atomic_store(&calls[i], 0);
  atomic_store(&counting, true);
}

static long count_stop(void) {
  atomic_store(&counting, false);
  long all = 0;
  for (int i = 0; i < FNS; i++)
    all += atomic_load(&calls[i]);
  return all;
}

static long count_of(int fn) { return atomic_load(&calls[fn]); }

/* Asserts that nothing was called while counting, naming what was. */
static void expect_none(const char *what) {
  long all = count_stop();
  if (all != 0)
    for (int i = 0; i < FNS; i++)
      if (count_of(i))
        print_error("%s: %ld calls of %s\n", what, count_of(i), fn_names[i]);
  assert_int_equal(all, 0);
}

static rig_device *mem; /* a memory device of this test's own */

static int setup(void **st) {
  if (rig_device_open_memory("alloc-count", &mem) != RIG_OK) {
    print_error("memory:alloc-count does not open: %s\n", rig_error_last()->message);
    return -1;
  }
  return 0;
}
static int teardown(void **st) {
  rig_device_release(mem);
  return 0;
}

/* ---- the counter counts ---------------------------------------------------- */

/* The counter sees each function once per call, here and in librig-core and
 * the memory driver it opened (the same symbols, whoever calls them). */
static void counter_counts_each_call(void **st) {
  void *volatile p;
  void *q = NULL;
  count_start();
  p = malloc(16);
  assert_int_equal(count_of(MALLOC), 1);
  free(p);
  assert_int_equal(count_of(FREE), 1);
  p = calloc(2, 8);
  assert_int_equal(count_of(CALLOC), 1);
  p = realloc(p, 64);
  assert_int_equal(count_of(REALLOC), 1);
  free(p);
  assert_int_equal(posix_memalign(&q, 64, 16), 0);
  assert_int_equal(count_of(POSIX_MEMALIGN), 1);
  free(q);
  p = aligned_alloc(64, 64);
  assert_int_equal(count_of(ALIGNED_ALLOC), 1);
  free(p);
  p = memalign(64, 16);
  assert_int_equal(count_of(MEMALIGN), 1);
  free(p);
  assert_int_equal(count_stop(), 11); /* 6 allocations, 5 frees */

  /* What the dynamic linker gives every library is ours. */
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "malloc"), (void *)malloc);
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "calloc"), (void *)calloc);
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "free"), (void *)free);
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "posix_memalign"), (void *)posix_memalign);

  /* A create the cache cannot serve allocates: a record in librig-core and
   * the memory in the memory driver, both counted. */
  rig_buffer *b = NULL;
  count_start();
  ok(rig_buffer_create(mem, 12344, &b));
  long all = count_stop();
  assert_true(all >= 2);
  assert_true(count_of(CALLOC) + count_of(MALLOC) >= 1);
  assert_true(count_of(POSIX_MEMALIGN) >= 1);
  rig_buffer_release(b);
  ok(rig_device_free_cache(mem));
}

/* ---- creates from the cache -------------------------------------------------- */

/* RECLAIM-7 LIFE-5: on a memory device, creates and releases of 256 B,
 * 64 KiB and 1 MiB, once warm, take their memory and records from the
 * caches: 1000 rounds call no allocator function. */
static void reclaim_7_memory_create_from_cache_allocates_nothing(void **st) {
  static const size_t sizes[] = {256, 65536, 1024 * 1024};
  rig_buffer *b[3];
  for (int i = 0; i < 3; i++)
    ok(rig_buffer_create(mem, sizes[i], &b[i]));
  for (int i = 0; i < 3; i++)
    rig_buffer_release(b[i]);
  uint64_t allocated = rig_device_allocated(mem);
  rig_status st_ = RIG_OK;

  count_start();
  for (int round = 0; round < 1000 && st_ == RIG_OK; round++) {
    int made = 0;
    while (made < 3 && st_ == RIG_OK)
      if ((st_ = rig_buffer_create(mem, sizes[made], &b[made])) == RIG_OK)
        made++;
    for (int i = 0; i < made; i++)
      rig_buffer_release(b[i]);
  }
  expect_none("memory device creates");
  ok(st_);
  assert_int_equal(rig_device_allocated(mem), allocated);
}

/* RECLAIM-7 RECLAIM-47: the host keeps buffers of 64 KiB and more, so a
 * create and release of 1 MiB, once warm, allocates nothing. */
static void reclaim_7_host_create_from_cache_allocates_nothing(void **st) {
  rig_buffer *b = NULL;
  ok(rig_buffer_create(rig_device_host(), 1024 * 1024, &b));
  rig_buffer_release(b);
  uint64_t allocated = rig_device_allocated(rig_device_host());
  rig_status st_ = RIG_OK;

  count_start();
  for (int round = 0; round < 1000 && st_ == RIG_OK; round++) {
    st_ = rig_buffer_create(rig_device_host(), 1024 * 1024, &b);
    if (st_ == RIG_OK)
      rig_buffer_release(b);
  }
  expect_none("host creates");
  ok(st_);
  assert_int_equal(rig_device_allocated(rig_device_host()), allocated);
  ok(rig_device_free_cache(rig_device_host()));
}

/* ---- submit ------------------------------------------------------------------- */

/* SUBMIT-20 SUBMIT-21: a submission of one copy on a memory device, taken
 * and submitted 1000 times after the first, allocates nothing; nor does a
 * submit that takes the free run on its own (SUBMIT-14). */
static void submit_20_fast_path_allocates_nothing(void **st) {
  rig_part copy = rig_part_copy(0, 1);
  rig_submission *s = NULL;
  rig_buffer *a = NULL, *b = NULL;
  ok(rig_submission_make(mem, &copy, 1, &s));
  ok(rig_buffer_create(mem, 4096, &a));
  ok(rig_buffer_create(mem, 4096, &b));
  ok(rig_buffer_fill(a, 0x5A, 1));
  rig_buffer *const bufs[2] = {a, b};
  rig_run *r = NULL;
  rig_point p = 0;
  ok(rig_submission_take(s, &r));
  ok(rig_run_submit(r, bufs, 2, NULL, 0, &p));               /* the first: a run */
  uint64_t first = rig_point_value(p);
  rig_status st_ = RIG_OK;

  count_start();
  for (int i = 0; i < 1000 && st_ == RIG_OK; i++) {
    st_ = rig_submission_take(s, &r);
    if (st_ == RIG_OK)
      st_ = rig_run_submit(r, bufs, 2, NULL, 0, &p);
  }
  for (int i = 0; i < 1000 && st_ == RIG_OK; i++)
    st_ = rig_run_submit(r, bufs, 2, NULL, 0, &p);            /* r is free: submit takes it */
  expect_none("take and submit");
  ok(st_);
  assert_int_equal(rig_point_value(p), first + 2000);

  /* And with waits: points already reached. */
  rig_point waits[2] = {p, p};
  count_start();
  for (int i = 0; i < 100 && st_ == RIG_OK; i++)
    st_ = rig_run_submit(r, bufs, 2, waits, 2, &p);
  expect_none("submit with reached waits");
  ok(st_);

  expect_bytes(b, 0, 4096, 0x5A);
  rig_buffer_release(b);
  rig_buffer_release(a);
  rig_submission_release(s);
}

/* One take, set and submit of add's launch on the host (r's submission). */
static rig_status launch_once(rig_submission *s, rig_buffer *const bufs[3]) {
  rig_run *r = NULL;
  rig_point p = 0;
  rig_status st_ = rig_submission_take(s, &r);
  if (st_ == RIG_OK)
    st_ = rig_run_groups(r, 0, 16, 1, 1);
  if (st_ == RIG_OK)
    st_ = rig_run_threads(r, 0, 64, 1, 1);
  if (st_ == RIG_OK)
    st_ = rig_run_int64(r, 0, 24, 1024);
  return st_ == RIG_OK ? rig_run_submit(r, bufs, 3, NULL, 0, &p) : st_;
}

/* SUBMIT-20: a host launch's take, setters and submit allocate nothing
 * once warm: the run holds its block, the pool's workers are up, and the
 * kernel's calls into the C library go through stubs made at load. */
static void submit_20_host_launch_allocates_nothing(void **st) {
  rig_image *im = kernel_load("add");
  rig_function *add = NULL;
  ok(rig_image_resolve(im, "add", &add));
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(add, refs, 3, 32);
  rig_submission *s = NULL;
  ok(rig_submission_make(rig_device_host(), &launch, 1, &s));
  rig_buffer *x = NULL, *y = NULL, *z = NULL;
  ok(rig_buffer_create(rig_device_host(), 1024 * 4, &x));
  ok(rig_buffer_create(rig_device_host(), 1024 * 4, &y));
  ok(rig_buffer_create(rig_device_host(), 1024 * 4, &z));
  rig_buffer *const bufs[3] = {x, y, z};
  rig_status st_ = RIG_OK;
  for (int i = 0; i < 1001 && st_ == RIG_OK; i++) {
    if (i == 1)
      count_start(); /* after the first: a run, the workers */
    st_ = launch_once(s, bufs);
  }
  expect_none("host launch: take, set and submit");
  ok(st_);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  rig_submission_release(s);
  rig_image_release(im);
}

/* SUBMIT-20 ORDER-15: rig_buffer_copy from a memory device to the host, and
 * submit_copy with its wait, allocate nothing once warm. */
static void submit_20_copy_memory_to_host_allocates_nothing(void **st) {
  rig_buffer *x = NULL, *h = NULL;
  ok(rig_buffer_create(mem, 4096, &x));
  ok(rig_buffer_create(rig_device_host(), 4096, &h));
  ok(rig_buffer_fill(x, 0xC3, 1));
  ok(rig_buffer_copy(x, h));
  rig_status st_ = RIG_OK;
  rig_point p = 0;

  count_start();
  for (int i = 0; i < 1000 && st_ == RIG_OK; i++)
    st_ = rig_buffer_copy(x, h);
  for (int i = 0; i < 1000 && st_ == RIG_OK; i++) {
    st_ = rig_buffer_submit_copy(x, h, &p);
    if (st_ == RIG_OK)
      st_ = rig_point_wait(p);
  }
  expect_none("copies memory to host");
  ok(st_);

  expect_bytes(h, 0, 4096, 0xC3);
  rig_buffer_release(h);
  rig_buffer_release(x);
}

/* One submit of s (a fill, then a copy on the sample driver's other
 * queue) of a into b, waited for. */
static rig_status sample_once(rig_submission *s, rig_buffer *const bufs[2]) {
  rig_run *r = NULL;
  rig_point p = 0;
  rig_status st_ = rig_submission_take(s, &r);
  if (st_ == RIG_OK)
    st_ = rig_run_submit(r, bufs, 2, NULL, 0, &p);
  return st_ == RIG_OK ? rig_point_wait(p) : st_;
}

/* add loaded on the host (the caller's image) and *launch, one launch of
 * it over refs, which the caller keeps while the part lives. */
static rig_image *add_launch(rig_ref refs[3], rig_part *launch) {
  rig_image *im = kernel_load("add");
  rig_function *add = NULL;
  ok(rig_image_resolve(im, "add", &add));
  refs[0] = rig_ref_read(0, 0);
  refs[1] = rig_ref_read(1, 8);
  refs[2] = rig_ref_write(2, 16);
  *launch = rig_part_launch(add, refs, 3, 32);
  return im;
}

/* Stops the profile and takes it: the parts it recorded, those its rings
 * dropped counted in; the devices it names into *devices (may be NULL). */
static size_t profile_stop_take(uint32_t *devices) {
  rig_profile_stop();
  rig_profile *prof = NULL;
  ok(rig_profile_take(&prof));
  size_t n = 0;
  rig_profile_records(prof, &n);
  if (devices)
    *devices = rig_profile_devices(prof);
  n += rig_profile_dropped(prof);
  rig_profile_free(prof);
  return n;
}

/* One submit of a run already taken (r, on the sample driver) of a into
 * b, waited for. */
static rig_status sample_run_once(rig_run *r, rig_buffer *const bufs[2]) {
  rig_point p = 0;
  rig_status st_ = rig_run_submit(r, bufs, 2, NULL, 0, &p);
  return st_ == RIG_OK ? rig_point_wait(p) : st_;
}

/* The first submit after rig_profile_start allocates nothing: the start
 * made the ring of every open device (the host, sample:0) and an open
 * while the profile is taken its device's (sample:1), each where
 * profiling was switched on. (The first submit made them, under its
 * submit lock: a malloc, a calloc and a strdup on the hot path.) */
static void profile_first_submit_allocates_nothing(void **st) {
  (void)st;
  rig_ref refs[3];
  rig_part launch;
  rig_image *im = add_launch(refs, &launch);
  rig_part parts[2] = {rig_part_fill(0, 7, 1), rig_part_copy(0, 1)};
  rig_device *host = rig_device_host(), *early = NULL, *late = NULL;
  ok(rig_device_open("sample:0", &early));
  rig_submission *s = NULL, *t = NULL, *u = NULL;
  ok(rig_submission_make(host, &launch, 1, &s));
  ok(rig_submission_make(early, parts, 2, &t));
  rig_buffer *const hb[3] = {create_ok(host, 4096), create_ok(host, 4096), create_ok(host, 4096)};
  rig_buffer *const eb[2] = {create_ok(early, 4096), create_ok(early, 4096)};
  rig_point p = 0;
  ok(launch_once(s, hb)); /* warm, unprofiled: a run each, the workers */
  ok(rig_buffer_submit_copy(hb[0], hb[1], &p));
  ok(sample_once(t, eb));
  assert_false(rig_profile_active());
  rig_profile_start(0);
  ok(rig_device_open("sample:1", &late));
  rig_buffer *const lb[2] = {create_ok(late, 4096), create_ok(late, 4096)};
  ok(rig_submission_make(late, parts, 2, &u));
  rig_run *r = take_ok(u);
  count_start();
  rig_status st_ = launch_once(s, hb);
  if (st_ == RIG_OK)
    st_ = rig_buffer_submit_copy(hb[0], hb[1], &p);
  if (st_ == RIG_OK)
    st_ = sample_once(t, eb);
  if (st_ == RIG_OK)
    st_ = sample_run_once(r, lb);
  expect_none("the first profiled submits");
  ok(st_);
  uint32_t devices = 0;
  assert_int_equal(profile_stop_take(&devices), 6); /* a launch, a copy, two parts per sample */
  assert_int_equal(devices, 3);
  for (int i = 0; i < 3; i++)
    rig_buffer_release(hb[i]);
  for (int i = 0; i < 2; i++) {
    rig_buffer_release(eb[i]);
    rig_buffer_release(lb[i]);
  }
  rig_submission_release(s);
  rig_submission_release(t);
  rig_submission_release(u);
  rig_image_release(im);
  close_release(early);
  close_release(late);
}

/* While a profile is taken, recording allocates nothing on the submit
 * path (each device's ring was made where profiling was switched on): host
 * launches and copies timed by the clock, and the sample driver's parts
 * timed on its workers, all written into the rings. */
static void profile_recording_allocates_nothing(void **st) {
  rig_ref refs[3];
  rig_part launch;
  rig_image *im = add_launch(refs, &launch);
  rig_part parts[2] = {rig_part_fill(0, 7, 1), rig_part_copy(0, 1)};
  rig_device *host = rig_device_host(), *sample = NULL;
  ok(rig_device_open("sample:0", &sample));
  rig_submission *s = NULL, *t = NULL;
  ok(rig_submission_make(host, &launch, 1, &s));
  ok(rig_submission_make(sample, parts, 2, &t));
  rig_buffer *x = NULL, *y = NULL, *z = NULL, *a = NULL, *b = NULL;
  ok(rig_buffer_create(host, 1024 * 4, &x));
  ok(rig_buffer_create(host, 1024 * 4, &y));
  ok(rig_buffer_create(host, 1024 * 4, &z));
  ok(rig_buffer_create(sample, 4096, &a));
  ok(rig_buffer_create(sample, 4096, &b));
  rig_buffer *const bufs[3] = {x, y, z}, *const ab[2] = {a, b};
  rig_profile_start(0);
  rig_point p = 0;
  rig_status st_ = RIG_OK;
  for (int i = 0; i < 501 && st_ == RIG_OK; i++) {
    if (i == 1)
      count_start(); /* after the first: the rings, a run, the workers */
    st_ = launch_once(s, bufs);
    if (st_ == RIG_OK)
      st_ = rig_buffer_submit_copy(x, y, &p);
    if (st_ == RIG_OK)
      st_ = sample_once(t, ab);
  }
  expect_none("profiled host launches, host copies and sample submits");
  ok(st_);
  assert_int_equal(profile_stop_take(NULL), 501 * 4); /* every part was recorded */
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_submission_release(s);
  rig_submission_release(t);
  rig_image_release(im);
  ok(rig_device_close(sample));
  rig_device_release(sample);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(counter_counts_each_call),
      cmocka_unit_test(reclaim_7_memory_create_from_cache_allocates_nothing),
      cmocka_unit_test(reclaim_7_host_create_from_cache_allocates_nothing),
      cmocka_unit_test(submit_20_fast_path_allocates_nothing),
      cmocka_unit_test(submit_20_copy_memory_to_host_allocates_nothing),
      cmocka_unit_test(submit_20_host_launch_allocates_nothing),
      cmocka_unit_test(profile_first_submit_allocates_nothing), /* before any ring */
      cmocka_unit_test(profile_recording_allocates_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}

#else /* UNDER_ASAN or UNDER_TSAN */

int main(void) {
  printf("skip: AddressSanitizer owns malloc, so this test cannot count its calls\n");
  return 77;
}

#endif
