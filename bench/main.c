/* rig-bench: runs every benchmark, as `rig bench` does. */
#include "bench.h"

int main(void) {
  rig_bench_facts(stdout);
  return rig_bench_create(stdout) | rig_bench_copy(stdout) | rig_bench_small(stdout) |
         rig_bench_io(stdout) | rig_bench_launch(stdout) | rig_bench_pingpong(stdout);
}
