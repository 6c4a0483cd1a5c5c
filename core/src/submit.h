/* submit.h: what submit.c (submissions, runs, submit) and run.c (a run's
 * launch blocks and their setters) share. Internal to librig-core. */
#ifndef RIG_CORE_SUBMIT_H
#define RIG_CORE_SUBMIT_H

#include "waits.h"

enum { RUN_FREE, RUN_TAKEN, RUN_SUBMITTING };

/* A run's block of one launch part: what rig_run_* set (Submission.Run). */
typedef struct block {
  uint64_t groups[3], threads[3];
  uint32_t shared;
  uint32_t bytes;               /* the part's params_bytes */
  unsigned char *params;        /* bytes of them, 16-aligned */
} block;

struct rig_run {
  rig_submission *s;
  _Atomic int state;
  pthread_t owner;
  rig_edge_part *parts;
  rig__use *uses;
  rig_buffer **bufs;            /* the submit's buffers, read once (SUBMIT-10) */
  block *blocks;
  struct rig_run *next_free, *next_all;
};

struct rig_submission {
  _Atomic uint32_t refs;
  rig_device *dev;
  rig_part *parts;
  uint32_t nparts, nslots;
  uint32_t *words;               /* the words of words parts */
  rig_ref *ref_array;            /* the refs of launch parts */
  uint32_t *block_of;            /* per part: its launch block, or UINT32_MAX */
  uint32_t nblocks, nuses;       /* launch parts; uses of all parts */
  void *keep;                    /* rig_submission_keep */
  rig_keep_release keep_release;
  uint8_t *slot_writes;          /* per slot: written by a part */
  /* Made with the submission, so that its release queues without failing:
   * the program's kept value, and the submission's own memory, which the
   * work it submitted may still read (RUN-8). */
  rig__kept *keep_node, *memory_node;
  pthread_mutex_t *lock;         /* the run pool: one of the objects'
                                    locks, which a fork takes (lock.c) */
  /* One free run outside the list: a take and a free of it cost one
   * exchange each, not a lock and an unlock (P1). */
  _Atomic(rig_run *) spare;
  rig_run *free_runs;
  rig_run *all_runs;
  uint32_t nruns;                /* runs made, at most RIG_SUBMISSION_RUNS */
};

#endif
