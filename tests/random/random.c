/* random.c: a randomized differential test of rig across devices.
 *
 * A program is a seed: each of T threads draws its ops from it (model.c)
 * and runs them on every device that opens here (the host, two memory
 * devices, test devices with delays, two queues, memory the host does not
 * address and no queue waits, vulkan:0 with and without host addressing,
 * an io file), each thread over buffers of its own, against a sequential
 * model of their bytes. A RIG_OK whose bytes differ from the model, a
 * status the rules do not give, or a crash or a sanitizer's report fails.
 *
 *   test-random [PROGRAMS]        PROGRAMS seeds from RIG_RANDOM_SEED (or
 *                                 the clock), in a child process; on a
 *                                 failure, the seed, its ops, and the
 *                                 shortest program that still fails
 *   test-random --seed S [--threads T] [--thread t] [--keep I,J,...] [-v]
 *                                 runs one program here (the rerun line)
 *
 * The minimizer reruns thread t's program alone, in child processes,
 * dropping ops while it still fails. RIG_RANDOM_NO_VULKAN=1 leaves Vulkan
 * out (the sanitizer runs, where lavapipe's own threads are slow).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "random.h"

#define OPS_PER_THREAD 100

/* Under ThreadSanitizer a program runs 5 to 10 times as long: a quarter
 * of the programs keeps CI's run under a minute there. */
#if defined(__SANITIZE_THREAD__)
#define SLOWER 4
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLOWER 4
#endif
#endif
#ifndef SLOWER
#define SLOWER 1
#endif
#define MAX_KEEP 4096

typedef struct options {
  uint64_t seed, count;
  unsigned threads, thread; /* thread: with threads 1, which program */
  bool one, batch, verbose;
  size_t *keep, nkeep; /* ops kept, or all where keep is NULL */
} options;

typedef struct job {
  const rnd_devices *ds;
  const rnd_shared *sh;
  rnd_program p;
  unsigned t;
  bool verbose, good;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  j->good = rnd_run(j->ds, j->sh, j->t, &j->p, j->verbose);
  return NULL;
}

/* Program t of seed, with only the ops o keeps. */
static void program(const options *o, uint64_t seed, unsigned t, rnd_program *p) {
  rnd_generate(seed, t, OPS_PER_THREAD, p);
  if (!o->keep)
    return;
  size_t n = 0;
  for (size_t i = 0; i < o->nkeep; i++)
    if (o->keep[i] < p->n)
      p->ops[n++] = p->ops[o->keep[i]];
  p->n = n;
}

/* The program's shared buffers: 64 KiB of the host's (on a page), 4 KiB of
 * a device the seed draws and 8 KiB of another, doomed, with their bytes;
 * the scratch on memory the host does not address (ds->scratch), whose
 * host puts would race between threads were it the host's. */
static bool share(const rnd_devices *ds, uint64_t seed, rnd_shared *sh) {
  *sh = (rnd_shared){.n = 4, .seed = seed};
  rig_device *d[4] = {rig_device_host(), ds->d[seed % ds->n], ds->d[seed / 7 % ds->n], ds->scratch};
  size_t n[4] = {65536, 4096, 8192, RND_SCRATCH_SHARE * RND_MAX_THREADS};
  for (unsigned k = 0; k < 4; k++) {
    uint8_t *x = malloc(n[k]);
    for (size_t i = 0; i < n[k]; i++)
      x[i] = rnd_shared_byte(seed, k, i);
    rig_status st = rig_buffer_create(d[k], n[k], &sh->b[k]);
    if (!st)
      st = rig_buffer_put(sh->b[k], 0, x, n[k]);
    free(x);
    if (st) {
      fprintf(stderr, "a shared buffer on %s: %s\n", rig_device_name(d[k]), rig_error_last()->message);
      return false;
    }
  }
  return true;
}

/* Runs o's seeds here; false at the first failing one. */
static bool run_here(const options *o) {
  char dir[256], path[300];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/rig-random-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return perror("mkdtemp"), false;
  snprintf(path, sizeof path, "%s/io", dir);
  rnd_devices ds;
  rnd_open(&ds, path);
  bool good = true;
  for (uint64_t s = o->seed; s < o->seed + o->count && good; s++) {
    printf("seed %" PRIu64 "\n", s);
    fflush(stdout);
    rnd_shared sh;
    if (!share(&ds, s, &sh)) {
      good = false;
      break;
    }
    job jobs[RND_MAX_THREADS];
    pthread_t th[RND_MAX_THREADS];
    for (unsigned t = 0; t < o->threads; t++) {
      jobs[t] = (job){&ds, &sh, {0}, o->one && o->threads == 1 ? o->thread : t, o->verbose, false};
      program(o, s, jobs[t].t, &jobs[t].p);
      pthread_create(&th[t], NULL, run_job, &jobs[t]);
    }
    for (unsigned t = 0; t < o->threads; t++) {
      pthread_join(th[t], NULL);
      if (!jobs[t].good) {
        fprintf(stderr, "FAIL seed %" PRIu64 " thread %u of %u\n", s, jobs[t].t, o->threads);
        good = false;
      }
      free(jobs[t].p.ops);
    }
    for (unsigned k = 0; k < sh.n; k++)
      rig_buffer_release(sh.b[k]);
    rnd_unpress(&ds);
  }
  rnd_close(&ds);
  unlink(path);
  rmdir(dir);
  return good;
}

/* ---- devices ------------------------------------------------------------------ */

/* random-w's submits block 1 ms between taking their value and their
 * stamps: the window where another thread's free or submit meets them. */
static const char *const names[] = {
    "memory:random-a", "memory:random-b", "test:random-q,delay_us=30,queues=2",
    "test:random-h,delay_us=20,host=0", "test:random-w,delay_us=10,waits=0,block_ms=1", "vulkan:0",
    "vulkan:0,host=0"};

void rnd_open(rnd_devices *ds, const char *path) {
  *ds = (rnd_devices){.n = 1};
  ds->d[0] = rig_device_host();
  bool vulkan = !getenv("RIG_RANDOM_NO_VULKAN") || !*getenv("RIG_RANDOM_NO_VULKAN");
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    if (!vulkan && !strncmp(names[i], "vulkan", 6))
      continue;
    if (rig_device_open(names[i], &ds->d[ds->n]) != RIG_OK) {
      if (strncmp(names[i], "vulkan", 6)) /* only Vulkan may be missing */
        fprintf(stderr, "%s does not open: %s\n", names[i], rig_error_last()->message), exit(1);
      continue;
    }
    if (!ds->scratch && strstr(names[i], "host=0"))
      ds->scratch = ds->d[ds->n];
    if (!ds->tight && !strncmp(names[i], "memory:", 7) && i) /* the second one */
      ds->tight = ds->d[ds->n], ds->tight_budget = rig_device_budget(ds->d[ds->n]);
    ds->n++;
  }
  rig_io_opener io = {.library = "io", .target = path, .flags = RIG_IO_CREATE,
                      .size = RND_MAX_THREADS * RND_REGION};
  if (rig_device_open_io(&io, &ds->io) != RIG_OK)
    ds->io = NULL;
}

void rnd_close(rnd_devices *ds) {
  for (unsigned i = 1; i < ds->n; i++) {
    if (rig_device_close(ds->d[i]) != RIG_OK)
      fprintf(stderr, "closing %s: %s\n", rig_device_name(ds->d[i]), rig_error_last()->message);
    rig_device_release(ds->d[i]);
  }
  if (ds->io) {
    if (rig_device_close(ds->io) != RIG_OK)
      fprintf(stderr, "random: close: %s\n", rig_error_last()->message);
    rig_device_release(ds->io);
  }
}

/* ---- child processes and the minimizer ---------------------------------------- */

static char self[4096];

/* Runs this program with args in a child; quiet: its output to /dev/null.
 * Returns whether it passed; *last: the last seed it began. */
static bool child(char **args, bool quiet, uint64_t *last) {
  int fd[2];
  if (pipe(fd))
    return perror("pipe"), false;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    if (quiet && freopen("/dev/null", "w", stderr) == NULL)
      _exit(2);
    close(fd[0]);
    close(fd[1]);
    child_exec_again(args); /* self, or self under a cross build's exe wrapper */
    _exit(127);
  }
  close(fd[1]);
  FILE *in = fdopen(fd[0], "r");
  char line[128];
  while (fgets(line, sizeof line, in))
    if (last && strncmp(line, "seed ", 5) == 0)
      *last = strtoull(line + 5, NULL, 10);
  fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static char *keep_text(const size_t *keep, size_t n) {
  char *s = malloc(n * 8 + 2);
  size_t len = 0;
  s[0] = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(s + len, "%s%zu", i ? "," : "", keep[i]);
  return s;
}

/* Whether thread t's program of seed, with the ops keep holds, fails. */
static bool fails(uint64_t seed, unsigned t, const size_t *keep, size_t n, bool quiet) {
  char s[32], tt[16], *k = keep_text(keep, n);
  snprintf(s, sizeof s, "%" PRIu64, seed);
  snprintf(tt, sizeof tt, "%u", t);
  char *args[] = {self, "--seed", s, "--threads", "1", "--thread", tt, "--keep", k, NULL};
  bool bad = !child(args, quiet, NULL);
  free(k);
  return bad;
}

/* Drops chunks of ops, then single ops, while the program still fails. */
static size_t minimize(uint64_t seed, unsigned t, size_t *keep, size_t n) {
  size_t *try = malloc((n + 1) * sizeof *try);
  for (size_t chunk = n / 2; chunk >= 1; chunk /= 2) {
    for (size_t at = n; at > 0;) {
      size_t lo = at >= chunk ? at - chunk : 0, m = 0;
      for (size_t i = 0; i < n; i++)
        if (i < lo || i >= at)
          try[m++] = keep[i];
      if (m < n && fails(seed, t, try, m, true)) {
        memcpy(keep, try, m * sizeof *keep);
        n = m;
        at = lo < n ? lo : n;
      } else {
        at = lo;
      }
    }
  }
  free(try);
  return n;
}

static int report(uint64_t seed, unsigned threads) {
  fprintf(stderr, "\nseed %" PRIu64 " fails with %u threads: %s --seed %" PRIu64
          " --threads %u\n", seed, threads, self, seed, threads);
  size_t keep[OPS_PER_THREAD];
  for (unsigned t = 0; t < threads; t++) {
    for (size_t i = 0; i < OPS_PER_THREAD; i++)
      keep[i] = i;
    if (!fails(seed, t, keep, OPS_PER_THREAD, true))
      continue;
    size_t n = minimize(seed, t, keep, OPS_PER_THREAD);
    char *k = keep_text(keep, n);
    fprintf(stderr, "\nthe shortest failing program, %zu ops of thread %u alone:\n"
            "%s --seed %" PRIu64 " --threads 1 --thread %u --keep %s\n", n, t, self, seed, t, k);
    free(k);
    fails(seed, t, keep, n, false); /* its ops and its failure */
    return 1;
  }
  fprintf(stderr, "no thread's program fails alone: rerun the line above\n");
  return 1;
}

static uint64_t env_number(const char *name, uint64_t otherwise) {
  const char *v = getenv(name);
  return v && *v ? strtoull(v, NULL, 0) : otherwise;
}

static void parse(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(a, "--batch") && i + 2 < argc) /* the child's seeds */
      o->seed = strtoull(v, NULL, 0), o->count = strtoull(argv[i + 2], NULL, 0), o->batch = true,
      i += 2;
    else if (!strcmp(a, "--seed"))
      o->seed = strtoull(v, NULL, 0), o->one = true, i++;
    else if (!strcmp(a, "--threads"))
      o->threads = (unsigned)atoi(v), i++;
    else if (!strcmp(a, "--thread"))
      o->thread = (unsigned)atoi(v), i++;
    else if (!strcmp(a, "--keep")) {
      o->keep = calloc(MAX_KEEP, sizeof *o->keep);
      for (char *p = argv[++i]; *p && o->nkeep < MAX_KEEP; p += *p == ',')
        o->keep[o->nkeep++] = strtoull(p, &p, 10);
    } else if (!strcmp(a, "-v"))
      o->verbose = true;
    else
      o->count = strtoull(a, NULL, 0);
  }
  if (o->threads < 1 || o->threads > RND_MAX_THREADS)
    o->threads = 3;
}

int main(int argc, char **argv) {
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return perror("readlink"), 1;
  self[n] = 0;
  options o = {.count = 40, .threads = 3};
  parse(argc, argv, &o);
  if (o.one)
    o.count = 1;
  if (o.one || o.batch)
    return run_here(&o) ? 0 : 1;
  o.count = o.count / SLOWER ? o.count / SLOWER : 1;
  o.seed = env_number("RIG_RANDOM_SEED", (uint64_t)time(NULL) * 1000 % 1000000007);
  printf("programs %" PRIu64 "..%" PRIu64 " (RIG_RANDOM_SEED=%" PRIu64 "), %u threads\n",
         o.seed, o.seed + o.count - 1, o.seed, o.threads);
  fflush(stdout);
  /* In a child: a crash ends it, not the run, which then minimizes. */
  char a[32], t[16], c[32];
  snprintf(a, sizeof a, "%" PRIu64, o.seed);
  snprintf(c, sizeof c, "%" PRIu64, o.count);
  snprintf(t, sizeof t, "%u", o.threads);
  char *args[] = {self, "--batch", a, c, "--threads", t, NULL};
  uint64_t last = o.seed;
  if (!child(args, false, &last))
    return report(last, o.threads);
  printf("%" PRIu64 " programs passed\n", o.count);
  return 0;
}
