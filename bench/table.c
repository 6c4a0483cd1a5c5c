/* table.c: how rig bench presents what the benchmarks measure (bench.h):
 * the groups it runs by name, a heading per group that says what its rows
 * compare, a row per measurement with its units and ratio, progress on
 * stderr, and a skip line for a group that needs what this install lacks. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include "bench.h"

const rig_bench_group rig_bench_groups[] = {
    {"create", rig_bench_create, "rig_buffer_create + release, a cache hit", "malloc + free", 0,
     false},
    {"copy", rig_bench_copy, "rig_buffer_copy host <-> memory device", "memcpy", 0, false},
    {"small", rig_bench_small,
     "a 64-byte rig_buffer_copy, and a prepared 4-byte fill's submit, on a memory device",
     "memcpy of 64 bytes; a 4-byte store", 0, false},
    {"io", rig_bench_io, "P8: a file read into a buffer through an io device",
     "a read(2) loop into malloc'd memory", 0, false},
    {"launch", rig_bench_launch,
     "P1: a launch's submit; P4: add on the host's cores; P5: rig_image_load",
     "P1: a direct call through the pool; P4: OpenMP; P5: dlopen", RIG_BENCH_NEEDS_KERNELS, false},
    {"pingpong", rig_bench_pingpong, "ordered 64 B copies between two devices, per round trip",
     "two threads handing memcpy over with a condition variable", RIG_BENCH_NEEDS_TEST_DRIVER,
     false},
    {"cuda", rig_bench_cuda,
     "P9: an empty kernel's submit; a cross-device order; 1 GiB copies (CUDA)",
     "cuLaunchKernel + a stream write; cuEventRecord + cuStreamWaitEvent; cuMemcpy from pinned", 0,
     false},
    {"remote", rig_bench_remote,
     "another machine: a remote point's round trip; 1 GiB copies between machines",
     "a UCP stream ping-pong; ucp_put_nbx / ucp_get_nbx of 1 GiB", 0, true},
    {"llama", rig_bench_llama,
     "P12: tokens per second of rig-llama on the host's cores (and Vulkan, a split)",
     "the same forward pass in C with OpenMP over the same kernels", 0, true},
    {"stress", rig_bench_stress, "the ordering stress test at 10^6 submits", "none",
     RIG_BENCH_NEEDS_TEST_DRIVER, true},
};
#ifndef RIG_BENCH_HAVE_REMOTE
int rig_bench_remote(FILE *out) {
  fprintf(out, "remote skipped: rig was built without UCX (the remote driver's transport)\n");
  return 0;
}
#endif
const size_t rig_bench_ngroups = sizeof rig_bench_groups / sizeof rig_bench_groups[0];

const char *rig_bench_kernel_dir(void) {
  const char *dir = getenv("RIG_BENCH_KERNELS");
  return dir && *dir ? dir : RIG_BENCH_KERNEL_DIR;
}

static bool progress_on_tty(void) {
  static int tty = -1;
  if (tty < 0)
    tty = isatty(STDERR_FILENO);
  return tty;
}

void rig_bench_progress(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs(progress_on_tty() ? "\r\033[K  " : "  ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(progress_on_tty() ? "" : "\n", stderr);
  va_end(ap);
}

void rig_bench_progress_round(const char *name, int r, int rounds) {
  if (progress_on_tty())
    rig_bench_progress("%s: round %d of %d", name, r + 1, rounds);
  else if (r == 0)
    rig_bench_progress("measuring %s: %d rounds", name, rounds);
}

/* A terminal's progress line goes before the row that follows it. */
static void progress_done(void) {
  if (progress_on_tty())
    fputs("\r\033[K", stderr);
}

void rig_bench_duration(double ns, char *out, size_t n) {
  static const char *const unit[] = {"ns", "us", "ms", "s"};
  int u = 0;
  while (ns >= 1000 && u < 3) {
    ns /= 1000;
    u++;
  }
  snprintf(out, n, "%.*f %s", ns < 10 ? 2 : ns < 100 ? 1 : 0, ns, unit[u]);
}

void rig_bench_table_head(FILE *out) {
  fprintf(out, "  %-44s %21s %21s %15s\n", "operation (time per operation)", "rig min / median",
          "anchor min / median", "ratio min / med");
}

void rig_bench_table_row(FILE *out, const rig_bench_row *r) {
  char a[32], am[32], b[32], bm[32], verdict[48];
  double ratio = r->anchor_ns > 0 ? r->rig_ns / r->anchor_ns : 0;
  double median = r->anchor_median > 0 ? r->rig_median / r->anchor_median : 0;
  rig_bench_duration(r->rig_ns, a, sizeof a);
  rig_bench_duration(r->rig_median, am, sizeof am);
  rig_bench_duration(r->anchor_ns, b, sizeof b);
  rig_bench_duration(r->anchor_median, bm, sizeof bm);
  if (ratio > 0.98 && ratio < 1.02)
    snprintf(verdict, sizeof verdict, "even");
  else if (ratio < 1)
    snprintf(verdict, sizeof verdict, "rig %.1fx faster", ratio > 0 ? 1 / ratio : 0);
  else
    snprintf(verdict, sizeof verdict, "rig %.1fx slower", ratio);
  progress_done();
  fprintf(out, "  %-44s %9s / %9s %9s / %9s %6.3f / %6.3f  %s\n", r->name, a, am, b, bm, ratio,
          median, verdict);
}

/* Why g cannot run here, or NULL: the test driver does not open, or the
 * bench kernels are not where the build put them. */
static const char *missing(const rig_bench_group *g, char *why, size_t n) {
  if (g->needs & RIG_BENCH_NEEDS_TEST_DRIVER) {
    rig_device *d;
    if (rig_device_open("test:bench-probe,delay_us=0", &d) != RIG_OK) {
      snprintf(why, n, "needs the test driver, which only a build tree has (tests/driver): %s",
               rig_error_last()->message);
      return why;
    }
    rig_bench_status(rig_device_close(d), "rig_device_close(test:bench-probe)");
    rig_device_release(d);
  }
  if (g->needs & RIG_BENCH_NEEDS_KERNELS) {
    char path[512];
    snprintf(path, sizeof path, "%s/add.o", rig_bench_kernel_dir());
    if (access(path, R_OK) != 0) {
      snprintf(why, n, "needs the bench kernels, not in %s (set RIG_BENCH_KERNELS)",
               rig_bench_kernel_dir());
      return why;
    }
  }
  return NULL;
}

int rig_bench_run_group(FILE *out, const rig_bench_group *g) {
  char why[512];
  fprintf(out, "\n%s: %s\n  anchor: %s\n", g->name, g->rig, g->anchor);
  if (missing(g, why, sizeof why)) {
    fprintf(out, "  skipped: %s\n", why);
    return 0;
  }
  if (strcmp(g->anchor, "none") != 0)
    rig_bench_table_head(out);
  int failed = g->run(out);
  progress_done();
  return failed;
}

const rig_bench_group *rig_bench_group_named(const char *name) {
  for (size_t i = 0; i < rig_bench_ngroups; i++)
    if (strcmp(rig_bench_groups[i].name, name) == 0)
      return &rig_bench_groups[i];
  return NULL;
}

void rig_bench_intro(FILE *out) {
  fprintf(out, "rig %s bench. Each row times one operation through rig and its anchor (the\n"
               "same work done directly), alternating them, and gives the min and the median\n"
               "over its rounds; ratio = rig / anchor: below 1 rig is faster.\n",
          rig_version());
}

int rig_bench_run(FILE *out, const char *const *names, size_t n) {
  int failed = 0;
  rig_bench_intro(out);
  rig_bench_facts(out);
  for (size_t i = 0; i < (n ? n : rig_bench_ngroups); i++) {
    const rig_bench_group *g = n ? rig_bench_group_named(names[i]) : &rig_bench_groups[i];
    if (!n && g->on_request)
      continue;
    failed |= rig_bench_run_group(out, g);
  }
  return failed;
}
