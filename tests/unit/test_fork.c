/* test_fork.c: a child of fork (LOSS-9, STOP-18..22, STOP-25, STOP-26, ERR-34), with
 * a real fork(): the child checks and exits with the number of the first
 * check that failed, and the parent asserts it exited 0. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

#define CHECK(n, cond)                                                             \
  do {                                                                             \
    if (!(cond))                                                                   \
      _exit(n);                                                                    \
  } while (0)

static int kept;
static void release_kept(void *value) { kept++; }

/* LOSS-9, STOP-18, STOP-19, STOP-20, STOP-21, STOP-22, STOP-26, ERR-34. */
static void stop_18_26_a_child_of_fork(void **state) {
  rig_device *m = open_ok("memory:fork-m"), *t = open_ok("test:fork-t,fault_nth=1");
  rig_buffer *bm = create_ok(m, 64), *bh = create_ok(rig_device_host(), 64), *bt = create_ok(t, 64);
  rig_point pm, ph;
  check_ok(rig_buffer_submit_fill(bm, 1, 1, &pm), "fill m");
  check_ok(rig_buffer_submit_fill(bh, 2, 1, &ph), "fill host");
  assert_int_equal(rig_buffer_fill(bt, 3, 1), RIG_LOST); /* t lost before the fork */
  const char *t_why = rig_device_lost(t);
  rig_part part = rig_part_fill(0, 4, 1);
  rig_submission *s;
  check_ok(rig_submission_make(m, &part, 1, &s), "make");
  check_ok(rig_submission_keep(s, &kept, release_kept), "keep");
  pid_t pid = fork_ok();
  if (pid == 0) {
    CHECK(10, rig_device_lost(m) && strcmp(rig_device_lost(m), "forked") == 0);    /* STOP-18, ERR-34 */
    CHECK(11, rig_device_lost(t) && strcmp(rig_device_lost(t), t_why) == 0);      /* its own reason */
    CHECK(12, rig_device_lost(rig_device_host()) == NULL);
    CHECK(13, !rig_point_reached(pm));                              /* STOP-19 */
    CHECK(14, rig_point_wait(pm) == RIG_LOST);
    uint8_t byte = 0;
    CHECK(15, rig_buffer_get(bm, 0, &byte, 1) == RIG_LOST);         /* LOSS-9 */
    CHECK(16, rig_buffer_get(bh, 0, &byte, 1) == RIG_OK && byte == 2); /* STOP-22 */
    CHECK(17, rig_point_reached(ph));
    rig_submission_release(s);
    rig_buffer *any;
    CHECK(18, rig_buffer_create(rig_device_host(), 16, &any) == RIG_OK);   /* a move: STOP-21 */
    CHECK(19, kept == 1);
    rig_buffer_release(any);
    CHECK(20, rig_device_close(m) == RIG_OK);                              /* STOP-20 */
    rig_device *again = NULL;
    CHECK(21, rig_device_open("memory:fork-m", &again) == RIG_OK);         /* STOP-26 */
    CHECK(22, again != m && rig_device_lost(again) == NULL);
    rig_buffer *fresh;
    CHECK(23, rig_buffer_create(again, 64, &fresh) == RIG_OK);
    CHECK(24, rig_buffer_fill(fresh, 5, 1) == RIG_OK);
    CHECK(25, rig_buffer_get(fresh, 0, &byte, 1) == RIG_OK && byte == 5);
    _exit(0);
  }
  wait_child_ok(pid);
  assert_null(rig_device_lost(m)); /* the parent's devices live on */
  check_ok(rig_point_wait(pm), "wait in the parent");
  rig_submission_release(s);
  rig_buffer_release(bm);
  rig_buffer_release(bh);
  rig_buffer_release(bt);
  close_release(m);
  close_release(t);
}

typedef struct getter {
  rig_buffer *x;
  rig_status st;
  uint8_t bytes[4096];
} getter;

static void *staged_get(void *arg) {
  getter *g = arg;
  g->st = rig_buffer_get(g->x, 0, g->bytes, sizeof g->bytes);
  return NULL;
}

/* STOP-25, STOP-18, STOP-20: host staging memory a thread of the parent
 * copies through at the fork (a get from a device whose memory the host
 * does not address, its copy into the staging under way) stays in the
 * child for good: no move, free_cache or close of the device frees it. */
static void stop_25_staging_in_use_at_the_fork(void **state) {
  rig_device *g = open_ok("test:fork-s25,host=0,delay_us=400000");
  getter get = {create_ok(g, 4096), RIG_INVALID, {0}};
  uint8_t pattern[4096];
  memset(pattern, 0x5c, sizeof pattern);
  check_ok(rig_buffer_put(get.x, 0, pattern, sizeof pattern), "put");
  check_ok(rig_device_free_cache(g), "free_cache"); /* the put's staging goes back */
  check_ok(rig_device_free_cache(rig_device_host()), "free_cache");
  uint64_t host0 = rig_device_allocated(rig_device_host()), taken = rig_device_submitted(g);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, staged_get, &get), 0);
  for (double end = now_s() + 10.0;
       (rig_device_submitted(g) == taken || rig_device_allocated(rig_device_host()) == host0) && now_s() < end;)
    sleep_ms(1);
  uint64_t host1 = rig_device_allocated(rig_device_host());
  assert_true(rig_device_submitted(g) == taken + 1 && host1 > host0); /* the copy under way */
  pid_t pid = fork_ok();
  if (pid == 0) {
    CHECK(40, rig_device_lost(g) && strcmp(rig_device_lost(g), "forked") == 0);
    CHECK(41, rig_device_free_cache(rig_device_host()) == RIG_OK && rig_device_free_cache(g) == RIG_OK);
    CHECK(42, rig_device_allocated(rig_device_host()) >= host1);
    CHECK(43, rig_device_close(g) == RIG_OK);
    rig_buffer *any;
    CHECK(44, rig_buffer_create(rig_device_host(), 16, &any) == RIG_OK); /* a move */
    rig_buffer_release(any);
    CHECK(45, rig_device_free_cache(rig_device_host()) == RIG_OK);
    CHECK(46, rig_device_allocated(rig_device_host()) >= host1);
    _exit(0);
  }
  int code = wait_child_exit(pid);
  pthread_join(t, NULL); /* before the assertion, which would leave it running */
  assert_int_equal(code, 0);
  check_ok(get.st, "the parent's get");
  assert_memory_equal(get.bytes, pattern, sizeof pattern);
  rig_buffer_release(get.x);
  close_release(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stop_18_26_a_child_of_fork),
      cmocka_unit_test(stop_25_staging_in_use_at_the_fork),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
