/* remote.c: `rig bench remote` (docs/benchmarks.md, docs/remote.md): rig's
 * devices of other machines against UCX alone on the same transport.
 *
 * The bench starts two `rig serve` processes, machines m1 and m2 on
 * loopback ports with a key in a temporary directory, and a UCX peer
 * process for the anchor (remote_ucx.c); it ends them all at its end.
 *
 * - latency: a 4-byte fill on memory:bench@m1, each following the last
 *   one's point through the stamps (the smallest work that crosses to the
 *   machine and back: one request and its reply), vs a UCP stream
 *   ping-pong of the same sizes (56 bytes out, 24 back);
 * - bandwidth: 1 GiB copies host -> memory@m1, memory@m1 -> host and
 *   memory@m1 -> memory@m2, vs one ucp_put_nbx (ucp_get_nbx for the copy
 *   to the host) of 1 GiB to the peer, flushed: UCX's own RMA, which is
 *   what the driver's bulk path uses (link_rma.c).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rig/rig.h>

#include "bench.h"
#include "remote_ucx.h"

#define SMALL 4

/* The bandwidth rows' bytes: 1 GiB, or $RIG_BENCH_REMOTE_MIB MiB (1 to
 * 1024) on a machine too loaded or small for it; the row names the size. */
static size_t big_bytes(void) {
  const char *env = getenv("RIG_BENCH_REMOTE_MIB");
  long mib = env ? strtol(env, NULL, 10) : 1024;
  return (size_t)(mib >= 1 && mib <= 1024 ? mib : 1024) << 20;
}

typedef struct machine {
  pid_t pid;
  char name[8], address[64], log[PATH_MAX];
  rig_device *host, *mem;
} machine;

struct ctx {
  machine m[2];
  char dir[64], key[PATH_MAX];
  remote_ucx ucx;
  rig_buffer *tiny, *here, *on1, *on2;
  size_t big;            /* the bandwidth rows' bytes */
  rig_buffer *src, *dst; /* the copy a bandwidth row times */
  bool put;              /* the anchor's direction for that row */
  int failed;            /* rig failed: rig_error_last says why */
  bool anchor_failed;    /* UCX alone failed */
};

/* The rig program that serves: $RIG_EXE, this program when it is rig,
 * else the build's. */
static const char *rig_exe(char *buf, size_t n) {
  const char *env = getenv("RIG_EXE");
  if (env && *env)
    return env;
  ssize_t k = readlink("/proc/self/exe", buf, n - 1);
  buf[k > 0 ? k : 0] = 0;
  const char *base = strrchr(buf, '/');
  return base && strcmp(base, "/rig") == 0 ? buf : RIG_BENCH_RIG_EXE;
}

/* Starts `rig serve` on a free loopback port, its log in c->dir, and
 * reads the port it prints (up to 20 s). */
static bool serve(struct ctx *c, machine *m, const char *exe) {
  int out[2];
  snprintf(m->log, sizeof m->log, "%s/%s.log", c->dir, m->name);
  int log = open(m->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (log < 0 || pipe(out) != 0)
    return false;
  if ((m->pid = fork()) == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], 1);
    dup2(log, 2);
    execl(exe, exe, "serve", "--listen", "127.0.0.1:0", "--key", c->key, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  close(log);
  char line[128] = "";
  if (m->pid > 0)
    remote_ucx_first_line(out[0], line, sizeof line, 20000);
  close(out[0]);
  unsigned port = 0;
  if (sscanf(line, "rig serve: listening on 127.0.0.1:%u", &port) != 1)
    return false;
  snprintf(m->address, sizeof m->address, "127.0.0.1:%u", port);
  return true;
}

/* A temporary directory with the key, and the two machines' servers. */
static bool start_servers(struct ctx *c, FILE *out, const char *exe) {
  snprintf(c->dir, sizeof c->dir, "/tmp/rig-bench-remote-XXXXXX");
  if (!mkdtemp(c->dir)) {
    c->dir[0] = 0;
    return false;
  }
  snprintf(c->key, sizeof c->key, "%s/key", c->dir);
  static const char secret[] = "rig bench remote: a key of this run only";
  int fd = open(c->key, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); /* its owner's alone */
  bool written = fd >= 0 && write(fd, secret, sizeof secret - 1) == (ssize_t)(sizeof secret - 1);
  if (fd < 0 || close(fd) != 0 || !written)
    return false;
  for (int i = 0; i < 2; i++) {
    snprintf(c->m[i].name, sizeof c->m[i].name, "m%d", i + 1);
    if (!serve(c, &c->m[i], exe)) {
      fprintf(out, "bench remote: %s serve did not start (see %s)\n", exe, c->m[i].log);
      return false;
    }
  }
  return true;
}

/* SIGTERM, and SIGKILL if it has not ended within 5 s. */
static void end(pid_t pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 500; i++) {
    if (waitpid(pid, NULL, WNOHANG) == pid)
      return;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void stop_servers(struct ctx *c) {
  for (int i = 0; i < 2; i++) {
    machine *m = &c->m[i];
    if (m->pid > 0)
      end(m->pid);
    if (m->log[0])
      unlink(m->log);
  }
  if (c->key[0])
    unlink(c->key);
  if (c->dir[0])
    rmdir(c->dir);
}

/* Opens each machine's host and its memory device "memory:bench". */
static bool open_machines(struct ctx *c, FILE *out) {
  for (int i = 0; i < 2; i++) {
    machine *m = &c->m[i];
    rig_host_opener o = {.address = m->address, .key_file = c->key};
    char name[32];
    snprintf(name, sizeof name, "bench-%s", m->name);
    if (rig_device_open_host(name, &o, &m->host) || rig_device_open_on(m->host, "memory:bench",
                                                                       &m->mem)) {
      fprintf(out, "bench remote: %s: %s\n", m->name, rig_error_last()->message);
      return false;
    }
  }
  return true;
}

static void close_machines(struct ctx *c) {
  for (int i = 1; i >= 0; i--) {
    machine *m = &c->m[i];
    if (m->mem)
      rig_device_release(m->mem);
    if (m->host) {
      rig_bench_status(rig_device_close(m->host), "rig_device_close(host of a machine)");
      rig_device_release(m->host);
    }
  }
}

/* ---- the rows ---- */

static void fills(void *p, uint64_t iters) {
  struct ctx *c = p;
  rig_point last = RIG_POINT_NONE;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    c->failed = rig_buffer_submit_fill(c->tiny, (uint32_t)i, SMALL, &last) != RIG_OK;
  if (last && rig_point_wait(last) != RIG_OK)
    c->failed = 1;
}

static void pingpong(void *p, uint64_t iters) {
  struct ctx *c = p;
  if (!remote_ucx_pingpong(&c->ucx, iters))
    c->anchor_failed = true;
}

static void copy(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    c->failed = rig_buffer_copy(c->src, c->dst) != RIG_OK;
}

static void move(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++)
    if (!remote_ucx_move(&c->ucx, c->put, c->big))
      c->anchor_failed = true;
}

/* Times one bandwidth row: src -> dst against the anchor's put or get. */
static void row(FILE *out, struct ctx *c, const char *what, rig_buffer *src, rig_buffer *dst,
                bool put) {
  char name[80];
  snprintf(name, sizeof name, "copy %zu MiB %s", c->big >> 20, what);
  c->src = src;
  c->dst = dst;
  c->put = put;
  if (!c->failed && !c->anchor_failed)
    rig_bench_compare(out, name, copy, move, c, 1, 5);
}

/* Whether the bytes that went host -> m1 -> m2 -> host came back; a call
 * that failed sets c->failed. */
static bool round_trip_kept(struct ctx *c) {
  unsigned char a[4096], b[4096];
  c->failed = rig_buffer_fill(c->here, 0x5a, 1) || rig_buffer_copy(c->here, c->on1) ||
              rig_buffer_copy(c->on1, c->on2) || rig_buffer_fill(c->here, 0, 1) ||
              rig_buffer_copy(c->on2, c->here) ||
              rig_buffer_get(c->here, c->big - sizeof a, a, sizeof a);
  memset(b, 0x5a, sizeof b);
  return !c->failed && memcmp(a, b, sizeof a) == 0;
}

/* ---- counters: where a round trip's time goes on a loaded machine ---- */

/* The context switches (voluntary and not) of every thread of pid so far. */
static double switches(pid_t pid) {
  char path[64], line[128];
  double n = 0;
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    char status[512];
    snprintf(status, sizeof status, "%s/%s/status", path, e->d_name);
    FILE *f = e->d_name[0] != '.' ? fopen(status, "r") : NULL;
    unsigned long long v;
    while (f && fgets(line, sizeof line, f))
      if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
          sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
        n += (double)v;
    if (f)
      fclose(f);
  }
  if (d)
    closedir(d);
  return n;
}

/* Runs fn for n round trips, untimed, and prints the context switches per
 * round trip on this side and on the peer's: each is a wake-up that a
 * loaded machine may delay by a scheduler slice. */
static void count(FILE *out, struct ctx *c, const char *who, rig_bench_fn fn, pid_t peer) {
  enum { N = 500 };
  double here = switches(getpid()), there = switches(peer);
  fn(c, N);
  fprintf(out, "    counters, %s: %.2f context switches here and %.2f on the peer per round trip\n",
          who, (switches(getpid()) - here) / N, (switches(peer) - there) / N);
}

static int rows(FILE *out, struct ctx *c) {
  if (rig_buffer_create(c->m[0].mem, SMALL, &c->tiny) ||
      rig_buffer_create(rig_device_host(), c->big, &c->here) ||
      rig_buffer_create(c->m[0].mem, c->big, &c->on1) ||
      rig_buffer_create(c->m[1].mem, c->big, &c->on2) ||
      rig_buffer_fill(c->on1, 1, 1) || rig_buffer_fill(c->on2, 2, 1)) {
    fprintf(out, "bench remote: %s\n", rig_error_last()->message);
    return 1;
  }
  if (!round_trip_kept(c)) {
    fprintf(out, "bench remote: host -> m1 -> m2 -> host: %s\n",
            c->failed ? rig_error_last()->message : "the bytes came back wrong");
    return 1;
  }
  rig_bench_compare(out, "remote 4 B fill after the last one's point (round trip)", fills,
                    pingpong, c, 2000, 7);
  count(out, c, "rig (peer: m1's rig serve)", fills, c->m[0].pid);
  count(out, c, "UCX alone", pingpong, c->ucx.peer);
  row(out, c, "host -> memory@m1", c->here, c->on1, true);
  row(out, c, "memory@m1 -> host", c->on1, c->here, false);
  row(out, c, "memory@m1 -> memory@m2", c->on1, c->on2, true);
  if (c->failed)
    fprintf(out, "bench remote: %s\n", rig_error_last()->message);
  if (c->anchor_failed)
    fprintf(out, "bench remote: the UCX anchor failed (its peer or link): its rows are void\n");
  return c->failed || c->anchor_failed;
}

int rig_bench_remote(FILE *out) {
  static struct ctx c; /* static: large, and zeroed */
  char why[200];
  int failed = 1;
  memset(&c, 0, sizeof c);
  char buf[PATH_MAX];
  const char *exe = rig_exe(buf, sizeof buf);
  c.big = big_bytes();
  if (!remote_ucx_start(&c.ucx, exe, c.big, why, sizeof why))
    fprintf(out, "bench remote: %s\n", why);
  else if (start_servers(&c, out, exe) && open_machines(&c, out))
    failed = rows(out, &c);
  rig_buffer_release(c.tiny);
  rig_buffer_release(c.here);
  rig_buffer_release(c.on1);
  rig_buffer_release(c.on2);
  close_machines(&c);
  stop_servers(&c);
  remote_ucx_stop(&c.ucx);
  return failed;
}

int rig_bench_remote_peer(size_t bytes) { return remote_ucx_peer_main(bytes); }
