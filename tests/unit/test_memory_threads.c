/* test_memory_threads.c: threads that open, use and close one memory
 * device's name at once. Each open returns the device open under the name,
 * a new one once a close stopped it (OPEN-30), or RIG_UNAVAILABLE while a
 * close runs its stop (OPEN-5); a close by one thread
 * leaves the others' calls on the device answering RIG_LOST, never a crash,
 * and the last memory of a closed device, given back by whichever thread
 * moves it, lets the device leave its slot once. Under ThreadSanitizer
 * this is the test of the flag that says a stopped device drained
 * (reclaim.c's give_back sets it under the memory lock during a close;
 * after_move takes it with no lock), which raced in 5 of 9 runs when
 * after_move read and reset it with a plain load and store. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

#define THREADS 4
#define ROUNDS 150
#define NAME "mt-one-name"

/* What a thread saw that no interleaving allows, or NULL. */
static const char *wrong[THREADS];
static char why[THREADS][RIG_MESSAGE_BYTES];

static bool allowed(rig_status st) {
  return st == RIG_OK || st == RIG_LOST;
}

/* One use: a buffer on d, a fill, a copy to the host and back, read. A
 * close by another thread may lose any step (RIG_LOST); no other status. */
static const char *use(rig_device *d, int k) {
  rig_buffer *b = NULL, *h = NULL;
  rig_status st = rig_buffer_create(d, 4096 + 64 * (size_t)k, &b);
  if (!allowed(st))
    return "create";
  if (st != RIG_OK)
    return NULL;
  const char *bad = NULL;
  uint32_t got = 0;
  if (!allowed(rig_buffer_fill(b, 0x5a5a5a5au + (uint32_t)k, 4)))
    bad = "fill";
  else if (rig_buffer_create(rig_device_host(), rig_buffer_length(b), &h) != RIG_OK)
    bad = "host create";
  else if (!allowed(st = rig_buffer_copy(b, h)))
    bad = "copy";
  else if (st == RIG_OK &&
           (rig_buffer_get(h, 0, &got, 4) != RIG_OK || got != 0x5a5a5a5au + (uint32_t)k))
    bad = "bytes";
  rig_buffer_release(h);
  rig_buffer_release(b);
  return bad;
}

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int k = 0; k < ROUNDS && !wrong[t]; k++) {
    rig_device *d = NULL;
    rig_status st = rig_device_open_memory(NAME, &d);
    if (st == RIG_UNAVAILABLE && strstr(rig_error_last()->message, "has not returned"))
      continue; /* OPEN-5: another thread's close runs the device's stop now */
    if (st != RIG_OK) {
      wrong[t] = "open";
      break;
    }
    wrong[t] = use(d, k);
    /* Closes every other round: opens then meet both an open device and a
     * stopped one, and closes meet uses in flight. */
    if ((k + t) % 2 == 0 && !allowed(rig_device_close(d)))
      wrong[t] = "close";
    rig_device_release(d);
  }
  if (wrong[t])
    snprintf(why[t], sizeof why[t], "%s", rig_error_last()->message);
  return NULL;
}

static void threads_open_use_close_one_name(void **state) {
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_join(th[t], NULL), 0);
  for (int t = 0; t < THREADS; t++)
    if (wrong[t])
      fail_msg("thread %d: %s answered a status no interleaving allows: %s", t, wrong[t], why[t]);
  /* The name still opens, and the device it gives works. */
  rig_device *d;
  ok(rig_device_open_memory(NAME, &d));
  assert_null(use(d, 1));
  ok(rig_device_close(d));
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_open_use_close_one_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
