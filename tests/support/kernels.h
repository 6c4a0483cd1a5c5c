/* kernels.h: the parameter blocks of the host kernels in tests/kernels/
 * that the tests fill in themselves. A kernel and the tests that launch it
 * include this one header, so that a field moved in one cannot leave the
 * other reading the wrong bytes.
 *
 * The kernels are built freestanding for a bare target (tests/meson.build),
 * so this header needs nothing but <stdint.h>. */
#ifndef RIG_TEST_KERNELS_H
#define RIG_TEST_KERNELS_H

#include <stdint.h>

/* copy_bytes.c: thread i copies byte i of src into dst, for i < n. */
struct copy_bytes {
  const uint8_t *src;
  uint8_t *dst;
  int64_t n;
};

/* fill_bytes.c: thread i writes byte i of the pattern (size bytes of it,
 * repeated) into dst, for i < n. */
struct fill_bytes {
  uint8_t *dst;
  int64_t n;
  uint32_t pattern, size;
};

/* copy_bytes and fill_bytes run a thread per byte, in groups of this many:
 * a launch over n bytes takes n / COPY_BYTES_THREADS + 1 groups. */
#define COPY_BYTES_THREADS 256

/* launch_ids.c: count[i] counts the runs of thread i; bad counts calls that
 * did not cover whole groups of per_group threads; calls counts calls. */
struct ids {
  int64_t *count;
  int64_t per_group;
  int64_t *bad;
  int64_t *calls;
};

/* launch_pool.c: how many calls run at once (peak of active), each call's
 * thread and whether it blocks SIGSEGV; with caller_ran set, calls on
 * threads other than caller wait for one on it. */
struct pool {
  int64_t *active, *peak;
  int64_t spin;
  uint64_t *thread;      /* per call */
  int64_t *segv_blocked; /* per call */
  int64_t *calls;
  uint64_t caller;       /* the submitting thread, with caller_ran */
  int64_t *caller_ran;   /* NULL: no wait */
};

/* scalars.c: writes the float and the double of its block, which a run
 * sets with rig_run_float and rig_run_double, into out[0] and out[1] as
 * doubles (test_api_values.c). */
struct scalars {
  double *out;
  float f;
  uint32_t pad;
  double d;
};

/* gate.c: sets *entered, then waits until *open is non-zero. */
struct gate {
  int64_t *entered, *open;
};

#endif
