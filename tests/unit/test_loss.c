/* test_loss.c: hangs and losses that spread along queue waits (HANG-1..7,
 * LOSS-5, LOSS-6, LOSS-13, LOSS-19, ERR-30, ERR-31), on the test device
 * with a hang bound and a piece of work that never finishes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <rig/rig.h>

static void ok(rig_status st) {
  if (st != RIG_OK)
    fail_msg("%s: %s", rig_status_name(st), rig_last_error()->message);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static rig_device *open_ok(const char *name) {
  rig_device *d;
  ok(rig_open(name, &d));
  return d;
}

static void done(rig_device *d) {
  ok(rig_close(d));
  rig_device_release(d);
}

/* HANG-1, HANG-2, HANG-3, HANG-6, HANG-7, LOSS-5, ERR-30: a device whose
 * work stands still is lost by a wait once its clock passes the bound,
 * "no progress for N ms"; while nothing waits, it is not. */
static void hang_1_2_3_6_7_a_wait_finds_the_hang(void **state) {
  rig_device *d = open_ok("test:hang-a,hang_ms=300,hang_nth=2");
  rig_buffer *b;
  ok(rig_buffer_create(d, 64, &b));
  ok(rig_buffer_fill(b, 1, 1));           /* the first runs */
  rig_point p;
  ok(rig_buffer_submit_fill(b, 2, 1, &p)); /* the second never finishes */
  sleep_ms(500);
  assert_null(rig_lost(d));               /* HANG-7: nothing waited */
  double t0 = now_s();
  assert_int_equal(rig_point_wait(p), RIG_LOST);
  double took = now_s() - t0;
  print_message("hang found after %.0f ms of waiting (bound 300 ms)\n", took * 1e3);
  assert_string_equal(rig_lost(d), "no progress for 300 ms");
  assert_true(took < 30.0); /* found at all: nothing waits forever */
  rig_buffer_release(b);
  done(d);
}

/* HANG-4, HANG-5: a device that reaches later values, or stands idle, is not
 * lost: its clock starts again. */
static void hang_4_5_progress_and_idleness_restart_the_clock(void **state) {
  rig_device *d = open_ok("test:hang-b,hang_ms=300,delay_us=150000");
  rig_buffer *b;
  rig_point p;
  ok(rig_buffer_create(d, 64, &b));
  for (int i = 0; i < 4; i++) /* 600 ms of work, 150 ms a value */
    ok(rig_buffer_submit_fill(b, (uint32_t)i, 1, &p));
  ok(rig_point_wait(p));                                   /* HANG-4 */
  sleep_ms(500);                                           /* idle */
  ok(rig_buffer_submit_fill(b, 9, 1, &p));
  ok(rig_point_wait(p));                                   /* HANG-5 */
  assert_null(rig_lost(d));
  rig_buffer_release(b);
  done(d);
}

/* LOSS-6, LOSS-13, LOSS-19, ERR-31, ERR-36: a device whose queue waits for
 * a point that a lost device never reached is lost, "NAME lost"; another
 * device, sharing nothing with them, is not. */
static void loss_6_19_a_loss_spreads_along_queue_waits(void **state) {
  rig_device *a = open_ok("test:loss-a,hang_nth=1,fault_nth=2");
  rig_device *b = open_ok("test:loss-b");
  rig_device *other = open_ok("test:loss-other");
  rig_buffer *xa, *ya, *yb, *z;
  ok(rig_buffer_create(a, 64, &xa));
  ok(rig_buffer_create(a, 64, &ya));
  ok(rig_buffer_create(b, 64, &yb));
  ok(rig_buffer_create(other, 64, &z));
  rig_point pa, pb, pz;
  ok(rig_buffer_submit_fill(xa, 1, 1, &pa));     /* never finishes */
  ok(rig_buffer_submit_copy(xa, yb, &pb));       /* b's queue waits for pa */
  rig_stats st;
  rig_device_stats(b, &st);
  assert_int_equal(st.queue_waits, 1);
  assert_int_equal(rig_buffer_fill(ya, 2, 1), RIG_LOST); /* a is lost: pa dropped */
  assert_int_equal(rig_point_wait(pb), RIG_LOST);
  char want[256];
  snprintf(want, sizeof want, "%s lost", rig_name(a));
  assert_string_equal(rig_lost(b), want);                  /* ERR-31 */
  snprintf(want, sizeof want, "%s lost: %s lost", rig_name(b), rig_name(a));
  assert_string_equal(rig_last_error()->message, want);     /* ERR-36 */
  ok(rig_buffer_submit_fill(z, 3, 1, &pz));                /* LOSS-13 */
  ok(rig_point_wait(pz));
  assert_null(rig_lost(other));
  rig_buffer_release(xa);
  rig_buffer_release(ya);
  rig_buffer_release(yb);
  rig_buffer_release(z);
  done(b);
  done(a);
  done(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hang_1_2_3_6_7_a_wait_finds_the_hang),
      cmocka_unit_test(hang_4_5_progress_and_idleness_restart_the_clock),
      cmocka_unit_test(loss_6_19_a_loss_spreads_along_queue_waits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
