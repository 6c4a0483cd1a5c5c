/* SPDX-License-Identifier: MIT */
/* submit.h: what submission.c (making and checking submissions), run.c
 * (taking runs, their launch blocks and setters) and submit.c share.
 * Internal to librig-core. */
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
  uint32_t *labels;              /* per part: its name in profiles, or 0 */
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

/* How many uses of slots p makes: a copy reads its source and writes its
 * destination, a fill writes its destination, a launch uses each slot a
 * ref names, words name none. */
static inline uint32_t rig__part_nuses(const rig_part *p) {
  switch (p->kind) {
  case RIG_PART_COPY:
    return 2;
  case RIG_PART_FILL:
    return 1;
  case RIG_PART_LAUNCH:
    return p->nrefs;
  default:
    return 0;
  }
}

/* Use k of p: its slot, whether it writes, whether it is unordered; false
 * for an entry ref, which names no slot. */
static inline __attribute__((always_inline)) bool rig__part_use(const rig_part *p, uint32_t k,
                                                                 uint32_t *slot, bool *write,
                                                                 bool *unordered) {
  *unordered = p->flags & RIG_PART_UNORDERED;
  if (p->kind == RIG_PART_LAUNCH) {
    const rig_ref *r = &p->refs[k];
    *slot = r->slot;
    *write = r->kind != RIG_REF_READ;
    *unordered = *unordered || (r->flags & RIG_PART_UNORDERED);
    return r->kind != RIG_REF_ENTRY && !r->fixed;
  }
  *slot = k == 0 ? p->dst : p->src;
  *write = k == 0;
  return true;
}

/* Frees a run's memory (run.c): a submission's release. */
RIG__HIDDEN void rig__run_destroy(rig_run *r);
/* Gives a run back to its submission's pool: the spare, else the free
 * list. Inline: every submit ends with it (P1). */
static inline void rig__run_free(rig_run *r) {
  rig_submission *s = r->s;
  rig_run *none = NULL;
  atomic_store_explicit(&r->state, RUN_FREE, memory_order_release);
  if (atomic_compare_exchange_strong(&s->spare, &none, r))
    return;
  pthread_mutex_lock(s->lock); /* not counted: submit frees inside a lock too */
  r->next_free = s->free_runs;
  s->free_runs = r;
  pthread_mutex_unlock(s->lock);
}

#endif
