/* test_bound.c: the hang bound holds for bulk copies (docs/remote.md,
 * "The hang bound"). A copy of 16 MiB, 256 MiB or 1 GiB from this host to
 * another machine, by RMA (memory:a there, in its host memory) or in PUT
 * chunks (a test device there whose memory its host does not address), to
 * a server stopped with SIGSTOP or over a link taken down mid-copy
 * (network namespaces, netns.h), and of 256 MiB back from a stopped
 * server (GET chunks, RMA gets), fails RIG_LOST, and the machine is lost,
 * within the hang bound plus the slack docs/remote.md states (1 s),
 * counted from the last byte that moved: for a stopped server from the
 * copy's start, for a link from the moment it went down. Skips (77) where
 * `ip netns` is not permitted. Prints each case's time to be lost. */
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

enum { HANG_MS = 2000, SLACK_MS = 1000 };

static const char *key;
static unsigned machines; /* a new name per case: a lost name stays lost */

static uint64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* One case: a copy of n bytes from this host to `device` on a fresh
 * machine, cut off as `link_down` says; checks the loss and its time. */
static void cut_off(size_t n, const char *device, bool link_down, bool back) {
  int i = link_down ? 1 : 2;
  test_server s;
  char machine[32];
  snprintf(machine, sizeof machine, "bound-%u", ++machines);
  test_server_start_in(&s, key, test_netns_name(i), test_netns_listen(i), test_netns_device(i));
  rig_device *h = test_remote_host(machine, &s, key, HANG_MS), *d = test_remote_on(h, device);
  rig_buffer *src = create_ok(rig_device_host(), n), *dst = create_ok(d, n);
  memset(rig_buffer_host_address(src), 0x3c, n);
  test_netns_watch w = {.machine = 1, .after = 8u << 20};
  pthread_t t;
  uint64_t start = now_ms();
  if (link_down)
    assert_int_equal(pthread_create(&t, NULL, test_netns_take_down, &w), 0);
  else
    test_server_signal(&s, SIGSTOP);
  rig_status st = back ? rig_buffer_copy(dst, src) : rig_buffer_copy(src, dst);
  uint64_t end = now_ms();
  if (link_down) {
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(w.downed);
    start = w.at_ms;
  }
  uint64_t took = end > start ? end - start : 0;
  printf("%s %zu MiB %s %s: lost after %llu ms (bound %u ms)\n",
         link_down ? "link down" : "stopped", n >> 20, back ? "from" : "to", device,
         (unsigned long long)took, (unsigned)HANG_MS);
  if (link_down) /* first, so that a failure below leaves the next case its link */
    assert_true(test_netns_link(1, true));
  else
    test_server_signal(&s, SIGCONT);
  assert_int_equal(st, RIG_LOST);
  assert_non_null(rig_device_lost(h));
  assert_non_null(strstr(rig_device_lost(d), machine));
  if (took > HANG_MS + SLACK_MS)
    fail_msg("lost after %llu ms: past the bound %u ms and its slack %u ms",
             (unsigned long long)took, (unsigned)HANG_MS, (unsigned)SLACK_MS);
  rig_buffer_release(src);
  rig_buffer_release(dst);
  close_release(d);
  close_release(h);
  test_server_kill(&s);
}

#define RMA "memory:a"
#define CHUNKS "test:bound,host=0" /* its server's host does not address it */
#define CASE(name, bytes, device, down)                                                            \
  static void name(void **state) {                                                                 \
    (void)state, cut_off(bytes, device, down, false);                                              \
  }
/* Copies back to this host (gets): stopped only, since the link's watcher
 * counts the bytes this process sends. */
#define BACK(name, bytes, device)                                                                  \
  static void name(void **state) {                                                                 \
    (void)state, cut_off(bytes, device, false, true);                                              \
  }
CASE(test_rma_16m_stopped, 16u << 20, RMA, false)
CASE(test_rma_256m_stopped, 256u << 20, RMA, false)
CASE(test_rma_1g_stopped, 1u << 30, RMA, false)
CASE(test_rma_16m_link_down, 16u << 20, RMA, true)
CASE(test_rma_256m_link_down, 256u << 20, RMA, true)
CASE(test_rma_1g_link_down, 1u << 30, RMA, true)
CASE(test_chunks_16m_stopped, 16u << 20, CHUNKS, false)
CASE(test_chunks_256m_stopped, 256u << 20, CHUNKS, false)
CASE(test_chunks_1g_stopped, 1u << 30, CHUNKS, false)
CASE(test_chunks_16m_link_down, 16u << 20, CHUNKS, true)
CASE(test_chunks_256m_link_down, 256u << 20, CHUNKS, true)
CASE(test_chunks_1g_link_down, 1u << 30, CHUNKS, true)
BACK(test_rma_256m_back_stopped, 256u << 20, RMA)
BACK(test_chunks_256m_back_stopped, 256u << 20, CHUNKS)

int main(void) {
  char why[256];
  if (!test_netns_up(why, sizeof why)) {
    printf("skip: %s\n", why);
    return 77;
  }
  key = test_key_file("the hang bound tests' shared secret");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rma_16m_stopped),       cmocka_unit_test(test_rma_256m_stopped),
      cmocka_unit_test(test_rma_1g_stopped),        cmocka_unit_test(test_rma_16m_link_down),
      cmocka_unit_test(test_rma_256m_link_down),    cmocka_unit_test(test_rma_1g_link_down),
      cmocka_unit_test(test_chunks_16m_stopped),    cmocka_unit_test(test_chunks_256m_stopped),
      cmocka_unit_test(test_chunks_1g_stopped),     cmocka_unit_test(test_chunks_16m_link_down),
      cmocka_unit_test(test_chunks_256m_link_down), cmocka_unit_test(test_chunks_1g_link_down),
      cmocka_unit_test(test_rma_256m_back_stopped), cmocka_unit_test(test_chunks_256m_back_stopped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
