/* SPDX-License-Identifier: MIT */
/* waits.h: what a submit follows: the points gathered from its uses, the
 * queue waits mapped for them, hangs, and the timeline's submit. */
#ifndef RIG_CORE_WAITS_H
#define RIG_CORE_WAITS_H

#include "alloc.h"

/* ---- hangs and spreading losses (hang.c) ---- */
/* A wait's look at d: its hang clock, and its queue's waits on lost
 * devices (HANG-2, LOSS-6). */
RIG__HIDDEN void rig__watch(rig_device *d);
/* Whether d's queue waits, in work not yet reached, for a point a lost
 * device never reached; writes that device's name (waits.c). */
RIG__HIDDEN bool rig__waits_on_lost(rig_device *d, char *who, size_t n);

/* ---- waits on other devices (waits.c) ---- */
typedef struct rig__mapping rig__mapping;
#define RIG__MAX_WAITS 16
typedef struct rig__waits {
  uint32_t n;
  bool overflow;                         /* more slots than points[] holds */
  rig_point points[RIG__MAX_WAITS];
  rig_edge_wait edge[RIG__MAX_WAITS];
  rig__mapping *maps[RIG__MAX_WAITS];
} rig__waits;
/* A use of memory by work: the allocation and whether it writes. */
typedef struct rig__use {
  rig__alloc *alloc;
  bool write;
  bool unordered;   /* ORDER-23: follows nothing, followed by nothing */
} rig__use;
/* Gathers the pending points the uses and waits[] must follow; RIG_LOST
 * for one its lost device never reached (SUBMIT-31, LMEM-10). */
RIG__HIDDEN rig_status rig__waits_gather(rig__waits *w, rig_device *d,
                                         const rig__use *uses, size_t nuses,
                                         const rig_point *waits, size_t nwaits);
/* Commits each point's work, waits on the host for those d's queue will
 * not wait for (SUBMIT-3), and keeps the rest. */
RIG__HIDDEN rig_status rig__waits_on_host(rig__waits *w, rig_device *d);
/* Submit lock held: maps the words the queue waits on and points work at
 * them; the index of a point it cannot map, or -1. */
RIG__HIDDEN int rig__waits_to_queue(rig__waits *w, rig_device *d, rig_edge_work *work);
/* Records that the work of value used the mappings (OPEN-21). */
RIG__HIDDEN void rig__waits_used(rig__waits *w, rig_device *d, uint64_t value);
/* Gives back retired mappings whose waits are passed; all: every mapping,
 * at the device's stop (OPEN-22, OPEN-23). */
RIG__HIDDEN void rig__mappings_release(rig_device *d, bool all);
/* ---- timeline (timeline.c) ---- */
/* Runs work on d: waits for what its uses and waits[] must follow (on the
 * host for now; in d's queue where it can, the order issue), assigns the
 * next value, hands the work to d's driver and adds the point to the uses'
 * stamps under the assignment (ORDER-18, 19). Host work adds none (ORDER-21).
 * Returns the point in *out. */
RIG__HIDDEN rig_status rig__timeline_submit(rig_device *d, rig_edge_work *work,
                                            const rig__use *uses, size_t nuses,
                                            const rig_point *waits, size_t nwaits,
                                            rig_point *out);
/* rig__timeline_submit where it waits for nothing: RIG_BUSY, having
 * assigned no value and changed nothing, where it would wait (the submit
 * lock held by another thread, no room, a point of another device to
 * follow, a driver that may block, a host launch over the pool's workers,
 * a profile to start). */
RIG__HIDDEN rig_status rig__timeline_submit_try(rig_device *d, rig_edge_work *work,
                                                const rig__use *uses, size_t nuses,
                                                const rig_point *waits, size_t nwaits,
                                                rig_point *out);

#endif
