/* test_signals.c: signals across calls into drivers (ERR-9..18, ERR-20),
 * seen from inside a driver linked into the test: what its calls, its
 * finaliser and the collector hook find blocked, and which thread takes a
 * signal sent to the process. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include <rig/edge.h>
#include <rig/rig.h>

#include "driver_memory.h"
#include "util.h"

static volatile sig_atomic_t handled;
static pthread_t handler_thread; /* the thread the last handler ran on */
static void on_usr1(int sig) {
  handler_thread = pthread_self();
  handled++;
}

static bool blocked(int sig) {
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, NULL, &cur);
  return sigismember(&cur, sig);
}

/* What the driver saw. */
static struct {
  bool submit_int, submit_segv, alloc_int, open_int, wait_int, signaled_int;
  int handled_in_submit, releases, handled_at_2, handled_at_64, handled_at_70;
  bool raise_in_submit, raise_in_release;
  volatile uint64_t *word;
  bool cap_int, destroyed, destroy_int, collector_int;
  int collected, handled_in_collector;
  _Atomic bool hold, in_submit;   /* ERR-20: submit holds while hold */
  bool check_int, room_int, raise_in_check;
  int handled_in_room, handled_in_wait;
} seen;

static int s_open(const char *args, void **out, rig_edge_error *err) {
  seen.open_int = blocked(SIGINT);
  *out = &seen;
  return RIG_EDGE_OK;
}
static int s_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  strcpy(f->arch, "sig");
  f->alignment = 16;
  f->budget = UINT64_C(1) << 30;
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_HOST_ADDRESSES;
  driver_memory_queues(f);
  return RIG_EDGE_OK;
}
static int s_bind(void *h, volatile uint64_t *word, rig_edge_error *err) {
  seen.word = word;
  return RIG_EDGE_OK;
}
static int s_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  seen.submit_int = blocked(SIGINT);
  seen.submit_segv = blocked(SIGSEGV);
  if (atomic_load(&seen.hold)) { /* at most 10 s */
    atomic_store(&seen.in_submit, true);
    for (int i = 0; i < 10000 && atomic_load(&seen.hold); i++)
      sleep_ms(1);
    atomic_store(&seen.in_submit, false);
  }
  if (seen.raise_in_submit) {
    pthread_kill(pthread_self(), SIGUSR1);
    seen.handled_in_submit = handled; /* not yet: blocked (ERR-12) */
  }
  for (uint32_t i = 0; i < w->nparts; i++)
    rig_edge_run_on_host(&w->parts[i], err);
  rig_edge_word_store(seen.word, w->value);
  return RIG_EDGE_OK;
}
static int s_check(void *h, const rig_edge_work *w, rig_edge_error *err) {
  seen.check_int = blocked(SIGINT);
  if (seen.raise_in_check)
    pthread_kill(pthread_self(), SIGUSR1);
  return RIG_EDGE_OK;
}
static int s_room(void *h, const rig_edge_work *w, bool *room) {
  seen.room_int = blocked(SIGINT);
  seen.handled_in_room = handled;
  *room = true;
  return RIG_EDGE_OK;
}
static int s_wait(void *h, uint64_t v, uint32_t ms, rig_edge_error *err) {
  seen.wait_int = blocked(SIGINT);
  return rig_edge_word_wait(seen.word, v, ms);
}
static int s_alloc(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                   rig_edge_error *err) {
  seen.alloc_int = blocked(SIGINT);
  return driver_memory_take("sig", bytes, true, true, out, err);
}
static int s_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  int n = ++seen.releases;
  if (seen.raise_in_release && n == 1)
    pthread_kill(pthread_self(), SIGUSR1);
  if (n == 2)
    seen.handled_at_2 = handled;
  if (n == 64)
    seen.handled_at_64 = handled;
  if (n == 70)
    seen.handled_at_70 = handled;
  return driver_memory_release(h, a, err);
}

static const void *s_capability(void *h, const char *key) {
  seen.cap_int = blocked(SIGINT);
  return strcmp(key, "sig.seen") == 0 ? &seen : NULL;
}
static void s_destroy(void *h) {
  seen.destroy_int = blocked(SIGINT);
  seen.destroyed = true;
}

static const rig_edge_driver sig_driver = {
    RIG_EDGE_DRIVER_INIT("sig"),
    .open = s_open,
    .facts = s_facts,
    .bind_word = s_bind,
    .submit = s_submit,
    .wait = s_wait,
    .allocate = s_alloc,
    .release = s_release,
    .capability = s_capability,
    .destroy = s_destroy,
    .check = s_check,
    .room = s_room,
};

/* A device whose work ends only when it is waited for: its points stay
 * unreached until the host waits on them, in its wait. */
static struct {
  volatile uint64_t *word;
  uint64_t last;
} late;
static int l_bind(void *h, volatile uint64_t *word, rig_edge_error *err) {
  late.word = word;
  return RIG_EDGE_OK;
}
static int l_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  for (uint32_t i = 0; i < w->nparts; i++)
    rig_edge_run_on_host(&w->parts[i], err);
  late.last = w->value;
  return RIG_EDGE_OK;
}
static int l_wait(void *h, uint64_t v, uint32_t ms, rig_edge_error *err) {
  seen.wait_int = blocked(SIGINT);
  seen.handled_in_wait = handled;
  rig_edge_word_store(late.word, late.last);
  return RIG_EDGE_OK;
}
static const rig_edge_driver late_driver = {
    RIG_EDGE_DRIVER_INIT("late"),
    .open = s_open,
    .facts = s_facts,
    .bind_word = l_bind,
    .submit = l_submit,
    .wait = l_wait,
    .allocate = s_alloc,
    .release = s_release,
};

/* A device that states RIG_EDGE_COMMIT_IDLE: core commits a value at its
 * submit where every earlier committed value is known reached. Its wait
 * reports the last value committed as reached: work runs once committed. */
static struct {
  volatile uint64_t *word;
  uint64_t committed;
  int commits, handled_in_commit;
  bool commit_int, raise_in_commit;
} idle;
static int i_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  int r = s_facts(h, f, err);
  f->flags |= RIG_EDGE_COMMIT_IDLE;
  return r;
}
static int i_bind(void *h, volatile uint64_t *word, rig_edge_error *err) {
  idle.word = word;
  return RIG_EDGE_OK;
}
static int i_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  for (uint32_t i = 0; i < w->nparts; i++)
    rig_edge_run_on_host(&w->parts[i], err);
  return RIG_EDGE_OK;
}
static int i_commit(void *h, uint64_t v, rig_edge_error *err) {
  idle.commit_int = blocked(SIGINT);
  idle.commits++;
  idle.committed = v;
  if (idle.raise_in_commit) {
    pthread_kill(pthread_self(), SIGUSR1);
    idle.handled_in_commit = handled; /* not yet: blocked (ERR-12) */
  }
  return RIG_EDGE_OK;
}
static int i_wait(void *h, uint64_t v, uint32_t ms, rig_edge_error *err) {
  rig_edge_word_store(idle.word, idle.committed);
  return idle.committed >= v ? RIG_EDGE_OK : RIG_EDGE_TIMEOUT;
}
static const rig_edge_driver idle_driver = {
    RIG_EDGE_DRIVER_INIT("idle"),
    .open = s_open,
    .facts = i_facts,
    .bind_word = i_bind,
    .submit = i_submit,
    .commit = i_commit,
    .wait = i_wait,
    .allocate = s_alloc,
    .release = driver_memory_release,
};

static int setup(void **state) {
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  return 0;
}

/* ERR-9, ERR-11, ERR-12, ERR-13: across open, allocate and submit, every
 * signal but the fault ones is blocked; a signal raised inside the driver's
 * call runs its handler once the call has returned; the driver's wait runs
 * with the caller's mask. */
static void err_9_11_12_13_driver_calls_block_signals(void **state) {
  rig_device *d;
  check_ok(rig_device_open_driver("sig:a", &sig_driver, "", &d), "open");
  assert_true(seen.open_int);
  rig_buffer *b = create_ok(d, 64);
  assert_true(seen.alloc_int);
  handled = 0;
  seen.raise_in_submit = true;
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 1, 1, &p), "fill");
  seen.raise_in_submit = false;
  assert_true(seen.submit_int);                 /* ERR-9 */
  assert_false(seen.submit_segv);               /* the fault signals stay open */
  assert_int_equal(seen.handled_in_submit, 0);  /* ERR-12 */
  assert_int_equal(handled, 1);                 /* delivered after the call */
  assert_false(blocked(SIGINT));                /* the caller's mask is back */
  rig_buffer_release(b);
  close_release(d);
}

/* ERR-9, ERR-12: one submit enters the driver three times (check, room,
 * submit), all with signals blocked; the mask is held across them, so a
 * signal raised in the first is delivered only once the submit returns,
 * not between the driver's calls. */
static void err_9_12_one_mask_across_a_submits_driver_calls(void **state) {
  rig_device *d;
  check_ok(rig_device_open_driver("sig:once", &sig_driver, "", &d), "open");
  rig_buffer *b = create_ok(d, 64);
  handled = 0;
  seen.check_int = seen.room_int = seen.submit_int = false;
  seen.raise_in_check = true;
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 1, 1, &p), "fill");
  seen.raise_in_check = false;
  assert_true(seen.check_int && seen.room_int && seen.submit_int); /* ERR-9 */
  assert_int_equal(seen.handled_in_room, 0);    /* ERR-12: not between calls */
  assert_int_equal(seen.handled_in_submit, 0);
  assert_int_equal(handled, 1);                 /* delivered after the submit */
  assert_false(blocked(SIGINT));
  ok(rig_point_wait(p));
  rig_buffer_release(b);
  close_release(d);
}

/* ERR-11, ERR-12 inside that held mask: a submit that must first wait on
 * the host for another device's point gives the thread its own mask for
 * that wait, where the signal raised in check is delivered, and blocks
 * signals again for room and submit. */
static void err_11_12_a_wait_inside_a_submit_has_the_callers_mask(void **state) {
  rig_device *d, *l;
  check_ok(rig_device_open_driver("sig:held", &sig_driver, "", &d), "open");
  check_ok(rig_device_open_driver("late:a", &late_driver, "", &l), "open late");
  rig_buffer *b = create_ok(d, 64), *on_late = create_ok(l, 64);
  rig_point before, p;
  check_ok(rig_buffer_submit_fill(on_late, 2, 1, &before), "fill on late");
  assert_false(rig_point_reached(before));
  rig_part part = rig_part_fill(0, 1, 1);
  rig_submission *s;
  rig_run *r;
  check_ok(rig_submission_make(d, &part, 1, &s), "make");
  check_ok(rig_submission_take(s, &r), "take");
  handled = 0;
  seen.wait_int = true;
  seen.handled_in_wait = -1;
  seen.raise_in_check = true;
  check_ok(rig_run_submit(r, &b, 1, &before, 1, &p), "submit after late's point");
  seen.raise_in_check = false;
  assert_true(seen.check_int);
  assert_false(seen.wait_int);                  /* ERR-11: the caller's mask */
  assert_int_equal(seen.handled_in_wait, 1);    /* ERR-12: at the call's wait */
  assert_true(seen.room_int && seen.submit_int); /* blocked again after it */
  assert_int_equal(handled, 1);
  assert_false(blocked(SIGINT));
  ok(rig_point_wait(p));
  rig_submission_release(s);
  rig_buffer_release(b);
  rig_buffer_release(on_late);
  close_release(d);
  close_release(l);
}

/* ERR-9, ERR-12: the commit core makes at a submit, for a device that
 * commits when idle, runs with signals blocked, and a signal raised in it
 * is delivered once the submit returns; the wait that follows has nothing
 * to commit. Work submitted while the last value is not known reached is
 * held, and the wait's commit of it runs with signals blocked too. */
static void err_9_12_a_commit_at_the_submit_blocks_signals(void **state) {
  rig_device *d;
  check_ok(rig_device_open_driver("idle:a", &idle_driver, "", &d), "open");
  rig_buffer *b[3] = {create_ok(d, 64), create_ok(d, 64), create_ok(d, 64)};
  rig_point p, q, r;
  handled = 0;
  idle.raise_in_commit = true;
  check_ok(rig_buffer_submit_fill(b[0], 1, 1, &p), "fill on an idle device");
  idle.raise_in_commit = false;
  assert_int_equal(idle.commits, 1);            /* at the submit */
  assert_int_equal(idle.committed, rig_point_value(p));
  assert_true(idle.commit_int);                 /* ERR-9 */
  assert_int_equal(idle.handled_in_commit, 0);  /* ERR-12 */
  assert_int_equal(handled, 1);                 /* delivered after the submit */
  assert_false(blocked(SIGINT));
  ok(rig_point_wait(p));
  assert_int_equal(idle.commits, 1);            /* nothing left to commit */
  check_ok(rig_buffer_submit_fill(b[1], 2, 1, &q), "fill"); /* p is known reached */
  check_ok(rig_buffer_submit_fill(b[2], 3, 1, &r), "fill"); /* q is not: held */
  assert_int_equal(idle.commits, 2);
  assert_int_equal(idle.committed, rig_point_value(q));
  idle.commit_int = false;
  ok(rig_point_wait(r));                        /* commits r (TL-9) */
  assert_int_equal(idle.commits, 3);
  assert_int_equal(idle.committed, rig_point_value(r));
  assert_true(idle.commit_int);                 /* ERR-9 */
  assert_false(blocked(SIGINT));
  for (int i = 0; i < 3; i++)
    rig_buffer_release(b[i]);
  close_release(d);
}

/* ERR-14, ERR-15: reclamation that gives memory back region by region
 * blocks signals from its first region on, and gives the thread its mask
 * back every 64 regions: a signal raised at the first region waits for at
 * most 64. */
static void err_14_15_reclamation_blocks_per_64_regions(void **state) {
  rig_device *d;
  check_ok(rig_device_open_driver("sig:b", &sig_driver, "", &d), "open");
  rig_buffer *b[70];
  for (int i = 0; i < 70; i++)
    b[i] = create_ok(d, 64 + (size_t)i * 4);
  for (int i = 0; i < 70; i++)
    rig_buffer_release(b[i]);
  rig_buffer *mover = create_ok(d, 4096); /* moves them into the cache */
  rig_buffer_release(mover);
  handled = 0;
  seen.releases = 0;
  seen.raise_in_release = true;
  check_ok(rig_device_set_budget(d, 0), "set_budget"); /* gives all 70 back */
  seen.raise_in_release = false;
  assert_true(seen.releases >= 70);
  assert_int_equal(seen.handled_at_2, 0);    /* ERR-14 */
  assert_int_equal(seen.handled_at_64, 0);
  assert_int_equal(seen.handled_at_70, 1);   /* ERR-15: after 64 regions */
  check_ok(rig_device_set_budget(d, UINT64_C(1) << 30), "set_budget");
  close_release(d);
}

/* ERR-17: what a program calls of a driver's library blocks signals as
 * every call into a driver does: the opener (rig_device_open) and the lookup of a
 * capability. */
static void err_17_opener_and_capability_block_signals(void **state) {
  rig_device *d;
  seen.open_int = seen.cap_int = false;
  check_ok(rig_device_open_driver("sig:c", &sig_driver, "", &d), "open");
  assert_true(seen.open_int);
  assert_ptr_equal(rig_device_capability(d, "sig.seen"), &seen);
  assert_true(seen.cap_int);
  assert_false(blocked(SIGINT));
  close_release(d);
}

/* ERR-18: a driver's finaliser (destroy, run once the device's record
 * goes: here when a later device takes its slot) takes no signal. */
static void err_18_a_drivers_finaliser_takes_no_signal(void **state) {
  rig_device *d;
  seen.destroyed = seen.destroy_int = false;
  check_ok(rig_device_open_driver("sig:d", &sig_driver, "", &d), "open");
  close_release(d);
  for (int i = 0; i < 8 && !seen.destroyed; i++) { /* the next open takes its slot */
    char name[32];
    snprintf(name, sizeof name, "memory:err18-%d", i);
    close_release(open_ok(name));
  }
  assert_true(seen.destroyed);
  assert_true(seen.destroy_int);
}

static void collector(void *ctx) {
  seen.collector_int = blocked(SIGINT);
  seen.collected++;
  pthread_kill(pthread_self(), SIGUSR1);
  seen.handled_in_collector = handled; /* not yet: blocked */
}

/* ERR-16: the collector hook, which an allocation's reclamation runs
 * between the regions it gives back, runs with signals blocked: a signal
 * raised inside it is handled once the call has returned. */
static void err_16_the_collector_runs_with_signals_blocked(void **state) {
  rig_device *d;
  check_ok(rig_device_open_driver("sig:e", &sig_driver, "", &d), "open");
  check_ok(rig_device_set_budget(d, 4096), "set_budget");
  rig_buffer *live = create_ok(d, 2048), *b = NULL;
  seen.collected = 0;
  handled = 0;
  rig_runtime_set_collector(collector, NULL);
  rig_status st = rig_buffer_create(d, 4096, &b); /* refused: rounds 1..3 */
  rig_runtime_set_collector(NULL, NULL);
  assert_int_equal(st, RIG_OUT_OF_MEMORY);
  assert_true(seen.collected >= 1);
  assert_true(seen.collector_int);
  assert_int_equal(seen.handled_in_collector, 0);
  assert_true(handled >= 1);
  rig_buffer_release(live);
  close_release(d);
}

static void *held_submit(void *arg) {
  rig_point p;
  check_ok(rig_buffer_submit_fill(arg, 1, 1, &p), "fill");
  return NULL;
}

/* ERR-20: blocking is per thread: while one thread is inside a driver's
 * call, with signals blocked, a signal sent to the process goes to a
 * thread that does not block it, here the main thread, at once. */
static void err_20_blocking_is_per_thread(void **state) {
  rig_device *d;
  check_ok(rig_device_open_driver("sig:f", &sig_driver, "", &d), "open");
  rig_buffer *b = create_ok(d, 64);
  atomic_store(&seen.hold, true);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, held_submit, b), 0);
  for (double end = now_s() + 10.0; !atomic_load(&seen.in_submit) && now_s() < end;)
    sleep_ms(1);
  assert_true(atomic_load(&seen.in_submit));
  handled = 0;
  kill(getpid(), SIGUSR1);
  for (double end = now_s() + 10.0; !handled && now_s() < end;)
    sleep_ms(1);
  bool inside = atomic_load(&seen.in_submit);
  atomic_store(&seen.hold, false);
  pthread_join(t, NULL);
  assert_int_equal(handled, 1);
  assert_true(inside); /* handled while the other thread was in the driver */
  assert_true(pthread_equal(handler_thread, pthread_self()));
  rig_buffer_release(b);
  close_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(err_9_11_12_13_driver_calls_block_signals),
      cmocka_unit_test(err_9_12_one_mask_across_a_submits_driver_calls),
      cmocka_unit_test(err_11_12_a_wait_inside_a_submit_has_the_callers_mask),
      cmocka_unit_test(err_9_12_a_commit_at_the_submit_blocks_signals),
      cmocka_unit_test(err_14_15_reclamation_blocks_per_64_regions),
      cmocka_unit_test(err_17_opener_and_capability_block_signals),
      cmocka_unit_test(err_18_a_drivers_finaliser_takes_no_signal),
      cmocka_unit_test(err_16_the_collector_runs_with_signals_blocked),
      cmocka_unit_test(err_20_blocking_is_per_thread),
  };

  return cmocka_run_group_tests(tests, setup, NULL);
}
