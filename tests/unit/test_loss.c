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

#include "util.h"

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

/* LOSS-1, LOSS-10, LOSS-12, LOSS-17, LOSS-18, LMEM-2, LMEM-7, LMEM-9,
 * LMEM-10, ERR-27, ERR-38: a driver's fault loses its device for good, its
 * properties kept; values it reports afterwards are dropped; every use of
 * it, of its memory and of borrows on it is Lost, and so is a read of other
 * memory whose last write it never reached; its memory returns once it has
 * stopped. */
static void loss_1_10_12_17_a_fault_and_what_it_leaves(void **state) {
  rig_device *d = open_ok("test:lr-a,delay_us=150000,fault_nth=3");
  rig_device *peer = open_ok("test:lr-peer");
  rig_buffer *mine, *host, *borrowed, *theirs;
  check_ok(rig_buffer_create(d, 64, &mine), "create");
  check_ok(rig_buffer_create(rig_host(), 65536, &host), "create host");
  check_ok(rig_buffer_borrow(d, host, &borrowed), "borrow");
  check_ok(rig_buffer_create(peer, 64, &theirs), "create peer");
  rig_part part = rig_part_copy(0, 1);
  rig_submission *s;
  rig_run *run;
  rig_point written, p;
  check_ok(rig_submission_make(d, &part, 1, &s), "make");
  check_ok(rig_submission_take(s, &run), "take");
  rig_buffer *bufs[2] = {mine, theirs};
  check_ok(rig_submit(run, bufs, 2, NULL, 0, &written), "d writes theirs"); /* slow */
  check_ok(rig_buffer_submit_fill(mine, 1, 1, &p), "fill");
  assert_int_equal(rig_buffer_submit_fill(mine, 2, 1, &p), RIG_LOST);       /* LOSS-1 */
  const char *why = rig_lost(d);
  assert_non_null(why);
  assert_string_equal(rig_arch(d), "test");                                 /* LOSS-12 */
  assert_int_equal(rig_alignment(d), 256);
  rig_buffer *x = NULL;
  assert_int_equal(rig_buffer_create(d, 64, &x), RIG_LOST);                 /* LMEM-7 */
  uint8_t byte;
  assert_int_equal(rig_buffer_get(mine, 0, &byte, 1), RIG_LOST);            /* LMEM-8 */
  assert_int_equal(rig_buffer_get(borrowed, 0, &byte, 1), RIG_LOST);        /* LMEM-9 */
  assert_int_equal(rig_buffer_get(theirs, 0, &byte, 1), RIG_LOST);          /* LMEM-2, 10 */
  assert_ptr_equal(rig_last_error()->device, d);                            /* ERR-27 */
  uint64_t seen = 0;
  for (int i = 0; i < 100 && seen < rig_point_value(written); i++) {
    sleep_ms(10);
    check_ok(rig_signaled(d, &seen), "signaled");                          /* TL-21 */
  }
  assert_false(rig_point_reached(written));                                /* LOSS-17 */
  assert_string_equal(rig_lost(d), why);                                    /* LOSS-10 */
  assert_null(rig_lost(NULL));                                              /* ERR-38 */
  rig_submission_release(s);
  rig_buffer_release(borrowed);
  rig_buffer_release(mine);
  check_ok(rig_close(d), "close");
  check_ok(rig_free_cache(d), "free_cache");
  assert_int_equal(rig_allocated(d), 0); /* LOSS-18: dropped values only held memory */
  rig_device_release(d);
  rig_buffer_release(theirs);
  rig_buffer_release(host);
  close_release(peer);
}

/* LOSS-3: a driver that fails to commit loses its device with its message. */
static void loss_3_a_failed_commit(void **state) {
  rig_device *d = open_ok("test:lr-commit,commit_k=1000,fault_commit=1");
  rig_buffer *b;
  rig_point p;
  check_ok(rig_buffer_create(d, 64, &b), "create");
  check_ok(rig_buffer_submit_fill(b, 1, 1, &p), "fill");
  assert_int_equal(rig_point_wait(p), RIG_LOST); /* the wait commits (TL-9) */
  assert_string_equal(rig_lost(d), "commit refused");
  rig_buffer_release(b);
  close_release(d);
}

/* STOP-8, STOP-9, STOP-10, STOP-11, ERR-43: a lost device's stop is owed:
 * neither its uses nor reclamation run it, so its memory stays held; a close
 * runs it, and its memory returns. */
static void stop_8_11_the_owed_stop(void **state) {
  rig_device *d = open_ok("test:lr-owed,fault_nth=2");
  rig_buffer *b;
  check_ok(rig_buffer_create(d, 4096, &b), "create");
  check_ok(rig_buffer_fill(b, 1, 1), "fill");
  assert_int_equal(rig_buffer_fill(b, 2, 1), RIG_LOST);
  rig_buffer_release(b);
  uint64_t held = rig_allocated(d);
  assert_true(held >= 4096);
  check_ok(rig_free_cache(d), "free_cache");                 /* STOP-10 */
  rig_buffer *use = NULL;
  assert_int_equal(rig_buffer_create(d, 64, &use), RIG_LOST); /* a use runs no stop */
  assert_int_equal(rig_allocated(d), held);                  /* STOP-11, STOP-2 */
  check_ok(rig_close(d), "close");                           /* STOP-9 */
  check_ok(rig_free_cache(d), "free_cache");
  assert_int_equal(rig_allocated(d), 0);
  rig_device_release(d);
}

/* STOP-1, STOP-5, STOP-7: a device whose stop returned but which never
 * reports the last value its driver took has not stopped: its memory stays
 * held. */
static void stop_1_5_7_never_reporting_keeps_memory(void **state) {
  rig_device *d = open_ok("test:lr-silent,hang_nth=1,silent_stop=1,fault_nth=2");
  rig_buffer *b;
  rig_point p;
  check_ok(rig_buffer_create(d, 4096, &b), "create");
  check_ok(rig_buffer_submit_fill(b, 1, 1, &p), "fill"); /* never finishes */
  assert_int_equal(rig_buffer_submit_fill(b, 2, 1, &p), RIG_LOST); /* the loss */
  rig_buffer_release(b);
  check_ok(rig_close(d), "close");       /* its stop returns, nothing reported */
  check_ok(rig_free_cache(d), "free_cache");
  assert_true(rig_allocated(d) >= 4096);
  rig_device *again = NULL;
  check_ok(rig_open("test:lr-silent-2", &again), "open another");
  check_ok(rig_free_cache(again), "a move"); /* STOP-7: still not stopped */
  assert_true(rig_allocated(d) >= 4096);
  close_release(again);
  rig_device_release(d);
}

/* ERR-22, ERR-23, ERR-24, ERR-29, ERR-26: a driver that fails half-way
 * through an allocation, a change of the memory its work uses, loses its
 * device with the failure's name and text; an allocation refused for room
 * loses nothing. */
static void err_22_23_29_an_allocation_failed_half_way(void **state) {
  rig_device *d = open_ok("test:lr-half,half_alloc=2,budget=65536");
  rig_buffer *a, *b = NULL;
  check_ok(rig_buffer_create(d, 64, &a), "first allocation");
  assert_int_equal(rig_buffer_create(d, 1 << 20, &b), RIG_OUT_OF_MEMORY); /* ERR-26 */
  assert_null(rig_lost(d));
  assert_int_equal(rig_buffer_create(d, 64, &b), RIG_LOST);               /* ERR-23 */
  assert_null(b);
  assert_string_equal(rig_lost(d), "RIG_EDGE_HALF(\"page table half written\")"); /* ERR-29 */
  rig_buffer_release(a);
  close_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hang_1_2_3_6_7_a_wait_finds_the_hang),
      cmocka_unit_test(hang_4_5_progress_and_idleness_restart_the_clock),
      cmocka_unit_test(loss_6_19_a_loss_spreads_along_queue_waits),
      cmocka_unit_test(loss_1_10_12_17_a_fault_and_what_it_leaves),
      cmocka_unit_test(loss_3_a_failed_commit),
      cmocka_unit_test(stop_8_11_the_owed_stop),
      cmocka_unit_test(stop_1_5_7_never_reporting_keeps_memory),
      cmocka_unit_test(err_22_23_29_an_allocation_failed_half_way),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
