/* internal.h: what core's files share. rig__ names are internal to
 * librig-core (hidden visibility); nothing here is ABI.
 *
 * Lock order (outer first): a thread that holds one of these takes only
 * those below it. TSan checks it in CI, and a fork's prepare handler takes
 * them in this order (fork.c), all but the two marked "not at a fork":
 *   the list of device records (device.c: a new record joins it)
 *   every device's submit lock (timeline.c: values in acceptance order),
 *     the host's first, then every device record's; no thread holds two.
 *     The host's runs the program's kernels, whose chunks on the pool's
 *     workers run with no lock held, so it comes before any other.
 *     > an allocation's lock (stamps.c), which only the stamps' writers
 *       take, each under the submit lock of the device it stamps (not at
 *       a fork)
 *   the stopped list (reclaim.c)
 *   registry (device.c: names and slots)
 *   plugins (loader.c)
 *   locals (local.c: keys' init runs under it)
 *   every device's memory lock (reclaim.c, staging.c: cache, collected,
 *     budget, staging)
 *   a device's hang lock (hang.c: its clock; not at a fork)
 *   the launch pool (pool.c)
 *   the magazines' list (magazine.c), then each magazine's busy flag
 *   buffer records (buffer.c), device records, losses (device.c)
 *   objects' locks (lock.c: a submission's run pool)
 *   each driver's own locks: drivers never call core
 * The open mark of a name (device.c, held while a driver opens, DOM-4) is
 * a condition on the registry, not a lock: a submit or a stop may run under
 * it, and no fork handler waits for it.
 * No lock is held while waiting for a point (DOM-3): waits happen before the
 * submit lock is taken or after it is dropped, except on a synchronous device
 * (DOM-6), whose work runs under its submit lock.
 *
 * Fork (docs/fork.md): only the forking thread goes on in the child, so a
 * lock another thread held at the fork would stay held there. Every lock
 * of core is therefore taken by the prepare handler in the order above and
 * given back after the fork, or no child needs it: the allocations' locks
 * are never held at a fork (only under a submit lock), and devices' hang
 * locks (hang.c), a leaf under a submit lock or none, are taken only to
 * watch a live device with a hang bound, which a child's inherited devices
 * are not (lost, or io, or the host: no bound). A lock added to core joins
 * the order and its file's rig__*_fork, or says why no child needs it.
 * Condition variables and state that other threads leave half done are
 * made anew in the child (the registry's openings, the launch pool, the
 * locals' drops); pthread_once needs nothing (glibc restarts one left
 * under way). Readers that must never wait on a writer take no lock:
 * stamps (a sequence), an image's functions (a list that only grows).
 * Drivers take theirs in their fork hook (edge ABI 1.4), after core's.
 */
#ifndef RIG_CORE_INTERNAL_H
#define RIG_CORE_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rig/edge.h>
#include <rig/rig.h>

#define RIG__HIDDEN __attribute__((visibility("hidden")))

/* ---- errors (error.c) ---- */
RIG__HIDDEN rig_status rig__fail(rig_status s, const rig_device *d, uint64_t bytes,
                                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* RIG_LOST with "NAME lost: why" (ERR-36). */
RIG__HIDDEN rig_status rig__lost_error(const rig_device *d);

/* ---- locks and waits (lock.c) ---- */
/* Locks that count toward the thread's inside-a-lock check (DOM-13). */
RIG__HIDDEN void rig__lock(pthread_mutex_t *m);
RIG__HIDDEN void rig__unlock(pthread_mutex_t *m);
RIG__HIDDEN bool rig__inside_lock(void);
/* RIG_INVALID when called inside a lock (DOM-14); every may-lock call
 * starts with it. */
RIG__HIDDEN extern _Thread_local int rig__held __attribute__((tls_model("initial-exec")));
RIG__HIDDEN rig_status rig__inside_lock_fail(const char *fn);
/* Set once this thread's call has assigned a value (timeline.c): from
 * then on the call is not interruptible (rig__interrupted, DOM-10). Every
 * call that may wait starts with rig__may_lock, which clears it. */
RIG__HIDDEN extern _Thread_local bool rig__assigned __attribute__((tls_model("initial-exec")));
static inline rig_status rig__may_lock(const char *fn) {
  rig__assigned = false;
  return __builtin_expect(rig__held == 0, 1) ? RIG_OK : rig__inside_lock_fail(fn);
}
/* The lock of an object (a submission's run pool), from a table a fork
 * takes whole; a leaf. */
RIG__HIDDEN pthread_mutex_t *rig__object_lock(const void *p);
/* Run by a driver callback or hook: counts as holding a lock (DOM-12). */
RIG__HIDDEN void rig__enter_callback(void);
RIG__HIDDEN void rig__leave_callback(void);
/* Whether the wait hook asks to stop; call at least every 200 ms. */
RIG__HIDDEN bool rig__interrupted(void);

/* ---- signals (signals.c) ---- */
RIG__HIDDEN void rig__signals_block(sigset_t *old);
RIG__HIDDEN void rig__signals_restore(const sigset_t *old);
/* A call into a driver, with every signal but the fault ones blocked
 * across it (ERR-9). */
#define RIG__DRIVER(call)                                                        \
  __extension__({                                                                \
    sigset_t rig__old_;                                                          \
    rig__signals_block(&rig__old_);                                              \
    __auto_type rig__r_ = (call);                                                \
    rig__signals_restore(&rig__old_);                                            \
    rig__r_;                                                                     \
  })
/* RIG__DRIVER for d's driver, but for the host's, which is rig's own code
 * and librig-link, not a driver library (ERR-9): its submits run the
 * program's kernels with the thread's own mask, and two sigmask calls would
 * be a host launch's or image load's largest cost after the work itself. */
#define RIG__DRIVER_OF(d, call) ((d)->is_host ? (call) : RIG__DRIVER(call))
/* Region-by-region reclamation's signal blocking (ERR-14, ERR-15). */
typedef struct rig__batch {
  sigset_t old;
  unsigned regions;
  bool on;
} rig__batch;
RIG__HIDDEN void rig__batch_step(rig__batch *b);
RIG__HIDDEN void rig__batch_end(rig__batch *b);

/* ---- slots and points (slot.c) ---- */
typedef struct rig__slot {
  _Atomic(rig_device *) dev; /* latest occupant; holds a reference */
  uint64_t high;             /* highest value earlier occupants were given */
  struct rig__dropped *dropped; /* values earlier occupants never reached */
  bool taken;                /* an occupant holds the slot now */
  bool retired;              /* never reused (OPEN-13..15) */
} rig__slot;
RIG__HIDDEN rig_status rig__slot_take(rig_device *d);   /* under registry */
RIG__HIDDEN void rig__slot_leave(rig_device *d);        /* under registry */
RIG__HIDDEN rig__slot *rig__slot_of(uint32_t slot);
RIG__HIDDEN void rig__slot_take_first(rig_device *host);
/* Whether p is reached, reading the device's word; false for a point a
 * lost device never reached. */
RIG__HIDDEN bool rig__point_reached(rig_point p, bool commit);
typedef enum { RIG__REACHED, RIG__PENDING, RIG__DROPPED } rig__pstate;
RIG__HIDDEN rig__pstate rig__point_state(rig_point p, bool *stopped);
/* Releases d's submitted work to the device before a wait for value v
 * (TL-9, TL-15); block=false only tries, as a lock-free call must. */
RIG__HIDDEN void rig__commit(rig_device *d, uint64_t v, bool block);
/* RIG_INVALID, as fn, for a point no device was given: a slot out of
 * range, or a value its device has not been given yet (a wait on it would
 * never end, or end at some later unrelated work). */
RIG__HIDDEN rig_status rig__point_check(rig_point p, const char *fn);
/* Waits for p on the host (no lock held). */
RIG__HIDDEN rig_status rig__point_wait(rig_point p);

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
  uint32_t io_flags;              /* an io device's open flags (iodev.c) */

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
    bool drained;                 /* stopped, and the last one came back */
    bool forked;                  /* inherited by a child of fork: its driver
                                     is never called again (fork.c) */
    struct rig_device *next_stopped; /* reclaim.c's list of stopped devices */
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

  struct {                        /* values per key (local.c) */
    _Atomic(void *) *_Atomic values;
    bool dropping, dropped;       /* under local.c's lock */
  } locals;
};

RIG__HIDDEN rig_device *rig__host_device(void);
RIG__HIDDEN const rig_edge_driver *rig__host_driver(void);
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
/* The device's reached value, read from its word or driver where it may
 * be (TL-22, TL-23); else the last value read. */
/* Raises the last value read of d to v, which d reached; returns the
 * last value read, v or higher. Lock-free. */
RIG__HIDDEN uint64_t rig__signaled_raise(rig_device *d, uint64_t v);
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
RIG__HIDDEN void rig__registry_fork(rig__fork_phase ph);    /* device.c */
RIG__HIDDEN void rig__records_fork(rig__fork_phase ph);     /* device.c: pool, losing */
RIG__HIDDEN void rig__stopped_fork(rig__fork_phase ph);     /* reclaim.c */
RIG__HIDDEN void rig__locals_fork(rig__fork_phase ph);      /* local.c */
RIG__HIDDEN void rig__plugins_fork(rig__fork_phase ph);     /* loader.c */
RIG__HIDDEN void rig__pool_fork(rig__fork_phase ph);        /* pool.c */
RIG__HIDDEN void rig__mags_fork(rig__fork_phase ph);        /* magazine.c */
RIG__HIDDEN void rig__buffers_fork(rig__fork_phase ph);     /* buffer.c */
RIG__HIDDEN void rig__objects_fork(rig__fork_phase ph);     /* lock.c */
/* Notes a driver table with a fork hook (ABI 1.4); the registry held. */
RIG__HIDDEN void rig__fork_note_driver(const rig_edge_driver *t);
/* Calls fn on every device in the name table; the registry held. */
RIG__HIDDEN void rig__registry_each(void (*fn)(rig_device *));
/* Drops d's values per key once its stop returned (LOCAL-5). */
RIG__HIDDEN void rig__locals_drop(rig_device *d);
/* Returns a device record to the pool once unreferenced. */
RIG__HIDDEN void rig__device_free(rig_device *d);

/* Plugins: find and load librig-driver-NAME.so; the table on success. */
RIG__HIDDEN rig_status rig__plugin_load(const char *driver, struct rig__plugin **out_plugin,
                                        const rig_edge_driver **out_table);
/* Checks a table's ABI; what names it (a file) goes in messages. */
RIG__HIDDEN rig_status rig__check_table(const rig_edge_driver *t, const char *what);

/* ---- allocations and buffers (buffer.c, stamps.c, reclaim.c) ---- */
#define RIG__STAMPS 4
/* Host memory smaller than this goes back to malloc at once (RECLAIM-47). */
#define RIG__HOST_KEEP_MIN (64u * 1024u)
typedef struct rig__stamp {
  uint64_t write;   /* point of the last write by this entry's device, or 0 */
  uint64_t use;     /* point of the last use */
} rig__stamp;

typedef struct rig__alloc {
  _Atomic uint32_t refs;       /* buffers over it, exports included */
  _Atomic bool dead;           /* rig_buffer_free */
  _Atomic uint32_t gen;        /* buffers of earlier generations are dead:
                                  a consume starts a new one (claim.c) */
  _Atomic uint32_t claims;     /* claims on the memory (PRE-24) */
  _Atomic uint64_t owner;      /* the thread holding it exclusive, or 0 */
  bool early;                  /* collected by rig_buffer_free */
  _Atomic bool memory_gone;    /* its memory went back; the record stays */
  _Atomic uint32_t hosts;      /* the host's own accesses in flight, which
                                  take no point, and work being submitted
                                  until its point is stamped: so
                                  rig_buffer_free's memory waits for them
                                  here (reclaim.c, timeline.c) */
  rig_device *dev;             /* the device that holds the memory */
  rig_kind kind;
  uint64_t bytes;              /* what create asked, rounded to words */
  uint64_t length;             /* what create asked: a consume's buffer */
  uint64_t charge;             /* what counts in the budget */
  rig_edge_alloc mem;
  pthread_mutex_t lock;        /* stamps' writers, under a submit lock */
  _Atomic uint32_t seq;        /* odd while a writer changes the stamps:
                                  readers take no lock (stamps.c) */
  rig__stamp stamps[RIG__STAMPS];
  rig_point unordered[RIG__STAMPS]; /* last unordered use per device, beside
                                       the stamps: reclamation waits for it
                                       (RECLAIM-5), nothing follows it */
  bool stamped;                /* a point was stored since the last clear */
  bool adopted;                /* memory Buffer.of_io named: not the
                                  driver's allocation, charged nothing */
  bool keepable;               /* may wait in a magazine: its device's own
                                  kind, not io, not small host memory, not
                                  freed early (magazine.c) */
  struct rig__alloc *next;     /* collected / waiting / cache lists */
} rig__alloc;

struct rig_buffer {
  _Atomic uint32_t refs;
  rig_access access;
  rig__alloc *alloc;
  rig_device *dev;             /* the device the buffer is on */
  uint64_t offset, length;
  uint32_t gen;                /* the allocation's generation it was made in */
  const rig_edge_alloc *mem;   /* the address its device's work uses */
  rig__borrow *borrow;         /* a borrow's mapping, or NULL */
  struct rig_buffer *next;     /* the free pool */
};

/* Returns a buffer record to the pool (buffer.c). */
RIG__HIDDEN void rig__buffer_unrecord(rig_buffer *b);
/* Counts a collection, for the collector's third round (reclaim.c). */
RIG__HIDDEN extern _Atomic bool rig__collecting; /* a collector is set */
RIG__HIDDEN void rig__count_collection(void);
static inline void rig__note_collection(void) {
  if (atomic_load_explicit(&rig__collecting, memory_order_relaxed))
    rig__count_collection();
}
/* Each thread's magazine (magazine.c; its fast path, magazine.h). Gives d's queued buffers back as collected memory: this thread's, or
 * every thread's (NULL d: every device's). */
RIG__HIDDEN void rig__mags_drain_mine(const rig_device *d);
RIG__HIDDEN void rig__mags_drain(const rig_device *d);
/* Creates an allocation of n bytes on d (reclaim.c). */
/* An allocation record over bytes [address, address+n) of io device d's
 * memory as it is (Buffer.of_io): charged nothing, never given to the
 * driver's release (reclaim.c). */
RIG__HIDDEN rig_status rig__alloc_adopt(rig_device *d, uint64_t address, uint64_t n,
                                        rig__alloc **out);
RIG__HIDDEN rig_status rig__alloc_create(rig_device *d, uint64_t n, rig_kind kind,
                                         rig__alloc **out);
/* Drops one reference of an allocation: at the last it is collected. */
RIG__HIDDEN void rig__alloc_release(rig__alloc *a);
/* Collects a at rig_buffer_free, with buffers still over it (RECLAIM-4). */
RIG__HIDDEN void rig__alloc_free_early(rig__alloc *a);
/* Runs round (1..3) of reclamation on d's budget (RECLAIM-53..55). */
RIG__HIDDEN void rig__reclaim_round(rig_device *d, int round);
/* Moves every open device's collected memory (RECLAIM-19). */
RIG__HIDDEN void rig__move_everywhere(void);
/* Retains up to max open devices (the host aside) into list: their count. */
RIG__HIDDEN size_t rig__devices_retain(rig_device **list, size_t max);
/* What a mapping the driver had no room for frees before its one retry
 * (RECLAIM-60..62). RIG_INTERRUPTED where the wait hook ended a wait. */
RIG__HIDDEN rig_status rig__reclaim_mappings(void);
/* Moves d's collected memory whose points are reached (RECLAIM-16). */
RIG__HIDDEN void rig__move_collected(rig_device *d);
RIG__HIDDEN rig_buffer *rig__buffer_new(rig__alloc *a, rig_device *on, uint64_t off,
                                        uint64_t len, rig_access access);

/* Claims (claim.c). */
/* This thread's id for exclusive claims, never 0. */
RIG__HIDDEN uint64_t rig__thread_id(void);
/* Whether b is dead: freed, or made before a consume (PRE-26). Inline: a
 * submit asks it of every buffer. */
static inline bool rig__buffer_is_dead(const rig_buffer *b) {
  return atomic_load(&b->alloc->dead) || b->gen != atomic_load(&b->alloc->gen);
}
/* rig__buffer_usable's answer where the quick look fails (buffer.c). */
RIG__HIDDEN rig_status rig__buffer_check(const rig_buffer *b, const char *fn);
/* RIG_INVALID unless b is a live buffer that no other thread's claim holds
 * exclusive; RIG_LOST if its memory's device or its own device is lost.
 * The usual answer, RIG_OK, takes a few loads and no call. */
static inline rig_status rig__buffer_usable(const rig_buffer *b, const char *fn) {
  if (b && !rig__buffer_is_dead(b) && !atomic_load(&b->alloc->owner) &&
      !rig__is_lost(b->alloc->dev) && !rig__is_lost(b->dev))
    return RIG_OK;
  return rig__buffer_check(b, fn);
}
/* Marks a host access of b's memory in flight, for its length: the host's
 * own reads and writes take no point, so a rig_buffer_free by another
 * thread returns the memory only once they end (the move skips memory with
 * accesses in flight). False, with nothing marked, for a dead b: the mark
 * comes first, then the look, as the free marks dead, then looks. */
static inline bool rig__host_enter(rig_buffer *b) {
  atomic_fetch_add(&b->alloc->hosts, 1);
  if (!rig__buffer_is_dead(b))
    return true;
  atomic_fetch_sub(&b->alloc->hosts, 1);
  return false;
}
static inline void rig__host_leave(rig_buffer *b) { atomic_fetch_sub(&b->alloc->hosts, 1); }
/* rig__host_enter for two buffers; RIG_INVALID, as fn, for a dead one. */
RIG__HIDDEN rig_status rig__host_enter2(rig_buffer *a, rig_buffer *b, const char *fn);

/* Releases the holds collected since the last move (RECLAIM-20). */
RIG__HIDDEN void rig__holds_release(void);

/* Stamps (stamps.c). */
/* Writes into out (room for cap) the points a read (write=false) or a write
 * of a must follow, skipping points reached; returns how many, or RIG_LOST
 * when one is a point its lost device never reached (LMEM-10). */
RIG__HIDDEN int rig__stamps_scan(rig__alloc *a, bool write, rig_point *out, int cap);
static inline int rig__stamps_needed(rig__alloc *a, bool write, rig_point *out, int cap) {
  /* Memory no device's work ever used, as most host memory a host launch
   * takes: nothing to follow, no lock and no call. A point stamped by a
   * submit this thread is ordered after is seen (release, acquire). */
  if (!__atomic_load_n(&a->stamped, __ATOMIC_ACQUIRE))
    return 0;
  return rig__stamps_scan(a, write, out, cap);
}
/* Records that work at point p read or wrote a (ORDER-18); waited are the
 * points of other devices the work waited for. */
RIG__HIDDEN void rig__stamps_add(rig__alloc *a, rig_point p, bool write,
                                 const rig_point *waited, uint32_t nwaited);
/* Records an unordered use at p, beside the stamps (ORDER-23, RECLAIM-5). */
RIG__HIDDEN void rig__stamps_add_unordered(rig__alloc *a, rig_point p);
/* Whether every point of a's stamps is reached or dropped (RECLAIM-5). */
RIG__HIDDEN bool rig__stamps_done(rig__alloc *a);
/* Empties a's stamps, for memory reused from the cache. */
RIG__HIDDEN void rig__stamps_clear(rig__alloc *a);
/* Whether a holds no point at all, read without its lock: for memory
 * that no other thread can reach (a magazine's). */
static inline bool rig__stamps_empty(const rig__alloc *a) {
  return !__atomic_load_n(&a->stamped, __ATOMIC_RELAXED);
}
/* Waits on the host for what a host read or write of a must follow. */
RIG__HIDDEN rig_status rig__stamps_wait(rig__alloc *a, bool write);

/* ---- hangs and spreading losses (hang.c) ---- */
/* A wait's look at d: its hang clock, and its queue's waits on lost
 * devices (HANG-2, LOSS-6). */
RIG__HIDDEN void rig__watch(rig_device *d);
/* Whether d's queue waits, in work not yet reached, for a point a lost
 * device never reached; writes that device's name (waits.c). */
RIG__HIDDEN bool rig__waits_on_lost(rig_device *d, char *who, size_t n);

/* ---- launches (image.c, pool.c, submit.c) ---- */
/* The driver's handle of f. */
RIG__HIDDEN void *rig__function_handle(const rig_function *f);
/* The host's performance cores, counted once (PERF-1..5). */
RIG__HIDDEN unsigned rig__perf_cores(void);
/* Runs fn(params, first, end) over groups * per_group threads, in whole
 * groups, on this thread and the pool; returns once all ran (LAUNCH-1..10). */
RIG__HIDDEN void rig__pool_launch(void *fn, const void *params, uint64_t groups,
                                  uint64_t per_group);

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

/* ---- borrows (borrow.c) ---- */
RIG__HIDDEN void rig__borrow_retain(rig__borrow *x);
/* Drops a buffer's hold on a mapping; the last queues it (STAMP-17). */
RIG__HIDDEN void rig__borrow_drop(rig__borrow *x);
/* The memory record r's work uses for b, or NULL where r's work does not
 * address b as it is: b's own mapping for b's device, the allocation's
 * record for its owner, a peer of it, or a device that runs on the host. */
RIG__HIDDEN const rig_edge_alloc *rig__mem_for(const rig_device *r, const rig_buffer *b);
/* The host's address of b's first byte, or NULL where the host does not
 * address b: its allocation's, or the io pages a borrow maps (HACC-5). */
RIG__HIDDEN void *rig__host_bytes(const rig_buffer *b);
/* Gives back d's mappings of borrows gone whose work is done; all: at its
 * stop (STOP-3, STOP-4). */
RIG__HIDDEN void rig__borrows_release(rig_device *d, bool all);

/* ---- staging (staging.c) ---- */
/* A region of at least n bytes of host memory mapped on g, held for one
 * copy; NULL with the error set. */
RIG__HIDDEN rig__staging *rig__staging_take(rig_device *g, uint64_t n);
/* Gives s back to g's staging, free once until is reached. */
RIG__HIDDEN void rig__staging_put(rig_device *g, rig__staging *s, rig_point until);
RIG__HIDDEN void *rig__staging_host(rig__staging *s);
RIG__HIDDEN const rig_edge_alloc *rig__staging_map(rig__staging *s);
/* Returns g's staging that no copy holds to the host (RECLAIM-10, 55, 72);
 * all: every region but held ones. */
RIG__HIDDEN void rig__staging_release(rig_device *g, bool all);
/* Moves n bytes of host memory src into b at off through staging: the
 * point of the device's step (copy.c). */
RIG__HIDDEN rig_status rig__stage_in(const void *src, rig_buffer *b, uint64_t off, uint64_t n,
                                     rig_point *out);
/* Moves n bytes of b at off into host memory dst through staging, and
 * returns once they are there. */
RIG__HIDDEN rig_status rig__stage_out(rig_buffer *b, uint64_t off, uint64_t n, void *dst,
                                      rig_point *out);

/* The device step of a staged copy: b's device's copy engine between b's
 * bytes [off, off+n) and the staging s, toward b (in) or out of it. */
RIG__HIDDEN rig_status rig__stage_step(rig_buffer *b, uint64_t off, uint64_t n, rig__staging *s,
                                       bool in, rig_point *out);

/* ---- io devices' memory (io.c) ---- */
/* Whether b is io memory as it is: an io device's, and no borrow of it. */
RIG__HIDDEN bool rig__io_memory(const rig_buffer *b);
/* The host's read (get) and write (put) of n bytes of io buffer b at off,
 * once the points they follow are reached; RIG_IO, no loss, on failure. */
RIG__HIDDEN rig_status rig__io_get(rig_buffer *b, uint64_t off, void *dst, uint64_t n);
RIG__HIDDEN rig_status rig__io_put(rig_buffer *b, uint64_t off, const void *src, uint64_t n);
/* What core keeps of an io device (iodev.c): the flags of an open's
 * argument string; RIG_INVALID for a second open asking other flags; a
 * failure of its library, RIG_IO, or the device's loss for a fault. */
RIG__HIDDEN uint32_t rig__io_flags(const char *args);
RIG__HIDDEN rig_status rig__io_reopen(rig_device *d, const char *args);
RIG__HIDDEN rig_status rig__io_failed(rig_device *d, int r, uint64_t n, const rig_edge_error *err);
/* A copy or fill one side of which is io memory; checked by copy.c. */
RIG__HIDDEN rig_status rig__io_copy(rig_buffer *src, rig_buffer *dst, rig_point *out);
RIG__HIDDEN rig_status rig__io_fill(rig_buffer *dst, uint32_t pattern, uint32_t pattern_bytes);

/* ---- waits on other devices (waits.c) ---- */
typedef struct rig__mapping rig__mapping;
#define RIG__MAX_WAITS 16
/* The points one submit's work follows, at most one per slot. */
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

#endif
