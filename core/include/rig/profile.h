/* SPDX-License-Identifier: MIT */
/* rig/profile.h: profiles: the timed work of every device that times
 * work, taken as records and written as a Chrome trace (docs/profiling.md).
 * Included by <rig/rig.h>, whose conventions hold here; include that. */
/* <rig/rig.h> first, outside the guard: included on its own, this header
 * then comes in from rig.h's end, where the types it uses are declared. */
#include <rig/rig.h>
#ifndef RIG_PROFILE_H
#define RIG_PROFILE_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- profiles ---------------------------------------------------------------- */

/* A profile times work (docs/profiling.md): while one is being taken, each
 * device whose driver times work (the host by its clock, Vulkan by
 * timestamp queries, CUDA by events) writes a record per part it runs
 * into a ring of its own, with no lock and no allocation; a memory or io
 * device times no work. rig_profile_take collects the records. Every
 * rig_profile_* call but start and take is lock-free. Setting RIG_PROFILE=PATH
 * profiles a whole run and writes PATH, a Chrome trace, at exit. */
typedef struct rig_profile rig_profile;

/* One part of one value's work on a device, as its driver timed it. */
typedef struct rig_profile_record {
  uint32_t device;        /* its device: rig_profile_device(p, device) */
  uint32_t queue;         /* the device's queue it ran on */
  rig_part_kind kind;     /* what the part was */
  uint32_t part;          /* its index among the work's parts */
  const char *name;       /* the function a launch ran, else the kind:
                             "copy", "fill", "words"; lives for the process */
  rig_point point;        /* the work's point (device's slot, value) */
  uint64_t start_ns;      /* CLOCK_MONOTONIC, nanoseconds */
  uint64_t end_ns;        /* at least start_ns */
} rig_profile_record;

#define RIG_PROFILE_RECORDS 16384u /* a device's ring holds this many by default */

/* Starts taking a profile, or goes on with the one being taken. Each
 * device that times work gets its ring of records (at least n, rounded up
 * to a power of two; 0: RIG_PROFILE_RECORDS) here, and a device opened
 * while the profile is taken at its open, so that no submit allocates for
 * the profile: allocates, takes each open device's submit lock in turn
 * (waiting for a submit under way), and a driver may block to set up its
 * clock. Called inside a lock (a callback, a host kernel) it only sets
 * the switch, and each device's next submit makes its ring. Returns
 * nothing: a device without memory for its ring is not timed. */
RIG_API void rig_profile_start(size_t n);
/* Stops timing work; records already written wait for rig_profile_take.
 * Lock-free. */
RIG_API void rig_profile_stop(void);
/* Whether a profile is being taken. Lock-free. */
RIG_API bool rig_profile_active(void);

/* Takes the records every device wrote since the last take, sorted by
 * start, into *out, which the caller owns and frees with
 * rig_profile_free. A driver writes a part's record once it knows the
 * times: the host as its work ends, a GPU's once the driver saw its value
 * reached (a wait, a later submit or the close). RIG_OUT_OF_MEMORY with
 * nothing taken. May lock; allocates. */
RIG_API RIG_MUST_USE rig_status rig_profile_take(rig_profile **out);
/* Returns p's records and writes their count into *n; owned by p.
 * Lock-free. */
RIG_API const rig_profile_record *rig_profile_records(const rig_profile *p, size_t *n);
/* Returns the number of devices p's records name. Lock-free. */
RIG_API uint32_t rig_profile_devices(const rig_profile *p);
/* Returns the name of device i of p ("CPU", "vulkan:0"), owned by p, or
 * NULL for i out of range. Lock-free. */
RIG_API const char *rig_profile_device(const rig_profile *p, uint32_t i);
/* Returns the error bound, in nanoseconds either way, of device i's times
 * against CLOCK_MONOTONIC: 0 for a device timed by that clock itself (the
 * host), a calibration's bound for one whose driver converts its own clock
 * (Vulkan). A span of device i that waits for one of device j starts no
 * earlier than that span's end less the two bounds. 0 for i out of range.
 * Lock-free. */
RIG_API uint64_t rig_profile_clock_error(const rig_profile *p, uint32_t i);
/* Returns the records p lacks because a device's ring was full when its
 * driver wrote them: take more often, or start with a larger n.
 * Lock-free. */
RIG_API uint64_t rig_profile_dropped(const rig_profile *p);
/* Writes p to f as a Chrome trace (the Trace Event Format's JSON object
 * form, which Perfetto and chrome://tracing load): a process per device,
 * a thread per queue, a complete ("X") event per record, named by its
 * function or kind, times in microseconds from p's first start.
 * RIG_IO with the errno's text when f fails; RIG_INVALID for NULL.
 * Blocks on f; takes no lock of rig's. */
RIG_API RIG_MUST_USE rig_status rig_profile_write_chrome(const rig_profile *p, FILE *f);
/* rig_profile_write_chrome into the file at path, made or truncated.
 * RIG_IO when it cannot be written. Blocks on the file system. */
RIG_API RIG_MUST_USE rig_status rig_profile_save_chrome(const rig_profile *p, const char *path);
/* Frees p and its records. NULL is a no-op. Lock-free. */
RIG_API void rig_profile_free(rig_profile *p);

#ifdef __cplusplus
}
#endif
#endif
