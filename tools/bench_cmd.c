/* SPDX-License-Identifier: MIT */
/* bench_cmd.c: `rig bench [GROUP...]`: the benchmark groups of bench/
 * (bench.h), their table on stdout a line at a time (a pipe sees each row
 * as it is measured), progress on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

int rig_cli_bench(int argc, char **argv) {
#ifdef RIG_HAVE_SERVE
  if (argc == 2 && strcmp(argv[0], "--ucx-peer") == 0) /* rig bench remote's anchor */
    return rig_bench_remote_peer(strtoull(argv[1], NULL, 10));
#endif
  for (int i = 0; i < argc; i++)
    if (!rig_bench_group_named(argv[i]))
      return rig_cli_bad("bench", "no group '%s'", argv[i]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  return rig_bench_run(stdout, (const char *const *)argv, (size_t)argc);
}

void rig_cli_bench_help(void) {
  printf("\nGROUPs:\n");
  for (size_t i = 0; i < rig_bench_ngroups; i++) {
    const rig_bench_group *g = &rig_bench_groups[i];
    printf("  %-9s %s\n  %-9s   vs %s%s\n", g->name, g->rig, "", g->anchor,
           g->on_request ? " (only when named)" : "");
  }
}
