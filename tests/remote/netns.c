/* netns.c: network namespaces for the remote tests (netns.h). */
#define _GNU_SOURCE /* setns */
#include "netns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "rigt-"

static char names[TEST_NETNS_MACHINES + 1][32]; /* [0]: the client's */
static bool made[TEST_NETNS_MACHINES + 1];

/* Runs an ip command quietly; whether it succeeded. */
static bool ip(const char *fmt, ...) {
  char cmd[512];
  va_list a;
  va_start(a, fmt);
  int n = vsnprintf(cmd, sizeof cmd, fmt, a);
  va_end(a);
  if (n < 0 || (size_t)n + 20 >= sizeof cmd)
    return false;
  strcat(cmd, " >/dev/null 2>&1");
  return system(cmd) == 0;
}

/* Deleting a namespace destroys the veth ends in it, and so their peers. */
static void remove_all(void) {
  for (int i = 0; i <= TEST_NETNS_MACHINES; i++)
    if (made[i]) {
      made[i] = false;
      (void)ip("ip netns del %s", names[i]);
    }
}

static void on_signal(int sig) {
  remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Namespaces of earlier runs whose process died without cleaning up
 * (SIGKILL): their names end in a pid that no longer runs. */
static void remove_stale(void) {
  DIR *d = opendir("/var/run/netns");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    const char *dash = strrchr(e->d_name, '-');
    if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) != 0 || !dash)
      continue;
    long pid = strtol(dash + 1, NULL, 10);
    if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
      (void)ip("ip netns del %s", e->d_name);
  }
  if (d)
    closedir(d);
}

/* Machine i's veth pair: its end in its namespace at 10.77.0.(i+1), the
 * other a port of the client's bridge, so that the client has one address,
 * 10.77.0.1, and one device for UCX, whichever machine it talks to. */
static bool link_machine(int i) {
  long pid = (long)getpid();
  return ip("ip link add rgc%d-%ld netns %s type veth peer name rgm%d-%ld netns %s", i, pid,
            names[0], i, pid, names[i]) &&
         ip("ip -n %s link set rgc%d-%ld master rgb-%ld up", names[0], i, pid, pid) &&
         ip("ip -n %s addr add 10.77.0.%d/24 dev rgm%d-%ld", names[i], i + 1, i, pid) &&
         ip("ip -n %s link set rgm%d-%ld up", names[i], i, pid);
}

static bool make_bridge(void) {
  long pid = (long)getpid();
  return ip("ip -n %s link add rgb-%ld type bridge forward_delay 0", names[0], pid) &&
         ip("ip -n %s addr add 10.77.0.1/24 dev rgb-%ld", names[0], pid) &&
         ip("ip -n %s link set rgb-%ld up", names[0], pid);
}

/* Joins the client's namespace as `ip netns exec` does: a mount namespace
 * of this process's own, with the namespace's /sys, where UCX lists the
 * network devices it may use. */
static bool join_client(char *why, size_t why_n) {
  char path[64];
  snprintf(path, sizeof path, "/var/run/netns/%s", names[0]);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  const char *step = fd < 0 ? "open" : setns(fd, CLONE_NEWNET) != 0 ? "setns"
                   : unshare(CLONE_NEWNS) != 0                       ? "unshare"
                   : mount("", "/", NULL, MS_SLAVE | MS_REC, NULL) != 0 ? "mount /"
                   : umount2("/sys", MNT_DETACH) != 0                ? "umount /sys"
                   : mount(names[0], "/sys", "sysfs", 0, NULL) != 0  ? "mount /sys"
                                                                     : NULL;
  if (step)
    snprintf(why, why_n, "cannot join %s (%s): %s", path, step, strerror(errno));
  if (fd >= 0)
    close(fd);
  return !step;
}

bool test_netns_up(char *why, size_t why_n) {
  remove_stale();
  atexit(remove_all);
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  signal(SIGABRT, on_signal);
  for (int i = 0; i <= TEST_NETNS_MACHINES; i++) {
    snprintf(names[i], sizeof names[i], PREFIX "%s%d-%ld", i ? "m" : "c", i, (long)getpid());
    if (!(made[i] = ip("ip netns add %s", names[i])) ||
        !ip("ip -n %s link set lo up", names[i])) {
      snprintf(why, why_n, "`ip netns add %s` is not permitted here (needs root and iproute2)",
               names[i]);
      remove_all();
      return false;
    }
  }
  bool linked = make_bridge();
  for (int i = 1; linked && i <= TEST_NETNS_MACHINES; i++)
    linked = link_machine(i);
  if (!linked) {
    snprintf(why, why_n, "a bridge and veth pairs in %s cannot be made here", names[0]);
    remove_all();
    return false;
  }
  if (!join_client(why, why_n)) {
    remove_all();
    return false;
  }
  char bridge[32];
  snprintf(bridge, sizeof bridge, "rgb-%ld", (long)getpid());
  setenv("UCX_NET_DEVICES", bridge, 1); /* not lo: see test_netns_device */
  return true;
}

const char *test_netns_name(int i) { return names[i]; }

const char *test_netns_device(int i) {
  static char d[TEST_NETNS_MACHINES + 1][32];
  snprintf(d[i], sizeof d[i], "rgm%d-%ld", i, (long)getpid());
  return d[i];
}

const char *test_netns_listen(int i) {
  static char a[TEST_NETNS_MACHINES + 1][32];
  snprintf(a[i], sizeof a[i], "10.77.0.%d:0", i + 1);
  return a[i];
}

bool test_netns_link(int i, bool up) {
  return ip("ip -n %s link set rgm%d-%ld %s", names[i], i, (long)getpid(), up ? "up" : "down");
}

unsigned long long test_netns_sent(int i) {
  char dev[32], line[512];
  snprintf(dev, sizeof dev, "rgc%d-%ld:", i, (long)getpid());
  FILE *f = fopen("/proc/self/net/dev", "r");
  unsigned long long v[9] = {0};
  while (f && fgets(line, sizeof line, f)) {
    char *p = line + strspn(line, " ");
    if (strncmp(p, dev, strlen(dev)) != 0)
      continue;
    /* rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes */
    if (sscanf(p + strlen(dev), "%llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
               &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 9)
      v[8] = 0;
    break;
  }
  if (f)
    fclose(f);
  return v[8];
}

void *test_netns_take_down(void *watch) {
  test_netns_watch *w = watch;
  unsigned long long start = test_netns_sent(w->machine);
  struct timespec tick = {0, 1000000}, t;
  for (int i = 0; i < 20000 && test_netns_sent(w->machine) - start < w->after; i++)
    nanosleep(&tick, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t);
  w->at_ms = (unsigned long long)t.tv_sec * 1000u + (unsigned long long)t.tv_nsec / 1000000u;
  w->downed = test_netns_link(w->machine, false);
  return NULL;
}
