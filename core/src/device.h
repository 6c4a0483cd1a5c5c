/* SPDX-License-Identifier: MIT */
/* device.h: a device's record as core keeps it, grouped by the files that
 * own each part, and the calls on devices that core's files share (open,
 * loss, stop, fork, kept values). internal.h says the lock order. */
#ifndef RIG_CORE_DEVICE_H
#define RIG_CORE_DEVICE_H

#include "internal.h"

/* ---- devices (device.c, loader.c, host.c) ---- */
struct rig__plugin;
struct rig__alloc;
typedef struct rig__staging rig__staging;
typedef struct rig__borrow rig__borrow;
typedef struct rig__kept rig__kept;
typedef struct rig__mapping rig__mapping_t;

struct rig_device {
  _Atomic uint32_t refs;
  uint32_t slot;
  /* Made once with the record and kept when it is reused (device.c): a
   * fork's prepare handler may hold them at that moment (fork.c). */
  struct {
    pthread_mutex_t submit;       /* timeline.c: values in acceptance order */
    pthread_mutex_t mem;          /* reclaim.c: cache, collected, budget */
    pthread_mutex_t hang;         /* the hang clock (hang.c) */
  } locks;
  struct rig_device *all_next;    /* every record ever made (device.c) */

  /* Zeroed when the record is reused, from here on. */
  uint64_t start;                 /* the value the timeline started after */

  /* What the open made (open.c): the driver, its handle and its facts. */
  const rig_edge_driver *drv;
  void *h;                        /* the driver's handle */
  struct rig__plugin *plugin;     /* NULL for host and static drivers */
  rig_edge_facts facts;
  char *name;
  const char *iset;
  bool is_host;
  bool own_code;                  /* host, memory or io: rig's own, no mask (RIG__DRIVER_OF) */
  uint32_t io_flags;              /* an io device's open flags (iodev.c) */
  struct rig__machine *machine;   /* another machine's device, or NULL (machine.c) */

  struct {                        /* timeline.c */
    _Atomic uint64_t submitted;
    _Atomic uint64_t signaled;    /* last value read */
    _Atomic uint64_t committed;   /* values released to the device (TL-7) */
    _Atomic uint64_t taken;       /* the last value its driver took */
    _Alignas(64) volatile uint64_t word; /* core's word for the driver */
  } tl;

  struct {                        /* loss and stop (loss.c, open.c, reclaim.c) */
    _Atomic(const char *) lost;   /* reason, or NULL */
    uint64_t lost_at;             /* values after it are dropped */
    char lost_buf[RIG_MESSAGE_BYTES];
    bool stopped;                 /* stop returned, and it reported the last
                                     value its driver took (STOP-1) */
    bool stop_returned;           /* the driver's stop returned */
    _Atomic bool stopping;        /* a call runs, or ran, its stop */
    bool slot_pending;            /* stopped; leaves its slot when drained */
    _Atomic bool drained; /* stopped, and the last one came back:
                                     set under the memory lock, taken by
                                     after_move with none (reclaim.c) */
    bool forked;                  /* inherited by a child of fork: its driver
                                     is never called again (fork.c) */
    struct rig_device *next_stopped; /* reclaim.c's list of stopped devices */
    struct rig_device *next_left; /* slot.c's list of devices that left their
                                     slot with a live driver handle (OPEN-24) */
    _Atomic bool left_live;       /* on that list; written under the registry */
    _Atomic bool handle_gone;     /* its driver handle is being or was
                                     destroyed: no call reads its word */
  } life;

  struct {                        /* waits on other devices (waits.c, borrow.c) */
    rig__mapping_t *mappings;     /* other devices' words its queue maps */
    rig__mapping_t *retired;      /* earlier devices' of a slot (OPEN-21) */
    _Atomic uint64_t queue_waits, host_waits, word_mappings; /* rig_device_stats */
    _Atomic uint64_t borrow_mappings;
  } waits;

  struct {                        /* memory (reclaim.c) */
    _Atomic uint64_t budget;
    _Atomic uint64_t allocated;
    _Atomic(struct rig__alloc *) collected; /* pushed by any release */
    struct rig__alloc *waiting;   /* collected, points not yet reached */
    _Atomic bool any_waiting;     /* waiting != NULL, for a move's look without the lock */
    struct rig__alloc *cache[64]; /* by hash of the charged size */
    uint64_t cached_bytes;
    _Atomic uint64_t live_allocs; /* allocations not yet returned */
    /* Its memory may wait in magazines: not io, not lost, not stopped.
     * Cleared once, by a loss or a stop. */
    _Atomic bool mag_ok;
    rig__staging *staging;        /* host memory it maps for copies (staging.c) */
    _Atomic(rig__borrow *) borrows; /* mappings of borrows gone, to give back */
    _Atomic(rig__kept *) kept;    /* values of released submissions (keep.c) */
  } mem;

  struct {                        /* the hang clock, under locks.hang (hang.c) */
    uint64_t value, since;
  } hang;

  struct {                        /* profiles (profile.c) */
    struct rig__prof *node;       /* its ring, once handed to its driver */
    bool asked;                   /* its ring was made (or refused): under locks.submit */
  } profile;

  struct {                        /* values per key (local.c) */
    _Atomic(void *) *_Atomic values;
    bool dropping, dropped;       /* under local.c's lock */
  } locals;
};

RIG__HIDDEN rig_device *rig__host_device(void);
/* Whether the host's record was made (host.c): a call that must not make
 * it, as the RIG_PROFILE constructor's start, asks first. */
RIG__HIDDEN bool rig__host_made(void);
/* Every open device, each retained, in an array the caller frees after
 * releasing each (open.c); NULL with *n 0 where none or without memory.
 * Takes the registry lock. */
RIG__HIDDEN rig_device **rig__devices_all(size_t *n);

/* ---- profiles (profile.c) ---- */
RIG__HIDDEN extern _Atomic bool rig__profiling; /* a profile is being taken */
/* Hands d's driver its ring; the submit lock held. rig__profile_arm's,
 * and a submit's where no arm came first (a start inside a callback). */
RIG__HIDDEN void rig__profile_ready(rig_device *d);
/* Hands d's driver its ring now where it has none: at rig_profile_start
 * for each open device, at an open while a profile is being taken, and at
 * the host's making, so that no submit allocates for the profile. Takes
 * d's submit lock; allocates; the driver may block. */
RIG__HIDDEN void rig__profile_arm(rig_device *d);
/* d's driver handle is destroyed: its ring takes no more records. */
RIG__HIDDEN void rig__profile_retire(rig_device *d);
/* Whether d's submit must first hand its driver a ring, which an arm
 * missed (a start inside a callback, which may not lock): one relaxed
 * load while no profile is taken, so that a submit pays nothing for it. */
static inline bool rig__profile_due(const rig_device *d) {
  return __builtin_expect(atomic_load_explicit(&rig__profiling, memory_order_relaxed), 0) &&
         !d->profile.asked;
}
RIG__HIDDEN const rig_edge_driver *rig__host_driver(void);
/* Whether the host's submit of w waits for the pool's workers: a launch
 * part of more than one group on a host of more than one core (host.c). */
RIG__HIDDEN bool rig__host_work_spreads(const rig_edge_work *w);
/* Whether d's stop returned and it reported its last value (STOP-1); read
 * by any thread. */
static inline bool rig__is_stopped(const rig_device *d) {
  return __atomic_load_n(&d->life.stopped, __ATOMIC_ACQUIRE);
}
static inline bool rig__is_lost(const rig_device *d) {
  return atomic_load_explicit(&d->life.lost, memory_order_acquire) != NULL;
}
/* Loses d for a driver's failure: a fault with its message (ERR-28),
 * a change left half done as RIG_EDGE_HALF("message") (ERR-23, ERR-29). */
RIG__HIDDEN void rig__lose_for(rig_device *d, int result, const char *message);
/* Loses d with why unless it is lost already (LOSS-10). */
RIG__HIDDEN void rig__lose(rig_device *d, const char *why);
/* Machines (machine.c). Opens name through the plugin driver with args,
 * as rig_device_open does (open.c). */
RIG__HIDDEN rig_status rig__open_as(const char *name, const char *driver, const char *args,
                                    rig_device **out);
/* d, just lost with why, is another machine's: loses its machine with it
 * where d is the host or why says the machine is lost. Takes the machine
 * lock, a leaf under every other but losing's, which it never holds. */
RIG__HIDDEN void rig__machine_lost(rig_device *d, const char *why);
/* Before d closes: a host closes its machine's devices first; any other
 * device of a machine leaves its machine's list. */
RIG__HIDDEN rig_status rig__machine_close(rig_device *d);
/* rig_device_open of "NAME@MACHINE": NAME on that machine's open host. */
RIG__HIDDEN rig_status rig__open_at(const char *name, rig_device **out);
/* Raises the last value read of d to v, which d reached; returns the
 * last value read, v or higher. Lock-free. */
RIG__HIDDEN uint64_t rig__signaled_raise(rig_device *d, uint64_t v);
/* The device's reached value, read from its word or driver where it may
 * be (TL-22, TL-23); else the last value read. */
RIG__HIDDEN uint64_t rig__read_signaled(rig_device *d);
/* Whether d has stopped: its stop returned and it reported the last value
 * its driver took (STOP-1, STOP-6, STOP-7); reads its word. */
RIG__HIDDEN bool rig__check_stopped(rig_device *d);
/* A stopped device returns its memory and, once drained, its slot. */
RIG__HIDDEN void rig__device_stopped(rig_device *d);
RIG__HIDDEN void rig__device_drained(rig_device *d);
/* Returns every collected and cached allocation of a stopped device. */
RIG__HIDDEN void rig__return_all(rig_device *d);
/* Remembers a stopped device with memory out; every move moves its memory
 * (RECLAIM-21) until it is drained. */
RIG__HIDDEN void rig__stopped_add(rig_device *d);
RIG__HIDDEN void rig__move_stopped(void);
/* ---- fork (fork.c; each file's part beside its locks) ---- */
RIG__HIDDEN void rig__fork_handlers(void);
RIG__HIDDEN void rig__fork_release_kept(void);
/* Where a fork handler runs: prepare takes a file's locks, parent and
 * child give them back, child also mends what the parent's other threads
 * left half done (see the top of this file). */
typedef enum { RIG__FORK_PREPARE, RIG__FORK_PARENT, RIG__FORK_CHILD } rig__fork_phase;
/* Locks m in prepare, unlocks it after. */
RIG__HIDDEN void rig__fork_mutex(pthread_mutex_t *m, rig__fork_phase ph);
/* The lock at offset lock (offsetof(rig_device, locks.mem), say) of the
 * host and of every device record ever made, in one order (device.c). */
RIG__HIDDEN void rig__devices_fork(rig__fork_phase ph, size_t lock);
/* The list of device records: no record joins it during a fork. */
RIG__HIDDEN void rig__records_list_fork(rig__fork_phase ph);
/* Calls fn on every device record but the host's, in use or not. */
RIG__HIDDEN void rig__devices_each(void (*fn)(rig_device *));
RIG__HIDDEN void rig__registry_fork(rig__fork_phase ph);    /* open.c */
RIG__HIDDEN void rig__records_fork(rig__fork_phase ph);     /* device.c: the records' pool */
RIG__HIDDEN void rig__losses_fork(rig__fork_phase ph);      /* loss.c */
RIG__HIDDEN void rig__stopped_fork(rig__fork_phase ph);     /* reclaim.c */
RIG__HIDDEN void rig__locals_fork(rig__fork_phase ph);      /* local.c */
RIG__HIDDEN void rig__plugins_fork(rig__fork_phase ph);     /* loader.c */
RIG__HIDDEN void rig__pool_fork(rig__fork_phase ph);        /* pool.c */
RIG__HIDDEN void rig__mags_fork(rig__fork_phase ph);        /* magazine.c */
RIG__HIDDEN void rig__buffers_fork(rig__fork_phase ph);     /* buffer.c */
RIG__HIDDEN void rig__objects_fork(rig__fork_phase ph);     /* lock.c */
RIG__HIDDEN void rig__profile_fork(rig__fork_phase ph);     /* profile.c */
/* Notes a driver table with a fork hook (ABI 1.4); the registry held. */
RIG__HIDDEN void rig__fork_note_driver(const rig_edge_driver *t);
/* Calls fn on every device in the name table; the registry held. */
RIG__HIDDEN void rig__registry_each(void (*fn)(rig_device *));
/* Drops d's values per key once its stop returned (LOCAL-5). */
RIG__HIDDEN void rig__locals_drop(rig_device *d);
/* Loses every open device with why, the registry taken (open.c). */
RIG__HIDDEN void rig__registry_lose(const char *why);
/* Reads and checks the facts of a new handle h of table t (OPEN-33,
 * OPEN-35); RIG_UNAVAILABLE or RIG_INVALID naming name (device.c). */
RIG__HIDDEN rig_status rig__facts_read(const char *name, const rig_edge_driver *t, void *h,
                                       rig_edge_facts *f);
/* A new record for name over the driver's handle h, with one reference;
 * RIG_UNAVAILABLE when out of memory (device.c). */
RIG__HIDDEN rig_status rig__device_make(const char *name, const rig_edge_driver *t, void *h,
                                        const rig_edge_facts *f, rig_device **out);
/* Returns a device record to the pool once unreferenced. */
RIG__HIDDEN void rig__device_free(rig_device *d);
/* Destroys the handle of d, which left its slot, where nothing but the
 * slot and the caller hold d: true; false where another holds it too
 * (OPEN-24); device.c. */
RIG__HIDDEN bool rig__handle_release(rig_device *d);

/* Plugins: find and load librig-driver-NAME.so; the table on success. */
RIG__HIDDEN rig_status rig__plugin_load(const char *driver, struct rig__plugin **out_plugin,
                                        const rig_edge_driver **out_table);
/* The folders plugins are looked for in, in order (loader.c): fn(folder,
 * per_driver, ctx) on each until it returns true; per_driver: driver NAME
 * is in folder/NAME/ (a build tree). Returns whether fn did. *skipped:
 * the first relative entry of RIG_DRIVER_PATH, ignored (NULL: none). */
typedef bool (*rig__folder_fn)(const char *folder, bool per_driver, void *ctx);
RIG__HIDDEN bool rig__driver_folders(rig__folder_fn fn, void *ctx, const char **skipped,
                                     size_t *skipped_len);
/* The drivers the folders of rig__driver_folders hold, by name, comma-
 * separated into out ("none" where none): what an open that found no
 * plugin offers instead (list.c). */
RIG__HIDDEN void rig__driver_names(char *out, size_t n);
/* The path of driver's plugin in folder into path[n]; its length, 0 where
 * it does not fit. */
RIG__HIDDEN size_t rig__plugin_file(const char *folder, bool per_driver, const char *driver,
                                    char *path, size_t n);
/* Opens a plugin's device NAME as rig_device_open does; *created: whether
 * it opened it (open.c). */
RIG__HIDDEN rig_status rig__device_open_probe(const char *name, rig_device **out, bool *created);
/* The file a loaded plugin came from (loader.c). */
RIG__HIDDEN const char *rig__plugin_path(const struct rig__plugin *pl);
/* Checks a table's ABI; what names it (a file) goes in messages. */
RIG__HIDDEN rig_status rig__check_table(const rig_edge_driver *t, const char *what);

/* ---- kept values (keep.c) ---- */
/* Queues a released submission's kept value on d. */
RIG__HIDDEN rig_status rig__keep_queue(rig_device *d, void *value, rig_keep_release release);
/* The same in two steps, for a caller that must not fail when it queues: a
 * record made ahead (NULL when out of memory), and its queueing, which
 * takes it. */
RIG__HIDDEN rig__kept *rig__keep_new(void);
RIG__HIDDEN void rig__keep_push(rig_device *d, rig__kept *k, void *value,
                                rig_keep_release release);
/* Lets go of d's kept values whose work is done; all: at d's stop. */
RIG__HIDDEN void rig__keep_release(rig_device *d, bool all);
/* Lets go the values queued on devices already stopped (keep.c). */
RIG__HIDDEN void rig__keep_release_stopped(void);


/* rig_device_runs_on_host for a device core holds: no call through the PLT on a
 * submit's path. */
static inline bool rig__runs_on_host(const rig_device *d) {
  return d->facts.flags & RIG_EDGE_RUNS_ON_HOST;
}
/* An empty error for a driver call: the 260 bytes are not zeroed, since a
 * driver writes its message only when it fails. */
static inline void rig__edge_error_clear(rig_edge_error *e) {
  e->errnum = 0;
  e->message[0] = '\0';
}

#endif
