/* test_liveness.c: the hang bound counts a server's silence, not its work
 * (docs/remote.md, "Liveness"). A launch on m1's host that sleeps for
 * more than twice the client's hang bound is not lost, nor is another
 * client's request that waits behind it on the same server: the server
 * sends BUSY while it works. A server stopped (SIGSTOP) in the middle of
 * such a launch sends nothing and is lost after the bound. Each test
 * bounds its time through the hang bound and stops its servers. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "kernel_file.h"
#include "server.h"

/* The hang bound, and a nap of more than twice it. */
enum { HANG_MS = 2000, NAP_MS = 5000, DONE = 0x600dcafe };

static const char *key;

/* A run of nap (one launch, its done word in slot 0) for ms, submitted
 * over done: its submit's status, and where RIG_OK, its point's wait's. */
static rig_status nap_run(rig_submission *s, rig_buffer *done, int64_t ms) {
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 1, 1);
  ok(rig_run_int64(run, 0, 8, ms));
  rig_point p = 0;
  rig_status st = rig_run_submit(run, &done, 1, NULL, 0, &p);
  return st != RIG_OK ? st : rig_point_wait(p);
}

/* The nap kernel loaded on host h, with its launch. */
static rig_image *nap_on(rig_device *h, rig_submission **s) {
  rig_function *f = NULL;
  rig_image *im = kernel_load_on(h, "nap.o", "nap", &f);
  rig_ref ref = rig_ref_write(0, 0);
  *s = launch_make_ok(h, f, &ref, 1, 16);
  return im;
}

/* Another client's work on the same server, begun while the nap runs. */
typedef struct behind {
  rig_buffer *b;
  rig_status fill, get;
  unsigned char got[64];
} behind;

static void *behind_main(void *arg) {
  behind *w = arg;
  sleep_ms(500); /* the nap has begun */
  w->fill = rig_buffer_fill(w->b, 0x5a, 1);
  w->get = rig_buffer_get(w->b, 0, w->got, sizeof w->got);
  return NULL;
}

/* A launch that sleeps NAP_MS, more than twice the hang bound, ends with
 * its machine open and its result in place; a second client's fill and
 * get, sent to the same server while the nap runs, wait behind it and are
 * not lost either; the machine then goes on working. */
static void test_long_request_is_not_lost(void **state) {
  (void)state;
  test_server s;
  test_server_start(&s, key);
  rig_device *h = test_remote_host("m-nap", &s, key, HANG_MS);
  rig_device *h2 = test_remote_host("m-nap-other", &s, key, HANG_MS);
  rig_submission *sub = NULL;
  rig_image *im = nap_on(h, &sub);
  rig_buffer *done = create_ok(h, 64);
  behind w = {.b = create_ok(h2, 64)};
  ok(rig_buffer_fill(done, 0, 1));
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, behind_main, &w), 0);
  ok(nap_run(sub, done, NAP_MS));
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_null(rig_device_lost(h));
  assert_null(rig_device_lost(h2));
  uint32_t got = 0;
  ok(rig_buffer_get(done, 0, &got, sizeof got));
  assert_int_equal(got, DONE);
  ok(w.fill);
  ok(w.get);
  for (size_t i = 0; i < sizeof w.got; i++)
    assert_int_equal(w.got[i], 0x5a);
  ok(rig_buffer_fill(done, 0, 1)); /* and it still works */
  ok(nap_run(sub, done, 10));
  ok(rig_buffer_get(done, 0, &got, sizeof got));
  assert_int_equal(got, DONE);
  assert_true(test_server_logged(&s, "loaded an object"));
  rig_submission_release(sub);
  rig_image_release(im);
  rig_buffer_release(done);
  rig_buffer_release(w.b);
  close_release(h);
  close_release(h2);
  test_server_stop(&s);
}

static void *stop_main(void *arg) {
  sleep_ms(1000); /* the nap has begun, and BUSY has come a few times */
  test_server_signal(arg, SIGSTOP);
  return NULL;
}

/* A server stopped (SIGSTOP) in the middle of a long launch sends no
 * BUSY: the machine is lost with "no answer within the hang bound", its
 * host and its devices, and nothing of this machine with it. */
static void test_stopped_server_is_lost(void **state) {
  (void)state;
  test_server s;
  test_server_start(&s, key);
  rig_device *h = test_remote_host("m-nap-stopped", &s, key, HANG_MS);
  rig_device *a = test_remote_on(h, "memory:a");
  rig_submission *sub = NULL;
  rig_image *im = nap_on(h, &sub);
  rig_buffer *done = create_ok(h, 64);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, stop_main, &s), 0);
  assert_int_equal(nap_run(sub, done, NAP_MS), RIG_LOST);
  assert_int_equal(pthread_join(t, NULL), 0);
  rig_device *devs[2] = {h, a};
  for (int i = 0; i < 2; i++) {
    const char *why = rig_device_lost(devs[i]);
    assert_non_null(why);
    assert_non_null(strstr(why, "m-nap-stopped lost: no answer within the hang bound"));
  }
  assert_null(rig_device_lost(rig_device_host()));
  test_server_signal(&s, SIGCONT);
  rig_submission_release(sub);
  rig_image_release(im);
  rig_buffer_release(done);
  for (int i = 0; i < 2; i++) {
    rig_status st = rig_device_close(devs[i]); /* its owed stop */
    assert_true(st == RIG_OK || st == RIG_LOST);
    rig_device_release(devs[i]);
  }
  test_server_stop(&s);
}

int main(void) {
  key = test_key_file("the shared secret of the liveness tests");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_long_request_is_not_lost),
      cmocka_unit_test(test_stopped_server_is_lost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
