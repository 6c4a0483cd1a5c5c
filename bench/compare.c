/* compare.c: the timing every benchmark shares (bench.h). */
#include <time.h>

#include <rig/rig.h>

#include "bench.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double round_ns(rig_bench_fn fn, void *ctx, uint64_t iters) {
  double t0 = now_ns();
  fn(ctx, iters);
  return (now_ns() - t0) / (double)iters;
}

double rig_bench_compare(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                         void *ctx, uint64_t iters, int rounds) {
  double a[RIG_BENCH_MAX_ROUNDS], b[RIG_BENCH_MAX_ROUNDS];
  rounds = rounds < 1 ? 1 : rounds > RIG_BENCH_MAX_ROUNDS ? RIG_BENCH_MAX_ROUNDS : rounds;
  rig(ctx, iters / 10 + 1); /* warm caches, the allocator and the pool */
  anchor(ctx, iters / 10 + 1);
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
