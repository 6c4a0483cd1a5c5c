/* bench.h: rig's benchmarks. Each measures rig and its anchor in the same
 * run, alternating them (which goes first swaps every round), and prints
 * the min (the least disturbed round on a shared machine) and the median of
 * each side's rounds and the ratios rig / anchor of both: below 1 rig is
 * faster. Both sides touch their memory before the clock starts, run the
 * same number of threads, and run kernels built with the same flags
 * (docs/benchmarks.md). Each returns 0, or 1 when rig failed. */
#ifndef RIG_BENCH_H
#define RIG_BENCH_H

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
/* The small operations on a memory device: a 64-byte rig_buffer_copy vs
 * memcpy of 64 bytes, and the submit of a prepared 4-byte fill (take and
 * submit, no wait) vs a 4-byte store (small.c). */
int rig_bench_small(FILE *out);
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
 * of iters / 10 + 1; prints one line "name  rig MIN MEDIAN  anchor MIN
 * MEDIAN  ratio MIN MEDIAN". Returns the ratio of the mins. */
double rig_bench_compare(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                         void *ctx, uint64_t iters, int rounds);

#endif
