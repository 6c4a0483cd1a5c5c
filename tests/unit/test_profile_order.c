/* test_profile_order.c: a profile shows work in its order across devices.
 * 200 chains, each Vulkan -> host -> Vulkan -> io and sample -> host:
 *
 *   vulkan:0  fill.spv writes V1
 *   copy V1 -> H1          (whichever device runs it)
 *   CPU       add reads H1, writes H2
 *   copy H2 -> V2
 *   vulkan:0  fill.spv writes V2
 *   copy V2 -> a file      (an io device: no span)
 *   sample:0  a fill of S
 *   copy S -> H3
 *   CPU       add reads H3, writes H4
 *
 * Each step's memory makes it wait for the one before (ORDER-3). In the
 * profile, every span starts no earlier than the end of the span it waits
 * for, less the two devices' clock bounds (rig_profile_clock_error): a
 * Vulkan driver that converts its clock with an error it does not state
 * shows a copy starting before the kernel it reads ended. Prints the
 * worst margin seen, the figure of docs/profiling.md. Exits 77 where
 * vulkan:0 does not open.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include "check.h"
#include "kernels.h"

enum { CHAINS = 200, W = 1024, STEPS = 9 };

typedef struct chain {
  rig_point step[STEPS]; /* 0: none (a step no device timed) */
} chain;

static chain chains[CHAINS];

/* One launch of fill.spv on d writing v (value 7 over W ints). */
static rig_point vk_fill(rig_submission *s, rig_buffer *v) {
  rig_run *r = take_ok(s);
  ok(rig_run_groups(r, 0, W / 64, 1, 1));
  ok(rig_run_threads(r, 0, 64, 1, 1));
  ok(rig_run_int32(r, 0, 8, 7));
  ok(rig_run_int32(r, 0, 12, 1));
  ok(rig_run_int32(r, 0, 16, W));
  rig_point p;
  ok(rig_run_submit(r, &v, 1, NULL, 0, &p));
  return p;
}

static rig_point copy(rig_buffer *src, rig_buffer *dst) {
  rig_point p;
  ok(rig_buffer_submit_copy(src, dst, &p));
  return p;
}

/* The record of point p in the profile, or NULL. */
static const rig_profile_record *record_of(const rig_profile_record *r, size_t n, rig_point p) {
  for (size_t i = 0; i < n; i++)
    if (r[i].point == p)
      return &r[i];
  return NULL;
}

typedef struct worst {
  int64_t margin; /* least of next start - prev end + bounds */
  int64_t gap; /* least of next start - prev end */
  size_t pairs, late;
} worst;

/* Checks that step b starts no earlier than step a ends, less the bounds. */
static void check_pair(const rig_profile *p, const rig_profile_record *r, size_t n, rig_point a,
                       rig_point b, worst *w) {
  const rig_profile_record *x = record_of(r, n, a), *y = record_of(r, n, b);
  if (!a || !b || !x || !y)
    return;
  int64_t gap = (int64_t)y->start_ns - (int64_t)x->end_ns;
  int64_t bound =
      (int64_t)(rig_profile_clock_error(p, x->device) + rig_profile_clock_error(p, y->device));
  w->pairs++;
  if (gap < w->gap)
    w->gap = gap;
  if (gap + bound < w->margin)
    w->margin = gap + bound;
  if (gap + bound < 0) {
    w->late++;
    print_message("%s %s (value %" PRIu64 ") starts %" PRId64 " ns before %s %s (value %" PRIu64
                  ") ends, beyond the bound %" PRId64 " ns\n",
                  rig_profile_device(p, y->device), y->name, rig_point_value(y->point), -gap,
                  rig_profile_device(p, x->device), x->name, rig_point_value(x->point), bound);
  }
}

static void run_chains(rig_device *vk, rig_device *sample, rig_device *io) {
  rig_device *host = rig_device_host();
  rig_function *fill = NULL, *add;
  rig_image *vim = kernel_load_on(vk, "kernels/vulkan/fill.spv", "fill", &fill);
  rig_image *him = kernel_load("add");
  add = resolve_ok(him, "add");
  rig_ref vref = rig_ref_write(0, 0);
  rig_submission *vs = launch_make_ok(vk, fill, &vref, 1, 24);
  rig_ref hrefs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_submission *hs = launch_make_ok(host, add, hrefs, 3, 32);
  rig_buffer *v1 = create_ok(vk, W * 4), *v2 = create_ok(vk, W * 4), *s = create_ok(sample, W * 4);
  rig_buffer *h[4];
  for (int i = 0; i < 4; i++)
    h[i] = create_ok(host, W * 4);
  rig_buffer *f = create_ok(io, W * 4);
  for (int c = 0; c < CHAINS; c++) {
    rig_point *st = chains[c].step;
    st[0] = vk_fill(vs, v1);
    st[1] = copy(v1, h[0]);
    st[2] = add_example_run(hs, h[0], h[0], h[1], W);
    st[3] = copy(h[1], v2);
    st[4] = vk_fill(vs, v2);
    st[5] = copy(v2, f);
    ok(rig_buffer_submit_fill(s, (uint32_t)c, 4, &st[6]));
    st[7] = copy(s, h[2]);
    st[8] = add_example_run(hs, h[2], h[2], h[3], W);
    ok(rig_point_wait(st[4])); /* the driver writes a value's records once it saw it reached */
  }
  for (int c = 0; c < STEPS; c++) /* a copy done at once has no point */
    if (chains[CHAINS - 1].step[c] != RIG_POINT_NONE)
      ok(rig_point_wait(chains[CHAINS - 1].step[c]));
  rig_buffer *all[] = {v1, v2, s, h[0], h[1], h[2], h[3], f};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    rig_buffer_release(all[i]);
  rig_submission_release(vs);
  rig_submission_release(hs);
  rig_image_release(vim);
  rig_image_release(him);
}

static void chains_across_devices_keep_their_order(void **state) {
  rig_device *vk = NULL, *sample = open_ok("sample:0"), *io = NULL;
  if (rig_device_open("vulkan:0", &vk) != RIG_OK) {
    print_message("skipped: vulkan:0 does not open here: %s\n", rig_error_last()->message);
    close_release(sample);
    skip();
  }
  char file[] = "/tmp/rig-profile-order-XXXXXX";
  int fd = mkstemp(file);
  assert_true(fd >= 0);
  close(fd);
  rig_io_opener o = {.library = "io", .target = file, .flags = RIG_IO_CREATE};
  ok(rig_device_open_io(&o, &io));
  rig_profile *p = NULL;
  ok(rig_profile_take(&p)); /* what earlier work left */
  rig_profile_free(p);
  rig_profile_start(0);
  run_chains(vk, sample, io);
  close_release(vk); /* its last records */
  rig_profile_stop();
  ok(rig_profile_take(&p));
  size_t n;
  const rig_profile_record *r = rig_profile_records(p, &n);
  assert_int_equal(rig_profile_dropped(p), 0);
  worst w = {INT64_MAX, INT64_MAX, 0, 0};
  static const int waits[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {6, 7}, {7, 8}};
  for (int c = 0; c < CHAINS; c++)
    for (size_t k = 0; k < sizeof waits / sizeof waits[0]; k++)
      check_pair(p, r, n, chains[c].step[waits[k][0]], chains[c].step[waits[k][1]], &w);
  for (uint32_t d = 0; d < rig_profile_devices(p); d++)
    print_message("%s: clock bound %" PRIu64 " ns\n", rig_profile_device(p, d),
                  rig_profile_clock_error(p, d));
  print_message("%zu pairs over %d chains: least gap %" PRId64 " ns, least gap + bounds %" PRId64
                " ns, %zu out of order\n",
                w.pairs, CHAINS, w.gap, w.margin, w.late);
  assert_true(w.pairs >= CHAINS * 4); /* both Vulkan steps and the host's were timed */
  assert_int_equal(w.late, 0);
  rig_profile_free(p);
  close_release(io);
  close_release(sample);
  unlink(file);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chains_across_devices_keep_their_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
