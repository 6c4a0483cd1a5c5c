/* SPDX-License-Identifier: MIT */
/* rig/job.h: jobs (Rig_remote): work on devices of several machines, run
 * in order, that tells afterwards which of its steps a lost machine took
 * with it (docs/remote.md). Included by <rig/rig.h>, whose conventions
 * hold here; include that. */
/* <rig/rig.h> first, outside the guard: included on its own, this header
 * then comes in from rig.h's end, where the types it uses are declared. */
#include <rig/rig.h>
#ifndef RIG_JOB_H
#define RIG_JOB_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- jobs -------------------------------------------------------------------- */

/* A job: steps, each a submission on a device of some machine with its
 * buffers, or a copy between buffers of two machines, in the order they
 * were added. A job uses one thread at a time. */
typedef struct rig_job rig_job;

/* Sets what a step's run passes its launch blocks (rig_run_groups,
 * rig_run_threads, rig_run_int64...), just before the step is submitted;
 * a status other than RIG_OK stops rig_job_run with it. */
typedef rig_status (*rig_job_setup)(rig_run *r, void *ctx);

/* Makes an empty job and returns it through *out, with one reference,
 * which the caller owns. RIG_INVALID for a NULL out; RIG_OUT_OF_MEMORY.
 * Allocates; lock-free. */
RIG_API RIG_MUST_USE rig_status rig_job_make(rig_job **out);

/* Adds a step that submits s with buffers[0..n) as its slots, and returns
 * its index through *out_step (steps count from 0). The job holds s and
 * each buffer until it is released. setup, if not NULL, sets the launch
 * blocks of the step's run each time the step is submitted. RIG_INVALID:
 * NULL s, j or out_step, a buffer count other than s's slots, a NULL or
 * dead buffer, or a job in use (its rig_job_run under way, in this thread's
 * setup or in another thread).
 * RIG_OUT_OF_MEMORY. Allocates; lock-free. */
RIG_API RIG_MUST_USE rig_status rig_job_add(rig_job *j, rig_submission *s,
                                            rig_buffer *const *buffers, size_t n,
                                            rig_job_setup setup, void *ctx, size_t *out_step);

/* Adds a step that copies src into dst as rig_buffer_submit_copy does:
 * between two machines, through this host's staging. Returns its index
 * through *out_step and holds src and dst; as rig_job_add otherwise.
 * Allocates; lock-free. */
RIG_API RIG_MUST_USE rig_status rig_job_add_copy(rig_job *j, rig_buffer *src, rig_buffer *dst,
                                                 size_t *out_step);

/* Submits every step not yet submitted, in order, then waits for each
 * submitted step's point. The memory of the steps orders them (a step
 * that reads a buffer follows the step that wrote it, on whatever machine)
 * and no step waits on any other point. A step is lost, and not
 * submitted, when one of its buffers or its submission's device is lost,
 * or when it shares memory with a buffer that a lost step of the job
 * writes; a step is lost too when its submit or its point's wait returns
 * RIG_LOST. The other steps run: a lost machine stops only the work that
 * needs it.
 * Returns RIG_OK once every step's point is reached; RIG_LOST when a step
 * is lost, naming the first and its reason (rig_job_step tells each);
 * another status of a submit, a setup or a wait (RIG_INVALID,
 * RIG_OUT_OF_MEMORY, RIG_INTERRUPTED) stops the run there, and a later
 * call goes on from the steps not yet submitted or reached. RIG_INVALID for
 * NULL or a job in use (a run or an add under way). Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_job_run(rig_job *j);

/* Step i's state: RIG_OK, with its point through *out (may be NULL;
 * RIG_POINT_NONE for work that took no point), once its point is
 * reached and every buffer it writes is still readable; RIG_LOST, with the
 * reason, for a step lost in rig_job_run, and for a reached step one of
 * whose written buffers is on a device lost since (its results went with
 * that machine, so a retry makes them again). RIG_INVALID for NULL j, a
 * step out of range, or one not yet reached. Lock-free. */
RIG_API RIG_MUST_USE rig_status rig_job_step(const rig_job *j, size_t i, rig_point *out);

/* The number of steps of j (0 for NULL). Lock-free. */
RIG_API size_t rig_job_steps(const rig_job *j);

/* Adds a reference to j and returns j. Lock-free. */
RIG_API rig_job *rig_job_retain(rig_job *j);
/* Drops a reference to j; at the last one, the job releases its
 * submissions and buffers (the work already submitted runs on). Accepts
 * NULL. Lock-free. */
RIG_API void rig_job_release(rig_job *j);

#ifdef __cplusplus
}
#endif
#endif
