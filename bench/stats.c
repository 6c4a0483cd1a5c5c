/* stats.c: what each bench row reports besides its times (the min and the
 * median of its rounds) and the machine facts `rig bench` prints first,
 * since a ratio read without them says as much about the machine as about
 * rig (docs/benchmarks.md). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <rig/rig.h>

#include "bench.h"

#ifndef RIG_BENCH_KERNEL_FLAGS
#define RIG_BENCH_KERNEL_FLAGS "?"
#endif

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

rig_bench_stats rig_bench_stats_of(const double *ns, int n) {
  rig_bench_stats s = {0, 0};
  double sorted[RIG_BENCH_MAX_ROUNDS];
  if (n <= 0)
    return s;
  n = n > RIG_BENCH_MAX_ROUNDS ? RIG_BENCH_MAX_ROUNDS : n;
  memcpy(sorted, ns, (size_t)n * sizeof *ns);
  qsort(sorted, (size_t)n, sizeof *sorted, by_value);
  s.min = sorted[0];
  s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  return s;
}

/* The value after "key" and a colon on the first line of path that starts
 * with key, in out; "?" where none. */
static void field(const char *path, const char *key, char *out, size_t n) {
  char line[512];
  FILE *f = fopen(path, "re");
  snprintf(out, n, "?");
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, key, strlen(key)) == 0 && strchr(line, ':')) {
      char *v = strchr(line, ':') + 1;
      v += strspn(v, " \t");
      v[strcspn(v, "\n")] = 0;
      snprintf(out, n, "%s", v);
      break;
    }
  if (f)
    fclose(f);
}

/* The first line of path, or "?". */
static void first_line(const char *path, char *out, size_t n) {
  FILE *f = fopen(path, "re");
  if (!f || !fgets(out, (int)n, f))
    snprintf(out, n, "?");
  out[strcspn(out, "\n")] = 0;
  if (f)
    fclose(f);
}

static double kib(long bytes) { return bytes > 0 ? (double)bytes / 1024 : 0; }

void rig_bench_facts(FILE *out) {
  char model[256], total[64], avail[64], thp[256];
  cpu_set_t mask;
  struct utsname u;
  double load[3] = {0, 0, 0};
  field("/proc/cpuinfo", "model name", model, sizeof model);
  field("/proc/meminfo", "MemTotal", total, sizeof total);
  field("/proc/meminfo", "MemAvailable", avail, sizeof avail);
  first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp, sizeof thp);
  int allowed = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : -1;
  if (getloadavg(load, 3) < 0)
    load[0] = load[1] = load[2] = -1;
  fprintf(out, "machine: %s; %d CPUs allowed of %ld online; rig_host_cores %u\n", model,
          allowed, sysconf(_SC_NPROCESSORS_ONLN), rig_host_cores());
  fprintf(out, "caches: L1d %.0f KiB, L2 %.0f KiB, L3 %.0f KiB (as the CPU reports them: "
               "a VM may show the whole host's L3)\n",
          kib(sysconf(_SC_LEVEL1_DCACHE_SIZE)), kib(sysconf(_SC_LEVEL2_CACHE_SIZE)),
          kib(sysconf(_SC_LEVEL3_CACHE_SIZE)));
  fprintf(out, "memory: %s total, %s available; transparent huge pages %s\n", total, avail,
          thp);
  fprintf(out, "system: %s %s; load average %.2f %.2f %.2f\n",
          uname(&u) == 0 ? u.sysname : "?", uname(&u) == 0 ? u.release : "?", load[0], load[1],
          load[2]);
  fprintf(out, "compilers: anchors %s (the build's flags, OpenMP%s); kernels %s\n",
          __VERSION__,
#ifdef _OPENMP
          "",
#else
          " absent",
#endif
          RIG_BENCH_KERNEL_FLAGS);
  fprintf(out, "each row: rig and anchor alternated over its rounds, min and median ns per "
               "iteration; ratio = rig / anchor (below 1: rig faster)\n");
}
