/* stress.h: the ordering stress engine (stress.c). The stress test runs it
 * from argv; `rig bench stress` (bench/stress.c) runs it at 10^6 submits.
 * stress.c built with RIG_STRESS_NO_MAIN is the engine alone. */
#ifndef RIG_STRESS_H
#define RIG_STRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RIG_STRESS_MAX_THREADS 64
#define RIG_STRESS_MAX_DEVICES 32

typedef struct rig_stress_params {
  unsigned threads;      /* 1..RIG_STRESS_MAX_THREADS */
  unsigned devices;      /* the host, then memory, test and test waits=0 in turn */
  uint64_t ops;          /* per thread */
  uint64_t seed;         /* draws the ops and the test devices' delays */
  unsigned max_delay_us; /* a test device's delay_us is drawn in [0, max] */
  size_t region;         /* bytes each thread owns of each allocation: 64.., a multiple of 4 */
} rig_stress_params;

typedef struct rig_stress_totals {
  uint64_t submits;    /* calls that took a timeline value */
  uint64_t accesses;   /* host accesses: puts, gets, reads */
  uint64_t checked;    /* bytes compared with the model */
  uint64_t violations; /* bytes that differed from it */
  uint64_t errors;     /* calls that failed */
  double seconds;      /* from the threads' start to their end */
} rig_stress_totals;

/* Runs the stress, reporting the devices, the first violations and every
 * error to log, and writes the totals. Returns 0 when every byte read
 * matched the model and no call failed, else 1. */
int rig_stress_run(const rig_stress_params *p, rig_stress_totals *out, FILE *log);

#endif
