/* SPDX-License-Identifier: MIT */
/* cuda_private.h: what the files of the CUDA driver share
 * (drivers/cuda/README.md). Nothing here is exported: the plugin is built
 * with hidden visibility and exports only its entry symbol.
 *
 *   library.c   libcuda.so.1 by dlopen, its entry points, error names
 *   context.c   one primary context per physical GPU, shared by its opens
 *   loss.c      sticky errors: a context lost for every open on it (LOSS-14)
 *   entry.c     the driver table: arguments, open, facts, stop, destroy
 *   memory.c    device memory, pinned memory, borrows of host memory
 *   queue.c     the stream, the timeline word, queue waits, copies, fills
 *   module.c    PTX, cubin and fatbin images, launches
 *   params.c    parameter blocks over PARAMS_MAX, through a buffer
 */
#ifndef RIG_CUDA_PRIVATE_H
#define RIG_CUDA_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rig/edge.h>

#include "cuda_api.h"
#include <rig/drivers/rig-cuda.h>

#define PARAMS_MAX 4096u     /* the by-value parameter bytes every CUDA device takes;
                                larger blocks go through params.c's buffer */
#define ALIGNMENT 256u       /* cuMemAlloc's documented least alignment */
#define DEFAULT_HANG_MS 10000u
#define RING 1024u           /* values in flight on the host-function fallback */

/* ---- library.c ------------------------------------------------------------ */

/* The entry points the driver calls, taken from libcuda at the first open.
 * The optional ones (NULL where the driver lacks them) are marked. */
typedef struct cuda_fns {
  cu_Init Init;
  cu_DriverGetVersion DriverGetVersion;
  cu_GetErrorName GetErrorName;
  cu_GetErrorString GetErrorString;
  cu_DeviceGetCount DeviceGetCount;
  cu_DeviceGet DeviceGet;
  cu_DeviceGetName DeviceGetName;
  cu_DeviceGetAttribute DeviceGetAttribute;
  cu_DeviceTotalMem DeviceTotalMem;
  cu_DeviceGetPCIBusId DeviceGetPCIBusId;
  cu_DevicePrimaryCtxRetain DevicePrimaryCtxRetain;
  cu_DevicePrimaryCtxRelease DevicePrimaryCtxRelease;
  cu_DevicePrimaryCtxReset DevicePrimaryCtxReset;
  cu_CtxSetCurrent CtxSetCurrent;
  cu_StreamCreate StreamCreate;
  cu_StreamDestroy StreamDestroy;
  cu_StreamQuery StreamQuery;
  cu_StreamSynchronize StreamSynchronize;
  cu_StreamWriteValue64 StreamWriteValue64; /* optional: CUDA 12 */
  cu_StreamWaitValue64 StreamWaitValue64;   /* optional: CUDA 12 */
  cu_LaunchHostFunc LaunchHostFunc;
  cu_MemAlloc MemAlloc;
  cu_MemFree MemFree;
  cu_MemHostAlloc MemHostAlloc;
  cu_MemFreeHost MemFreeHost;
  cu_MemHostGetDevicePointer MemHostGetDevicePointer;
  cu_MemHostRegister MemHostRegister;
  cu_MemHostUnregister MemHostUnregister;
  cu_MemcpyAsync MemcpyAsync;
  cu_MemsetD8Async MemsetD8Async;
  cu_MemsetD16Async MemsetD16Async;
  cu_MemsetD32Async MemsetD32Async;
  cu_MemsetD2D8Async MemsetD2D8Async;
  cu_ModuleLoadDataEx ModuleLoadDataEx;
  cu_ModuleUnload ModuleUnload;
  cu_ModuleGetFunction ModuleGetFunction;
  cu_FuncGetAttribute FuncGetAttribute;
  cu_LaunchKernel LaunchKernel;
  /* profiles (profile.c) */
  cu_EventCreate EventCreate;
  cu_EventDestroy EventDestroy;
  cu_EventRecord EventRecord;
  cu_EventQuery EventQuery;
  cu_EventSynchronize EventSynchronize;
  cu_EventElapsedTime EventElapsedTime;
} cuda_fns;

extern cuda_fns cu;

/* Loads libcuda ($RIG_CUDA_LIBRARY, else libcuda.so.1) and calls cuInit
 * once per process; later calls return the first one's result. Returns
 * RIG_EDGE_OK, or RIG_EDGE_UNAVAILABLE with "cuda: no library: ..." or
 * "cuda: no device: ...". The open lock held (gpu_get). */
int library_load(rig_edge_error *err);
/* "CUDA_ERROR_X: text" of r, in buf. Allocates nothing. */
const char *library_error(CUresult r, char *buf, size_t n);
/* The process that initialised CUDA, 0 before: a child of fork may not
 * call into it (STOP-22). */
pid_t library_pid(void);
/* The fork hook's part in the child (the open lock held): where the parent
 * called cuInit, the child never loads CUDA (STOP-22). */
void library_forked(void);
/* Whether this process is a child of fork of one that called cuInit: no
 * call into CUDA is made in it. Lock-free. */
bool library_in_child(void);

/* ---- context.c ----------------------------------------------------------- */

/* A host range registered with cuMemHostRegister (PORTABLE: every
 * context maps it): a borrow, or the page of another device's word a
 * queue waits on. Kept for the process and counted, since CUDA refuses to
 * register a page twice. */
typedef struct registration {
  struct registration *next;
  uintptr_t base;
  size_t bytes;
  uint32_t refs;
} registration;

/* A physical GPU as this process uses it: its primary context and facts,
 * shared by every open of it (refs under the open lock). */
typedef struct gpu {
  struct gpu *next;
  int ordinal;
  CUdevice dev;
  CUcontext ctx;
  uint32_t refs;
  int lost;                  /* LOST_*: a sticky error seen (atomic) */
  char lost_why[200];        /* set before lost reads LOST_SET */
  char name[128], arch[16], bus[32];
  uint64_t memory, l2;
  int sms, cc_major, cc_minor, driver_version;
  int max_threads, max_block[3], max_grid[3], max_shared;
  bool mem_ops64;            /* 64-bit stream memory operations */
} gpu;

enum { LOST_NONE, LOST_NAMING, LOST_SET };

/* The shared gpu of ordinal, made (its context retained, facts read) by
 * the first open; NULL with RIG_EDGE_UNAVAILABLE in err otherwise. Takes
 * the open lock. */
gpu *gpu_get(int ordinal, rig_edge_error *err);
/* How many GPUs libcuda lists; loads the library (library_load's errors).
 * Takes the open lock. */
int gpu_count(uint32_t *n, rig_edge_error *err);
/* Drops a reference; the last releases the context (resetting it where
 * it was lost, which ends whatever still runs on it). Takes the open lock. */
void gpu_put(gpu *g);
/* Makes g's context the calling thread's. */
CUresult gpu_bind(const gpu *g);
/* The fork hook's lock: taken by every open. */
void gpu_lock_opens(bool lock);
/* In a child of fork, the open lock held: every GPU the parent had is lost
 * ("forked") and nothing of it is called again, nor is its context reset
 * or a registration given back (they are the parent's). */
void gpu_forked(void);

/* Registers [host, host+bytes), or counts a registration that holds it
 * (a context is current). The caller asks its context for the device
 * address (cuMemHostGetDevicePointer). Takes the registration lock. */
int registration_get(void *host, size_t bytes, registration **out, const char *who,
                     rig_edge_error *err);
void registration_put(registration *r);

/* ---- the open: one rig device -------------------------------------------------- */

/* A wait mapping: the device address a queue waits on (SUBMIT-2). */
typedef struct cumap {
  CUdeviceptr address;
  registration *reg;         /* map_word's, NULL for map_peer's */
  bool peer;                 /* a peer's own word: nothing to give back */
} cumap;

/* The host-function fallback's record of a value (queue.c). */
typedef struct cuslot {
  struct cudev *d;
  uint64_t value;
} cuslot;

typedef struct cuprof cuprof; /* profile.c */
typedef struct cuparams cuparams; /* params.c */

typedef struct cudev {
  char name[48];
  gpu *g;
  CUstream stream;
  volatile uint64_t *word;   /* its timeline word: pinned memory (OWN_WORD) */
  cumap self;                /* its word as its own queue and peers' address it */
  uint64_t taken;            /* the last value submitted (atomic) */
  uint32_t hang_ms;
  uint32_t stream_label;     /* K of stream=K */
  bool waits;                /* queue waits: 64-bit stream memory operations */
  bool stopped;
  cuslot ring[RING];         /* the fallback's values in flight */
  pthread_mutex_t mlock;     /* mems */
  struct cumem *mems;
  pthread_mutex_t ilock;     /* images */
  struct cuimage *images;
  cuparams *params;          /* made at the first resolve (atomic) */
  rig_edge_facts facts;
  rig_cuda_device record;    /* capability RIG_CUDA_DEVICE */
  cuprof *prof;              /* events, once core handed a ring (atomic) */
} cudev;

/* ---- profile.c: work timed by events (edge ABI 1.6) -------------------------------- */

int profile_hand(void *h, rig_edge_profile *ring, rig_edge_error *err);
/* Records the event before part i of w (submit; false: untimed), and
 * the one after it. */
bool profile_before(cudev *d, const rig_edge_work *w, uint32_t i);
void profile_after(cudev *d);
/* Writes the records of the parts whose end event completed; trylock:
 * from signaled and wait, which may run beside a submit. */
void profile_harvest(cudev *d, bool trylock);
/* The stop: what completed is written, the events go. */
void profile_end(cudev *d);

/* ---- loss.c --------------------------------------------------------------------- */

/* Whether r leaves the context unusable (an illegal address, a launch
 * failure...): every open on it is lost with it (LOSS-14). */
bool loss_sticky(CUresult r);
/* The failure of call with r on d: RIG_EDGE_NO_ROOM for no memory, else
 * RIG_EDGE_FAULT, and a sticky r loses d's context for every sharer. */
int loss_fail(cudev *d, rig_edge_error *err, CUresult r, const char *call);
/* Loses d's context with why (a hang), naming d. */
void loss_mark(cudev *d, const char *why);
/* RIG_EDGE_FAULT where d's context is lost, else RIG_EDGE_OK. */
int loss_check(const cudev *d, rig_edge_error *err);
/* Whether d's context is lost. */
bool loss_is_lost(const gpu *g);

/* ---- memory.c -------------------------------------------------------------------- */

int memory_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                    rig_edge_error *err);
int memory_release(void *h, rig_edge_alloc *a, rig_edge_error *err);
int memory_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err);
bool memory_peer(void *h, void *other);
/* Frees what core never gave back (at destroy). */
void memory_free_all(cudev *d);

/* ---- queue.c ---------------------------------------------------------------------- */

int queue_make(cudev *d, rig_edge_error *err);
/* Waits (bounded by d's hang bound) for the stream, then ends it. */
void queue_end(cudev *d);
void queue_free(cudev *d);
int queue_signaled(void *h, uint64_t *out, rig_edge_error *err);
int queue_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err);
int queue_submit(void *h, const rig_edge_work *work, rig_edge_error *err);
int queue_map_word(void *h, volatile uint64_t *word, void **out, rig_edge_error *err);
int queue_map_peer(void *h, void *peer, void **out, rig_edge_error *err);
void queue_unmap_word(void *h, void *mapping);

/* ---- module.c --------------------------------------------------------------------- */

int module_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
                rig_edge_error *err);
int module_resolve(void *h, void *image, const char *name, void **out_function,
                   rig_edge_error *err);
int module_unload(void *h, void *image, rig_edge_error *err);
int module_check(void *h, const rig_edge_work *work, rig_edge_error *err);
/* Enqueues a launch part on d's stream. */
int module_launch(cudev *d, const rig_edge_part *p, rig_edge_error *err);
void module_free_all(cudev *d);

/* ---- params.c ----------------------------------------------------------------------- */

/* The rings of large parameter blocks, made once (module_resolve). */
int params_make(cudev *d, rig_edge_error *err);
void params_free(cudev *d);
/* RIG_EDGE_UNSUPPORTED where w's large blocks are more than the ring holds
 * (check). Waits for nothing; allocates nothing. */
int params_check(const cudev *d, const rig_edge_work *w, rig_edge_error *err);
/* At submit, before w's parts: a stretch of the ring for w's large blocks,
 * waiting (MAY_BLOCK) where it still holds blocks a lap old that the
 * stream has not read. */
int params_reserve(cudev *d, const rig_edge_work *w, rig_edge_error *err);
/* Enqueues the copy of part's block into the device ring; *out its device
 * address, the kernel's one argument. */
int params_place(cudev *d, const rig_edge_part *part, CUdeviceptr *out, rig_edge_error *err);

#endif
