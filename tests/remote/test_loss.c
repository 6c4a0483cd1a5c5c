/* test_loss.c: how a machine is lost (docs/remote.md, "Rules of a
 * machine's life"): a server that stops answering for the hang bound
 * (SIGSTOP) and a server killed (SIGKILL, which breaks its connections)
 * each lose that machine's host and every device of it, with a reason that
 * names the machine and the cause; opens on it are then Error, its name is
 * Error for the life of the process (MACH-6) while a new name for the same
 * address is another machine (MACH-3), and nothing of this machine is
 * lost. Each test bounds its time through the hang bound. */
#include <setjmp.h>
#include <stdbool.h>
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
#include "server.h"

/* The hang test's bound: short, yet long enough for a loaded machine's
 * answers; the others take the usual 10 s, so that only a break loses. */
enum { N = 1u << 20, HANG_MS = 3000, USUAL_MS = 10000 };

static const char *key;

/* A machine in use, and this machine's own work beside it. */
typedef struct in_use {
  test_server s;
  const char *name;
  rig_device *h, *a, *b, *local;
  rig_buffer *x, *here, *mine;
  unsigned char *in;
} in_use;

static void use_machine(in_use *u, const char *name, uint32_t hang_ms) {
  test_server_start(&u->s, key);
  u->name = name;
  u->h = test_remote_host(name, &u->s, key, hang_ms);
  u->a = test_remote_on(u->h, "memory:a");
  u->b = test_remote_on(u->h, "memory:b");
  u->local = open_ok("memory:a");
  u->x = create_ok(u->a, N);
  u->here = create_ok(rig_device_host(), N);
  u->mine = create_ok(u->local, N);
  u->in = malloc(N);
  assert_non_null(u->in);
  test_pattern(u->in, N, 9);
  ok(rig_buffer_put(u->x, 0, u->in, N));
  ok(rig_buffer_copy(u->x, u->here)); /* a result, copied back here */
  ok(rig_buffer_put(u->mine, 0, u->in, N));
}

/* The machine is lost, with cause in every reason, and the machine's name
 * where named; nothing here is. */
static void assert_lost(in_use *u, const char *cause, bool named) {
  assert_int_equal(rig_buffer_copy(u->here, u->x), RIG_LOST);
  assert_non_null(strstr(rig_error_last()->message, u->name));
  rig_device *devs[] = {u->h, u->a, u->b};
  for (int i = 0; i < 3; i++) {
    const char *why = rig_device_lost(devs[i]);
    assert_non_null(why);
    print_message("%s: %s\n", rig_device_name(devs[i]), why);
    assert_true(!named || strstr(why, u->name));
    assert_non_null(strstr(why, cause));
  }
  unsigned char byte;
  assert_int_equal(rig_buffer_get(u->x, 0, &byte, 1), RIG_LOST);
  assert_null(rig_device_lost(rig_device_host()));
  assert_null(rig_device_lost(u->local));
  assert_memory_equal(rig_buffer_host_address(u->here), u->in, N);
  unsigned char *back = malloc(N);
  ok(rig_buffer_get(u->mine, 0, back, N));
  assert_memory_equal(back, u->in, N);
  free(back);
}

/* Opens on the lost or closed machine are Error (OPEN-6; after a close,
 * OPEN-54), each with the host's Lost as its reason (OPEN-8), and so is
 * its name (MACH-6). */
static void assert_machine_closed(in_use *u) {
  rig_device *d = NULL;
  char name[96];
  assert_int_equal(rig_device_open_on(u->h, "memory:c", &d), RIG_UNAVAILABLE);
  if (!strstr(rig_error_last()->message, rig_device_lost(u->h)))
    fail_msg("open on the machine: '%s', not the host's '%s'", rig_error_last()->message,
             rig_device_lost(u->h));
  snprintf(name, sizeof name, "memory:a@%s", u->name);
  assert_int_equal(rig_device_open(name, &d), RIG_UNAVAILABLE);
  rig_host_opener o = {.address = u->s.address, .key_file = key, .hang_ms = HANG_MS};
  assert_int_equal(rig_device_open_host(u->name, &o, &d), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, u->name));
}

static void release_machine(in_use *u) {
  rig_buffer_release(u->x);
  rig_buffer_release(u->here);
  rig_buffer_release(u->mine);
  free(u->in);
  rig_device *devs[] = {u->a, u->b, u->h};
  for (int i = 0; i < 3; i++) {
    rig_status st = rig_device_close(devs[i]); /* its owed stop */
    assert_true(st == RIG_OK || st == RIG_LOST);
    rig_device_release(devs[i]);
  }
  close_release(u->local);
}

/* A server that stops answering (SIGSTOP) for the hang bound: the machine
 * is lost "no answer within the hang bound"; once it answers again
 * (SIGCONT) its name is still Error (MACH-6), and the same address under a
 * new name is another machine, which works (MACH-3). */
static void test_hang_loses_machine(void **state) {
  (void)state;
  in_use u;
  use_machine(&u, "m-hang", HANG_MS);
  assert_int_equal(kill(u.s.pid, SIGSTOP), 0);
  assert_lost(&u, "no answer within the hang bound (3000 ms)", true);
  assert_int_equal(kill(u.s.pid, SIGCONT), 0);
  assert_machine_closed(&u);
  rig_device *h2 = test_remote_host("m-hang-again", &u.s, key, USUAL_MS);
  rig_device *a2 = test_remote_on(h2, "memory:a");
  rig_buffer *y = create_ok(a2, N);
  unsigned char *back = malloc(N);
  ok(rig_buffer_put(y, 0, u.in, N));
  ok(rig_buffer_get(y, 0, back, N));
  assert_memory_equal(back, u.in, N);
  free(back);
  rig_buffer_release(y);
  close_release(a2);
  close_release(h2);
  release_machine(&u);
  test_server_stop(&u.s);
}

/* A server killed (SIGKILL): its connection breaks, and every device of
 * the machine is lost with a reason that names the machine and says it was
 * lost; its name is Error from then on (MACH-6). */
static void test_kill_loses_machine(void **state) {
  (void)state;
  in_use u;
  use_machine(&u, "m-gone", USUAL_MS);
  test_server_kill(&u.s);
  assert_lost(&u, "m-gone lost: connection closed by the server", true);
  assert_null(strstr(rig_device_lost(u.a), "Endpoint")); /* rig's words, not UCX's */
  assert_machine_closed(&u);
  release_machine(&u);
}

/* Closing a machine's host closes every device of its machine first
 * ("closed"), and their buffers' calls are RIG_LOST; nothing here is. */
static void test_close_host_first(void **state) {
  (void)state;
  in_use u;
  use_machine(&u, "m-shut", USUAL_MS);
  ok(rig_device_close(u.h));
  assert_lost(&u, "closed", false);
  assert_machine_closed(&u);
  release_machine(&u);
  test_server_stop(&u.s);
}

/* An address where no server listens: the open is RIG_UNAVAILABLE with
 * "connection refused", naming the machine and the address, not UCX's
 * "Endpoint is not connected" nor "lost" (it was never open). */
static void test_no_server_refused(void **state) {
  (void)state;
  test_server s;
  test_server_start(&s, key);
  char address[64];
  snprintf(address, sizeof address, "%s", s.address);
  test_server_kill(&s); /* its port, now with nothing behind it */
  rig_host_opener o = {.address = address, .key_file = key, .hang_ms = HANG_MS};
  rig_device *h = NULL;
  assert_int_equal(rig_device_open_host("m-nobody", &o, &h), RIG_UNAVAILABLE);
  const char *why = rig_error_last()->message;
  if (!strstr(why, "m-nobody") || !strstr(why, address) || !strstr(why, "connection refused") ||
      strstr(why, "lost") || strstr(why, "Endpoint"))
    fail_msg("open with no server: '%s'", why);
}

int main(void) {
  key = test_key_file("a shared secret of the loss tests, long enough to use");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hang_loses_machine),
      cmocka_unit_test(test_kill_loses_machine),
      cmocka_unit_test(test_close_host_first),
      cmocka_unit_test(test_no_server_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
