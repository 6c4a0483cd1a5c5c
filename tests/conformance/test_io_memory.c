/* test_io_memory.c: the suite's buffer, copy and order checks with io
 * memory on one side and the device under test on the other (docs/io.md).
 * The io device is a file the test creates under $TMPDIR.
 *
 * Rules: IO-3 IO-4 ORDER-15 RECLAIM-16 STAMP-2
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rig_device *dev, *io;
static char path[300];

static int setup(void **state) {
  const char *t = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/rig-conf-io-%d", t && *t ? t : "/tmp", (int)getpid());
  dev = conf_open();
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_CREATE, .size = 1u << 20};
  if (rig_device_open_io(&o, &io) != RIG_OK) {
    print_error("io: %s\n", rig_error_last()->message);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  int bad = 0;
  if (!conf_is_host())
    bad |= rig_device_close(dev) != RIG_OK;
  rig_device_release(dev);
  bad |= rig_device_close(io) != RIG_OK;
  rig_device_release(io);
  unlink(path);
  return bad ? -1 : 0;
}

static void pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(i * 13 + seed);
}

/* IO-3: bytes go from the device's memory into a file and back, whole and
 * through views at odd offsets. */
static void io_3_round_trip_through_a_file(void **state) {
  size_t n = (3u << 20) + 17;
  unsigned char *want = malloc(n), *got = malloc(n);
  pattern(want, n, 5);
  rig_buffer *x, *y, *f;
  conf_ok(rig_buffer_create(dev, n, &x));
  conf_ok(rig_buffer_create(dev, n, &y));
  conf_ok(rig_buffer_create(io, n, &f));
  conf_ok(rig_buffer_put(x, 0, want, n));
  conf_ok(rig_buffer_copy(x, f));
  conf_ok(rig_buffer_copy(f, y));
  conf_ok(rig_buffer_get(y, 0, got, n));
  assert_memory_equal(got, want, n);
  rig_buffer *fv, *yv;
  conf_ok(rig_buffer_view(f, 1001, 4096, RIG_READ, &fv));
  conf_ok(rig_buffer_view(y, 3, 4096, RIG_READ_WRITE, &yv));
  conf_ok(rig_buffer_fill(y, 0, 1));
  conf_ok(rig_buffer_copy(fv, yv));
  conf_ok(rig_buffer_get(y, 3, got, 4096));
  assert_memory_equal(got, want + 1001, 4096);
  conf_status(rig_buffer_copy(yv, fv), RIG_INVALID);      /* a Read destination */
  rig_buffer_release(fv);
  rig_buffer_release(yv);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(f);
  free(want);
  free(got);
}

/* IO-4, ORDER-15: submitted work on the device, then a copy into the file:
 * the copy reads what the work wrote; then the device's next write of the
 * source follows the copy's read. */
static void io_4_order_across_io(void **state) {
  size_t n = 1u << 16;
  rig_buffer *x, *f;
  conf_ok(rig_buffer_create(dev, n, &x));
  conf_ok(rig_buffer_create(io, n, &f));
  for (unsigned round = 1; round <= 8; round++) {
    rig_point p;
    conf_ok(rig_buffer_submit_fill(x, round * 0x01010101u, 4, &p));
    conf_ok(rig_buffer_copy(x, f));
    unsigned char got[32];
    conf_ok(rig_buffer_get(f, n - 32, got, sizeof got));
    for (size_t i = 0; i < sizeof got; i++)
      assert_int_equal(got[i], round);
  }
  rig_buffer_release(x);
  rig_buffer_release(f);
}

/* IO-3: a submitted copy out of a file into the device's memory: the
 * device's later work on the buffer sees the file's bytes. */
static void io_3_submitted_copy_then_device_work(void **state) {
  size_t n = 1u << 16;
  unsigned char want[1u << 16], got[1u << 16];
  pattern(want, n, 9);
  rig_buffer *f, *x, *y;
  conf_ok(rig_buffer_of_io(io, 0, n, &f));
  conf_ok(rig_buffer_put(f, 0, want, n));
  conf_ok(rig_buffer_create(dev, n, &x));
  conf_ok(rig_buffer_create(dev, n, &y));
  rig_point p, q;
  conf_ok(rig_buffer_submit_copy(f, x, &p));
  conf_ok(rig_buffer_submit_copy(x, y, &q));
  conf_ok(rig_buffer_get(y, 0, got, n));
  assert_memory_equal(got, want, n);
  rig_buffer_release(f);
  rig_buffer_release(x);
  rig_buffer_release(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(io_3_round_trip_through_a_file),
      cmocka_unit_test(io_4_order_across_io),
      cmocka_unit_test(io_3_submitted_copy_then_device_work),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
