/* test_magazine.c: each thread's magazine of collected buffers (magazine.c)
 * under calls of other threads that need a device's cache whole.
 *
 * A thread's release queues its buffer in its own magazine, and its next
 * create of that size takes it back with no lock. free_cache, set_budget
 * and a reclamation round, called by any other thread, must still find that
 * memory (RECLAIM-22, RECLAIM-53), and no buffer may ever be handed out
 * twice, however the two threads interleave: the owner enters its
 * magazine with a plain store, and a drainer from another thread makes
 * the store visible with membarrier(2) before it reads it.
 *
 * Rules: RECLAIM-7 RECLAIM-22 RECLAIM-53
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "util.h"

#define SIZE 4096u
#define HELD 8

static struct {
  rig_device *d;
  pthread_barrier_t at;
  atomic_bool stop;
  atomic_long handed_twice, creates, failures;
} s;

/* Creates HELD buffers and releases them: they wait in this thread's
 * magazine. */
static void fill_magazine(void) {
  rig_buffer *b[HELD];
  for (int i = 0; i < HELD; i++)
    b[i] = create_ok(s.d, SIZE);
  for (int i = 0; i < HELD; i++)
    rig_buffer_release(b[i]);
}

static void *parks_buffers(void *arg) {
  fill_magazine();
  pthread_barrier_wait(&s.at); /* queued */
  pthread_barrier_wait(&s.at); /* the main thread drained them */
  return NULL;
}

/* RECLAIM-22, RECLAIM-53: memory queued in a thread that makes no further
 * call comes back through another thread's free_cache. */
static void reclaim_22_53_free_cache_drains_other_threads(void **state) {
  s.d = open_ok("memory:mag-park");
  pthread_barrier_init(&s.at, NULL, 2);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, parks_buffers, NULL), 0);
  pthread_barrier_wait(&s.at);
  /* Collected memory still counts in the budget until it goes back. */
  assert_int_equal(rig_device_allocated(s.d), (uint64_t)HELD * SIZE);
  ok(rig_device_free_cache(s.d));
  assert_int_equal(rig_device_allocated(s.d), 0);
  pthread_barrier_wait(&s.at);
  pthread_join(t, NULL);
  pthread_barrier_destroy(&s.at);
  close_release(s.d);
}

/* Each buffer is stamped with a word unique to its creation; a buffer
 * handed out twice would find another creation's word before release. */
static void *churns(void *arg) {
  uint64_t me = (uint64_t)(uintptr_t)arg << 40;
  for (uint64_t i = 1; !atomic_load(&s.stop); i++) {
    rig_buffer *b[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) {
      if (rig_buffer_create(s.d, SIZE, &b[k]) != RIG_OK) {
        atomic_fetch_add(&s.failures, 1);
        continue;
      }
      uint64_t *w = rig_buffer_host_address(b[k]);
      w[0] = me | (i * 3 + k);
    }
    for (int k = 0; k < 3; k++) {
      if (!b[k])
        continue;
      uint64_t *w = rig_buffer_host_address(b[k]);
      if (w[0] != (me | (i * 3 + k)))
        atomic_fetch_add(&s.handed_twice, 1);
      rig_buffer_release(b[k]);
    }
    atomic_fetch_add(&s.creates, 3);
  }
  fill_magazine(); /* leave some queued for the last drain */
  return NULL;
}

/* RECLAIM-7: creates and releases on two threads race free_cache and
 * set_budget on a third; no buffer is handed out twice, every create
 * succeeds, and once all are released one free_cache returns everything. */
static void reclaim_7_magazines_race_drains(void **state) {
  s.d = open_ok("memory:mag-race");
  atomic_store(&s.stop, false);
  atomic_store(&s.handed_twice, 0);
  atomic_store(&s.creates, 0);
  atomic_store(&s.failures, 0);
  pthread_t t[2];
  for (uintptr_t i = 0; i < 2; i++)
    assert_int_equal(pthread_create(&t[i], NULL, churns, (void *)(i + 1)), 0);
  /* At least 2000 drains, and until the threads made 30000 creates (or
   * 20 s passed, on a loaded machine). */
  double until = now_s() + 20;
  for (int i = 0; i < 2000 || (atomic_load(&s.creates) < 30000 && now_s() < until); i++) {
    ok(rig_device_free_cache(s.d));
    if (i % 100 == 0) {
      ok(rig_device_set_budget(s.d, 1u << 30));
      ok(rig_device_set_budget(s.d, INT64_MAX));
    }
  }
  atomic_store(&s.stop, true);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  assert_int_equal(atomic_load(&s.handed_twice), 0);
  assert_int_equal(atomic_load(&s.failures), 0);
  assert_true(atomic_load(&s.creates) > 0);
  ok(rig_device_free_cache(s.d));
  assert_int_equal(rig_device_allocated(s.d), 0);
  close_release(s.d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reclaim_22_53_free_cache_drains_other_threads),
      cmocka_unit_test(reclaim_7_magazines_race_drains),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
