/* SPDX-License-Identifier: MIT */
/* rig/rig.h: rig's public C API.
 *
 * rig runs work on devices (the host's cores, GPUs, memory devices, files)
 * and orders that work by the memory it uses. No call names an event or a
 * fence: each allocation keeps, per device, the point of its last write and
 * of its last use (its stamps), and every submit, copy and host access follows
 * exactly the points its memory requires.
 *
 * Conventions (docs/conventions.md):
 * - Every call that can fail returns rig_status: RIG_OK (0) or a negative
 *   code. On failure the calling thread's rig_error_last() holds the status,
 *   the device concerned, the byte count (out of memory) and a message; no
 *   out-parameter is written and no state changes (ERR-1).
 * - Handles are opaque and reference counted. A function that returns a
 *   handle through out_* gives the caller one reference. Functions that take
 *   a handle borrow it unless their comment says they take ownership.
 * - Every call may be made from any thread (PRE-31). A call marked "may lock"
 *   returns RIG_INVALID at once when made inside a lock, that is from a
 *   callback rig or a driver runs while it holds a lock (DOM-14). Calls marked
 *   "lock-free" never do (DOM-17..24).
 * - A call that "blocks" holds no lock of rig's while it waits (DOM-3), calls
 *   the wait hook at least every 200 ms, and returns RIG_INTERRUPTED when the
 *   hook answers non-zero, having lost nothing and assigned no value (DOM-9).
 */
#ifndef RIG_RIG_H
#define RIG_RIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rig/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RIG_CORE_BUILDING)
#define RIG_API __attribute__((visibility("default")))
#else
#define RIG_API
#endif

/* On every call that returns rig_status: a status dropped unread is a
 * failure nobody sees, so the compiler warns. (gcc warns even through a
 * (void) cast: look at the status, or keep it in a variable.) */
#if defined(__GNUC__) || defined(__clang__)
#define RIG_MUST_USE __attribute__((warn_unused_result))
#else
#define RIG_MUST_USE
#endif

/* An initialiser that zeroes every field, in C ({0}) and in C++ ({}) alike:
 * the inline constructors of <rig/submission.h> start from it, as C++
 * before C++20 has no designated initialisers. */
#ifdef __cplusplus
#define RIG_ZERO_INIT                                                                              \
  {}
#else
#define RIG_ZERO_INIT                                                                              \
  { 0 }
#endif

/* ---- status and errors ---------------------------------------------------- */

typedef enum rig_status {
  RIG_OK = 0,
  RIG_INVALID = -1,       /* misuse: Invalid_argument */
  RIG_LOST = -2,          /* a use that a loss makes invalid: Lost (d, why) */
  RIG_OUT_OF_MEMORY = -3, /* Out_of_memory (d, n) */
  RIG_UNAVAILABLE = -4,   /* an open that cannot be made: Error why */
  RIG_INTERRUPTED = -5,   /* the wait or collector hook ended the call */
  RIG_IO = -6,            /* an io library's error (errno in the message); no loss */
  RIG_BUSY = -7,          /* a call that must not wait would have: nothing done
                             (rig_run_submit_try) */
} rig_status;

typedef struct rig_device rig_device;
typedef struct rig_buffer rig_buffer;
typedef struct rig_submission rig_submission;
typedef struct rig_run rig_run;
typedef struct rig_image rig_image;
typedef struct rig_function rig_function;

#define RIG_MESSAGE_BYTES 320
/* The calling thread's last error. Written by every failing call, with no
 * allocation; valid until the thread's next failing call. A message longer
 * than RIG_MESSAGE_BYTES keeps all its words, the advice included: the
 * absolute paths it names are cut in their middles ("/work/ci/ru...ld/core"),
 * each keeping its start and its end. */
typedef struct rig_error {
  rig_status status;
  const rig_device *device; /* the device concerned, or NULL; not a reference */
  uint64_t bytes;           /* RIG_OUT_OF_MEMORY: the bytes asked for */
  char message[RIG_MESSAGE_BYTES];
} rig_error;

/* Returns the calling thread's last error. Lock-free, never fails. */
RIG_API const rig_error *rig_error_last(void);
/* Returns a static name for s: "RIG_OK", "RIG_LOST", ... Lock-free. */
RIG_API const char *rig_status_name(rig_status s);

/* ---- version ---------------------------------------------------------------- */

/* Returns the version of the library the program runs with, "MAJOR.MINOR.PATCH"
 * (RIG_VERSION_STRING of the <rig/version.h> it was built from): a static
 * string. Lock-free, never fails. */
RIG_API const char *rig_version(void);
/* Returns that version packed as RIG_VERSION_NUMBER packs it,
 * MAJOR << 16 | MINOR << 8 | PATCH. Lock-free, never fails. */
RIG_API unsigned rig_version_number(void);

/* ---- points ----------------------------------------------------------------- */

/* A point: a device's slot (16 bits, 1..65535) and a value of its timeline
 * (47 bits), packed as slot << 47 | value (OPEN-9). 0 is no point. */
typedef uint64_t rig_point;
#define RIG_POINT_VALUE_BITS 47
#define RIG_POINT_VALUE_MAX ((UINT64_C(1) << RIG_POINT_VALUE_BITS) - 1) /* 2^47 - 1 */
#define RIG_SLOTS 65535u
#define RIG_POINT_NONE ((rig_point)0)

/* Returns the point of value v on slot s (no check). Lock-free. */
static inline rig_point rig_point_make(uint32_t slot, uint64_t value) {
  return ((uint64_t)slot << RIG_POINT_VALUE_BITS) | (value & RIG_POINT_VALUE_MAX);
}
/* Returns p's value (Point.value). Lock-free. */
static inline uint64_t rig_point_value(rig_point p) { return p & RIG_POINT_VALUE_MAX; }
/* Returns p's slot. Lock-free. */
static inline uint32_t rig_point_slot(rig_point p) {
  return (uint32_t)(p >> RIG_POINT_VALUE_BITS) & 0xffffu;
}

/* Returns the device that was given p's value, with a new reference, while no
 * later device has taken its slot; NULL afterwards and for a point of no
 * device (PROP-4). Lock-free. */
RIG_API rig_device *rig_point_device(rig_point p);

/* Whether p is reached, for good (PROP-5). Commits p's work first (TL-15).
 * A point a lost device never reached is false. Lock-free: inside a lock it
 * answers from the last value read. Never blocks. */
RIG_API bool rig_point_reached(rig_point p);

/* Blocks until p is reached (ORDER-11). Commits first (TL-9).
 * RIG_LOST if p's device is lost and never reached p; RIG_INVALID for a
 * point of no device or a value past the device's submitted value;
 * RIG_INTERRUPTED from the wait hook. Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_point_wait(rig_point p);

/* Writes "NAME:VALUE" into out (at most n bytes with the NUL) and returns the
 * full length, as snprintf does (Point.pp). A point of a slot since reused
 * prints "#SLOT:VALUE". Lock-free. */
RIG_API size_t rig_point_format(rig_point p, char *out, size_t n);

/* ---- devices ----------------------------------------------------------------- */

/* Returns the host device "CPU" (DEV-3). The host is never released; retain
 * and release are no-ops on it. Lock-free. */
RIG_API rig_device *rig_device_host(void);

/* Opens the device NAME, "DRIVER" or "DRIVER:ARGS" ("memory:M", "vulkan:0"),
 * or returns the one open under that name with a new reference (OPEN-30,
 * DEV-1). The driver is librig-driver-DRIVER.so, found on RIG_DRIVER_PATH
 * (colon-separated), then in the install folder.
 * RIG_UNAVAILABLE: no plugin, no vendor library, no such device, after
 * rig_runtime_fail, while every slot is held (OPEN-1, OPEN-4, OPEN-7).
 * RIG_INVALID: NULL, an empty name, a driver name with '/' or "..", a driver
 * of another ABI major (the message names the file), facts that break a rule
 * (OPEN-35), or an open of the same name from inside its own open (OPEN-36).
 * Blocks while another thread opens the same name (DOM-4); may lock. */
RIG_API RIG_MUST_USE rig_status rig_device_open(const char *name, rig_device **out);

/* Opens the memory device named name: rig_device_open("memory:NAME") (OPEN-38). */
RIG_API RIG_MUST_USE rig_status rig_device_open_memory(const char *name, rig_device **out);

/* What rig_device_open_io opens (Rig_edge.io_opener; docs/io.md): an io library,
 * librig-driver-LIBRARY.so found as rig_device_open finds drivers, and the target
 * it serves, a file's path for "io". */
typedef enum rig_io_flag {
  RIG_IO_CREATE = 1u << 0,    /* create the file, or grow it, to size bytes */
  RIG_IO_READ_ONLY = 1u << 1, /* open it for reading: creates are refused,
                                 borrows of its pages are RIG_READ */
  RIG_IO_DURABLE = 1u << 2,   /* every write of rig is on disk when it
                                 returns, a new file's name too; a borrow's
                                 pages when they go back (docs/io.md) */
} rig_io_flag;

typedef struct rig_io_opener {
  const char *library; /* "io" */
  const char *target;  /* the file's path */
  uint32_t flags;      /* rig_io_flag */
  uint64_t size;       /* with RIG_IO_CREATE */
} rig_io_opener;

/* Opens the io device "LIBRARY:TARGET" as rig_device_open opens a driver's device
 * (OPEN-37), or returns the one open under that name with a new reference,
 * where o asks its RIG_IO_READ_ONLY and RIG_IO_DURABLE again.
 * Its arch is "", its alignment 1, no cache_bytes (PROP-12, 28, 32), and its
 * budget starts at what the library states (Io.budget, RECLAIM-67): for a
 * file, the file system's free bytes, 0 read-only. It reaches no other
 * device (MACH-19). RIG_INVALID: NULL, no library or target, a flag
 * rig_io_flag does not name, create with read-only, a library that is not
 * an io library, a name open with other flags; RIG_UNAVAILABLE: as
 * rig_device_open, and a file that does not open (its errno text). Blocks on the
 * file system; may lock. */
RIG_API RIG_MUST_USE rig_status rig_device_open_io(const rig_io_opener *o, rig_device **out);

/* ---- machines (docs/remote.md) ---------------------------------------------- */

/* How rig_device_open_host reaches another machine's host (Machines). */
typedef struct rig_host_opener {
  const char *driver;   /* the driver of other machines, NULL for "remote" */
  const char *address;  /* "HOST:PORT" of the machine's `rig serve` */
  const char *key_file; /* the file of the secret the server asks to prove */
  uint32_t hang_ms;     /* a request unanswered this long loses the machine;
                           0 for 30000 */
} rig_host_opener;

/* Opens the host of the machine named machine through o, or returns the one
 * open with a new reference (MACH-2, MACH-5). Its name is "CPU@MACHINE"
 * (PROP-9), its arch, alignment and cache_bytes are that host's, and it is a
 * driver's device of this process, so it reaches no device of this machine
 * (MACH-18). machine is 1 to 63 of A-Z a-z 0-9 . _ -; a program gives each
 * connection a name of its own, and a second connection to one address
 * under a new name is another machine (MACH-3).
 * RIG_UNAVAILABLE: no server, a refused key, after rig_runtime_fail, and for
 * good once the machine's host is lost or closed, with that host's reason
 * (MACH-6). RIG_INVALID: NULL or a bad name or opener, or a machine whose
 * host was opened through another driver or address and is open or still
 * opening (MACH-8, MACH-9). Blocks on the network up to o->hang_ms; may
 * lock. */
RIG_API RIG_MUST_USE rig_status rig_device_open_host(const char *machine, const rig_host_opener *o,
                                                     rig_device **out);
/* Opens the device name ("memory:a", "vulkan:0", "CPU") of host's machine,
 * or returns the one open, as "NAME@MACHINE" (PROP-9), with a new
 * reference; rig_device_open("NAME@MACHINE") does the same through the
 * machine's open host. Its properties are the remote device's (PROP-12,
 * PROP-28, PROP-32), and it reaches only devices of its machine (MACH-18).
 * RIG_UNAVAILABLE: what the machine's server says, and once host is lost or
 * closed (MACH-6). RIG_INVALID: NULL, a name with '@', a host that is not
 * another machine's. Blocks on the network; may lock. */
RIG_API RIG_MUST_USE rig_status rig_device_open_on(rig_device *host, const char *name,
                                                   rig_device **out);
/* The name of d's machine, or NULL for a device of this one. Lock-free. */
RIG_API const char *rig_device_machine(const rig_device *d);
/* The host of d's machine (Rig.host_of): rig_device_host() for a device of
 * this machine, and for another machine's device, that machine's host, the
 * device rig_device_open_host opened. Borrowed: no reference is added, and
 * none is needed, as a machine's host stays recorded for the life of the
 * process, lost or closed. NULL for NULL. Lock-free; never blocks. */
RIG_API rig_device *rig_device_host_of(const rig_device *d);

/* ---- devices: kinds, close, properties and state ------------------------------ */

/* Whether d is an io device. Lock-free. */
RIG_API bool rig_device_is_io(const rig_device *d);

/* Makes every write to io device d that returned durable, through its
 * pages too: fdatasync for a file (RIG_IO_DURABLE does it at each write).
 * RIG_IO with the errno's text, losing nothing (ERR-26); RIG_LOST once the
 * file lost a page under a borrow (docs/io.md, IO-11); RIG_INVALID for a
 * device that is not io. Blocks. */
RIG_API RIG_MUST_USE rig_status rig_device_io_sync(rig_device *d);

/* Opens a device through a driver table linked into the program, under name
 * (how tests add a test driver and a binding passes its own). The table must
 * outlive the process's use of the device. RIG_INVALID if name is open under
 * another driver (OPEN-34). Otherwise as rig_device_open. */
RIG_API RIG_MUST_USE rig_status rig_device_open_driver(const char *name, const void *driver_table,
                                   const char *args, rig_device **out);

/* Waits for the work submitted on d before the call, loses d with "closed",
 * runs its driver's stop and returns once that returned (OPEN-45..47).
 * Uses of d then return RIG_LOST (OPEN-48). Every holder of d shares the
 * close (OPEN-51). Does not release the caller's reference.
 * RIG_INVALID for the host (OPEN-59) or NULL. A close of a lost device only
 * runs its owed stop (OPEN-55). RIG_INTERRUPTED: call again to finish
 * (OPEN-57). A failure other than a fault escaping the driver's stop is
 * returned with the driver's message (STOP-16; docs/decisions.md gives the
 * statuses); a fault escaping it is not. Another machine's host first
 * closes every device of its machine, and opens on that machine are
 * RIG_UNAVAILABLE from then on (MACH-6). An io device's file is closed when
 * the call returns: no descriptor or mapping of it stays in the process, so
 * its file system unmounts and an unlinked file's space comes back, unless
 * the program still holds a buffer of d, or a borrow of its pages (or
 * another device's work over them has not run yet); the file then closes
 * at the first call that moves memory after the last such buffer's
 * release (a create, a copy, a close). Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_device_close(rig_device *d);

/* Adds a reference to d and returns d. Lock-free. */
RIG_API rig_device *rig_device_retain(rig_device *d);
/* Drops a reference. The record lives while referenced (PROP-3); the device
 * stays open until rig_device_close. Lock-free. */
RIG_API void rig_device_release(rig_device *d);

/* Properties, set at open and kept after a loss (PROP-1, PROP-2). All
 * lock-free. */
RIG_API const char *rig_device_name(const rig_device *d);             /* PROP-8 */
RIG_API bool rig_device_equal(const rig_device *a, const rig_device *b); /* PROP-10 */
RIG_API const char *rig_device_arch(const rig_device *d);             /* PROP-12..22 */
RIG_API const char *rig_device_instruction_set(const rig_device *d);  /* PROP-23 */
/* The PCI function, or NULL where the device has none (PROP-24, PROP-25). */
RIG_API const char *rig_device_bus(const rig_device *d);
RIG_API bool rig_device_runs_on_host(const rig_device *d);            /* PROP-26 */
/* Whether d runs work: false for an io device only. */
RIG_API bool rig_device_computes(const rig_device *d);
/* Whether d runs launches, so loads code (rig_image_load): its driver
 * gives launch parts a queue. True for the host, Vulkan and CUDA devices;
 * false for memory, io and the sample device, which run copies and fills
 * at most, and for NULL. A program that places memory on any device and
 * runs its kernels where they can run asks this rather than the name.
 * Lock-free. */
RIG_API bool rig_device_launches(const rig_device *d);
RIG_API uint64_t rig_device_alignment(const rig_device *d);           /* PROP-28..31 */
/* Writes the last-level cache bytes; false where unknown (PROP-32..38). */
RIG_API bool rig_device_cache_bytes(const rig_device *d, uint64_t *out);
/* The record d's driver declares under key, or NULL (PROP-39). */
RIG_API const void *rig_device_capability(const rig_device *d, const char *key);
/* Whether d's work addresses e's own memory through a borrow on d
 * (MACH-10..20). */
RIG_API bool rig_device_reaches(const rig_device *d, const rig_device *e);
/* Whether d's queue waits itself on other devices' points, its driver
 * stating QUEUE_WAITS (SUBMIT-2): a submit that follows another device's
 * point not yet reached may return before it is; false where such a
 * submit waits for it on the host first (SUBMIT-3). Lock-free. */
RIG_API bool rig_device_queue_waits(const rig_device *d);
/* What d's maker calls it, and its driver's own version, as the driver
 * states them (edge ABI 1.9); "" where it states none (every driver
 * before 1.9, and core's host). A string of d's record: valid while d is
 * referenced. Lock-free. */
RIG_API const char *rig_device_model(const rig_device *d);
RIG_API const char *rig_device_driver_version(const rig_device *d);
/* Writes "NAME" or "NAME (lost: why)" into out; returns the full length. */
RIG_API size_t rig_device_format(const rig_device *d, char *out, size_t n);

/* What a device is, as its driver states it (docs/finding-devices.md). */
typedef enum rig_device_type {
  RIG_DEVICE_TYPE_UNKNOWN = 0, /* a driver of edge ABI before 1.5 says nothing */
  RIG_DEVICE_TYPE_CPU,         /* the host, or a device run by host processors (lavapipe) */
  RIG_DEVICE_TYPE_GPU,
  RIG_DEVICE_TYPE_MEMORY,      /* copies and fills, no code: "memory:NAME" */
  RIG_DEVICE_TYPE_IO,          /* an io library's target: a file */
  RIG_DEVICE_TYPE_REMOTE,      /* a device of another machine or process */
} rig_device_type;
/* d's type, from its driver's facts at open; RIG_DEVICE_TYPE_UNKNOWN for
 * NULL. Lock-free. */
RIG_API rig_device_type rig_device_type_of(const rig_device *d);
/* A static lower-case name of t: "unknown", "cpu", "gpu", "memory", "io",
 * "remote"; "unknown" for a value it does not name. Lock-free. */
RIG_API const char *rig_device_type_name(rig_device_type t);

/* One device rig_device_list finds. */
typedef struct rig_device_entry {
  char name[64];   /* what rig_device_open takes: "vulkan:0"; "CPU" for the host;
                      the driver's name where it offers no device */
  char driver[32]; /* "vulkan"; "host" for the host */
  char path[256];  /* the plugin file it came from ("" for the host) */
  rig_device_type type;
  bool opens;      /* whether rig_device_open(name) opened it; false: why says why */
  char why[256];   /* why it does not open; where it opens "", or the message
                      of the list's own close of it where that failed */
} rig_device_entry;
/* Lists what can be opened here: the host first, then each driver plugin
 * found on RIG_DRIVER_PATH, beside core's library and in the install
 * folder (third-party plugins too; where two folders have one driver, the
 * one rig_device_open loads), in the order rig_device_open looks, and
 * each device it offers. A plugin or device that does not open is listed
 * with why. Each device is opened to learn its type and whether it opens;
 * one that was not open is closed again, one the program holds is left
 * open. Writes the first min(cap, found) entries into out and *n the
 * number found, so cap 0 (out may then be NULL) counts them.
 * RIG_INVALID: n NULL, out NULL with cap > 0. Owns nothing it returns.
 * Blocks (loads plugins, asks drivers, opens devices); may lock. */
RIG_API RIG_MUST_USE rig_status rig_device_list(rig_device_entry *out, size_t cap, size_t *n);

/* The last value assigned on d's timeline, or the value it started after
 * (TL-16..18). Lock-free. */
RIG_API uint64_t rig_device_submitted(const rig_device *d);
/* Writes the last value d has reported (TL-19..27). Commits nothing and
 * waits for nothing. Inside a lock, and for a lost device whose driver keeps
 * its own word until its stop returned, it answers the last value read
 * (TL-22, TL-23). RIG_LOST, having written the last value read, when the
 * driver's read of its own word fails, or when d is lost while the read is
 * under way (TL-25, TL-26). Lock-free. */
RIG_API RIG_MUST_USE rig_status rig_device_signaled(rig_device *d, uint64_t *out);
/* What a device's submits waited for, and where: observable so that tests
 * tell the queue's waits from the host's. */
typedef struct rig_stats {
  uint64_t queue_waits;   /* points its queue waited for itself (SUBMIT-2) */
  uint64_t host_waits;    /* points its submits waited for on the host (SUBMIT-3) */
  uint64_t word_mappings; /* other devices' words its queue maps now (OPEN-20) */
  uint64_t borrow_mappings; /* memory its driver maps for borrows now (STAMP-17) */
} rig_stats;
/* Writes d's counts into out. Lock-free. */
RIG_API void rig_device_stats(const rig_device *d, rig_stats *out);

/* The point of d's value. Lock-free. */
RIG_API rig_point rig_device_point(const rig_device *d, uint64_t value);

/* d's loss reason, or NULL while d is not lost (ERR-37). Lock-free. */
RIG_API const char *rig_device_lost(const rig_device *d);
/* Fails the process: every device but host that is not lost is lost with
 * why; later opens are RIG_UNAVAILABLE with why. A NULL or empty why is
 * RIG_FAIL_NO_REASON, so that those messages are never empty. Only the
 * first call acts (ERR-39..44). Lock-free. */
#define RIG_FAIL_NO_REASON "rig_runtime_fail gave no reason"
RIG_API void rig_runtime_fail(const char *why);
/* The reason given to the first rig_runtime_fail (RIG_FAIL_NO_REASON for NULL or
 * ""), or NULL before it (ERR-45). Lock-free. */
RIG_API const char *rig_runtime_failure(void);

/* ---- budgets --------------------------------------------------------------- */

/* d's budget in bytes (RECLAIM-24, 65..67). Lock-free. */
RIG_API uint64_t rig_device_budget(const rig_device *d);
/* Bytes d holds now of memory that counts in its budget (RECLAIM-68). */
RIG_API uint64_t rig_device_allocated(const rig_device *d);
/* Sets d's budget, then frees cache until d holds at most n or the cache is
 * empty (RECLAIM-69, 70). RIG_INVALID for n > INT64_MAX (n < 0 in the
 * text, RECLAIM-71). RIG_LOST, changing nothing, for a closed or lost d
 * (OPEN-48): rig_device_free_cache still returns a stopped one's memory. May
 * lock. */
RIG_API RIG_MUST_USE rig_status rig_device_set_budget(rig_device *d, uint64_t n);
/* Returns d's cached memory to its driver (RECLAIM-72..76). May lock. */
RIG_API RIG_MUST_USE rig_status rig_device_free_cache(rig_device *d);

/* ---- hooks ----------------------------------------------------------------- */

/* Called at least every 200 ms while a call blocks; non-zero ends the wait
 * with RIG_INTERRUPTED (DOM-9). It runs inside no lock of rig's. An
 * interrupted call has assigned no value and changed nothing (DOM-10): so a
 * blocking call that has handed its own work to a device (rig_buffer_copy,
 * rig_buffer_fill, and a get or put through staging) no longer asks the
 * hook, and waits for that work to the end, which only the device's loss
 * or its hang bound cuts short. Before that point, it is interruptible. */
typedef int (*rig_wait_hook)(void *ctx);
/* Sets the process's wait hook (NULL: none). Lock-free. */
RIG_API void rig_runtime_set_wait_hook(rig_wait_hook hook, void *ctx);

/* The collector of a garbage-collected binding: it releases the handles its
 * program no longer reaches. An allocation that its budget or driver
 * refuses runs it in the second round of reclamation, and again in the
 * third only if an allocation was collected since the second ran it
 * (RECLAIM-57, RECLAIM-58). It runs inside a lock (DOM-12): it may release
 * handles, and a call that may lock made from it is RIG_INVALID. */
typedef void (*rig_collector)(void *ctx);
/* Sets the process's collector hook (NULL: none). Lock-free. */
RIG_API void rig_runtime_set_collector(rig_collector hook, void *ctx);

/* ---- buffers --------------------------------------------------------------- */

#define RIG_WORD 4 /* bytes of a word (WORD-10) */

typedef enum rig_access {
  RIG_READ = 1,       /* a buffer that admits reads only; a wait for last writes */
  RIG_READ_WRITE = 3, /* reads and writes; a wait for every use */
} rig_access;

typedef enum rig_kind {
  RIG_KIND_DEVICE = 0, /* the device's own memory */
  RIG_KIND_PINNED = 1, /* host memory the device maps; host's budget */
  RIG_KIND_MAPPED = 2, /* device memory the host addresses */
} rig_kind;

/* Creates a buffer of n bytes of d's own memory, from d's cache where it
 * holds a fit (RECLAIM-7, no allocation), with empty stamps. A non-empty
 * buffer starts on rig_device_alignment(d); a host buffer of 128 bytes or more on
 * 128 bytes, and of 64 KiB or more on a page (PROP-28..30). Its allocation
 * holds whole words (WORD-6). RIG_OUT_OF_MEMORY when d's budget or driver
 * refuses n (RECLAIM-51..59); RIG_LOST for a lost d. May lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_create(rig_device *d, size_t n, rig_buffer **out);
/* rig_buffer_create of a kind. RIG_INVALID for a kind d has none of. */
RIG_API RIG_MUST_USE rig_status rig_buffer_create_kind(rig_device *d, size_t n, rig_kind kind,
                                          rig_buffer **out);
/* Returns what rig_buffer_create_kind(d, n, kind) returns where it takes
 * the memory from the calling thread's share of d's cache with no lock (a
 * fit whose points are all reached or dropped), the caller owning its one
 * reference; NULL otherwise (no fit, a lost or NULL d, a kind that is not
 * rig_kind's, a call inside a lock), setting no error: the caller then
 * calls rig_buffer_create_kind. Allocates nothing, takes no lock, never
 * blocks or reclaims: a binding that must give up its runtime lock around
 * a call that may block keeps it for this one. */
RIG_API rig_buffer *rig_buffer_create_cached(rig_device *d, size_t n, rig_kind kind);

/* A borrow: a buffer on d over b's bytes, with no copy (PRE-16), sharing
 * b's allocation, stamps and claims (LIFE-2). d must map the memory: one it
 * reaches (MACH-22), host memory that starts on a page where d reaches the
 * host (MACH-23), or any host memory where d runs on the host (MACH-24).
 * A use of it depends on every point (LMEM-5). The mapping goes back once
 * the borrow and its views are released and d has run the work submitted
 * until then (STAMP-17). RIG_INVALID where d does not map the memory;
 * RIG_OUT_OF_MEMORY when d's driver has no room for the mapping after one
 * round of returning mappings (RECLAIM-60..63, RECLAIM-79); RIG_LOST for a
 * lost d (LMEM-9). May lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_borrow(rig_device *d, rig_buffer *b, rig_buffer **out);
/* Buffer.of_io: a buffer over bytes [offset, offset+length) of io device d's
 * memory as it is, such as a file's contents, with no copy and no charge to
 * d's budget; releasing it gives nothing back to the library. Moves
 * collected memory of d first (RECLAIM-16). RIG_INVALID for a device that
 * is not io or a NULL; RIG_LOST for a lost d. The bytes need not exist
 * yet: reading past a file's end is RIG_IO when it happens. May lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_of_io(rig_device *d, uint64_t offset, size_t length,
                                    rig_buffer **out);
/* ---- buffers over the program's memory ---- */

/* Tells the program that rig no longer uses the memory it gave
 * rig_buffer_of_host: the program may reuse or free it from then on. */
typedef void (*rig_host_release)(void *ctx);
/* Buffer.of_bigarray: a buffer on d over the n bytes at bytes, host memory
 * the program owns, with no copy. The host device takes the memory as it
 * is; another device borrows it as rig_buffer_borrow does: a device that
 * runs on the host, as a memory device, takes any of it (MACH-24); one
 * that reaches the host only memory that starts on a page (MACH-23); any
 * other is RIG_INVALID, an io device too (MACH-19). Words count from
 * address 0 (WORD-2): the allocation is the whole words that hold the
 * bytes, and work and host code over the buffer may read and rewrite the
 * bytes of those words outside it (WORD-7), which the program leaves
 * alone meanwhile. No budget counts the memory, and it never enters a
 * cache. rig_buffer_host_address of the buffer is bytes.
 * The program keeps the memory valid until release(ctx) runs, once: when
 * every buffer over the allocation is released or it is freed
 * (rig_buffer_free), every point of its stamps is reached, and every
 * driver's mapping of it for a borrow has gone back (STAMP-17), inside a
 * later call that moves the host's memory (rig_buffer_create on the host,
 * a copy, rig_device_free_cache(rig_device_host()), ...). release runs
 * inside a lock (DOM-12): a call that may lock made from it is
 * RIG_INVALID. NULL release: the program is never told, and keeps the
 * memory for good. On failure, release never runs and nothing holds the
 * memory. Two calls over the same bytes make two allocations, which rig
 * does not order with each other: make views of one instead.
 * RIG_INVALID for NULL d, bytes or out, and a range past the end of the
 * address space; the borrow's failures on another device.
 * Lock-free on the host (Buffer.of_bigarray takes no lock); on another
 * device it may lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_of_host(rig_device *d, void *bytes, size_t n,
                                                   rig_host_release release, void *ctx,
                                                   rig_buffer **out);
/* Buffer.of_string: a new buffer of n bytes of d's own memory holding a
 * copy of the n bytes at bytes, which the program may reuse once the call
 * returns. Moves d's collected memory first (RECLAIM-16), then creates as
 * rig_buffer_create does, and copies as rig_buffer_put does (through
 * staging where the host does not address d's memory). The caller owns
 * the buffer. RIG_INVALID for NULL d or out, or NULL bytes with n > 0;
 * rig_buffer_create's and rig_buffer_put's failures otherwise. Blocks;
 * may lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_of_bytes(rig_device *d, const void *bytes, size_t n,
                                                    rig_buffer **out);

/* A buffer over bytes [offset, offset+length) of b, sharing its allocation,
 * stamps and claims (LIFE-2), admitting access (at most b's). RIG_INVALID for
 * a dead b or a range out of b. Lock-free. */
RIG_API RIG_MUST_USE rig_status rig_buffer_view(rig_buffer *b, size_t offset, size_t length,
                                   rig_access access, rig_buffer **out);
/* Adds a reference to b and returns it. Lock-free. */
RIG_API rig_buffer *rig_buffer_retain(rig_buffer *b);
/* Drops a reference. At the allocation's last one it is collected: it waits
 * for its stamps' points, then returns to its device's cache, inside later
 * calls (RECLAIM-2, 15). Never blocks; safe from any thread. NULL: nothing. */
RIG_API void rig_buffer_release(rig_buffer *b);
/* Frees b's allocation now: every buffer over it is dead from now on, and
 * the memory returns to its driver once its stamps' points are reached,
 * inside the calls that move memory, whatever buffers remain (RECLAIM-4).
 * Other threads' calls that the host runs over the memory, which take no
 * point (a get, put, read, write, copy or fill under way), finish first:
 * the memory returns only after them, and such a call begun after the free
 * is RIG_INVALID. An export's bytes are not to be used after it. Does not drop the
 * caller's reference. RIG_INVALID for a dead b. May lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_free(rig_buffer *b);

/* Properties (lock-free). A dead buffer keeps them. */
RIG_API size_t rig_buffer_length(const rig_buffer *b);
RIG_API rig_device *rig_buffer_device(const rig_buffer *b); /* no reference */
RIG_API rig_access rig_buffer_access(const rig_buffer *b);
RIG_API rig_kind rig_buffer_kind(const rig_buffer *b);
RIG_API bool rig_buffer_dead(const rig_buffer *b);
/* The host address of b's first byte, or NULL where the host does not
 * address it. A low-level value: the address is valid only while b's memory
 * lives and says nothing of order. */
RIG_API void *rig_buffer_host_address(const rig_buffer *b);
/* Writes the stamps device d holds on b's allocation: the point of d's
 * last write and of its last use, RIG_POINT_NONE for none (PRE-17). Points
 * of reached work may have given way to other devices' (docs/order.md).
 * Lock-free: the fields are read without the allocation's lock, so a read
 * racing an update may see the write of one update and the use of
 * another. */
RIG_API void rig_buffer_stamps(const rig_buffer *b, const rig_device *d, rig_point *out_write,
                               rig_point *out_use);
/* Whether a and b hold bytes of one word (WORD-3). */
RIG_API bool rig_buffer_overlaps(const rig_buffer *a, const rig_buffer *b);
/* Whether a and b share a byte (WORD-5). */
RIG_API bool rig_buffer_share_byte(const rig_buffer *a, const rig_buffer *b);

/* Host access (HACC-1..4). The function gets b's bytes in place once every
 * device's last write (read) or every use (write) of the memory is reached
 * (ORDER-12, 13). RIG_INVALID for memory the host does not address, a dead
 * b, a Read b given to write. Blocks; may lock. */
typedef void (*rig_bytes_fn)(void *bytes, size_t n, void *ctx);
RIG_API RIG_MUST_USE rig_status rig_buffer_read(rig_buffer *b, rig_bytes_fn fn, void *ctx);
RIG_API RIG_MUST_USE rig_status rig_buffer_write(rig_buffer *b, rig_bytes_fn fn, void *ctx);
/* Blocks until host code may read (RIG_READ) or write (RIG_READ_WRITE) b's
 * memory (ORDER-14, ORDER-34). May lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_wait(rig_buffer *b, rig_access access);
/* Whether host code may access b's memory now without waiting. Lock-free. */
RIG_API bool rig_buffer_reached(rig_buffer *b, rig_access access);
/* Waits once for every use, then gives b's bytes out for good (HACC-3). The
 * export holds a reference to b, which the caller drops with
 * rig_buffer_release(b) when done with *out_bytes. Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_export(rig_buffer *b, void **out_bytes);

/* Copies n bytes from b at offset into dst (Buffer.blit_to_bytes): a read of
 * b. Blocks; may lock. RIG_INVALID for a range out of b. */
RIG_API RIG_MUST_USE rig_status rig_buffer_get(rig_buffer *b, size_t offset, void *dst, size_t n);
/* Copies n bytes from src into b at offset (Buffer.blit_from_string): a write
 * of b. Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_put(rig_buffer *b, size_t offset, const void *src,
                                  size_t n);
/* Fills b with a pattern of pattern_bytes (1, 2 or 4) bytes; b's length must
 * be a multiple of it. Returns once done. Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_fill(rig_buffer *b, uint32_t pattern,
                                   uint32_t pattern_bytes);
/* Copies src into dst, of one length and sharing no byte (WORD-5), and
 * returns once the bytes are in dst (STAMP-11). A read of src and a write of
 * dst (ORDER-15). Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_buffer_copy(rig_buffer *src, rig_buffer *dst);
/* Submits the copy of src into dst and returns its point without waiting for
 * it: on the device that runs it (one that reaches both, the device's own
 * before the host), or on host, which takes a host value (TL-3). May lock;
 * blocks only for the points its memory follows on devices that cannot wait
 * for them in their queue. */
RIG_API RIG_MUST_USE rig_status rig_buffer_submit_copy(rig_buffer *src, rig_buffer *dst,
                                          rig_point *out);
/* Submits a fill of dst as rig_buffer_fill does, returning its point. */
RIG_API RIG_MUST_USE rig_status rig_buffer_submit_fill(rig_buffer *dst, uint32_t pattern,
                                          uint32_t pattern_bytes, rig_point *out);

/* ---- claims (docs/claims.md) ------------------------------------------------ */

/* A claim records that something reads an allocation, so that a donation,
 * a function writing its result over an argument it no longer needs, writes
 * only memory nothing else reads (PRE-23..26). The claims of an allocation
 * are shared by its views. Every function here is lock-free (DOM-22). */
typedef struct rig_claim rig_claim;

/* Takes a claim that reads b's memory until rig_claim_release. It is a
 * read (LMEM-3): RIG_LOST where a read of the memory would be. Waits for
 * nothing. */
RIG_API RIG_MUST_USE rig_status rig_buffer_claim(rig_buffer *b, rig_claim **out);
/* Takes a hold: a claim whose release only queues, for a finaliser or any
 * callback; the claim goes at the next call that moves memory
 * (RECLAIM-20). */
RIG_API RIG_MUST_USE rig_status rig_claim_hold(rig_buffer *b, rig_claim **out);
/* Releases a claim of rig_buffer_claim or rig_claim_hold. An exclusive
 * claim ends with its rig_claim_with instead. */
RIG_API void rig_claim_release(rig_claim *c);

/* Runs fn with b's memory held exclusive by the calling thread, through a
 * claim that names no access and so depends on every point (LMEM-6):
 * RIG_LOST where a write would be. Meanwhile other threads' submits,
 * copies and host accesses of the memory are RIG_INVALID (VALID-5,
 * VALID-14), and so is a second rig_claim_with. fn must not block on
 * another thread that uses the memory. */
typedef void (*rig_claim_fn)(rig_claim *c, rig_buffer *b, void *ctx);
RIG_API RIG_MUST_USE rig_status rig_claim_with(rig_buffer *b, rig_claim_fn fn, void *ctx);
/* Whether c is the only claim on its memory (PRE-25). */
RIG_API bool rig_claim_only(const rig_claim *c);
/* Consumes the memory c holds exclusive as its only claim: every buffer
 * made over it until now is dead from now on (PRE-26), and *out, a new
 * buffer over the whole allocation (the bytes its create asked for, not
 * their rounding to words) with its stamps, takes the donor's
 * result. RIG_INVALID unless c is rig_claim_with's claim, on its thread,
 * and the only one. */
RIG_API RIG_MUST_USE rig_status rig_claim_consume(rig_claim *c, rig_buffer **out);

/* ---- values per device -------------------------------------------------------- */

/* A library keeps values per device under a key, such as the image it
 * loaded on each device (LOCAL-1). */
typedef struct rig_local_key rig_local_key;
/* Makes d's value of a key. It runs inside a lock: a call that may lock
 * made from it returns RIG_INVALID (DOM-12..14). NULL: no value. */
typedef void *(*rig_local_init)(rig_device *d, void *ctx);
/* Drops a value once its device's stop has returned (LOCAL-5). */
typedef void (*rig_local_release)(void *value, void *ctx);

/* Makes a key; release may be NULL. Keys live for the process (256 at
 * most). Lock-free. */
RIG_API RIG_MUST_USE rig_status rig_local_new_key(rig_local_init init, rig_local_release release, void *ctx,
                                     rig_local_key **out);
/* Writes d's value of k, made by k's init at the first get on d
 * (LOCAL-2, LOCAL-3). A reopened name is a new device with values of its
 * own (LOCAL-7). Lock-free once the value exists (DOM-23); else may lock.
 * RIG_LOST for a lost d without the value. */
RIG_API RIG_MUST_USE rig_status rig_local_get(rig_local_key *k, rig_device *d, void **out);

/* The host's performance cores (PERF-1..5): on Linux the CPUs of the first
 * asking thread's affinity mask whose cpu_capacity is over half the
 * largest (all of them where none is stated), at most the process's cgroup
 * v2 quota; counted once. Host launches run on at most this many threads
 * (LAUNCH-10). Lock-free after the first call. */
RIG_API unsigned rig_host_cores(void);

/* Runs fn(ctx, first, end) over [0, n) in calls that together cover each
 * index once, on the calling thread and the workers of the pool that host
 * launches run on (LAUNCH-2), on at most rig_host_cores() threads at once;
 * returns when all ran. For a library's own parallel host code, so that it
 * and rig's launches share the cores. fn must not call rig_host_parallel
 * or submit host launches. Takes no lock of rig's; may block on the
 * pool's. */
RIG_API void rig_host_parallel(void (*fn)(const void *ctx, int64_t first, int64_t end),
                               const void *ctx, int64_t n);

/* ---- images ----------------------------------------------------------------- */

/* Loads code on d (Image.load; RUN-1, HOST-2): on host, links a relocatable
 * ELF object once (Linking, docs/linker.md). Its code counts in d's budget
 * until the image goes. RIG_UNAVAILABLE with the linker's message for an
 * object the rules refuse (the text's Error); RIG_INVALID for a device that
 * loads no code (a memory or io device, OPEN-42) or NULL; RIG_OUT_OF_MEMORY
 * over the budget; RIG_LOST for a lost d. Blocks; may lock. */
RIG_API RIG_MUST_USE rig_status rig_image_load(rig_device *d, const void *bytes, size_t n, rig_image **out);
/* Finds the function name of im (Image.resolve; HOST-3: on host, a named
 * symbol of an executable section). *out is NULL where im has none (None):
 * a missing or misspelt name returns RIG_OK, so test *out for NULL; a launch
 * part of NULL is RIG_INVALID at rig_submission_make, whose message names
 * the last name the calling thread's resolve found none for. The function
 * lives as long as im. RIG_INVALID for a function the device
 * cannot run (ERR-26: d keeps serving). May lock.
 * On a Vulkan device name is a GLSL/SPIR-V entry point ("main"), optionally
 * followed by ':' and the shader's specialization constants,
 * "main:1=64,2=0.5,3=default": every constant the shader declares is set
 * there, is a group axis (local_size_x_id ..., set by rig_run_threads), or
 * is kept at its default because the name says "ID=default"; any other is
 * RIG_INVALID naming it. A shader that binds buffers (layout(set = 0,
 * binding = N) buffer or uniform) takes them from its launch's refs: the
 * ref stored at byte 8i of the parameter block is the i-th binding in
 * binding order; the shader's push-constant block is the block's bytes
 * after the refs (drivers/vulkan/README.md, "Shaders with bindings"). */
RIG_API RIG_MUST_USE rig_status rig_image_resolve(rig_image *im, const char *name, rig_function **out);
/* Adds a reference to im and returns im. Lock-free. */
RIG_API rig_image *rig_image_retain(rig_image *im);
/* Drops a reference. The code goes once no reference and no submission
 * holds it, and the work submitted until then is done. Never blocks. */
RIG_API void rig_image_release(rig_image *im);
/* Properties (lock-free). */
RIG_API rig_device *rig_image_device(const rig_image *im);            /* Image.device */
RIG_API const char *rig_function_name(const rig_function *f);         /* Image.name */
RIG_API rig_image *rig_function_image(const rig_function *f);         /* Image.image */
/* The bytes of parameters f takes where the device states them, 0 where it
 * does not (the host's linked code states none) (Image.params). */
RIG_API uint32_t rig_function_params(const rig_function *f);
/* The most threads a group of f may have (Image.threads): no limit on host. */
RIG_API uint64_t rig_function_threads(const rig_function *f);
/* The address an entry ref stores for f (Image.entry, SYM-2). */
RIG_API uint64_t rig_function_entry(const rig_function *f);

/* Submissions (<rig/submission.h>) and profiles (<rig/profile.h>) are in
 * headers of their own, included here: a program includes <rig/rig.h>. */
#include <rig/submission.h>
#include <rig/profile.h>
/* Jobs over several machines (Rig_remote) are in <rig/job.h>. */
#include <rig/job.h>

#ifdef __cplusplus
}
#endif
#endif
