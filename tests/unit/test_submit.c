/* test_submit.c: submit's rules that the conformance suite does not name
 * (SUBMIT-15, 22..24, 26, 29, 30, VALID-6, VALID-15), and what devices reach
 * (MACH-12..16).
 *
 * The host's queue runs only launches (HOST-4): its work here is a launch
 * of tests/kernels/fill_bytes.c, loaded from $RIG_KERNELS. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "kernels.h"
#include "util.h"

static rig_submission *fill_submission(rig_device *d) {
  rig_part part = rig_part_fill(0, 7, 1);
  rig_submission *s;
  check_ok(rig_submission_make(d, &part, 1, &s), "make");
  return s;
}

/* SUBMIT-15: a run that holds no bytes is used without being taken: a
 * fill's, on a memory device, whose submit runs the work before it returns
 * as the host's does (the host's runs are launches, which hold their
 * blocks). */
static void submit_15_a_free_run(void **state) {
  rig_device *m = open_ok("memory:sub-15");
  rig_submission *s = fill_submission(m);
  rig_buffer *b = create_ok(m, 64);
  rig_run *run;
  rig_point p;
  check_ok(rig_submission_take(s, &run), "take");
  check_ok(rig_run_submit(run, &b, 1, NULL, 0, &p), "submit");
  check_ok(rig_buffer_fill(b, 0, 1), "fill");
  check_ok(rig_run_submit(run, &b, 1, NULL, 0, &p), "free run"); /* SUBMIT-15 */
  uint8_t byte;
  check_ok(rig_buffer_get(b, 63, &byte, 1), "get");
  assert_int_equal(byte, 7);
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(m);
}

/* SUBMIT-24, LAUNCH-3: on host, a submit's work is done when it returns:
 * a launch, the only part the host's queue runs (HOST-4). Its bytes are
 * there through the raw address, with no wait and no call of rig's. */
static void submit_24_the_hosts_work_is_done_at_return(void **state) {
  rig_image *im = kernel_load("fill_bytes");
  rig_function *f = NULL;
  check_ok(rig_image_resolve(im, "fill_bytes", &f), "resolve");
  assert_non_null(f);
  rig_ref ref = rig_ref_write(0, offsetof(struct fill_bytes, dst));
  rig_part part = rig_part_launch(f, &ref, 1, sizeof(struct fill_bytes));
  rig_submission *s = NULL;
  check_ok(rig_submission_make(rig_device_host(), &part, 1, &s), "make");
  rig_image_release(im);
  rig_buffer *b = create_ok(rig_device_host(), 4096);
  const volatile uint8_t *raw = rig_buffer_host_address(b);
  assert_non_null(raw);
  for (uint32_t round = 1; round <= 3; round++) {
    rig_run *run;
    rig_point p;
    check_ok(rig_submission_take(s, &run), "take");
    struct fill_bytes params = {NULL, 4096, 0x07060500u + round, 4};
    check_ok(rig_run_bytes(run, 0, 0, &params, sizeof params), "params");
    check_ok(rig_run_groups(run, 0, 16, 1, 1), "groups");
    check_ok(rig_run_threads(run, 0, 256, 1, 1), "threads");
    check_ok(rig_run_submit(run, &b, 1, NULL, 0, &p), "submit");
    assert_true(rig_point_reached(p));                           /* SUBMIT-24 */
    for (int i = 0; i < 4096; i++)
      assert_int_equal(raw[i], i % 4 == 0 ? round : (uint8_t)(4 + i % 4));
  }
  rig_submission_release(s);
  rig_buffer_release(b);
}

struct racer {
  rig_submission *s;
  _Atomic(rig_run *) run;
  rig_buffer *b;
  rig_status st;
  rig_point p;
};

/* Takes a run of the submission and submits it: the run is this thread's. */
static void *submit_in_thread(void *arg) {
  struct racer *r = arg;
  rig_run *run;
  r->st = rig_submission_take(r->s, &run);
  atomic_store(&r->run, run);
  if (r->st == RIG_OK)
    r->st = rig_run_submit(run, &r->b, 1, NULL, 0, &r->p);
  return NULL;
}

/* SUBMIT-26: while one submit of a run is under way, another is refused. */
static void submit_26_another_submit_of_the_run_under_way(void **state) {
  rig_device *d = open_ok("test:sub-26,block_ms=300");
  rig_submission *s = fill_submission(d);
  rig_buffer *b = create_ok(d, 64);
  struct racer r = {s, NULL, b, RIG_INVALID, 0};
  uint64_t before = rig_device_submitted(d);
  pthread_t t;
  pthread_create(&t, NULL, submit_in_thread, &r);
  while (rig_device_submitted(d) == before) /* its submit is inside the driver */
    sched_yield();
  rig_point p = RIG_POINT_NONE;
  assert_int_equal(rig_run_submit(atomic_load(&r.run), &b, 1, NULL, 0, &p), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "under way"));
  assert_int_equal(p, RIG_POINT_NONE);
  pthread_join(t, NULL);
  check_ok(r.st, "the first submit");
  check_ok(rig_point_wait(r.p), "wait");
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(d);
}

/* SUBMIT-12, SUBMIT-14, SUBMIT-25: a freed run waits for its next take in
 * the submission's spare or on its free list. Either way a submit takes it
 * as a free run, a take hands out each free run once, and a run another
 * thread took is refused, wherever it was kept. */
static void *submit_free_in_thread(void *arg) {
  struct racer *r = arg;
  r->st = rig_run_submit(r->run, &r->b, 1, NULL, 0, &r->p);
  return NULL;
}

static void submit_12_14_25_spare_and_free_list(void **state) {
  rig_device *m = open_ok("memory:sub-spare");
  rig_submission *s = fill_submission(m);
  rig_buffer *b = create_ok(m, 64);
  rig_run *r1, *r2, *again[2];
  rig_point p;
  check_ok(rig_submission_take(s, &r1), "take");
  check_ok(rig_submission_take(s, &r2), "take a second");
  assert_ptr_not_equal(r1, r2);
  check_ok(rig_run_submit(r1, &b, 1, NULL, 0, &p), "submit r1"); /* to the spare */
  check_ok(rig_run_submit(r2, &b, 1, NULL, 0, &p), "submit r2"); /* to the list */
  for (int round = 0; round < 3; round++) {                  /* SUBMIT-14 */
    check_ok(rig_run_submit(r1, &b, 1, NULL, 0, &p), "free r1 submitted");
    check_ok(rig_run_submit(r2, &b, 1, NULL, 0, &p), "free r2 submitted");
  }
  check_ok(rig_submission_take(s, &again[0]), "take");
  check_ok(rig_submission_take(s, &again[1]), "take");
  assert_ptr_not_equal(again[0], again[1]);                  /* each once */
  assert_true((again[0] == r1 && again[1] == r2) || (again[0] == r2 && again[1] == r1));
  for (int i = 0; i < 2; i++) {                              /* SUBMIT-25 */
    struct racer x = {s, again[i], b, RIG_OK, 0};
    pthread_t t;
    pthread_create(&t, NULL, submit_free_in_thread, &x);
    pthread_join(t, NULL);
    assert_int_equal(x.st, RIG_INVALID);
  }
  for (int i = 0; i < 2; i++)
    check_ok(rig_run_submit(again[i], &b, 1, NULL, 0, &p), "submit the taken run");
  assert_int_equal(rig_point_value(p), rig_device_submitted(m));
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(m);
}

/* SUBMIT-22, SUBMIT-23, SUBMIT-29, SUBMIT-30: once a value is assigned, the
 * driver takes the work or the device is lost: a refused submit is Lost,
 * and its point still stamps the memory; later submits are Lost too. */
static void submit_22_23_29_30_refused_work(void **state) {
  rig_device *d = open_ok("test:sub-30,fault_nth=1");
  rig_submission *s = fill_submission(d);
  rig_buffer *b = create_ok(d, 64);
  rig_run *run;
  rig_point p = RIG_POINT_NONE, w;
  check_ok(rig_submission_take(s, &run), "take");
  assert_int_equal(rig_run_submit(run, &b, 1, NULL, 0, &p), RIG_LOST);    /* SUBMIT-30 */
  assert_non_null(rig_device_lost(d));                                        /* SUBMIT-22 */
  rig_buffer_stamps(b, d, &w, NULL);
  assert_int_equal(rig_point_value(w), rig_device_submitted(d));              /* SUBMIT-23 */
  check_ok(rig_submission_take(s, &run), "take again");
  assert_int_equal(rig_run_submit(run, &b, 1, NULL, 0, &p), RIG_LOST);    /* SUBMIT-29 */
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(d);
}

/* MACH-12..14: every device reaches itself, the host reaches memory
 * devices and a driver's device whose driver says the host addresses its
 * memory, and no other. */
static void mach_12_14_reaches(void **state) {
  rig_device *m = open_ok("memory:reach"), *t = open_ok("test:reach"),
             *g = open_ok("test:reach-g,host=0");
  rig_device *all[4] = {rig_device_host(), m, t, g};
  for (int i = 0; i < 4; i++)
    assert_true(rig_device_reaches(all[i], all[i]));                 /* MACH-12 */
  assert_true(rig_device_reaches(rig_device_host(), m));                     /* MACH-13 */
  assert_true(rig_device_reaches(rig_device_host(), t));                     /* MACH-14 */
  assert_false(rig_device_reaches(rig_device_host(), g));
  assert_false(rig_device_reaches(NULL, m));
  close_release(g);
  close_release(t);
  close_release(m);
}

/* MACH-15, MACH-16: a device whose driver declares maps_host (the test
 * device; the memory device's driver) reaches the host and every memory
 * device, whichever opened first; the host addresses nothing of a test
 * device that says so (host=0), and reaching is no symmetric relation. */
static void mach_15_16_maps_host_reaches_host_and_memory(void **state) {
  rig_device *m1 = open_ok("memory:reach-15a"), *t = open_ok("test:reach-15"),
             *m2 = open_ok("memory:reach-15b"), *g = open_ok("test:reach-15g,host=0");
  rig_device *mapper[2] = {t, g};
  for (int i = 0; i < 2; i++) {                                  /* MACH-15 */
    assert_true(rig_device_reaches(mapper[i], rig_device_host()));
    assert_true(rig_device_reaches(mapper[i], m1));
    assert_true(rig_device_reaches(mapper[i], m2));
  }
  assert_true(rig_device_reaches(m1, rig_device_host()));                       /* MACH-16 */
  assert_true(rig_device_reaches(m1, m2));
  assert_true(rig_device_reaches(m2, m1));
  assert_false(rig_device_reaches(m1, g));      /* MACH-20: g's memory is its own */
  assert_false(rig_device_reaches(rig_device_host(), g));
  close_release(g);
  close_release(m2);
  close_release(t);
  close_release(m1);
}

/* VALID-6, VALID-15: a submit's buffers are on its device, or where its
 * copies and fills may reach them: a buffer of a device it does not reach
 * is refused, and nothing changes. */
static void valid_6_15_buffers_on_the_device(void **state) {
  rig_device *m = open_ok("memory:sub-valid"), *t = open_ok("test:sub-valid,host=0");
  rig_submission *s = fill_submission(m);
  rig_buffer *far = create_ok(t, 64);
  rig_run *run;
  rig_point p = RIG_POINT_NONE;
  uint64_t before = rig_device_submitted(m);
  check_ok(rig_submission_take(s, &run), "take");
  assert_int_equal(rig_run_submit(run, &far, 1, NULL, 0, &p), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "does not reach"));
  assert_int_equal(rig_device_submitted(m), before);
  assert_int_equal(p, RIG_POINT_NONE);
  rig_submission_release(s);
  rig_buffer_release(far);
  close_release(m);
  close_release(t);
}

/* Takes every run of s into runs, and checks that one more take is
 * RIG_INVALID and gives nothing. */
static void take_every_run(rig_submission *s, rig_run **runs) {
  for (uint32_t i = 0; i < RIG_SUBMISSION_RUNS; i++)
    check_ok(rig_submission_take(s, &runs[i]), "take");
  rig_run *more = NULL;
  assert_int_equal(rig_submission_take(s, &more), RIG_INVALID);
  assert_null(more);
}

/* RUN-5: rig_submission_take is RIG_INVALID while every run is taken: a
 * submission makes at most RIG_SUBMISSION_RUNS runs, and a submit gives
 * its run back for the next take. */
static void run_5_take_while_every_run_is_taken(void **state) {
  rig_device *m = open_ok("memory:sub-runs");
  rig_submission *s = fill_submission(m);
  rig_buffer *b = create_ok(m, 64);
  static rig_run *runs[RIG_SUBMISSION_RUNS];
  take_every_run(s, runs);
  rig_run *more = NULL;
  assert_non_null(strstr(rig_error_last()->message, "runs of the submission are taken"));
  assert_null(more);
  rig_point p;
  check_ok(rig_run_submit(runs[7], &b, 1, NULL, 0, &p), "submit one");
  check_ok(rig_submission_take(s, &more), "take the run the submit gave back");
  assert_ptr_equal(more, runs[7]);
  runs[7] = more;
  assert_int_equal(rig_submission_take(s, &more), RIG_INVALID);
  for (uint32_t i = 0; i < RIG_SUBMISSION_RUNS; i++)
    check_ok(rig_run_submit(runs[i], &b, 1, NULL, 0, &p), "submit");
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(m);
}

/* rig_run_drop: a taken run given back unsubmitted frees its place among
 * the RIG_SUBMISSION_RUNS (RUN-5), and the next take hands it out again;
 * a dropped run cannot be dropped or submitted twice, nor another
 * thread's dropped. */
static void *drop_in_thread(void *arg) {
  return (void *)(intptr_t)rig_run_drop(arg);
}

static void run_drop_gives_a_taken_run_back(void **state) {
  rig_device *m = open_ok("memory:sub-drop");
  rig_submission *s = fill_submission(m);
  rig_buffer *b = create_ok(m, 64);
  static rig_run *runs[RIG_SUBMISSION_RUNS];
  take_every_run(s, runs);
  rig_run *more = NULL;
  pthread_t th;
  void *st;
  assert_int_equal(pthread_create(&th, NULL, drop_in_thread, runs[3]), 0);
  assert_int_equal(pthread_join(th, &st), 0);
  assert_int_equal((rig_status)(intptr_t)st, RIG_INVALID); /* another thread's */
  check_ok(rig_run_drop(runs[3]), "drop");
  assert_int_equal(rig_run_drop(runs[3]), RIG_INVALID); /* not taken now */
  assert_non_null(strstr(rig_error_last()->message, "not taken"));
  assert_int_equal(rig_run_drop(NULL), RIG_INVALID);
  check_ok(rig_submission_take(s, &more), "take the dropped run");
  assert_ptr_equal(more, runs[3]);
  for (uint32_t i = 0; i < RIG_SUBMISSION_RUNS; i++) {
    rig_point p;
    check_ok(rig_run_submit(runs[i], &b, 1, NULL, 0, &p), "submit");
  }
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(submit_15_a_free_run),
      cmocka_unit_test(submit_24_the_hosts_work_is_done_at_return),
      cmocka_unit_test(submit_26_another_submit_of_the_run_under_way),
      cmocka_unit_test(submit_12_14_25_spare_and_free_list),
      cmocka_unit_test(submit_22_23_29_30_refused_work),
      cmocka_unit_test(valid_6_15_buffers_on_the_device),
      cmocka_unit_test(mach_12_14_reaches),
      cmocka_unit_test(run_5_take_while_every_run_is_taken),
      cmocka_unit_test(run_drop_gives_a_taken_run_back),
      cmocka_unit_test(mach_15_16_maps_host_reaches_host_and_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
