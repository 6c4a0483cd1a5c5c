/* bench.h: rig's benchmarks. Each measures rig and its anchor in the same
 * run, alternating them, keeps the best round of each (the least disturbed
 * on a shared machine) and prints the ratio rig / anchor: below 1 rig is
 * faster. Each returns 0, or 1 when rig failed. */
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
/* P9: rig on cuda:0 vs the CUDA Driver API (cuda.c); prints a skip line
 * and returns 0 where libcuda or a GPU is missing. */
int rig_bench_cuda(FILE *out);
/* The ordering stress test at 10^6 submits: submits, order violations and
 * seconds; no anchor. Run only on request (`rig bench stress`). */
int rig_bench_stress(FILE *out);

/* Prints "bench: WHAT: message" on stderr when status (a rig_status) is
 * not RIG_OK; returns status. For the steps whose failure a bench reports
 * but outlives (a close at its end, a budget it sets). */
int rig_bench_status(int status, const char *what);

/* The bytes of the file at path, malloc'd, or NULL; *n their count. */
void *rig_bench_read_file(const char *path, size_t *n);

/* Timing: a function run `iters` times per round. */
typedef void (*rig_bench_fn)(void *ctx, uint64_t iters);
/* Best ns per iteration of rig and anchor over `rounds` alternated rounds;
 * prints one line "name  rig X  anchor Y  ratio R". Returns the ratio. */
double rig_bench_compare(FILE *out, const char *name, rig_bench_fn rig, rig_bench_fn anchor,
                         void *ctx, uint64_t iters, int rounds);

#endif
