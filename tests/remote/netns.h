/* netns.h: "machines" with addresses of their own for the remote tests:
 * network namespaces joined by veth pairs (`ip netns`, `ip link`). The
 * test process moves into a client namespace; machine i's namespace is
 * joined to it by a veth pair whose client end is a port of one bridge:
 * the client is 10.77.0.1, machine i 10.77.0.(i+1). Every name carries
 * the test's pid, and everything goes at exit, on SIGTERM, SIGINT and
 * SIGABRT, and at the next run for a dead pid. */
#ifndef RIG_TEST_REMOTE_NETNS_H
#define RIG_TEST_REMOTE_NETNS_H

#include <stdbool.h>
#include <stddef.h>

enum { TEST_NETNS_MACHINES = 2 };

/* Makes the namespaces and links and moves this process (it must have no
 * thread yet) into the client's. Returns true; false with why where this
 * machine does not permit `ip netns` (no root, no iproute2, a container
 * without CAP_SYS_ADMIN), having removed whatever it made. */
bool test_netns_up(char *why, size_t why_n);
/* The namespace of machine i (1..TEST_NETNS_MACHINES), for
 * test_server_start_in. */
const char *test_netns_name(int i);
/* Machine i's end of its link, "rgmI-PID": the one network device its
 * server's UCX may use (test_server_start_in). UCX deems loopback devices
 * of one host reachable from each other, which namespaces make untrue, so
 * neither side uses lo; the client's devices are set at test_netns_up. */
const char *test_netns_device(int i);
/* The address machine i's server listens on: "10.77.0.(i+1):0". */
const char *test_netns_listen(int i);
/* Takes machine i's end of its link down (up: false) or up again, as
 * `ip link set DEV down` does. Returns whether ip succeeded. */
bool test_netns_link(int i, bool up);
/* Bytes this process's namespace has sent on machine i's link
 * (/proc/self/net/dev). */
unsigned long long test_netns_sent(int i);

/* A thread's work (pthread_create(..., test_netns_take_down, &watch)):
 * takes machine `machine`'s link down once this process has sent `after`
 * more bytes on it (mid-copy, without guessing a time), and notes when
 * (CLOCK_MONOTONIC ms) and whether ip succeeded. Gives up waiting after
 * 20 s. */
typedef struct test_netns_watch {
  int machine;
  unsigned long long after;
  unsigned long long at_ms;
  bool downed;
} test_netns_watch;
void *test_netns_take_down(void *watch);

#endif
