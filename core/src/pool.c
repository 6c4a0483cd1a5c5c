/* SPDX-License-Identifier: MIT */
/* pool.c: the host's performance cores and the pool that runs launches on
 * them (PERF-1..5, PERF-7, LAUNCH-1..10, ERR-19).
 *
 * The count is taken once, at its first use, from the affinity mask of
 * the thread that asks: its CPUs whose cpu_capacity (else cpufreq's
 * maximum frequency) is more than half the largest, all of them where the
 * kernel states neither, at most what the cgroup v2 quotas of the
 * process's cgroup and its parents allow (cpu.max). RIG_SYSFS_ROOT moves
 * /sys for the tests' prepared trees. rig reads those files itself: hwloc's cpukinds ranks kinds by
 * efficiency and would give the same capacities (its LinuxCapacity info)
 * through a topology discovery of the whole machine, for a few small files
 * read once, and says nothing of cgroup quotas.
 *
 * A launch runs on the submitting thread and on at most count - 1 of the
 * pool's workers at once, each taking chunks of whole groups from one
 * counter, so that each thread number is run once (LAUNCH-6..8). The
 * workers start at the first launch that can use them and block every
 * signal for their life (ERR-19). Launches of several threads share the
 * workers (LAUNCH-2).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

/* ---- the count --------------------------------------------------------- */

static unsigned cores;
static pthread_once_t cores_once = PTHREAD_ONCE_INIT;

static long read_long(const char *path) {
  FILE *f = fopen(path, "re");
  long v = -1;
  if (f) {
    if (fscanf(f, "%ld", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v;
}

/* Where sysfs is: RIG_SYSFS_ROOT where set to an absolute path (the
 * tests' prepared trees, docs/launches.md), else /sys. As for
 * RIG_CGROUP_ROOT, a setuid program ignores it and a relative path counts
 * as unset. */
static const char *sysfs_root(void) {
  const char *env = secure_getenv("RIG_SYSFS_ROOT");
  return env && env[0] == '/' ? env : "/sys";
}

/* The CPUs of the mask whose value in cpuN/file is over half the largest
 * such value; 0 where no CPU of the mask states one. */
static unsigned over_half(const cpu_set_t *mask, const char *file) {
  long v[CPU_SETSIZE], top = -1;
  unsigned fast = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    v[c] = -1;
    if (!CPU_ISSET(c, mask))
      continue;
    char path[512];
    snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/%s", sysfs_root(), c, file);
    v[c] = read_long(path);
    top = v[c] > top ? v[c] : top;
  }
  if (top <= 0)
    return 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    fast += v[c] >= 0 && 2 * v[c] > top;
  return fast;
}

/* PERF-3, PERF-4: the CPUs of the mask above half the largest capacity:
 * the kernel's cpu_capacity (arm64 from the firmware's capacity-dmips-mhz,
 * hybrid x86), else cpufreq's maximum frequency (arm64 systems without a
 * capacity table state that much); every CPU of the mask where neither is
 * stated (PERF-4). */
static unsigned by_capacity(const cpu_set_t *mask) {
  unsigned fast = over_half(mask, "cpu_capacity");
  if (!fast)
    fast = over_half(mask, "cpufreq/cpuinfo_max_freq");
  return fast ? fast : (unsigned)CPU_COUNT(mask);
}

/* Where cgroup v2 is mounted: RIG_CGROUP_ROOT where set to an absolute
 * path (a container that mounts it elsewhere, and the tests), else
 * /sys/fs/cgroup, or its unified folder on a hybrid system. A setuid or
 * setgid program ignores the variable (secure_getenv), and a relative
 * path, which would name a folder under whatever the current directory
 * is, counts as unset. */
static const char *cgroup_root(void) {
  const char *env = secure_getenv("RIG_CGROUP_ROOT");
  if (env && env[0] == '/')
    return env;
  FILE *f = fopen("/sys/fs/cgroup/cgroup.controllers", "re");
  if (f) {
    fclose(f);
    return "/sys/fs/cgroup";
  }
  return "/sys/fs/cgroup/unified";
}

/* PERF-5: the least of cpu.max's quota / period (rounded up) over the
 * process's cgroup v2 and its parents; 0 where none is set. */
static unsigned cgroup_limit(void) {
  char line[512], dir[600];
  const char *root = cgroup_root();
  unsigned limit = 0;
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f)
    return 0;
  bool found = false;
  while (!found && fgets(line, sizeof line, f))
    found = strncmp(line, "0::", 3) == 0;
  fclose(f);
  if (!found)
    return 0;
  line[strcspn(line, "\n")] = 0;
  snprintf(dir, sizeof dir, "%s%s", root, strcmp(line + 3, "/") ? line + 3 : "");
  for (;;) {
    char path[640], max[32];
    long period = 0;
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    FILE *m = fopen(path, "re");
    if (m) {
      if (fscanf(m, "%31s %ld", max, &period) == 2 && strcmp(max, "max") != 0 && period > 0) {
        long quota = atol(max);
        unsigned n = (unsigned)((quota + period - 1) / period);
        limit = n && (!limit || n < limit) ? n : limit;
      }
      fclose(m);
    }
    char *slash = strrchr(dir, '/');
    if (strlen(dir) <= strlen(root) || !slash || slash - dir < (long)strlen(root))
      break;
    *slash = 0;
  }
  return limit;
}

static void count_cores(void) {
  cpu_set_t mask;
  unsigned n = 1;
  if (sched_getaffinity(0, sizeof mask, &mask) == 0)   /* PERF-3: the asking thread's */
    n = by_capacity(&mask);
  unsigned limit = cgroup_limit();
  if (limit && limit < n)
    n = limit;
  cores = n ? n : 1;
}

unsigned rig__perf_cores(void) {
  pthread_once(&cores_once, count_cores);              /* PERF-2 */
  return cores;
}

RIG_API unsigned rig_host_cores(void) { return rig__perf_cores(); }

/* ---- the pool ---------------------------------------------------------- */

typedef void (*kernel_fn)(const void *params, int64_t first, int64_t end);

typedef struct job {
  kernel_fn fn;
  const void *params;
  uint64_t groups, per_group, chunk;
  _Atomic uint64_t next;      /* the first group no call took */
  _Atomic uint64_t done;      /* groups run */
  unsigned helpers;           /* workers on it; pool lock */
  struct job *next_job;
} job;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;  /* a job wants workers */
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;  /* a worker left a job */
static job *jobs;
static unsigned workers;

/* Runs chunks of j until none is left. */
static void run_chunks(job *j) {
  for (;;) {
    uint64_t g = atomic_fetch_add(&j->next, j->chunk);
    if (g >= j->groups)
      return;
    uint64_t end = g + j->chunk < j->groups ? g + j->chunk : j->groups;
    j->fn(j->params, (int64_t)(g * j->per_group), (int64_t)(end * j->per_group)); /* LAUNCH-7 */
    atomic_fetch_add(&j->done, end - g);
  }
}

/* A job with groups left and room for one more worker (LAUNCH-10). */
static job *wanting(void) {
  for (job *j = jobs; j; j = j->next_job)
    if (atomic_load(&j->next) < j->groups && j->helpers + 1 < rig__perf_cores())
      return j;
  return NULL;
}

static void *worker(void *arg) {
  pthread_mutex_lock(&pool_lock);
  for (;;) {
    job *j;
    while (!(j = wanting()))
      pthread_cond_wait(&work_cond, &pool_lock);
    j->helpers++;
    pthread_mutex_unlock(&pool_lock);
    run_chunks(j);
    pthread_mutex_lock(&pool_lock);
    j->helpers--;
    pthread_cond_broadcast(&done_cond);
  }
  return arg;
}

/* Starts the workers once, with every signal blocked (ERR-19); fewer if
 * the system refuses threads: the submitting thread runs what is left. */
static void start_workers(void) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (unsigned i = workers; i + 1 < rig__perf_cores(); i++) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    bool made = pthread_create(&t, &a, worker, NULL) == 0;
    pthread_attr_destroy(&a);
    if (!made)
      break;
    workers++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The workers are not in a child of fork, nor the launches of the parent's
 * other threads: the child starts with no job and no worker, and starts
 * its own workers at its first launch that can use them. */
void rig__pool_fork(rig__fork_phase ph) {
  if (ph == RIG__FORK_CHILD) {
    jobs = NULL;
    workers = 0;
    pthread_cond_init(&work_cond, NULL);
    pthread_cond_init(&done_cond, NULL);
  }
  rig__fork_mutex(&pool_lock, ph);
}

bool rig__pool_spreads(uint64_t groups) { return groups > 1 && rig__perf_cores() > 1; }

void rig__pool_launch(void *fn, const void *params, uint64_t groups, uint64_t per_group) {
  unsigned n = rig__perf_cores();
  if (!rig__pool_spreads(groups)) {
    /* No worker could take a group: one call, and no job to publish, so
     * no atomic either (LAUNCH-1, LAUNCH-7). */
    ((kernel_fn)fn)(params, 0, (int64_t)(groups * per_group));
    return;
  }
  job j = {.fn = (kernel_fn)fn, .params = params, .groups = groups, .per_group = per_group};
  /* Chunks small enough to balance, large enough that taking one is noise. */
  j.chunk = groups / (8 * (uint64_t)n) ? groups / (8 * (uint64_t)n) : 1;
  /* The first chunk is the submitting thread's own, whatever the workers
   * take (LAUNCH-1). */
  uint64_t mine = j.chunk < groups ? j.chunk : groups;
  atomic_store(&j.next, mine);
  pthread_mutex_lock(&pool_lock);
  if (workers + 1 < n)
    start_workers();
  j.next_job = jobs;
  jobs = &j;
  pthread_cond_broadcast(&work_cond);
  pthread_mutex_unlock(&pool_lock);
  j.fn(j.params, 0, (int64_t)(mine * per_group));     /* LAUNCH-1 */
  atomic_fetch_add(&j.done, mine);
  run_chunks(&j);
  pthread_mutex_lock(&pool_lock);
  while (j.helpers || atomic_load(&j.done) < groups)
    pthread_cond_wait(&done_cond, &pool_lock);
  for (job **p = &jobs; *p; p = &(*p)->next_job)
    if (*p == &j) {
      *p = j.next_job;
      break;
    }
  pthread_mutex_unlock(&pool_lock);
}

RIG_API void rig_host_parallel(void (*fn)(const void *ctx, int64_t first, int64_t end),
                               const void *ctx, int64_t n) {
  if (fn && n > 0)
    rig__pool_launch((void *)fn, ctx, (uint64_t)n, 1);    /* LAUNCH-2 */
}
