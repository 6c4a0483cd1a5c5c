/* random.h: the random program generator's parts (tests/random): the
 * devices it runs on, a program of ops, and the threads that run them
 * against a sequential model of the bytes (model.c); random.c drives seeds,
 * child processes and the minimizer. */
#ifndef RIG_RANDOM_H
#define RIG_RANDOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

#define RND_MAX_DEVICES 8
#define RND_MAX_THREADS 4
#define RND_REGION 16384 /* each thread's bytes of the io file */

typedef struct rnd_devices {
  rig_device *d[RND_MAX_DEVICES];
  unsigned n;
  rig_device *io; /* the io file, NULL where it does not open */
  rig_device *scratch; /* one whose memory the host does not address */
  rig_device *tight;   /* one whose budget programs lower */
  uint64_t tight_budget;
} rnd_devices;

/* One op: its kind and the random numbers it reads its choices from, so
 * that a program with ops dropped still means something. */
typedef struct rnd_op {
  unsigned kind;
  uint32_t r[8];
} rnd_op;

typedef struct rnd_program {
  rnd_op *ops;
  size_t n;
} rnd_program;

/* Buffers every thread of a program reads at once, through views of its
 * own that admit only reads: byte i of buffer k holds rnd_shared_byte.
 * Any thread may free buffer RND_DOOMED while the others use it, and
 * RND_SCRATCH, of which thread t writes bytes [t, t + 1) * SHARE: the
 * threads share its stamps but no word, so each sees its bytes as if it
 * ran alone (ORDER-27..29); where two wrote one byte, that would be the
 * program's race, not rig's. */
#define RND_DOOMED 2
#define RND_SCRATCH 3
#define RND_SCRATCH_SHARE 4096
typedef struct rnd_shared {
  rig_buffer *b[4];
  unsigned n;
  uint64_t seed;
} rnd_shared;

static inline uint8_t rnd_shared_byte(uint64_t seed, unsigned k, size_t i) {
  return (uint8_t)(i * 7 + k * 31 + seed);
}

/* splitmix64. */
uint64_t rnd_next(uint64_t *s);

/* Opens every device that opens here (vulkan where it does, without it
 * where RIG_RANDOM_NO_VULKAN is set), the io file at path. */
void rnd_open(rnd_devices *ds, const char *path);
void rnd_close(rnd_devices *ds);
/* Gives the tight device its budget back, at a program's end. */
void rnd_unpress(const rnd_devices *ds);

/* Thread t's program of seed: n ops. */
void rnd_generate(uint64_t seed, unsigned t, size_t n, rnd_program *out);

/* Runs thread t's program on ds, checking every answer against the model;
 * false on a failure, after printing it and the ops run so far to stderr. */
bool rnd_run(const rnd_devices *ds, const rnd_shared *sh, unsigned t, const rnd_program *p,
             bool verbose);

#endif
