/* SPDX-License-Identifier: MIT */
/* rig/edge.h: the driver ABI of rig, version 1 (1.9).
 *
 * A driver is a shared object, librig-driver-NAME.so, that defines one entry
 * symbol with RIG_EDGE_DRIVER(table). Core (librig-core) finds it at open time
 * on RIG_DRIVER_PATH, then in $libdir/rig/drivers, dlopens it and checks the
 * table's ABI major version and size before it calls anything.
 *
 * The split (see docs/edge.md): core owns all meaning (names, slots, values,
 * stamps and order, budgets, loss, stops). A driver owns execution: it moves
 * bytes, runs code and makes one 64-bit word say how far its device has got.
 * It is told, for each piece of work, the value to signal when the work is
 * done and the words to wait on before it starts. It never decides an order
 * and never marks its device lost: it returns RIG_EDGE_FAULT with a message,
 * and core loses the device with that message (LOSS-1, ERR-28).
 *
 * Compatibility: the table begins with abi_major, abi_minor and size. A newer
 * core uses an older driver of the same major (it never calls an entry past
 * the driver's size); a driver of another major is refused at open with a
 * message that names its file. New entries are only ever appended. Every
 * struct core passes to a driver begins with its size for the same reason.
 *
 * A driver includes this header only: never <rig/rig.h>.
 */
#ifndef RIG_EDGE_H
#define RIG_EDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RIG_EDGE_BUILDING)
#define RIG_EDGE_API __attribute__((visibility("default")))
#else
#define RIG_EDGE_API
#endif
/* Plugins export only their entry symbol. */
#define RIG_EDGE_PLUGIN_EXPORT __attribute__((visibility("default")))

#define RIG_EDGE_ABI_MAJOR 1u
#define RIG_EDGE_ABI_MINOR 9u

/* The one entry symbol a plugin defines. */
#define RIG_EDGE_ENTRY rig_edge_entry_v1
#define RIG_EDGE_ENTRY_NAME "rig_edge_entry_v1"
/* Define the entry symbol of a plugin, returning its static driver table. */
#define RIG_EDGE_DRIVER(table)                                                  \
  RIG_EDGE_PLUGIN_EXPORT const struct rig_edge_driver *RIG_EDGE_ENTRY(void);    \
  RIG_EDGE_PLUGIN_EXPORT const struct rig_edge_driver *RIG_EDGE_ENTRY(void) {   \
    return &(table);                                                            \
  }
typedef const struct rig_edge_driver *(*rig_edge_entry_fn)(void);
/* The fields every driver table begins with: the ABI the driver was built
 * against, its table's size, and its name. Core refuses another major and
 * calls no entry past size (a newer core runs an older driver of the same
 * major). It spells the fields abi_major, abi_minor, size and name as
 * designated initialisers, and nothing else: it changes no layout.
 *   static const rig_edge_driver table = {RIG_EDGE_DRIVER_INIT("memory"), .open = ...};
 */
#define RIG_EDGE_DRIVER_INIT(driver_name)                                       \
  .abi_major = RIG_EDGE_ABI_MAJOR, .abi_minor = RIG_EDGE_ABI_MINOR,              \
  .size = sizeof(struct rig_edge_driver), .name = (driver_name)

/* ---- results ------------------------------------------------------------ */

/* What a driver function returns. Only RIG_EDGE_FAULT and RIG_EDGE_HALF lose
 * the device; the others leave it serving (ERR-26). */
enum rig_edge_result {
  RIG_EDGE_OK = 0,
  RIG_EDGE_FAULT = -1,       /* the device faulted; message is the Lost reason */
  RIG_EDGE_NO_ROOM = -2,     /* no memory or mapping room: core reclaims, retries */
  RIG_EDGE_UNSUPPORTED = -3, /* this device cannot do that (Invalid_argument) */
  RIG_EDGE_HALF = -4,        /* failed half-way through a change of memory or
                                code: core loses the device with the text (ERR-23) */
  RIG_EDGE_IO = -5,          /* an io library's error, errno set; no loss (ERR-26) */
  RIG_EDGE_TIMEOUT = -6,     /* a wait's slice ended before the value */
  RIG_EDGE_UNAVAILABLE = -7, /* open: no library, no such device (Error why) */
};

#define RIG_EDGE_MESSAGE_BYTES 256
/* Where a failing driver function writes its reason. Core passes one; it is
 * never NULL. */
typedef struct rig_edge_error {
  int errnum;                          /* errno for RIG_EDGE_IO, else 0 */
  char message[RIG_EDGE_MESSAGE_BYTES];
} rig_edge_error;

/* ---- facts --------------------------------------------------------------- */

enum rig_edge_flag {
  RIG_EDGE_MAPS_HOST = 1u << 0, /* maps host memory (MACH-15, MACH-23) */
  RIG_EDGE_HOST_ADDRESSES = 1u << 1, /* the host addresses its memory (MACH-14) */
  RIG_EDGE_OWN_WORD = 1u << 2, /* keeps its word itself: core reads it
                                        through signaled() (STOP-6) */
  RIG_EDGE_QUEUE_WAITS = 1u << 3, /* its queues wait on other devices' words
                                        (SUBMIT-2); needs map_word */
  RIG_EDGE_MAY_BLOCK = 1u << 4, /* room/submit/commit may block (DOM-5) */
  RIG_EDGE_RUNS_ON_HOST = 1u << 5, /* its work is this process's code (PROP-26) */
  RIG_EDGE_COMPUTES = 1u << 6, /* it runs work (false for io devices) */
  /* Submit runs the work before it returns (DOM-6), as the memory
     driver's does: it stores work->value in the word core bound
     (rig_edge_word_store) before it returns RIG_EDGE_OK, and nothing
     stores it later. Since ABI 1.9 a submit that returns with that word
     below its value is a driver fault: core loses the device with a
     message that says so, where it used to wait for the value for good.
     An OWN_WORD driver's signaled() must give the value by then too
     (core does not check it: that would be a call per submit). */
  RIG_EDGE_SYNCHRONOUS = 1u << 7,
  /* ABI 1.8: core commits a value at its submit, in the same hold of
     ERR-9's mask, where every value committed before is known reached
     (the device is idle); otherwise the work waits for k values or a
     wait's commit (TL-7..10). A core before 1.8 ignores it. */
  RIG_EDGE_COMMIT_IDLE = 1u << 8,
};

enum rig_edge_part_kind {
  RIG_EDGE_PART_COPY = 0,
  RIG_EDGE_PART_FILL = 1,
  RIG_EDGE_PART_LAUNCH = 2,
  RIG_EDGE_PART_WORDS = 3,
  RIG_EDGE_PART_KINDS = 4,
};
#define RIG_EDGE_NO_QUEUE 0xffu
#define RIG_EDGE_MAX_QUEUES 4u

/* What a device is (ABI 1.5), rig_device_type of <rig/rig.h> with the same
 * values. A driver of an older minor leaves facts.type 0: unknown. */
enum rig_edge_device_type {
  RIG_EDGE_TYPE_UNKNOWN = 0,
  RIG_EDGE_TYPE_CPU = 1,    /* runs work on host processors */
  RIG_EDGE_TYPE_GPU = 2,    /* a graphics or compute processor */
  RIG_EDGE_TYPE_MEMORY = 3, /* memory that copies and fills, no code */
  RIG_EDGE_TYPE_IO = 4,     /* an io library's target (a file) */
  RIG_EDGE_TYPE_REMOTE = 5, /* a device of another machine or process */
};

/* The facts a device states at open. Core zeroes the struct, sets size
 * and, for a driver of ABI 1.9 on (its table's abi_minor), sets every
 * part_queue to RIG_EDGE_NO_QUEUE, so that a kind the driver leaves unset
 * has no queue (before 1.9 it read as queue 0, and still does for an
 * older driver). It calls facts() once, then checks them (OPEN-35):
 * alignment a power of two and at least 1, arch non-empty for a computing
 * device, bus of the form DDDD:BB:DD.F or empty, no kind on a queue past
 * queues, a kind on a queue only where COMPUTES is stated and a launch
 * only where the driver has load. A refusal names the rule and the
 * field. Which facts core trusts without a check, and what breaks when
 * they lie: docs/edge.md. */
typedef struct rig_edge_facts {
  uint32_t size;               /* set by core: sizeof(rig_edge_facts) it knows */
  uint32_t flags;              /* enum rig_edge_flag */
  char arch[64];               /* "sm_89", "gfx1100", "memory" (PROP-12) */
  char bus[32];                /* PCI function "0000:03:00.0", or "" (PROP-24) */
  uint64_t alignment;          /* power of two (PROP-28) */
  uint64_t cache_bytes;        /* last-level cache, 0 where unknown (PROP-32) */
  uint64_t budget;             /* the start budget (RECLAIM-66) */
  uint32_t hang_ms;            /* 0: work bounded elsewhere (HANG-1) */
  uint32_t commit_k; /* informative: commits at least every k values;
                                  rig never reads it */
  uint32_t queues;             /* number of queues, at most RIG_EDGE_MAX_QUEUES */
  uint8_t part_queue[RIG_EDGE_PART_KINDS]; /* queue per part kind, or NO_QUEUE */
  uint32_t type;               /* ABI 1.5: enum rig_edge_device_type; 0 unknown */
  /* ABI 1.9: what the device is called by its maker ("" unknown) and the
   * driver's own version ("" unknown), which rig info shows. A driver
   * before 1.9 leaves them empty (core zeroes the facts). Each is read as
   * a NUL-terminated string, cut at its last byte where it is not. */
  char model[64];
  char version[32];
} rig_edge_facts;

/* ---- memory ------------------------------------------------------------- */

enum rig_edge_kind {
  RIG_EDGE_KIND_DEVICE = 0, /* the device's own memory */
  RIG_EDGE_KIND_PINNED = 1, /* host memory the device maps; counts in host's budget */
  RIG_EDGE_KIND_MAPPED = 2, /* device memory the host addresses */
};

/* An allocation as a driver describes it. */
typedef struct rig_edge_alloc {
  void *handle;          /* the driver's own handle */
  void *host;            /* host address, or NULL where the host does not address it */
  uint64_t address;      /* device address, 0 for handle-only memory */
  uint64_t bytes;        /* bytes the driver took (counted in the budget) */
} rig_edge_alloc;

/* A range of memory named in work: an allocation and an offset in it. */
typedef struct rig_edge_range {
  const rig_edge_alloc *alloc;
  uint64_t offset;
  uint64_t bytes;
} rig_edge_range;

/* ---- work ---------------------------------------------------------------- */

typedef struct rig_edge_part {
  uint32_t kind;  /* enum rig_edge_part_kind */
  uint32_t queue; /* from facts.part_queue */
  /* Per queue q, 1 + the index of the last part on q this part must follow
   * (ORDER-3, ORDER-5), or 0. Parts of one queue run in order; a driver
   * with one queue may ignore it. */
  uint32_t follows[RIG_EDGE_MAX_QUEUES];
  union {
    struct { rig_edge_range src, dst; } copy;
    struct { rig_edge_range dst; uint32_t pattern; uint32_t pattern_bytes; } fill;
    struct {
      void *function;                 /* from resolve */
      const void *params;             /* parameter block, refs stored */
      uint32_t params_bytes;
      uint32_t shared_bytes;          /* per group; 0 where none is asked */
      uint64_t groups[3], threads[3];
    } launch;
    struct { const uint32_t *words; uint32_t count; } words;
  } u;
} rig_edge_part;

/* A wait in a device's queue: until the word of another device, mapped with
 * map_word (or, for a peer that keeps its own word, map_peer), holds at
 * least value (SUBMIT-2). */
typedef struct rig_edge_wait {
  void *mapping;
  uint64_t value;
} rig_edge_wait;

typedef struct rig_edge_work {
  uint32_t size;                 /* sizeof(rig_edge_work) core knows */
  uint32_t nparts;
  uint32_t nwaits;
  uint64_t value;                /* signal this value when all parts are done */
  const rig_edge_part *parts;
  const rig_edge_wait *waits;
  /* ABI 1.6 (read it only where size reaches it; rig_edge_work_label
   * does): per part, the label a profile names it by (rig_edge_span), or
   * NULL where core gives none. */
  const uint32_t *labels;
} rig_edge_work;

/* ---- the driver table ---------------------------------------------------- */

typedef struct rig_edge_io rig_edge_io;
typedef struct rig_edge_profile rig_edge_profile;

/* Every function takes the handle open() made. Each may be NULL where the
 * comment says so; core then does what the comment says instead. Core calls
 * the functions of one handle from any thread, but serialises submit and
 * commit per device (DOM-5) and never calls stop concurrently with another
 * function of the handle. */
typedef struct rig_edge_driver {
  uint32_t abi_major;   /* RIG_EDGE_ABI_MAJOR */
  uint32_t abi_minor;   /* RIG_EDGE_ABI_MINOR */
  uint32_t size;        /* sizeof(rig_edge_driver) the driver was built with */
  uint32_t reserved;
  const char *name;     /* "memory", "vulkan", ... */

  /* Open the device the argument names ("0" in "vulkan:0"; may be ""). A
   * missing vendor library or device is RIG_EDGE_UNAVAILABLE with a reason. */
  int (*open)(const char *args, void **out_handle, rig_edge_error *err);
  /* Fill *out (OPEN-33, OPEN-35). A fault fails the open "NAME: reason". */
  int (*facts)(void *h, rig_edge_facts *out, rig_edge_error *err);
  /* End everything the device needs only to run work (PROP-6). Called once,
   * by close or by an open of the name (STOP-9). It may return before the
   * device reports its last value. The handle is not used afterwards except
   * by release/unmap of memory that is still out and by signaled(). */
  int (*stop)(void *h, rig_edge_error *err);
  /* Free what is left of the handle once every allocation is back. May be
   * NULL. */
  void (*destroy)(void *h);

  /* The timeline word. Unless facts say OWN_WORD, core gives the driver a
   * word in host memory, which the driver sets to each value once its work is
   * done (release order), before any work is submitted. */
  int (*bind_word)(void *h, volatile uint64_t *word, rig_edge_error *err);
  /* OWN_WORD drivers: read the last value reached (TL-22). */
  int (*signaled)(void *h, uint64_t *out_value, rig_edge_error *err);
  /* Block until the device reached value, or timeout_ms passed
   * (RIG_EDGE_TIMEOUT). Signals may be unblocked only inside it (ERR-11).
   * NULL: core polls the word, sleeping briefly. */
  int (*wait)(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err);
  /* QUEUE_WAITS drivers: map another device's word so that the queue can
   * wait on it, and give the mapping back. unmap_word also gives back
   * map_peer's mappings (ABI 1.2). */
  int (*map_word)(void *h, volatile uint64_t *word, void **out_mapping,
                  rig_edge_error *err);
  void (*unmap_word)(void *h, void *mapping);

  /* The queue. room: may the work go now? NULL: always. */
  int (*room)(void *h, const rig_edge_work *work, bool *out_room);
  /* Take the work: run it after its waits, then signal work->value. A failure
   * loses the device (SUBMIT-30). */
  int (*submit)(void *h, const rig_edge_work *work, rig_edge_error *err);
  /* Release submitted work up to value to the device (TL-9). NULL: submit
   * commits. */
  int (*commit)(void *h, uint64_t value, rig_edge_error *err);
  /* Grow the queues to take work of this many bytes (SUBMIT-19). May be NULL. */
  int (*grow)(void *h, uint64_t bytes, rig_edge_error *err);

  /* Memory. allocate: RIG_EDGE_NO_ROOM makes core reclaim and retry
   * (RECLAIM-52); RIG_EDGE_HALF loses the device (ERR-23). */
  int (*allocate)(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                  rig_edge_error *err);
  int (*release)(void *h, rig_edge_alloc *alloc, rig_edge_error *err);
  /* Map host memory (page-aligned unless the device runs on host) for a
   * borrow; NULL where the device maps none. */
  int (*map)(void *h, void *host, uint64_t bytes, rig_edge_alloc *out,
             rig_edge_error *err);
  int (*unmap)(void *h, rig_edge_alloc *alloc, rig_edge_error *err);
  /* Whether h maps the memory of other, a handle of the same driver
   * (MACH-17). Waits for nothing. NULL: never. */
  bool (*peer)(void *h, void *other);

  /* Code. NULL load: the device loads no code (OPEN-42). */
  int (*load)(void *h, const void *bytes, size_t n, void **out_image,
              uint64_t *out_code_bytes, rig_edge_error *err);
  int (*resolve)(void *h, void *image, const char *name, void **out_function,
                 rig_edge_error *err);
  int (*unload)(void *h, void *image, rig_edge_error *err);

  /* The record compiled code calls under key, or NULL (PROP-39). */
  const void *(*capability)(void *h, const char *key);

  /* io drivers only (OPEN-37); NULL for every other driver. */
  const rig_edge_io *io;

  /* ABI 1.1 (core reads it only where size reaches it). May the device run
   * this work? Called by rig_run_submit before a value is taken: a refusal,
   * RIG_EDGE_UNSUPPORTED with the reason, makes the submit RIG_INVALID,
   * with nothing run and nothing lost (VALID-20). NULL: it runs any work
   * core lets through. Waits for nothing; allocates nothing. */
  int (*check)(void *h, const rig_edge_work *work, rig_edge_error *err);

  /* ABI 1.2 (core reads it only where size reaches it). Can h's queue wait
   * on the word of peer, another handle of this same table whose device
   * keeps its own word (OWN_WORD)? RIG_EDGE_OK with *out_mapping, which
   * core passes in rig_edge_wait.mapping exactly as one of map_word's and
   * gives back with unmap_word(h, mapping) once the queue has passed the
   * waits that used it, or at h's stop (OPEN-20..23); until then the
   * mapping keeps what the queue waits on alive, even past peer's stop.
   * Core commits the peer's value before it hands h a wait on it (TL-9).
   * RIG_EDGE_UNSUPPORTED: it cannot (another VkDevice, say); core waits
   * for the point on the host instead (SUBMIT-3), and nothing is lost.
   * Any other result is taken as RIG_EDGE_UNSUPPORTED. Called under h's
   * submit lock, never concurrently with h's stop, but possibly with
   * peer's; waits for nothing. NULL: core waits on the host for every
   * point of an OWN_WORD device. */
  int (*map_peer)(void *h, void *peer, void **out_mapping, rig_edge_error *err);

  /* ABI 1.4 (core reads it only where size reaches it). A fork of the
   * process (docs/fork.md): core calls it once per table, from its own
   * pthread_atfork handlers, with RIG_EDGE_FORK_PREPARE once it holds
   * every lock of its own, then with RIG_EDGE_FORK_PARENT in the parent or
   * RIG_EDGE_FORK_CHILD in the child. Prepare takes every lock of the
   * driver that the child may need: those of a live io device's handle,
   * which the child keeps using (STOP-23), and those an open takes (the
   * child's own devices, STOP-26); parent and child give them back, and
   * child may also mend what the parent's other threads left half done.
   * The child calls no other handle of the parent's (STOP-20). It runs
   * with signals blocked, calls nothing of core's and waits for no work.
   * NULL: the child needs no lock of the driver. A driver that registers
   * pthread_atfork itself takes its locks before core takes its own,
   * against the lock order (core calls drivers holding its locks). */
  void (*fork)(uint32_t phase);

  /* ABI 1.5 (core reads it only where size reaches it). The devices this
   * driver offers here, for rig_device_list: writes into names[0..cap) the
   * ARGS of each ("0" for "vulkan:0"; what open() takes), NUL-terminated,
   * and sets *n to how many there are, which may exceed cap (core asks
   * again with more room). Called with no handle open and from any thread;
   * it may load the vendor library, and opens nothing that outlives it.
   * RIG_EDGE_UNAVAILABLE with the reason where none can be offered (no
   * vendor library, no device); RIG_EDGE_OK with *n 0 for a driver whose
   * devices need more than a list can name (an io library's target).
   * NULL: core probes the one device "DRIVER:0". */
  int (*devices)(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err);

  /* ---- ABI 1.6: profiles (docs/profiling.md) ---- */
  /* Hands the driver the ring its timings go into (rig_edge_profile,
   * below), once per handle, under h's submit lock, before the first
   * submit while a profile is being taken. From then on, while
   * rig_edge_profile_on(ring), the driver times each part of its work by
   * its device's own clock (timestamp queries, events) or the host's,
   * and writes one rig_edge_span per part with rig_edge_profile_record
   * once the times are known: from any thread, with no lock and no
   * allocation. It may write until its destroy returns, never after.
   * RIG_EDGE_UNSUPPORTED: the device times no work (a memory device),
   * and core never asks again. It may block (calibrating a clock) and
   * allocate (query pools). NULL: the device times no work. */
  int (*profile)(void *h, rig_edge_profile *ring, rig_edge_error *err);

  /* ---- ABI 1.8: copies between two devices of one driver that reach
   * neither the other's memory (core reads it only where size reaches
   * it; docs/edge.md) ---- */
  /* Whether h's work copies into h's memory from the memory of other, a
   * handle of this same table that is not h's peer, by the driver's own
   * means: the remote driver has the source machine put the bytes into
   * the destination machine's memory, so that none passes through this
   * host. Core then submits such a copy on h as one copy part whose
   * source is other's allocation (its record as other's allocate made
   * it), and stages none of it; the part's failure loses h, as any
   * submit's. Waits for nothing; allocates nothing. NULL: never, and core
   * copies through host memory. */
  bool (*copies_from)(void *h, void *other);
} rig_edge_driver;

/* ---- profiles (ABI 1.6) ----------------------------------------------- */

/* The time of one part of a value's work on the device. Times are
 * rig_edge_now_ns()'s clock (CLOCK_MONOTONIC), so that every device's
 * timeline lines up with the host's: a driver that reads a clock of its
 * device converts it. */
typedef struct rig_edge_span {
  uint64_t value;     /* the work's value */
  uint64_t start_ns;  /* when the part started */
  uint64_t end_ns;    /* when it ended: at least start_ns */
  uint32_t part;      /* its index in the work's parts */
  uint32_t kind;      /* enum rig_edge_part_kind */
  uint32_t queue;     /* the queue it ran on */
  uint32_t label;     /* rig_edge_work_label(work, part) */
} rig_edge_span;

/* The label core gave part i of w, 0 where it gave none (a core of ABI
 * 1.5 or older, or work that names none). */
static inline uint32_t rig_edge_work_label(const rig_edge_work *w, uint32_t i) {
  if (w->size < offsetof(rig_edge_work, labels) + sizeof w->labels || !w->labels)
    return 0;
  return w->labels[i];
}

/* Whether ring takes records now: a profile is being taken. False for a
 * NULL ring. Lock-free; a load and a test, for the hot path. */
RIG_EDGE_API bool rig_edge_profile_on(const rig_edge_profile *ring);
/* Writes s into ring: lock-free, allocates nothing, never blocks, from
 * any thread. A full ring (core takes its records at rig_profile_take)
 * drops s and counts the drop. */
RIG_EDGE_API void rig_edge_profile_record(rig_edge_profile *ring, const rig_edge_span *s);
/* CLOCK_MONOTONIC in nanoseconds: the clock of every rig_edge_span.
 * Thread-safe; allocates nothing. */
RIG_EDGE_API uint64_t rig_edge_now_ns(void);
/* States that ring's spans, converted from a clock of the device, are
 * CLOCK_MONOTONIC within ns either way: the error bound of the driver's
 * conversion (a calibration's deviation). 0, the default, for a driver
 * that reads CLOCK_MONOTONIC itself. Profiles carry it per device
 * (rig_profile_clock_error), and a reader allows for it when it compares
 * two devices' spans. Lock-free, allocates nothing; a driver that calls
 * it needs a librig-edge that has it (rig 0.1.0 from issue 27 on). */
RIG_EDGE_API void rig_edge_profile_clock_error(rig_edge_profile *ring, uint64_t ns);

/* ---- a driver's arguments (ABI 1.3) -------------------------------------- */

/* The one parser of the arguments a driver's open() takes, "HEAD[,key=value]...":
 * "0,k=8,host=0" in "vulkan:0,k=8,host=0". Every driver parses them with it,
 * so that each refuses what the others refuse. */
enum rig_edge_arg_type {
  RIG_EDGE_ARG_NUMBER = 0, /* decimal digits only (no sign, space, "0x" or
                              suffix), at most UINT64_MAX, within [min, max] */
  RIG_EDGE_ARG_BOOL = 1,   /* exactly "0" or "1" (no "yes", "true", "on") */
  RIG_EDGE_ARG_WORD = 2,   /* exactly one of the '|'-separated words of
                              words; the value is its index */
};

/* One key a driver takes. */
typedef struct rig_edge_arg {
  const char *key;   /* "k" */
  uint32_t type;     /* enum rig_edge_arg_type */
  const char *words; /* RIG_EDGE_ARG_WORD: "0|1|count" */
  uint64_t min, max; /* RIG_EDGE_ARG_NUMBER: the range, both included */
  uint64_t value;    /* in: the default; out: the value given */
  bool given;        /* out: whether the key was given */
} rig_edge_arg;

#define RIG_EDGE_ARGS_MAX 64u /* keys one call takes */

/* Parses args, "HEAD[,key=value]...". HEAD, all before the first ',' (it
 * may be empty), is the driver's own, a device's index or name, which it
 * checks itself: *out_head_len (may be NULL) says its length. Every entry
 * after it must be key=value for one of keys[0..nkeys), at most once,
 * with a value its type allows; each key given has its value and given
 * set, the others keep their defaults.
 * Returns RIG_EDGE_OK, or RIG_EDGE_UNSUPPORTED (RIG_INVALID to rig_device_open)
 * with err's message "DRIVER: ..." naming the key for: an entry that is
 * not key=value or is empty, an unknown key (the message lists the keys),
 * a key given twice, an empty value, a number with anything but digits or
 * outside [min, max], a boolean other than 0 or 1, a word not in words.
 * A refusal changes no key. Thread-safe; allocates nothing; reads only
 * args and keys; nkeys at most RIG_EDGE_ARGS_MAX. */
RIG_EDGE_API int rig_edge_args_parse(const char *driver, const char *args, rig_edge_arg *keys,
                                     size_t nkeys, size_t *out_head_len, rig_edge_error *err);

/* Whether s[0..n) is a number as RIG_EDGE_ARG_NUMBER takes it, within
 * [min, max]; *out its value where it is, untouched where not. For a
 * HEAD that is an index. Thread-safe; allocates nothing. */
RIG_EDGE_API bool rig_edge_args_number(const char *s, size_t n, uint64_t min, uint64_t max,
                                       uint64_t *out);

/* For a driver's devices() whose devices are numbered 0..count-1: writes
 * "0", "1", ... into names[0..cap) and sets *n to count. Allocates nothing. */
static inline void rig_edge_devices_numbered(char (*names)[64], uint32_t cap, uint32_t count,
                                             uint32_t *n) {
  for (uint32_t i = 0; i < count && i < cap; i++) {
    char *p = names[i] + 10; /* digits, last first: a uint32_t has at most 10 */
    uint32_t v = i;
    *p = '\0';
    do
      *--p = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    size_t len = (size_t)(names[i] + 10 - p);
    for (size_t k = 0; k <= len; k++)
      names[i][k] = p[k];
  }
  *n = count;
}

/* The phases of rig_edge_driver.fork. */
enum { RIG_EDGE_FORK_PREPARE = 0, RIG_EDGE_FORK_PARENT = 1, RIG_EDGE_FORK_CHILD = 2 };

/* The devices of another machine (docs/remote.md): core opens them through
 * a driver such as "remote" only from rig_device_open_host and
 * rig_device_open_on, with open() arguments
 *   "rig-machine1 host MACHINE HANG_MS ADDRESS KEYFILE"  (the machine's host)
 *   "rig-machine1 device MACHINE NAME"                  (a device there)
 * where MACHINE, HANG_MS and ADDRESS hold no space and KEYFILE and NAME are
 * the rest of the string. Such a driver refuses any other argument. */
#define RIG_EDGE_MACHINE_ARGS_PREFIX "rig-machine1 "

/* The io interface (docs/io.md): an io library is a plugin like a driver,
 * whose table's io is not NULL. Core opens it only through rig_device_open_io
 * (OPEN-37), which passes open() the arguments below as one string; a
 * plugin with io set refuses nothing else. Its device runs no work: facts
 * give no COMPUTES flag and no queue, arch "", alignment 1 and cache_bytes
 * 0 (PROP-12, PROP-28, PROP-32); its budget starts at io->budget
 * (RECLAIM-67).
 *
 * Memory. allocate reserves a range of what the library serves and gives
 * it as rig_edge_alloc{handle, host NULL, address = the range's first byte,
 * bytes}; release frees it. Core never keeps io memory in a cache
 * (RECLAIM-12). Every function below is thread-safe: core calls them from
 * any thread, for ranges its stamps already ordered. An error of the
 * library is RIG_EDGE_IO with errnum set and the errno's text in the
 * message; core loses no device for it (ERR-26). A library that lost
 * what it serves (a file cut under a mapping of pages) returns
 * RIG_EDGE_FAULT from its calls, and core loses the device. */

/* What rig_device_open_io asks (enum rig_io_flag of <rig/rig.h>, same values). */
enum rig_edge_io_flag {
  RIG_EDGE_IO_CREATE = 1u << 0,    /* create the target with size bytes */
  RIG_EDGE_IO_READ_ONLY = 1u << 1, /* open it for reading only */
  RIG_EDGE_IO_DURABLE = 1u << 2,   /* every write is durable when it returns */
};

typedef struct rig_edge_io_args {
  uint32_t flags;     /* enum rig_edge_io_flag */
  uint64_t size;      /* with RIG_EDGE_IO_CREATE: the target's size */
  const char *target; /* what the library serves: a path for "io" */
} rig_edge_io_args;

/* The string core passes open(): "rig-io1 FLAGS SIZE TARGET", decimal. */
#define RIG_EDGE_IO_ARGS_PREFIX "rig-io1 "

/* Every flag an io library of this ABI knows. */
#define RIG_EDGE_IO_FLAGS (RIG_EDGE_IO_CREATE | RIG_EDGE_IO_READ_ONLY | RIG_EDGE_IO_DURABLE)

/* Parses open()'s argument into *out (target points into s). Returns
 * RIG_EDGE_OK, or RIG_EDGE_UNSUPPORTED for a string rig_device_open_io did not
 * make: numbers read as rig_edge_args_number reads them (an overflow is
 * refused, not wrapped), flags beyond RIG_EDGE_IO_FLAGS refused, since
 * the library could not honour them. Allocates nothing. */
static inline int rig_edge_io_args_parse(const char *s, rig_edge_io_args *out) {
  const char *p = s;
  const char *pre = RIG_EDGE_IO_ARGS_PREFIX;
  const uint64_t max[2] = {RIG_EDGE_IO_FLAGS, UINT64_MAX};
  uint64_t v[2] = {0, 0};
  while (*pre)
    if (*p++ != *pre++)
      return RIG_EDGE_UNSUPPORTED;
  for (int i = 0; i < 2; i++) {
    size_t n = 0;
    while (p[n] && p[n] != ' ')
      n++;
    if (p[n] != ' ' || !rig_edge_args_number(p, n, 0, max[i], &v[i]) ||
        (v[i] & ~max[i]) != 0)
      return RIG_EDGE_UNSUPPORTED;
    p += n + 1;
  }
  if (!*p)
    return RIG_EDGE_UNSUPPORTED;
  out->flags = (uint32_t)v[0];
  out->size = v[1];
  out->target = p;
  return RIG_EDGE_OK;
}

struct rig_edge_io {
  uint32_t size;        /* sizeof(rig_edge_io) the library was built with */
  /* Bytes [offset, offset+bytes) of what it serves into dst, all of them:
   * a range past the end (a file truncated under rig) is RIG_EDGE_IO. */
  int (*read)(void *h, uint64_t offset, void *dst, uint64_t bytes, rig_edge_error *err);
  /* src into [offset, offset+bytes), all of it; durable on return when
   * the device was opened RIG_EDGE_IO_DURABLE. */
  int (*write)(void *h, uint64_t offset, const void *src, uint64_t bytes, rig_edge_error *err);
  /* Io.pages (MACH-23): host memory that is [offset, offset+bytes), offset
   * on a page, for a device that maps host memory to borrow; what the
   * device writes there is the target's. Bytes the target does not hold
   * are RIG_EDGE_IO: no touch of the pages may raise a signal. NULL: it
   * has none. */
  int (*pages)(void *h, uint64_t offset, uint64_t bytes, void **out_host, rig_edge_error *err);
  int (*unpages)(void *h, void *host, uint64_t bytes, rig_edge_error *err);
  /* Io.budget: the bytes allocate may give out at open (RECLAIM-67). */
  int (*budget)(void *h, uint64_t *out_bytes, rig_edge_error *err);
  /* Makes every write that returned durable (fdatasync for a file). */
  int (*sync)(void *h, rig_edge_error *err);
};

/* ---- helpers of librig-edge.so that every driver shares ------------------ */

/* Set err's message printf-style; returns code, so a driver writes
 * `return rig_edge_fail(err, RIG_EDGE_FAULT, "queue: %s", why);`.
 * A message longer than the field has its absolute paths cut in their
 * middles ("/a/lo...ng/file"), so the reason after them stays; its own
 * arguments may point into err->message. Thread-safe; allocates nothing. */
RIG_EDGE_API int rig_edge_fail(rig_edge_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#ifdef __clang_analyzer__
/* clang's analyzer reads one file at a time and cannot see that the call
 * returns code: spelled out for it, so that a path past
 * `return rig_edge_fail(...)` is known to have failed. */
#define rig_edge_fail(err, code, ...) ((void)rig_edge_fail((err), (code), __VA_ARGS__), (code))
#endif

/* The host's processor as rig's arch names it (PROP-13..18): the x86-64 psABI
 * level from CPUID and XCR0, or "arm64[+features]". Writes at most n bytes
 * with the NUL; returns the length. Thread-safe, allocates nothing. */
RIG_EDGE_API size_t rig_edge_host_arch(char *out, size_t n);

/* The largest cache of the host's processor in bytes as the system states it,
 * 0 where it states none (PROP-36). Thread-safe, allocates nothing. */
RIG_EDGE_API uint64_t rig_edge_host_cache_bytes(void);

/* The host's physical memory in bytes. Thread-safe. */
RIG_EDGE_API uint64_t rig_edge_host_memory_bytes(void);

/* ---- words woken (ABI 1.7; counted by a function since 1.9) -------------
 * A thread that waits for a word (rig_edge_word_wait) past its first spin
 * sleeps on the word's futex, counted in one of librig-edge's buckets by
 * the word's address. A store that changes a word wakes its sleepers where
 * its bucket counts any: otherwise it costs a call that loads the count,
 * and no locked instruction. The sleeper, once counted, makes every thread
 * of the process pass a full barrier (membarrier) before it reads the word,
 * so a store that read no sleeper is seen by the sleeper's read. A driver
 * built before 1.7 wakes no one: a wait for its word sleeps in steps of at
 * most 1 ms, as every wait did before. The buckets are librig-edge's own
 * (a driver built for 1.7 or 1.8 read them as an exported array, which
 * librig-edge still exports for it; their number is not part of 1.9). */

/* Returns how many threads are counted asleep in word's bucket (those on
 * word, and on any word of the same bucket): a relaxed load. Thread-safe,
 * takes no lock, allocates nothing (ABI 1.9). */
RIG_EDGE_API uint32_t rig_edge_word_sleepers_of(const volatile uint64_t *word);
/* Wakes every thread asleep on word. Returns nothing; thread-safe, takes
 * no lock, never blocks: one system call. */
RIG_EDGE_API void rig_edge_word_wake(const volatile uint64_t *word);
/* After a change of word by other means than rig_edge_word_store (a
 * compare-and-swap that raises it): wakes its sleepers, where any. Returns
 * nothing; thread-safe, never blocks; a load where no thread sleeps. */
static inline void rig_edge_word_changed(const volatile uint64_t *word) {
  __asm__ volatile("" ::: "memory"); /* the store before the load: the sleeper's barrier orders them */
  if (__builtin_expect(rig_edge_word_sleepers_of(word) != 0, 0))
    rig_edge_word_wake(word);
}

/* Store value into a word with release order, so that a waiter that reads it
 * with acquire order sees the work's writes (TL-20), and wakes its sleepers
 * (ABI 1.7). */
static inline void rig_edge_word_store(volatile uint64_t *word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
  rig_edge_word_changed(word);
}
/* Loads a word with acquire order: a waiter that sees the value a driver
 * stored with rig_edge_word_store sees the work's writes before it. */
static inline uint64_t rig_edge_word_load(const volatile uint64_t *word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/* Block until *word >= value or timeout_ms passes: spins briefly where the
 * thread may run on more than one core, then sleeps on the word's futex
 * until a store wakes it (ABI 1.7), each sleep at most a step of a back-off
 * that grows to 1 ms (a store of a driver built before 1.7 wakes no one).
 * Returns RIG_EDGE_OK or RIG_EDGE_TIMEOUT. Thread-safe; allocates nothing. */
RIG_EDGE_API int rig_edge_word_wait(const volatile uint64_t *word, uint64_t value,
                                    uint32_t timeout_ms);

/* Runs a copy or fill part whose memory the host addresses (alloc->host),
 * as a device that runs on host does (the memory driver, core's host).
 * Returns RIG_EDGE_OK, or RIG_EDGE_UNSUPPORTED for another kind or memory
 * the host does not address. Thread-safe; allocates nothing. */
RIG_EDGE_API int rig_edge_run_on_host(const rig_edge_part *part, rig_edge_error *err);

#ifdef __cplusplus
}
#endif
#endif
