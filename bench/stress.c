/* stress.c: `rig bench stress`, the ordering stress test at 10^6 submits
 * (tests/stress/stress.c, whose engine it links): every byte read is
 * checked against the threads' models, so the run counts order violations
 * as well as time. It has no anchor: it measures rig against itself. */
#include <inttypes.h>
#include <time.h>

#include "bench.h"
#include "stress.h"

/* Four threads over the host, two memory devices and two test devices
 * with delays of at most 2 us, so that queues fill and drain fast; 75 of
 * each 100 ops submit, so 333,334 ops per thread make 10^6 submits. */
#define THREADS 4
#define OPS 333334

int rig_bench_stress(FILE *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t seed = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  rig_stress_params p = {THREADS, 5, OPS, seed, 2, 4096};
  rig_stress_totals t;
  fprintf(out, "stress: seed %" PRIu64 ", %u threads x %u devices x %" PRIu64 " ops\n", p.seed,
          p.threads, p.devices, p.ops);
  int failed = rig_stress_run(&p, &t, out);
  fprintf(out,
          "stress: %" PRIu64 " submits, %" PRIu64 " order violations, %.1f s (%.0f submits/s, "
          "%" PRIu64 " host accesses, %" PRIu64 " errors)\n",
          t.submits, t.violations, t.seconds, t.seconds > 0 ? (double)t.submits / t.seconds : 0.0,
          t.accesses, t.errors);
  return failed;
}
