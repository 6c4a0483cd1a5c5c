/* SPDX-License-Identifier: MIT */
/* alloc.h: allocations, buffers over them, their claims and stamps, and
 * the memory a copy goes through (borrows, staging, io pages). */
#ifndef RIG_CORE_ALLOC_H
#define RIG_CORE_ALLOC_H

#include "device.h"

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
  _Atomic uint32_t seq;        /* odd while a writer changes the stamps,
                                  its lock, under a submit lock: readers
                                  take no lock (stamps.c) */
  rig__stamp stamps[RIG__STAMPS];
  rig_point unordered[RIG__STAMPS]; /* last unordered use per device, beside
                                       the stamps: reclamation waits for it
                                       (RECLAIM-5), nothing follows it */
  bool stamped;                /* a point was stored since the last clear */
  bool adopted;                /* memory Buffer.of_io or rig_buffer_of_host
                                  named: not the driver's allocation,
                                  charged nothing */
  void (*host_release)(void *); /* rig_buffer_of_host: tells the caller its
                                   memory is free again (reclaim.c) */
  void *host_ctx;
  _Atomic uint32_t maps;       /* drivers' mappings of adopted memory not
                                  yet given back: the memory waits for
                                  them (borrow.c) */
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
/* Each thread's magazine (magazine.c; its fast path, magazine.h). Gives
 * d's queued buffers back as collected memory: this thread's, or every
 * thread's (NULL d: every device's). */
RIG__HIDDEN void rig__mags_drain_mine(const rig_device *d);
RIG__HIDDEN void rig__mags_drain(const rig_device *d);
/* An allocation record over bytes [address, address+n) of io device d's
 * memory as it is (Buffer.of_io): charged nothing, never given to the
 * driver's release (reclaim.c). */
RIG__HIDDEN rig_status rig__alloc_adopt(rig_device *d, uint64_t address, uint64_t n,
                                        rig__alloc **out);
/* Creates an allocation of n bytes on d (reclaim.c). */
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
  if (!b)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: buffer is NULL", fn);
  if (!rig__buffer_is_dead(b) && !atomic_load(&b->alloc->owner) && !rig__is_lost(b->alloc->dev) &&
      !rig__is_lost(b->dev))
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
 * when one is a point its lost device never reached (LMEM-10). Work on
 * own (NULL: the host's own access) follows own's points in device order:
 * they are skipped unlooked at. */
RIG__HIDDEN int rig__stamps_scan(rig__alloc *a, bool write, const rig_device *own,
                                 rig_point *out, int cap);
static inline int rig__stamps_needed_on(rig__alloc *a, bool write, const rig_device *own,
                                        rig_point *out, int cap) {
  /* Memory no device's work ever used, as most host memory a host launch
   * takes: nothing to follow, no lock and no call. A point stamped by a
   * submit this thread is ordered after is seen (release, acquire). */
  if (!__atomic_load_n(&a->stamped, __ATOMIC_ACQUIRE))
    return 0;
  return rig__stamps_scan(a, write, own, out, cap);
}
static inline int rig__stamps_needed(rig__alloc *a, bool write, rig_point *out, int cap) {
  return rig__stamps_needed_on(a, write, NULL, out, cap);
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
/* rig__borrows_release(d, false) for the host and every open device: at an
 * io device's close, its pages that ended borrows still map go back, and
 * with the last of them its file (borrow.c). Not inside a lock. */
RIG__HIDDEN void rig__borrows_release_everywhere(void);

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
#ifdef __clang_analyzer__
/* Its status spelled out for the analyzer, as rig__fail's (internal.h). */
#define rig__io_failed(d, r, n, err)                                                               \
  ((void)rig__io_failed((d), (r), (n), (err)), (r) == RIG_EDGE_FAULT ? RIG_LOST : RIG_IO)
#endif
/* A copy or fill one side of which is io memory; checked by copy.c. */
RIG__HIDDEN rig_status rig__io_copy(rig_buffer *src, rig_buffer *dst, rig_point *out);
RIG__HIDDEN rig_status rig__io_fill(rig_buffer *dst, uint32_t pattern, uint32_t pattern_bytes);


#endif
