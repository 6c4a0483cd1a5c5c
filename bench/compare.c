/* compare.c: the timing every benchmark shares (bench.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <rig/rig.h>

#include "bench.h"

static double clock_ns(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* What one side's round cost besides its wall-clock time: the CPU time of
 * every thread of the process (the pool's workers and OpenMP's included)
 * and the context switches they made, voluntary (a thread blocked) and
 * involuntary (one was preempted). Read outside the timed interval. */
typedef struct round_cost {
  double wall_ns, cpu_ns;
  long voluntary, involuntary;
} round_cost;

static round_cost cost_now(void) {
  struct rusage ru;
  round_cost c = {0, clock_ns(CLOCK_PROCESS_CPUTIME_ID), 0, 0};
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    c.voluntary = ru.ru_nvcsw;
    c.involuntary = ru.ru_nivcsw;
  }
  return c;
}

/* A round of a millisecond or more is followed by 20 ms of sleep, so that
 * the next round starts with the threads of this one asleep. libgomp's
 * workers spin after a parallel region before they sleep (OMP_WAIT_POLICY
 * unset: GOMP_SPINCOUNT 300,000 pauses, milliseconds on these cores), and
 * a rig round that started then ran beside a thread of the anchor's on the
 * CPU its pool needed: P4's median wandered to 1.17 on two cores and read
 * 0.999 on one (docs/benchmarks.md, P4). Short rounds need no pause: their
 * rows' sides interleave far below a spin's length either way. */
static void settle(double round_total_ns) {
  if (round_total_ns < 1e6)
    return;
  struct timespec ts = {0, 20 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* One round of fn: its wall-clock time and costs, each per iteration. */
static round_cost run_round(rig_bench_fn fn, void *ctx, uint64_t iters) {
  round_cost before = cost_now();
  double t0 = clock_ns(CLOCK_MONOTONIC);
  fn(ctx, iters);
  double total = clock_ns(CLOCK_MONOTONIC) - t0;
  round_cost c = cost_now();
  settle(total);
  c.wall_ns = total / (double)iters;
  c.cpu_ns = (c.cpu_ns - before.cpu_ns) / (double)iters;
  c.voluntary -= before.voluntary;
  c.involuntary -= before.involuntary;
  return c;
}

/* RIG_BENCH_COUNTS=1: after each row, each side's CPU time per iteration
 * (min / median) and context switches per round, so that a reader tells a
 * side that did more work (CPU time up with the wall time) from one whose
 * rounds lost their CPU to others (involuntary switches, wall time above
 * CPU time on one core). The line does not match the row's pattern that
 * bench/conditions.sh reads. */
static void print_counts(FILE *out, const round_cost *a, const round_cost *b, int rounds) {
  double cpu[2][RIG_BENCH_MAX_ROUNDS];
  long sw[2][2] = {{0, 0}, {0, 0}};
  for (int r = 0; r < rounds; r++) {
    cpu[0][r] = a[r].cpu_ns;
    cpu[1][r] = b[r].cpu_ns;
    sw[0][0] += a[r].voluntary;
    sw[0][1] += a[r].involuntary;
    sw[1][0] += b[r].voluntary;
    sw[1][1] += b[r].involuntary;
  }
  rig_bench_stats x = rig_bench_stats_of(cpu[0], rounds), y = rig_bench_stats_of(cpu[1], rounds);
  char t[4][32];
  rig_bench_duration(x.min, t[0], sizeof t[0]);
  rig_bench_duration(x.median, t[1], sizeof t[1]);
  rig_bench_duration(y.min, t[2], sizeof t[2]);
  rig_bench_duration(y.median, t[3], sizeof t[3]);
  fprintf(out,
          "    counts: CPU time, min and median: rig %s and %s, anchor %s and %s; switches per "
          "round, voluntary + involuntary: rig %.1f + %.1f, anchor %.1f + %.1f\n",
          t[0], t[1], t[2], t[3], (double)sw[0][0] / rounds, (double)sw[0][1] / rounds,
          (double)sw[1][0] / rounds, (double)sw[1][1] / rounds);
}

static bool env_on(const char *name) {
  const char *v = getenv(name);
  return v && v[0] == '1';
}

double rig_bench_compare(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                         void *ctx, uint64_t iters, int rounds) {
  bool self = env_on("RIG_BENCH_SELF");
  if (self)
    rig = anchor; /* the noise: what the ratio reads where both sides are one */
  round_cost ca[RIG_BENCH_MAX_ROUNDS], cb[RIG_BENCH_MAX_ROUNDS];
  double a[RIG_BENCH_MAX_ROUNDS], b[RIG_BENCH_MAX_ROUNDS];
  rounds = rounds < 1 ? 1 : rounds > RIG_BENCH_MAX_ROUNDS ? RIG_BENCH_MAX_ROUNDS : rounds;
  (void)run_round(rig, ctx, iters / 10 + 1); /* warm caches, the allocator and the pool */
  (void)run_round(anchor, ctx, iters / 10 + 1);
  for (int r = 0; r < rounds; r++) {
    rig_bench_progress_round(name, r, rounds);
    /* Which side runs first swaps each round: neither always finds the
     * caches, the pool or a spinning thread as the other left them. */
    if (r % 2 == 0) {
      ca[r] = run_round(rig, ctx, iters);
      cb[r] = run_round(anchor, ctx, iters);
    } else {
      cb[r] = run_round(anchor, ctx, iters);
      ca[r] = run_round(rig, ctx, iters);
    }
    a[r] = ca[r].wall_ns;
    b[r] = cb[r].wall_ns;
  }
  rig_bench_stats x = rig_bench_stats_of(a, rounds), y = rig_bench_stats_of(b, rounds);
  rig_bench_row row = {name, x.min, x.median, y.min, y.median};
  rig_bench_table_row(out, &row);
  if (self)
    fprintf(out, "    self: the anchor in both columns (RIG_BENCH_SELF=1)\n");
  if (env_on("RIG_BENCH_COUNTS"))
    print_counts(out, ca, cb, rounds);
  return x.min / y.min;
}

int rig_bench_status(int status, const char *what) {
  if (status != RIG_OK)
    fprintf(stderr, "bench: %s: %s\n", what, rig_error_last()->message);
  return status;
}
