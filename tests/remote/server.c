/* server.c: rig serve processes for the remote tests (server.h). */
#include "server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "check.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "check.h"
#include "child.h"

static void die(const char *what) {
  fprintf(stderr, "remote test: %s\n", what);
  abort();
}

static char paths[8][64];
static int npaths;

/* The key files go at exit, whatever a test's assertions did. */
static void remove_keys(void) {
  for (int i = 0; i < npaths && i < 8; i++)
    unlink(paths[i]);
}

const char *test_key_file(const char *text) {
  if (npaths == 0)
    atexit(remove_keys);
  char *p = paths[npaths++ % 8];
  snprintf(p, 64, "/tmp/rig-remote-key-XXXXXX");
  int fd = mkstemp(p);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
    die("cannot write a key file");
  close(fd);
  return p;
}

/* Reads the child's first stdout line, up to 20 s. */
static bool read_port_line(int fd, char *line, size_t n) {
  size_t got = 0;
  for (int waited = 0; waited < 20000 && got + 1 < n;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) {
      waited += 100;
      continue;
    }
    if (read(fd, line + got, 1) != 1)
      return false;
    if (line[got] == '\n')
      break;
    got++;
  }
  line[got] = 0;
  return got > 0;
}

/* In the child: becomes rig serve, inside the network namespace netns
 * where one is named. `ip netns exec` also mounts that namespace's /sys,
 * where UCX finds its network devices. */
static void become_server(const char *exe, const char *key, const char *netns, const char *listen,
                          const char *devices) {
  if (devices)
    setenv("UCX_NET_DEVICES", devices, 1);
  if (netns)
    execlp("ip", "ip", "netns", "exec", netns, exe, "serve", "--listen", listen, "--key", key,
           (char *)NULL);
  else if (child_emulator()) /* an arm64 rig under qemu-aarch64: the kernel cannot run it */
    execlp(child_emulator(), child_emulator(), exe, "serve", "--listen", listen, "--key", key,
           (char *)NULL);
  else
    execl(exe, exe, "serve", "--listen", listen, "--key", key, (char *)NULL);
  _exit(127);
}

void test_server_start_in(test_server *s, const char *key, const char *netns,
                          const char *listen, const char *devices) {
  const char *exe = getenv("RIG_EXE");
  int out[2];
  if (!exe || pipe(out) != 0)
    die("RIG_EXE is not set, or no pipe");
  snprintf(s->log, sizeof s->log, "/tmp/rig-remote-log-XXXXXX");
  int log = mkstemp(s->log);
  if (log < 0)
    die("no log file");
  s->pid = fork();
  if (s->pid == 0) {
    /* A test that fails mid-way leaves no server: it dies with the test. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], 1);
    dup2(log, 2);
    close(out[0]);
    become_server(exe, key, netns, listen, devices);
  }
  close(out[1]);
  close(log);
  char line[256];
  line[0] = 0;
  if (s->pid < 0 || !read_port_line(out[0], line, sizeof line) ||
      sscanf(line, "rig serve: listening on %63s", s->address) != 1) {
    fprintf(stderr, "remote test: rig serve said '%s'\n", line);
    die("rig serve did not say its address");
  }
  close(out[0]);
}

void test_server_start(test_server *s, const char *key) {
  test_server_start_in(s, key, NULL, "127.0.0.1:0", NULL);
}

static void reap(test_server *s, int sig, int grace_ms) {
  if (s->pid <= 0)
    return;
  kill(s->pid, sig);
  for (int i = 0; i < grace_ms / 10; i++) {
    if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
      s->pid = 0;
      return;
    }
    struct timespec t = {0, 10000000};
    nanosleep(&t, NULL);
  }
  kill(s->pid, SIGKILL);
  waitpid(s->pid, NULL, 0);
  s->pid = 0;
}

void test_server_stop(test_server *s) {
  reap(s, SIGTERM, 5000);
  unlink(s->log);
}
void test_server_kill(test_server *s) {
  reap(s, SIGKILL, 5000);
  unlink(s->log);
}
void test_server_signal(const test_server *s, int sig) {
  if (s->pid > 0)
    kill(s->pid, sig);
}

bool test_server_logged(const test_server *s, const char *text) {
  for (int i = 0; i < 50; i++) {
    FILE *f = fopen(s->log, "r");
    char buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
      fclose(f);
    buf[n] = 0;
    if (strstr(buf, text))
      return true;
    struct timespec t = {0, 100000000};
    nanosleep(&t, NULL);
  }
  return false;
}

/* ---- what the remote tests open and check ---- */

rig_device *test_remote_host(const char *machine, const test_server *s, const char *key,
                             uint32_t hang_ms) {
  rig_host_opener o = {.address = s->address, .key_file = key,
                       .hang_ms = hang_ms ? hang_ms : 10000};
  rig_device *h = NULL;
  check_ok(rig_device_open_host(machine, &o, &h), machine);
  return h;
}

rig_device *test_remote_on(rig_device *host, const char *name) {
  rig_device *d = NULL;
  check_ok(rig_device_open_on(host, name, &d), name);
  return d;
}

void test_pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 9)) & 0xffu);
}

void test_ucx_hooks_off(char **argv) {
  bool sanitized = dlsym(RTLD_DEFAULT, "__tsan_init") || dlsym(RTLD_DEFAULT, "__asan_init");
  if (!sanitized || getenv("UCX_MEM_MALLOC_HOOKS"))
    return;
  setenv("UCX_MEM_EVENTS", "no", 0);
  setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
  setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 0);
  execv("/proc/self/exe", argv);
}
