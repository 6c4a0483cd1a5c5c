/* SPDX-License-Identifier: MIT */
/* rig/submission.h: submissions, described once and submitted many times:
 * their parts (copies, fills, words, launches) and the refs of launches,
 * runs and their launch blocks, and rig_run_submit. Included by <rig/rig.h>,
 * whose conventions hold here; include that. */
/* <rig/rig.h> first, outside the guard: included on its own, this header
 * then comes in from rig.h's end, where the types it uses are declared. */
#include <rig/rig.h>
#ifndef RIG_SUBMISSION_H
#define RIG_SUBMISSION_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- submissions ------------------------------------------------------------ */

typedef enum rig_part_kind {
  RIG_PART_COPY = 0,
  RIG_PART_FILL = 1,
  RIG_PART_LAUNCH = 2,
  RIG_PART_WORDS = 3,
} rig_part_kind;

/* A part's use of its slots is unordered (Submission.unordered): it
 * follows nothing on their memory beyond device order, nothing later
 * follows it, and it depends on no point (ORDER-23, ORDER-24, LMEM-4). The
 * program orders it itself, as with flags both devices spin on. */
#define RIG_PART_UNORDERED 1u

/* A launch's ref (Submission.read, write, ref, entry, unordered): before
 * the launch runs, submit stores at byte `at` of its parameter block the
 * address the device's code uses for what the ref names: the buffer in a
 * slot, which the launch reads, writes or both, or another image's
 * function (entry, SYM-2). On host that is a host address (LAUNCH-5). */
typedef enum rig_ref_kind {
  RIG_REF_READ = 0,
  RIG_REF_WRITE = 1,
  RIG_REF_READ_WRITE = 2,
  RIG_REF_ENTRY = 3,
} rig_ref_kind;

typedef struct rig_ref {
  rig_ref_kind kind;
  uint32_t slot;              /* READ, WRITE, READ_WRITE */
  uint32_t at;                /* byte of the parameter block, a multiple of 8 */
  uint32_t flags;             /* RIG_PART_UNORDERED: this use is unordered */
  const rig_function *entry;  /* ENTRY */
  rig_buffer *fixed;          /* fixed memory: this buffer instead of a slot */
} rig_ref;

/* Refs (lock-free constructors): the buffer in slot `slot`, which the launch
 * reads (rig_ref_read), writes (rig_ref_write) or both (rig_ref_read_write),
 * or f's entry address (rig_ref_entry), stored at byte `at` of the block. */
static inline rig_ref rig_ref_read(uint32_t slot, uint32_t at) {
  rig_ref r = RIG_ZERO_INIT;
  r.kind = RIG_REF_READ;
  r.slot = slot;
  r.at = at;
  return r;
}
static inline rig_ref rig_ref_write(uint32_t slot, uint32_t at) {
  rig_ref r = RIG_ZERO_INIT;
  r.kind = RIG_REF_WRITE;
  r.slot = slot;
  r.at = at;
  return r;
}
static inline rig_ref rig_ref_read_write(uint32_t slot, uint32_t at) {
  rig_ref r = RIG_ZERO_INIT;
  r.kind = RIG_REF_READ_WRITE;
  r.slot = slot;
  r.at = at;
  return r;
}
static inline rig_ref rig_ref_entry(const rig_function *f, uint32_t at) {
  rig_ref r = RIG_ZERO_INIT;
  r.kind = RIG_REF_ENTRY;
  r.at = at;
  r.entry = f;
  return r;
}
/* Fixed memory (BUF-1): the submission holds b from make on, and each
 * submit uses it as access says (RIG_READ: a read; RIG_READ_WRITE: a read
 * and a write), with no slot. Make refuses a written fixed buffer that
 * permits only reads (VALID-7) and a dead one (VALID-4). */
static inline rig_ref rig_ref_fixed(rig_buffer *b, rig_access access, uint32_t at) {
  rig_ref r = RIG_ZERO_INIT;
  r.kind = access == RIG_READ ? RIG_REF_READ : RIG_REF_READ_WRITE;
  r.at = at;
  r.fixed = b;
  return r;
}
/* r, its use unordered (Submission.unordered: ORDER-23, ORDER-24, LMEM-4). */
static inline rig_ref rig_ref_unordered(rig_ref r) {
  r.flags |= RIG_PART_UNORDERED;
  return r;
}

/* A part of a submission. Slots name the buffers a submit passes. Each
 * kind of part runs on the queue its device's facts give it (ORDER-4). A
 * part follows each earlier part that may share memory with it where one
 * of the two writes (ORDER-3); a words part follows every earlier part,
 * and later parts on its queue follow it (ORDER-5, ORDER-6); other parts
 * may run concurrently (ORDER-7). */
typedef struct rig_part {
  rig_part_kind kind;
  uint32_t src, dst;       /* COPY: slots; FILL: dst */
  uint32_t pattern;        /* FILL */
  uint32_t pattern_bytes;  /* FILL: 1, 2 or 4 */
  uint32_t flags;          /* RIG_PART_UNORDERED */
  const uint32_t *words;   /* WORDS: the driver's own words, copied at make */
  uint32_t nwords;
  /* LAUNCH: the function, its refs (copied at make), and the bytes of its
   * parameter block, which each run holds (Submission.launch). */
  const rig_function *function;
  const rig_ref *refs;
  uint32_t nrefs;
  uint32_t params_bytes;
} rig_part;

/* Parts (lock-free constructors). Each starts from RIG_ZERO_INIT, here and
 * for refs: a field added later starts at zero and shifts nothing, and C++
 * before C++20, which has no designated initialisers, compiles them. */
static inline rig_part rig_part_copy(uint32_t src_slot, uint32_t dst_slot) {
  rig_part p = RIG_ZERO_INIT;
  p.kind = RIG_PART_COPY;
  p.src = src_slot;
  p.dst = dst_slot;
  return p;
}
static inline rig_part rig_part_fill(uint32_t dst_slot, uint32_t pattern,
                                     uint32_t pattern_bytes) {
  rig_part p = RIG_ZERO_INIT;
  p.kind = RIG_PART_FILL;
  p.dst = dst_slot;
  p.pattern = pattern;
  p.pattern_bytes = pattern_bytes;
  return p;
}
/* Words the device's queue takes as they are (Submission.words), whose
 * effect rig cannot see. */
static inline rig_part rig_part_words(const uint32_t *words, uint32_t n) {
  rig_part p = RIG_ZERO_INIT;
  p.kind = RIG_PART_WORDS;
  p.words = words;
  p.nwords = n;
  return p;
}
/* A launch of f (Submission.launch ~refs f ~params:n): its run's block holds
 * n bytes of parameters and the grid (rig_run_groups, rig_run_threads). */
static inline rig_part rig_part_launch(const rig_function *f, const rig_ref *refs, uint32_t nrefs,
                                       uint32_t params_bytes) {
  rig_part p = RIG_ZERO_INIT;
  p.kind = RIG_PART_LAUNCH;
  p.function = f;
  p.refs = refs;
  p.nrefs = nrefs;
  p.params_bytes = params_bytes;
  return p;
}
/* p, with its uses unordered. */
static inline rig_part rig_part_unordered(rig_part p) {
  p.flags |= RIG_PART_UNORDERED;
  return p;
}

/* Makes a submission of n parts on d, described once and submitted many
 * times (SUBS-1). RIG_INVALID for each rule of VALID-1..10 it can check
 * (a device with no queue for a part, sparse slots, a fill of another pattern
 * size). The submission copies parts. May lock; allocates. */
RIG_API RIG_MUST_USE rig_status rig_submission_make(rig_device *d, const rig_part *parts, size_t n,
                                       rig_submission **out);
/* Lets release(value) run once s is released and the work submitted on its
 * device until the first call that moves that device's memory afterwards
 * is done, inside a later such call (RECLAIM-17, RUN-8); on a lost device,
 * at its stop (STOP-2). It runs inside a lock (DOM-12). A second keep
 * replaces the first, whose value is never released. Lock-free. */
typedef void (*rig_keep_release)(void *value);
RIG_API RIG_MUST_USE rig_status rig_submission_keep(rig_submission *s, void *value, rig_keep_release release);
/* Adds a reference to s and returns s. Lock-free. */
RIG_API rig_submission *rig_submission_retain(rig_submission *s);
/* Drops a reference; its memory returns after its last submit's work
 * (RUN-8). Lock-free. */
RIG_API void rig_submission_release(rig_submission *s);
/* The number of slots a submit passes. Lock-free. */
RIG_API uint32_t rig_submission_slots(const rig_submission *s);

/* Takes a run of s for the calling thread (RUN-5): a free one, or a new
 * one while s has fewer than RIG_SUBMISSION_RUNS. RIG_INVALID while every
 * run is taken: all RIG_SUBMISSION_RUNS runs were taken and none has been
 * submitted since (each submit gives its run back, SUBMIT-12), so a
 * program that takes runs and never submits them is told, instead of
 * growing without bound. Allocates only the first time a run is needed.
 * May lock. */
#define RIG_SUBMISSION_RUNS 256u
RIG_API RIG_MUST_USE rig_status rig_submission_take(rig_submission *s, rig_run **out);
/* The submission r belongs to. Lock-free. */
RIG_API rig_submission *rig_run_submission(const rig_run *r);
/* Gives r, a run the calling thread took and has not submitted, back to
 * its submission unsubmitted, as a submit would (SUBMIT-12): for a caller
 * whose setting up of the run failed, which would otherwise hold it taken
 * for good (RUN-5 counts it). Its blocks keep what was set; the next take
 * may hand it out again. RIG_INVALID, changing nothing, for NULL, a free
 * run, another thread's, or one a submit has under way. Allocates nothing;
 * lock-free where the submission's spare is empty, else takes its pool's
 * lock. */
RIG_API RIG_MUST_USE rig_status rig_run_drop(rig_run *r);

/* The block of launch part `part` (Submission.block): the k that the run's
 * setters take. RIG_INVALID for a part that is no launch. Lock-free. */
RIG_API RIG_MUST_USE rig_status rig_submission_block(const rig_submission *s, uint32_t part, uint32_t *out_k);

/* A run's launch blocks (Submission.Run). Each sets what one submit of the
 * run passes block k: its grid of groups, the threads of a group, and its
 * parameters, stored at byte off; refs overwrite their own bytes at the
 * submit. RIG_INVALID for a block or a range out of bounds. Lock-free: they
 * touch only the caller's run. */
RIG_API RIG_MUST_USE rig_status rig_run_groups(rig_run *r, uint32_t k, uint64_t x, uint64_t y, uint64_t z);
RIG_API RIG_MUST_USE rig_status rig_run_threads(rig_run *r, uint32_t k, uint64_t x, uint64_t y, uint64_t z);
RIG_API RIG_MUST_USE rig_status rig_run_int64(rig_run *r, uint32_t k, uint32_t off, int64_t v);
RIG_API RIG_MUST_USE rig_status rig_run_int32(rig_run *r, uint32_t k, uint32_t off, int32_t v);
RIG_API RIG_MUST_USE rig_status rig_run_float(rig_run *r, uint32_t k, uint32_t off, float v);
RIG_API RIG_MUST_USE rig_status rig_run_double(rig_run *r, uint32_t k, uint32_t off, double v);
RIG_API RIG_MUST_USE rig_status rig_run_bytes(rig_run *r, uint32_t k, uint32_t off, const void *src,
                                 uint32_t n);
/* Bytes of shared memory per group a launch asks for. The host has none:
 * submit refuses a host launch that asks (LAUNCH-12). */
RIG_API RIG_MUST_USE rig_status rig_run_shared(rig_run *r, uint32_t k, uint32_t bytes);

/* Submission.address: writes into *out the address that s's device's code
 * uses for b's first byte, the value a ref of b stores in s's launches
 * (Submission.ref; on a device that runs on the host, b's host address,
 * LAUNCH-5), so that a program can put it in parameters or in memory
 * itself. A low-level value: valid while b's memory lives (a submission
 * whose fixed ref names b keeps it), and it says nothing of order: work
 * that reaches b only through it is unordered with b's other uses.
 * RIG_INVALID for NULL, a dead b, a b on another device that s's device
 * does not address as it is (borrow it), and memory with no address a ref
 * can name (handle-only memory, VALID-19); RIG_LOST for b's lost device.
 * Lock-free. */
RIG_API RIG_MUST_USE rig_status rig_submission_address(const rig_submission *s,
                                                       const rig_buffer *b, uint64_t *out);

/* Runs r's submission once with buffers[i] as slot i and returns its point
 * (d, submitted d + 1) (SUBMIT-6). The work follows waits besides the points
 * its memory orders (SUBMIT-9). Frees r, also when it fails (SUBMIT-12).
 * RIG_INVALID: another thread's run, a run in another submit, a wrong buffer
 * count, a dead or foreign buffer, a write through a Read buffer, a copy of
 * unequal lengths or of buffers sharing a byte (VALID-12..22). RIG_LOST: d
 * lost, its driver refusing the work, a wait on a point its lost device never
 * reached (SUBMIT-29..31); past value 2^47 - 1 d is lost with "timeline
 * exhausted" (SUBMIT-32). Allocates nothing (SUBMIT-20). Blocks for room and
 * for points waited on the host; may lock. */
RIG_API RIG_MUST_USE rig_status rig_run_submit(rig_run *r, rig_buffer *const *buffers, size_t nbuffers,
                              const rig_point *waits, size_t nwaits, rig_point *out);

/* rig_run_submit where it would not wait; where it would, it returns
 * RIG_BUSY at once and has done nothing: no value assigned, no point, r
 * left as it was (taken by the caller, or free) for a later rig_run_submit
 * or rig_run_submit_try, and the reason in rig_error_last(). It would wait,
 * and answers RIG_BUSY, where another thread holds the device's submit lock
 * or its run pool's lock, the device's queues have no room, the work must
 * follow a point of another device not yet reached (an element of waits or
 * a stamp of its memory), the device's driver may block (RIG_EDGE_MAY_BLOCK),
 * a host launch has more than one group on a host of more than one core (its
 * submitting thread would wait for the pool's workers), or a profile is
 * starting on the device. Every other answer is rig_run_submit's, and frees
 * r as it does. On the host and a memory device the work runs on the calling
 * thread before it returns, as with rig_run_submit: a caller that holds a
 * lock of its own meanwhile (a binding's runtime lock) holds it for that
 * work. Allocates nothing. Never blocks; it takes only locks of rig's that
 * it finds free or that no thread holds across a wait (as
 * rig_submission_take does); may lock (RIG_INVALID inside a lock, freeing
 * r, as rig_run_submit). */
RIG_API RIG_MUST_USE rig_status rig_run_submit_try(rig_run *r, rig_buffer *const *buffers,
                                                   size_t nbuffers, const rig_point *waits,
                                                   size_t nwaits, rig_point *out);

#ifdef __cplusplus
}
#endif
#endif
