/* bench.h: rig's benchmarks. Each measures rig and its anchor in the same
 * run, alternating them (which goes first swaps every round), and prints
 * the min (the least disturbed round on a shared machine) and the median of
 * each side's rounds and the ratios rig / anchor of both: below 1 rig is
 * faster. Both sides touch their memory before the clock starts, run the
 * same number of threads, and run kernels built with the same flags
 * (docs/benchmarks.md). Each returns 0, or 1 when rig failed. */
#ifndef RIG_BENCH_H
#define RIG_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Buffer create+release on a cache hit vs malloc+free (host 1 MiB, memory
 * device 256 B and 1 MiB). */
int rig_bench_create(FILE *out);
/* Host <-> memory-device copy of 256 MiB vs memcpy. */
int rig_bench_copy(FILE *out);
/* P8: 1 GiB from a file in the page cache into a host buffer and into a
 * memory-device buffer through an io device, vs a read(2) loop into
 * malloc'd memory. */
int rig_bench_io(FILE *out);
/* P1, P4, P5: an empty launch's submit vs a direct call through the pool;
 * an add over 256 MiB vs OpenMP; Image.load of 200 functions vs dlopen. */
int rig_bench_launch(FILE *out);
/* An ordered ping-pong of 64 B copies between two devices, through the
 * stamps only (test <-> test, memory <-> test), vs a condition variable
 * hand-off of memcpy between two threads; per round trip. */
int rig_bench_pingpong(FILE *out);
/* P9: rig on cuda:0 vs the CUDA Driver API (cuda.c); prints a skip line
 * and returns 0 where libcuda or a GPU is missing. */
int rig_bench_cuda(FILE *out);
/* The small operations on a memory device: a 64-byte rig_buffer_copy vs
 * memcpy of 64 bytes, and the submit of a prepared 4-byte fill (take and
 * submit, no wait) vs a 4-byte store (small.c). */
int rig_bench_small(FILE *out);
/* Other machines (remote.c): a remote 4-byte fill after the last one's
 * point vs a UCP stream ping-pong; 1 GiB copies host <-> memory@m1 and
 * memory@m1 -> memory@m2 vs ucp_put_nbx / ucp_get_nbx. Starts its own two
 * `rig serve` processes and a UCX peer, and ends them. Where rig was built
 * without UCX it prints why it is skipped and returns 0. */
int rig_bench_remote(FILE *out);
/* The UCX peer of rig_bench_remote's anchor, run as `rig bench --ucx-peer
 * BYTES` (remote_ucx.c); returns its exit status. */
int rig_bench_remote_peer(size_t bytes);
/* P12: rig-llama's forward pass on the host's cores vs OpenMP over the
 * same kernels, two shapes, 5 runs of 128 tokens; then on vulkan:0 and
 * split CPU,vulkan:0 with rig's time per token from a profile (llama.c). */
int rig_bench_llama(FILE *out);
/* The ordering stress test at 10^6 submits: submits, order violations and
 * seconds; no anchor. Run only on request (`rig bench stress`). */
int rig_bench_stress(FILE *out);

/* Prints "bench: WHAT: message" on stderr when status (a rig_status) is
 * not RIG_OK; returns status. For the steps whose failure a bench reports
 * but outlives (a close at its end, a budget it sets). */
int rig_bench_status(int status, const char *what);

/* The bytes of the file at path, malloc'd, or NULL; *n their count. */
void *rig_bench_read_file(const char *path, size_t *n);

/* The machine the benches run on (stats.c): CPU model, CPUs allowed and
 * rig_host_cores(), caches, memory, huge pages, load average, compilers
 * and flags; `rig bench` prints it first. */
void rig_bench_facts(FILE *out);

/* The min and the median of n times (stats.c); n at most
 * RIG_BENCH_MAX_ROUNDS. */
#define RIG_BENCH_MAX_ROUNDS 64
typedef struct rig_bench_stats {
  double min, median;
} rig_bench_stats;
rig_bench_stats rig_bench_stats_of(const double *ns, int n);

/* Timing: a function run `iters` times per round. */
typedef void (*rig_bench_fn)(void *ctx, uint64_t iters);
/* ns per iteration of rig and anchor over `rounds` (at most
 * RIG_BENCH_MAX_ROUNDS) alternated rounds, after one warm-up round of each
 * of iters / 10 + 1; shows progress on stderr and prints their row
 * (rig_bench_table_row): min and median of each, and the ratios; with
 * RIG_BENCH_COUNTS=1 in the environment, a line after it with each side's
 * CPU time per iteration and context switches per round; with
 * RIG_BENCH_SELF=1, the anchor in both columns, so that the ratios show
 * the row's noise under the same conditions. Returns the ratio of the
 * mins. */
double rig_bench_compare(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                         void *ctx, uint64_t iters, int rounds);

/* ---- presentation (table.c) ------------------------------------------------ */

/* One row of the table: what a measurement found. A benchmark fills it and
 * hands it to rig_bench_table_row, which prints the times in the unit that
 * suits them and the ratio rig / anchor in numbers and words. */
typedef struct rig_bench_row {
  const char *name;              /* the operation, and its size */
  double rig_ns, rig_median;     /* time per operation through rig: min, median */
  double anchor_ns, anchor_median; /* the anchor's: min, median */
} rig_bench_row;
/* The columns' heading: operation, rig, anchor, ratio (each min / median).
 * bench/conditions.sh reads the rows: change its pattern with them. */
void rig_bench_table_head(FILE *out);
/* ns, into out (n bytes), in the unit that keeps it between 1 and 1000:
 * "12.3 ns", "4.56 ms", as the rows print their times. */
void rig_bench_duration(double ns, char *out, size_t n);
void rig_bench_table_row(FILE *out, const rig_bench_row *r);
/* A line of progress on stderr, printf-like: on a terminal one line that
 * each call overwrites and the next row clears, else a line each. */
void rig_bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Round r (from 0) of rounds of the row called name: on a terminal each
 * round, else a line at the first only. */
void rig_bench_progress_round(const char *name, int r, int rounds);

/* What a group needs beyond rig and its installed drivers. */
enum { RIG_BENCH_NEEDS_TEST_DRIVER = 1, RIG_BENCH_NEEDS_KERNELS = 2 };
/* A group of rows that rig bench runs by name. */
typedef struct rig_bench_group {
  const char *name;   /* "create" */
  int (*run)(FILE *out);
  const char *rig;    /* what its rows time through rig */
  const char *anchor; /* what they time it against, or "none" */
  unsigned needs;     /* RIG_BENCH_NEEDS_*: skipped, saying why, without */
  bool on_request;    /* run only when named (stress) */
} rig_bench_group;
extern const rig_bench_group rig_bench_groups[];
extern const size_t rig_bench_ngroups;
/* The group called name, or NULL. */
const rig_bench_group *rig_bench_group_named(const char *name);
/* Prints g's heading, then runs its rows, or says why it is skipped (0).
 * Returns 0, or 1 when rig failed. */
int rig_bench_run_group(FILE *out, const rig_bench_group *g);
/* What the table shows, at its top. */
void rig_bench_intro(FILE *out);
/* The intro, then the groups named (each must exist), or all but those
 * run on request when n is 0. Returns 0, or 1 when any failed. */
int rig_bench_run(FILE *out, const char *const *names, size_t n);
/* Where launch's kernels are: $RIG_BENCH_KERNELS, else the build's. */
const char *rig_bench_kernel_dir(void);

#endif
