/* rig-bench: runs the benchmark groups named, or all but stress, as
 * `rig bench` does. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!rig_bench_group_named(argv[i])) {
      fprintf(stderr, "rig-bench: no group '%s'\n", argv[i]);
      return 2;
    }
  setvbuf(stdout, NULL, _IOLBF, 0);
  return rig_bench_run(stdout, (const char *const *)argv + 1, (size_t)argc - 1);
}
