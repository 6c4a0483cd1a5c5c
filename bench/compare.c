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
  double best_rig = 1e300, best_anchor = 1e300;
  rig(ctx, iters / 10 + 1); /* warm caches and the allocator */
  anchor(ctx, iters / 10 + 1);
  for (int r = 0; r < rounds; r++) {
    rig_bench_progress_round(name, r, rounds);
    double a = round_ns(rig, ctx, iters), b = round_ns(anchor, ctx, iters);
    best_rig = a < best_rig ? a : best_rig;
    best_anchor = b < best_anchor ? b : best_anchor;
  }
  rig_bench_row row = {name, best_rig, best_anchor};
  rig_bench_table_row(out, &row);
  return best_rig / best_anchor;
}

int rig_bench_status(int status, const char *what) {
  if (status != RIG_OK)
    fprintf(stderr, "bench: %s: %s\n", what, rig_error_last()->message);
  return status;
}
