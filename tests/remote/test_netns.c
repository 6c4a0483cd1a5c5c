/* test_netns.c: other machines with addresses of their own. Each
 * "machine" is a rig serve in a network namespace of its own, joined to
 * this process's namespace by a veth pair (netns.h); the faults are the
 * network's: a link taken down mid-copy, and a server that stops
 * answering (SIGSTOP). Each loses its machine with a reason that names it
 * (docs/remote.md), and nothing of this machine is lost with it. Skips
 * (77) where `ip netns` is not permitted. Every wait is bounded: the hang
 * bound of each opener (5 to 10 s), the servers' start-up wait, and the
 * link watcher's 20 s. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "netns.h"
#include "server.h"

static const char *key;
/* The closing figures (docs/remote.md, "Tests"): faults this file
 * injects, devices lost as the docs say, bytes of this machine lost. */
static unsigned faults, lost_as_documented;
static unsigned long long bytes_lost_here;

/* A server in machine i's namespace, on its link alone. */
static void start_in(test_server *s, int i) {
  test_server_start_in(s, key, test_netns_name(i), test_netns_listen(i), test_netns_device(i));
}

static rig_device *host_ok(const char *machine, const test_server *s, uint32_t hang_ms) {
  return test_remote_host(machine, s, key, hang_ms);
}

static void pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)((i * 151u + seed * 13u + (i >> 11)) & 0xffu);
}

/* Bytes of b that differ from want: what this machine lost. */
static unsigned long long differing(rig_buffer *b, const unsigned char *want, size_t n) {
  const unsigned char *got = rig_buffer_host_address(b);
  unsigned long long d = 0;
  assert_non_null(got);
  for (size_t i = 0; i < n; i++)
    d += got[i] != want[i];
  return d;
}

/* Whether every device of the machine is lost with a reason that names the
 * machine, as docs/remote.md says; counts them. */
static void expect_machine_lost(rig_device *const *devs, size_t n, const char *machine,
                                const char *cause) {
  for (size_t i = 0; i < n; i++) {
    const char *why = rig_device_lost(devs[i]);
    assert_non_null(why);
    if (!strstr(why, machine) || (cause && !strstr(why, cause)))
      fail_msg("%s lost with '%s', not naming %s%s%s", rig_device_name(devs[i]), why, machine,
               cause ? " and " : "", cause ? cause : "");
    lost_as_documented++;
  }
}

/* Bytes from this host to m1, within m1, a fill there, m1 to m2 and back,
 * checked byte by byte; each machine listens at an address of its own,
 * and saw this process come from its namespace's address. */
static void test_pipeline_across_namespaces(void **state) {
  (void)state;
  enum { N = (20u << 20) + 5 };
  test_server s1, s2;
  start_in(&s1, 1);
  start_in(&s2, 2);
  rig_device *h1 = host_ok("ns-m1", &s1, 10000), *h2 = host_ok("ns-m2", &s2, 10000);
  rig_device *a1 = test_remote_on(h1, "memory:a"), *b2 = test_remote_on(h2, "memory:b");
  unsigned char *in = malloc(N);
  assert_non_null(in);
  pattern(in, N, 5);
  rig_buffer *x1 = create_ok(a1, N), *y1 = create_ok(h1, N), *z2 = create_ok(b2, N);
  rig_buffer *out = create_ok(rig_device_host(), N), *mid = NULL;
  ok(rig_buffer_put(x1, 0, in, N));
  ok(rig_buffer_copy(x1, y1));
  ok(rig_buffer_view(y1, 1u << 20, 4099, RIG_READ_WRITE, &mid));
  ok(rig_buffer_fill(mid, 0x5c, 1));
  memset(in + (1u << 20), 0x5c, 4099);
  ok(rig_buffer_copy(y1, z2));
  ok(rig_buffer_copy(z2, out));
  assert_int_equal(differing(out, in, N), 0);
  assert_string_not_equal(s1.address, s2.address); /* each machine, an address of its own */
  assert_true(test_server_logged(&s1, "(10.77.0.1:"));  /* this process, through its link */
  assert_true(test_server_logged(&s2, "(10.77.0.1:"));
  rig_buffer_release(mid);
  rig_buffer_release(x1);
  rig_buffer_release(y1);
  rig_buffer_release(z2);
  rig_buffer_release(out);
  free(in);
  close_release(a1);
  close_release(b2);
  close_release(h1);
  close_release(h2);
  test_server_stop(&s1);
  test_server_stop(&s2);
}

/* A link taken down while a 256 MiB copy to the machine runs: the copy
 * fails, the machine (its host and every device) is lost with a reason
 * that names it, and this machine's buffers keep every byte: the source
 * of the copy, and a result copied back before the fault. */
static void test_link_down_mid_copy(void **state) {
  (void)state;
  enum { N = 256u << 20, R = 1u << 20 };
  test_server s;
  start_in(&s, 1);
  rig_device *h = host_ok("ns-down", &s, 10000);
  rig_device *a = test_remote_on(h, "memory:a"), *b = test_remote_on(h, "memory:b");
  rig_buffer *src = create_ok(rig_device_host(), N), *result = create_ok(rig_device_host(), R);
  rig_buffer *x = create_ok(a, N), *r = create_ok(b, R);
  unsigned char *want = malloc(N), *want_result = malloc(R);
  assert_non_null(want);
  assert_non_null(want_result);
  pattern(want, N, 9);
  pattern(want_result, R, 10);
  memcpy(rig_buffer_host_address(src), want, N);
  ok(rig_buffer_put(r, 0, want_result, R));
  ok(rig_buffer_copy(r, result)); /* a result, back on this machine */
  test_netns_watch w = {.machine = 1, .after = 16u << 20};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, test_netns_take_down, &w), 0);
  rig_status st = rig_buffer_copy(src, x);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_true(w.downed);
  faults++;
  assert_int_equal(st, RIG_LOST);
  rig_device *devs[] = {a, h, b};
  expect_machine_lost(devs, 3, "ns-down", NULL);
  rig_device *again = NULL;
  assert_int_equal(rig_device_open_on(h, "memory:c", &again), RIG_UNAVAILABLE);
  bytes_lost_here += differing(src, want, N) + differing(result, want_result, R);
  assert_int_equal(bytes_lost_here, 0);
  assert_true(test_netns_link(1, true));
  rig_buffer_release(x);
  rig_buffer_release(r);
  rig_buffer_release(src);
  rig_buffer_release(result);
  free(want);
  free(want_result);
  close_release(a);
  close_release(b);
  close_release(h);
  test_server_kill(&s);
}

/* A server that stops answering (SIGSTOP): the next request waits the
 * opener's hang bound (5 s here, docs/remote.md) and the machine is lost
 * "no answer within the hang bound"; this machine's buffer keeps its
 * bytes. */
static void test_stopped_server(void **state) {
  (void)state;
  enum { N = 4u << 20 };
  test_server s;
  start_in(&s, 2);
  rig_device *h = host_ok("ns-stopped", &s, 5000), *a = test_remote_on(h, "memory:a");
  rig_buffer *x = create_ok(a, N), *here = create_ok(rig_device_host(), N);
  unsigned char *want = malloc(N);
  assert_non_null(want);
  pattern(want, N, 11);
  ok(rig_buffer_put(x, 0, want, N));
  ok(rig_buffer_copy(x, here));
  test_server_signal(&s, SIGSTOP);
  faults++;
  assert_int_equal(rig_buffer_fill(x, 0x77, 1), RIG_LOST);
  rig_device *devs[] = {a, h};
  expect_machine_lost(devs, 2, "ns-stopped", "hang bound");
  bytes_lost_here += differing(here, want, N);
  assert_int_equal(bytes_lost_here, 0);
  test_server_signal(&s, SIGCONT);
  rig_buffer_release(x);
  rig_buffer_release(here);
  free(want);
  close_release(a);
  close_release(h);
  test_server_kill(&s);
}

int main(void) {
  char why[256];
  if (!test_netns_up(why, sizeof why)) {
    printf("skip: %s\n", why);
    return 77;
  }
  key = test_key_file("the network namespace tests' shared secret");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipeline_across_namespaces),
      cmocka_unit_test(test_link_down_mid_copy),
      cmocka_unit_test(test_stopped_server),
  };
  int r = cmocka_run_group_tests(tests, NULL, NULL);
  printf("faults injected: %u; devices lost as the docs say: %u; bytes lost on this machine: %llu\n",
         faults, lost_as_documented, bytes_lost_here);
  return r;
}
