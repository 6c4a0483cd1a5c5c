/* compare.c: the timing every benchmark shares (bench.h). */
#include <errno.h>
#include <time.h>

#include <rig/rig.h>

#include "bench.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
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

static double round_ns(rig_bench_fn fn, void *ctx, uint64_t iters) {
  double t0 = now_ns();
  fn(ctx, iters);
  double total = now_ns() - t0;
  settle(total);
  return total / (double)iters;
}

double rig_bench_compare(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                         void *ctx, uint64_t iters, int rounds) {
  double a[RIG_BENCH_MAX_ROUNDS], b[RIG_BENCH_MAX_ROUNDS];
  rounds = rounds < 1 ? 1 : rounds > RIG_BENCH_MAX_ROUNDS ? RIG_BENCH_MAX_ROUNDS : rounds;
  (void)round_ns(rig, ctx, iters / 10 + 1); /* warm caches, the allocator and the pool */
  (void)round_ns(anchor, ctx, iters / 10 + 1);
  for (int r = 0; r < rounds; r++) {
    rig_bench_progress_round(name, r, rounds);
    /* Which side runs first swaps each round: neither always finds the
     * caches, the pool or a spinning thread as the other left them. */
    if (r % 2 == 0) {
      a[r] = round_ns(rig, ctx, iters);
      b[r] = round_ns(anchor, ctx, iters);
    } else {
      b[r] = round_ns(anchor, ctx, iters);
      a[r] = round_ns(rig, ctx, iters);
    }
  }
  rig_bench_stats x = rig_bench_stats_of(a, rounds), y = rig_bench_stats_of(b, rounds);
  rig_bench_row row = {name, x.min, x.median, y.min, y.median};
  rig_bench_table_row(out, &row);
  return x.min / y.min;
}

int rig_bench_status(int status, const char *what) {
  if (status != RIG_OK)
    fprintf(stderr, "bench: %s: %s\n", what, rig_error_last()->message);
  return status;
}
