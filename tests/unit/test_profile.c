/* test_profile.c: the records of a known pipeline (docs/profiling.md):
 * host launches and copies, a fill and a copy on the sample driver's two
 * queues, and a fill, a launch and a copy on vulkan:0 (skipped where it
 * does not open). Each record's device, kind, name and point, their order
 * and that parts on one queue do not overlap, and that each took time.
 *
 * Run as `test-profile workload`, it runs the same pipeline with no
 * checks and exits: check-chrome-trace.py runs it under RIG_PROFILE and
 * under `rig profile`, and checks the trace file each writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/rig.h>

#include "check.h"
#include "kernel_file.h"
#include "kernels.h"

enum { N = 4096 }; /* floats of the host's buffers */

/* Takes and drops what earlier work recorded. */
static void take_nothing(void) {
  rig_profile *p = NULL;
  ok(rig_profile_take(&p));
  rig_profile_free(p);
}

/* Two launches of add on the host, then two copies and a fill there:
 * five values of CPU. */
static void host_work(void) {
  rig_device *host = rig_device_host();
  rig_image *im = kernel_load("add");
  rig_function *f = NULL;
  ok(rig_image_resolve(im, "add", &f));
  rig_buffer *x = create_ok(host, N * 4), *y = create_ok(host, N * 4), *z = create_ok(host, N * 4);
  ok(rig_buffer_fill(x, 0x3f800000u, 4));
  ok(rig_buffer_fill(y, 0x40000000u, 4));
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part part = rig_part_launch(f, refs, 3, 32); /* add.c's {x, y, z, n} */
  rig_submission *s = NULL;
  ok(rig_submission_make(host, &part, 1, &s));
  rig_buffer *bufs[3] = {x, y, z};
  for (int i = 0; i < 2; i++) {
    rig_run *r = NULL;
    rig_point p;
    ok(rig_submission_take(s, &r));
    ok(rig_run_groups(r, 0, N / 256, 1, 1));
    ok(rig_run_threads(r, 0, 256, 1, 1));
    ok(rig_run_int64(r, 0, 24, N));
    ok(rig_run_submit(r, bufs, 3, NULL, 0, &p));
  }
  rig_point p;
  ok(rig_buffer_submit_copy(z, x, &p));
  ok(rig_buffer_submit_copy(x, y, &p));
  ok(rig_buffer_submit_fill(z, 0, 1, &p));
  rig_submission_release(s);
  rig_image_release(im);
  rig_buffer *all[3] = {x, y, z};
  for (int i = 0; i < 3; i++) {
    ok(rig_buffer_free(all[i]));
    rig_buffer_release(all[i]); /* free keeps the caller's reference */
  }
}

/* One submission on d: a fill of a, then a copy of a into b (which
 * follows it), waited for. With f, a launch of fill.spv into b between
 * them. */
static void device_work(rig_device *d, rig_function *f) {
  enum { W = 1024 };
  rig_buffer *a = create_ok(d, W * 4), *b = create_ok(d, W * 4);
  rig_ref ref = rig_ref_write(1, 0);
  rig_part parts[3] = {rig_part_fill(0, 0xab, 1), rig_part_launch(f, &ref, 1, 24),
                       rig_part_copy(0, 1)};
  if (!f)
    parts[1] = parts[2];
  rig_submission *s = NULL;
  ok(rig_submission_make(d, parts, f ? 3 : 2, &s));
  rig_run *r = NULL;
  ok(rig_submission_take(s, &r));
  if (f) {
    ok(rig_run_groups(r, 0, W / 64, 1, 1));
    ok(rig_run_threads(r, 0, 64, 1, 1));
    ok(rig_run_int32(r, 0, 8, 7));
    ok(rig_run_int32(r, 0, 12, 1));
    ok(rig_run_int32(r, 0, 16, W));
  }
  rig_buffer *bufs[2] = {a, b};
  rig_point p;
  ok(rig_run_submit(r, bufs, 2, NULL, 0, &p));
  ok(rig_point_wait(p));
  rig_submission_release(s);
  ok(rig_buffer_free(a));
  ok(rig_buffer_free(b));
  rig_buffer_release(a); /* free keeps the caller's reference */
  rig_buffer_release(b);
}

/* vulkan:0 where it opens, NULL (and why on stdout) where not. */
static rig_device *vulkan_or_null(void) {
  rig_device *d = NULL;
  if (rig_device_open("vulkan:0", &d) == RIG_OK)
    return d;
  printf("vulkan:0 does not open here: %s\n", rig_error_last()->message);
  return NULL;
}

static void vulkan_work(rig_device *d) {
  rig_function *f = NULL;
  rig_image *im = kernel_load_on(d, "kernels/vulkan/fill.spv", "fill", &f);
  device_work(d, f);
  rig_image_release(im);
}

/* The records of device name in p, in order of start, into out (at most
 * max); returns how many. */
static size_t records_of(const rig_profile *p, const char *name, const rig_profile_record **out,
                         size_t max) {
  size_t n, k = 0;
  const rig_profile_record *r = rig_profile_records(p, &n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(rig_profile_device(p, r[i].device), name) == 0 && k < max)
      out[k++] = &r[i];
  return k;
}

/* Each record took time, and the records of each queue follow one
 * another without overlap, in the order of their values and parts. */
static void check_queues(const rig_profile_record **r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    assert_true(r[i]->end_ns > r[i]->start_ns);
    for (size_t j = i + 1; j < n; j++) {
      if (r[j]->queue != r[i]->queue)
        continue;
      assert_true(r[i]->end_ns <= r[j]->start_ns); /* sorted by start: i ran first */
      assert_true(r[i]->point < r[j]->point ||
                  (r[i]->point == r[j]->point && r[i]->part < r[j]->part));
    }
  }
}

static void expect(const rig_profile_record *r, rig_part_kind kind, const char *name,
                   uint64_t value) {
  assert_int_equal(r->kind, kind);
  assert_string_equal(r->name, name);
  assert_int_equal(rig_point_value(r->point), value);
}

/* The host's launches, copies and fill, in order, one record each.
 * OPEN-43: a memory device times no work: its copy, in the same profile,
 * leaves no record (every record is the host's). */
static void host_launches_and_copies(void **st) {
  (void)st;
  rig_device *host = rig_device_host();
  rig_device *mem = open_ok("memory:profile");
  rig_profile_start(0);
  take_nothing();
  uint64_t v = rig_device_submitted(host);
  host_work();
  rig_buffer *a = create_ok(mem, 64), *b = create_ok(mem, 64);
  ok(rig_buffer_copy(a, b)); /* a memory device times no work */
  rig_profile *p = NULL;
  ok(rig_profile_take(&p));
  rig_profile_stop();
  const rig_profile_record *r[16];
  size_t n = records_of(p, "CPU", r, 16);
  assert_int_equal(n, 5); /* rig_buffer_fill of host memory runs on the caller's thread */
  size_t all;
  rig_profile_records(p, &all);
  assert_int_equal(all, n);
  assert_int_equal(rig_profile_dropped(p), 0);
  expect(r[0], RIG_PART_LAUNCH, "add", v + 1);
  expect(r[1], RIG_PART_LAUNCH, "add", v + 2);
  expect(r[2], RIG_PART_COPY, "copy", v + 3);
  expect(r[3], RIG_PART_COPY, "copy", v + 4);
  expect(r[4], RIG_PART_FILL, "fill", v + 5);
  check_queues(r, n);
  rig_profile_free(p);
  ok(rig_buffer_free(a));
  ok(rig_buffer_free(b));
  rig_buffer_release(a);
  rig_buffer_release(b);
  close_release(mem);
}

/* The sample driver times by the clock on its two queues: the fill on
 * queue 0, the copy that follows it on queue 1. */
static void sample_on_d(rig_device *d) { device_work(d, NULL); }

/* The profile of work(d) alone; *v the value d had before it. */
static rig_profile *profile_of(void (*work)(rig_device *), rig_device *d, uint64_t *v) {
  rig_profile_start(0);
  take_nothing();
  *v = rig_device_submitted(d);
  work(d);
  rig_profile *p = NULL;
  ok(rig_profile_take(&p));
  rig_profile_stop();
  return p;
}

static void sample_two_queues(void **st) {
  (void)st;
  rig_device *d = open_ok("sample:0");
  uint64_t v;
  rig_profile *p = profile_of(sample_on_d, d, &v);
  const rig_profile_record *r[4];
  assert_int_equal(records_of(p, "sample:0", r, 4), 2);
  expect(r[0], RIG_PART_FILL, "fill", v + 1);
  expect(r[1], RIG_PART_COPY, "copy", v + 1);
  assert_int_equal(r[0]->queue, 0);
  assert_int_equal(r[1]->queue, 1);
  assert_true(r[0]->end_ns <= r[1]->start_ns); /* the copy follows the fill */
  check_queues(r, 2);
  rig_profile_free(p);
  close_release(d);
}

/* Vulkan times by timestamp queries: the three parts of one value, in
 * order on its one queue, the launch named by its function. */
static void vulkan_dispatch(void **st) {
  (void)st;
  rig_device *d = vulkan_or_null();
  if (!d)
    skip();
  uint64_t v;
  rig_profile *p = profile_of(vulkan_work, d, &v);
  const rig_profile_record *r[8];
  assert_int_equal(records_of(p, "vulkan:0", r, 8), 3);
  expect(r[0], RIG_PART_FILL, "fill", v + 1);
  expect(r[1], RIG_PART_LAUNCH, "fill", v + 1);
  expect(r[2], RIG_PART_COPY, "copy", v + 1);
  for (int i = 0; i < 3; i++)
    assert_int_equal(r[i]->part, i);
  check_queues(r, 3);
  rig_profile_free(p);
  close_release(d);
}

/* Stopped, nothing is recorded; misuse is told. */
static void stopped_records_nothing(void **st) {
  (void)st;
  rig_profile_stop();
  take_nothing();
  host_work();
  rig_profile *p = NULL;
  ok(rig_profile_take(&p));
  size_t n;
  rig_profile_records(p, &n);
  assert_int_equal(n, 0);
  assert_int_equal(rig_profile_write_chrome(p, NULL), RIG_INVALID);
  assert_int_equal(rig_profile_save_chrome(p, "/nonexistent/dir/trace.json"), RIG_IO);
  assert_int_equal(rig_profile_take(NULL), RIG_INVALID);
  rig_profile_free(p);
}

/* The pipeline with no checks, for check-chrome-trace.py. */
static int workload(void) {
  host_work();
  rig_device *s = open_ok("sample:0");
  device_work(s, NULL);
  close_release(s);
  rig_device *d = vulkan_or_null();
  if (d) {
    vulkan_work(d);
    close_release(d);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "workload") == 0)
    return workload();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(host_launches_and_copies),
      cmocka_unit_test(sample_two_queues),
      cmocka_unit_test(vulkan_dispatch),
      cmocka_unit_test(stopped_records_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
