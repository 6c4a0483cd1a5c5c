/* test_submit_try.c: rig_run_submit_try, the submit that never waits, which
 * a binding calls while it holds a lock of its own (OCaml's runtime lock).
 * Where rig_run_submit would wait, the try answers RIG_BUSY having done
 * nothing: the device's submitted value unchanged, its memory untouched,
 * and the run left as it was, so that the same run then submits. Each
 * situation is made to last until the test ends it (a gate kernel holding
 * the host's submit lock, a queue that never moves, a driver that may
 * block, a queue too small for the work), and a wait hook that stops every
 * wait at once shows the try waited for nothing: a call that had waited
 * would answer RIG_INTERRUPTED. No clock. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "kernels.h"
#include "util.h"

static int setup(void **state) {
  (void)state;
  arm_deadline(60);
  rig_runtime_set_wait_hook(past_deadline, NULL);
  return 0;
}

/* Asserts that a try of run over bufs (n) following waits (nwaits) answers
 * RIG_BUSY with a reason holding why, waiting for nothing, and that d's
 * timeline took no value. */
static void expect_busy(rig_device *d, rig_run *run, rig_buffer **bufs, size_t n,
                        const rig_point *waits, size_t nwaits, const char *why) {
  uint64_t before = rig_device_submitted(d);
  rig_point p = 0;
  rig_runtime_set_wait_hook(stop_now, NULL);
  rig_status st = rig_run_submit_try(run, bufs, n, waits, nwaits, &p);
  rig_runtime_set_wait_hook(past_deadline, NULL);
  assert_int_equal(st, RIG_BUSY);
  assert_int_equal(rig_error_last()->status, RIG_BUSY);
  if (!strstr(rig_error_last()->message, why))
    fail_msg("busy for \"%s\", not \"%s\"", rig_error_last()->message, why);
  assert_int_equal(p, 0);                              /* no out-parameter */
  assert_int_equal(rig_device_submitted(d), before);   /* no value taken */
}

/* A host submission of one launch of fill_bytes over slot 0, and its run
 * for a fill of n bytes with pattern in groups groups. */
typedef struct host_fill {
  rig_image *im;
  rig_submission *s;
} host_fill;

static host_fill host_fill_make(void) {
  host_fill h;
  h.im = kernel_load("fill_bytes");
  rig_ref ref = rig_ref_write(0, offsetof(struct fill_bytes, dst));
  h.s = launch_make_ok(rig_device_host(), resolve_ok(h.im, "fill_bytes"), &ref, 1,
                       sizeof(struct fill_bytes));
  return h;
}

static rig_run *host_fill_run(const host_fill *h, int64_t n, uint8_t pattern, uint64_t groups) {
  rig_run *run = take_ok(h->s);
  struct fill_bytes params = {NULL, n, pattern, 1};
  ok(rig_run_bytes(run, 0, 0, &params, sizeof params));
  grid_ok(run, 0, groups, (uint64_t)(n + groups - 1) / groups);
  return run;
}

static void host_fill_release(host_fill *h) {
  rig_submission_release(h->s);
  rig_image_release(h->im);
}

/* Where nothing would wait, the try is the submit: a one-group host
 * launch runs before it returns, and its point is the next value. */
static void runs_what_submit_runs(void **state) {
  (void)state;
  host_fill h = host_fill_make();
  rig_buffer *b = create_ok(rig_device_host(), 256);
  uint64_t before = rig_device_submitted(rig_device_host());
  rig_run *run = host_fill_run(&h, 256, 0x5a, 1);
  rig_point p;
  rig_runtime_set_wait_hook(stop_now, NULL);
  ok(rig_run_submit_try(run, &b, 1, NULL, 0, &p));
  rig_runtime_set_wait_hook(past_deadline, NULL);
  assert_int_equal(rig_point_value(p), before + 1);
  assert_true(rig_point_reached(p));
  expect_bytes(b, 0, 256, 0x5a);
  /* Its run went back: a take and a try again. */
  run = host_fill_run(&h, 256, 0x5b, 1);
  ok(rig_run_submit_try(run, &b, 1, NULL, 0, &p));
  expect_bytes(b, 0, 256, 0x5b);
  rig_buffer_release(b);
  host_fill_release(&h);
}

/* A submit of the gate kernel, which its thread takes and submits itself
 * (a run is its taker's): it holds the host's submit lock until
 * the test opens the gate. */
typedef struct gated {
  rig_submission *s;
  int64_t entered, open;
  rig_status st;
} gated;

static void *gated_submit(void *arg) {
  gated *g = arg;
  rig_run *run;
  rig_point p;
  struct gate params = {&g->entered, &g->open};
  g->st = rig_submission_take(g->s, &run);
  if (g->st == RIG_OK)
    g->st = rig_run_bytes(run, 0, 0, &params, sizeof params);
  if (g->st == RIG_OK)
    g->st = rig_run_groups(run, 0, 1, 1, 1);
  if (g->st == RIG_OK)
    g->st = rig_run_threads(run, 0, 1, 1, 1);
  if (g->st == RIG_OK)
    g->st = rig_run_submit(run, NULL, 0, NULL, 0, &p);
  else
    __atomic_store_n(&g->entered, 1, __ATOMIC_RELEASE); /* the test sees it failed */
  return NULL;
}

/* Another submit holds the host's submit lock (its kernel runs under it):
 * the try answers at once, and the same run submits once the lock is
 * free. */
static void busy_while_another_submit_holds_the_lock(void **state) {
  (void)state;
  host_fill h = host_fill_make();
  rig_image *gim = kernel_load("gate");
  gated g = {.s = launch_make_ok(rig_device_host(), resolve_ok(gim, "gate"), NULL, 0,
                                 sizeof(struct gate))};
  rig_buffer *b = create_ok(rig_device_host(), 256);
  ok(rig_buffer_fill(b, 0, 1));
  rig_run *run = host_fill_run(&h, 256, 0x33, 1);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, gated_submit, &g), 0);
  while (!__atomic_load_n(&g.entered, __ATOMIC_ACQUIRE))
    sched_yield();
  expect_busy(rig_device_host(), run, &b, 1, NULL, 0, "another submit holds its lock");
  expect_busy(rig_device_host(), run, &b, 1, NULL, 0, "another submit holds its lock");
  __atomic_store_n(&g.open, 1, __ATOMIC_RELEASE);
  assert_int_equal(pthread_join(t, NULL), 0);
  ok(g.st);
  expect_bytes(b, 0, 256, 0);                  /* the busy tries wrote nothing */
  rig_point p;
  ok(rig_run_submit_try(run, &b, 1, NULL, 0, &p)); /* the same run, still the test's */
  expect_bytes(b, 0, 256, 0x33);
  rig_buffer_release(b);
  rig_submission_release(g.s);
  rig_image_release(gim);
  host_fill_release(&h);
}

/* A fill submission on d over one slot, parts fills of it. */
static rig_submission *fills(rig_device *d, uint32_t parts) {
  rig_part p[2] = {rig_part_fill(0, 7, 1), rig_part_fill(0, 9, 1)};
  rig_submission *s;
  assert_true(parts <= 2);
  ok(rig_submission_make(d, p, parts, &s));
  return s;
}

/* A try on test device name of a submission of parts fills of one buffer
 * answers busy for why; the blocking submit then runs the same run, whose
 * last fill leaves want. */
static void busy_then_submitted(const char *name, uint32_t parts, const char *why,
                                uint8_t want) {
  rig_device *d = open_ok(name);
  rig_submission *s = fills(d, parts);
  rig_buffer *b = create_ok(d, 64);
  rig_run *run = take_ok(s);
  expect_busy(d, run, &b, 1, NULL, 0, why);
  rig_point p;
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  ok(rig_point_wait(p));
  expect_bytes(b, 0, 64, want);
  rig_buffer_release(b);
  rig_submission_release(s);
  close_release(d);
}

/* A driver that says its submit may block (RIG_EDGE_MAY_BLOCK): the try
 * never calls it. */
static void busy_on_a_driver_that_may_block(void **state) {
  (void)state;
  busy_then_submitted("test:try-block,block_ms=1", 1, "its driver may block", 7);
}

/* Queues with no room for the work (two parts where one fits): the try
 * grows nothing; the blocking submit grows them. */
static void busy_when_the_queues_have_no_room(void **state) {
  (void)state;
  busy_then_submitted("test:try-room,parts=1", 2, "its queues have no room", 9);
}

/* A profile started outside any lock makes every open device's ring at
 * the start, so the first try after it runs at once, with no wait (a
 * start inside a lock leaves the ring to the device's next submit, which
 * the try then answers RIG_BUSY, "a profile starts", leaving it to the
 * blocking submit). */
static void try_after_a_profile_start(void **state) {
  (void)state;
  rig_device *d = open_ok("memory:try-profile");
  rig_submission *s = fills(d, 1);
  rig_buffer *b = create_ok(d, 64);
  rig_run *run = take_ok(s);
  rig_point p;
  rig_profile_start(0); /* outside any lock: makes every open device's ring now */
  rig_runtime_set_wait_hook(stop_now, NULL);
  rig_status st = rig_run_submit_try(run, &b, 1, NULL, 0, &p);
  rig_runtime_set_wait_hook(past_deadline, NULL);
  ok(st);
  run = take_ok(s);
  ok(rig_run_submit_try(run, &b, 1, NULL, 0, &p));
  rig_profile_stop();
  rig_profile *taken;
  ok(rig_profile_take(&taken));
  rig_profile_free(taken);
  expect_bytes(b, 0, 64, 7);
  rig_buffer_release(b);
  rig_submission_release(s);
  close_release(d);
}

/* A start inside a lock (here a local key's init, which runs under the
 * locals lock) only switches profiling on: the device's next submit
 * makes its ring, which allocates, so the try answers RIG_BUSY and
 * leaves it to the blocking submit; the try after that runs at once. */
static void *start_profile_inside(rig_device *d, void *ctx) {
  (void)d;
  rig_profile_start(0);
  return ctx; /* a value, so that the get succeeds */
}

static void busy_while_a_profile_started_inside_a_lock_starts(void **state) {
  (void)state;
  rig_device *d = open_ok("memory:try-profile-inside");
  rig_submission *s = fills(d, 1);
  rig_buffer *b = create_ok(d, 64);
  rig_run *run = take_ok(s);
  rig_point p;
  rig_local_key *k = NULL;
  void *v = NULL;
  static int value;
  ok(rig_local_new_key(start_profile_inside, NULL, &value, &k));
  ok(rig_local_get(k, d, &v));
  assert_true(rig_profile_active());
  expect_busy(d, run, &b, 1, NULL, 0, "a profile starts");
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  run = take_ok(s);
  ok(rig_run_submit_try(run, &b, 1, NULL, 0, &p));
  rig_profile_stop();
  rig_profile *taken;
  ok(rig_profile_take(&taken));
  rig_profile_free(taken);
  expect_bytes(b, 0, 64, 7);
  rig_buffer_release(b);
  rig_submission_release(s);
  close_release(d);
}

/* A point of another device not reached, which a test device's queue
 * holds for good (hang_nth): the try waits for it neither on the host nor
 * on a memory device, with a taken run (the host's) or a free one (a
 * fill's), which stays free for a take. Once that device is
 * lost, the same host run's blocking submit answers RIG_LOST. */
static void busy_when_the_work_follows_a_pending_point(void **state) {
  (void)state;
  rig_device *held_on = open_ok("test:try-held,hang_ms=100,hang_nth=1");
  rig_buffer *x = create_ok(held_on, 64);
  rig_point held;
  ok(rig_buffer_submit_fill(x, 1, 1, &held));
  assert_false(rig_point_reached(held));

  host_fill h = host_fill_make();
  rig_buffer *b = create_ok(rig_device_host(), 256);
  rig_run *run = host_fill_run(&h, 256, 0x44, 1);
  expect_busy(rig_device_host(), run, &b, 1, &held, 1, "follows a point of another device");

  rig_device *m = open_ok("memory:try-held");
  rig_submission *s = fills(m, 1);
  rig_buffer *mb = create_ok(m, 64);
  rig_run *free_run = take_ok(s);
  rig_point p;
  ok(rig_run_submit(free_run, &mb, 1, NULL, 0, &p)); /* now free */
  ok(rig_buffer_fill(mb, 0, 1));
  expect_busy(m, free_run, &mb, 1, &held, 1, "follows a point of another device");
  expect_bytes(mb, 0, 64, 0);
  ok(rig_run_submit_try(free_run, &mb, 1, NULL, 0, &p)); /* still free: usable */
  expect_bytes(mb, 0, 64, 7);

  assert_int_equal(rig_point_wait(held), RIG_LOST); /* past hang_ms */
  assert_int_equal(rig_run_submit(run, &b, 1, &held, 1, &p), RIG_LOST);
  ok(rig_device_close(held_on));
  rig_device_release(held_on);
  rig_buffer_release(mb);
  rig_submission_release(s);
  close_release(m);
  rig_buffer_release(x);
  rig_buffer_release(b);
  host_fill_release(&h);
}

/* A host launch of several groups spreads over the pool's workers, whom
 * the submitting thread waits for: busy on a host of several cores; one
 * core runs it on the caller, and the try runs it. */
static void host_launch_over_the_pool(void **state) {
  (void)state;
  host_fill h = host_fill_make();
  rig_buffer *b = create_ok(rig_device_host(), 4096);
  ok(rig_buffer_fill(b, 0, 1));
  rig_run *run = host_fill_run(&h, 4096, 0x66, 16);
  rig_point p;
  if (rig_host_cores() > 1) {
    expect_busy(rig_device_host(), run, &b, 1, NULL, 0, "pool");
    expect_bytes(b, 0, 4096, 0);
    ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  } else {
    ok(rig_run_submit_try(run, &b, 1, NULL, 0, &p));
  }
  expect_bytes(b, 0, 4096, 0x66);
  rig_buffer_release(b);
  host_fill_release(&h);
}

/* Threads that submit one-group host launches at once, each a try first
 * and the blocking submit where it answers busy, as the OCaml binding
 * does: every submit's work is done once, each value taken once, and the
 * busy answers leave nothing half done. */
enum { SUBMITTERS = 4, ROUNDS = 500, BYTES = 16384 }; /* a launch long enough to meet others */

typedef struct submitter {
  const host_fill *h;
  rig_buffer *b;
  int id;
  uint64_t busy, failed;
  rig_point points[ROUNDS];
} submitter;

static void *submit_rounds(void *arg) {
  submitter *w = arg;
  const host_fill *h = w->h;
  for (int r = 0; r < ROUNDS; r++) {
    rig_run *run;
    struct fill_bytes params = {NULL, BYTES, (uint32_t)(w->id * 16 + r % 16), 1};
    rig_status st = rig_submission_take(h->s, &run);
    if (st == RIG_OK)
      st = rig_run_bytes(run, 0, 0, &params, sizeof params);
    if (st == RIG_OK)
      st = rig_run_groups(run, 0, 1, 1, 1);
    if (st == RIG_OK)
      st = rig_run_threads(run, 0, BYTES, 1, 1);
    if (st == RIG_OK && (st = rig_run_submit_try(run, &w->b, 1, NULL, 0, &w->points[r])) ==
                            RIG_BUSY) {
      w->busy++;
      st = rig_run_submit(run, &w->b, 1, NULL, 0, &w->points[r]);
    }
    w->failed += st != RIG_OK;
  }
  return NULL;
}

static void submitters_at_once(void **state) {
  (void)state;
  host_fill h = host_fill_make();
  submitter w[SUBMITTERS];
  pthread_t t[SUBMITTERS];
  uint64_t before = rig_device_submitted(rig_device_host());
  for (int i = 0; i < SUBMITTERS; i++) {
    w[i] = (submitter){.h = &h, .b = create_ok(rig_device_host(), BYTES), .id = i};
    assert_int_equal(pthread_create(&t[i], NULL, submit_rounds, &w[i]), 0);
  }
  uint64_t values[SUBMITTERS * ROUNDS], busy = 0;
  for (int i = 0; i < SUBMITTERS; i++) {
    assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(w[i].failed, 0);
    busy += w[i].busy;
    expect_bytes(w[i].b, 0, BYTES, (uint8_t)(i * 16 + (ROUNDS - 1) % 16));
    for (int r = 0; r < ROUNDS; r++)
      values[i * ROUNDS + r] = rig_point_value(w[i].points[r]);
    rig_buffer_release(w[i].b);
  }
  assert_int_equal(rig_device_submitted(rig_device_host()), before + SUBMITTERS * ROUNDS);
  qsort(values, SUBMITTERS * ROUNDS, sizeof values[0], compare_u64);
  for (int i = 0; i < SUBMITTERS * ROUNDS; i++)
    assert_int_equal(values[i], before + 1 + (uint64_t)i); /* each value once */
  print_message("%llu of %d tries answered busy\n", (unsigned long long)busy,
                SUBMITTERS * ROUNDS);
  host_fill_release(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(runs_what_submit_runs, setup),
      cmocka_unit_test_setup(busy_while_another_submit_holds_the_lock, setup),
      cmocka_unit_test_setup(busy_on_a_driver_that_may_block, setup),
      cmocka_unit_test_setup(busy_when_the_queues_have_no_room, setup),
      cmocka_unit_test_setup(try_after_a_profile_start, setup),
      cmocka_unit_test_setup(busy_while_a_profile_started_inside_a_lock_starts, setup),
      cmocka_unit_test_setup(busy_when_the_work_follows_a_pending_point, setup),
      cmocka_unit_test_setup(host_launch_over_the_pool, setup),
      cmocka_unit_test_setup(submitters_at_once, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
