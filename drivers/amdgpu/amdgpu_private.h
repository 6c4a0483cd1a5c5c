/* SPDX-License-Identifier: MIT */
/* amdgpu_private.h: what the files of the amdgpu driver share
 * (drivers/amdgpu/README.md). Nothing here is exported: the plugin is
 * built with hidden visibility and exports only its entry symbol.
 *
 *   library.c   libdrm.so.2 and libdrm_amdgpu.so.1 by dlopen, their entry points
 *   gfx.c       the gfx name of a family and revision; a DRM device's description
 *   node.c      render nodes: the list (drmGetDevices2), the AMD ones, opening one
 *   entry.c     the driver table: arguments, open, facts, stop, destroy, devices
 *   memory.c    buffer objects in VRAM and GTT, userptr borrows, GPU addresses
 *   queue.c     the rings, submit (one IB per value), signaled, wait, stop
 *   encode.c    a value's parts into PM4 (pm4.c, dispatch.c)
 *   loss.c      the context's reset state: a lost open and the kernel's word
 *   module.c    code objects (codeobj.c) placed in GPU memory, kernels
 *   profile.c   timestamps of each part by RELEASE_MEM, in the GPU clock
 *   waits.c     waits on another amdgpu open's syncobj, in the queue
 *
 * The driver includes <rig/edge.h> and libdrm's headers (xf86drm.h,
 * amdgpu.h, amdgpu_drm.h) for their types only: every call goes through the
 * table `drm` that library.c fills, so the plugin links librig-edge and the C
 * library alone.
 */
#ifndef RIG_AMDGPU_PRIVATE_H
#define RIG_AMDGPU_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <xf86drm.h>

#include <rig/edge.h>

#include "codeobj.h"
#include "dispatch.h"
#include "gfx.h"
#include "pm4.h"

#define AMD_VENDOR 0x1002u
#define ALIGNMENT 4096u /* a GPU page: every buffer object starts on one */
#define DEFAULT_HANG_MS 10000u
#define NODES_MAX 64u /* render nodes looked at; more are not listed */

/* ---- library.c ------------------------------------------------------------- */

/* Each entry point the driver calls: (library, symbol). The struct member is
 * a pointer of the header's own type (__typeof__), so a signature that
 * differs from libdrm's header does not compile. */
#define AMDGPU_SYMBOLS(X)                                                                          \
  X(DRM, drmGetDevices2)                                                                           \
  X(DRM, drmGetDevice2)                                                                            \
  X(DRM, drmFreeDevices)                                                                           \
  X(DRM, drmFreeDevice)                                                                            \
  X(DRM, drmGetVersion)                                                                            \
  X(DRM, drmFreeVersion)                                                                           \
  X(AMD, amdgpu_device_initialize)                                                                 \
  X(AMD, amdgpu_device_deinitialize)                                                               \
  X(AMD, amdgpu_query_gpu_info)                                                                    \
  X(AMD, amdgpu_query_heap_info)                                                                   \
  X(AMD, amdgpu_query_hw_ip_info)                                                                  \
  X(AMD, amdgpu_get_marketing_name)                                                                \
  X(AMD, amdgpu_cs_ctx_create2)                                                                    \
  X(AMD, amdgpu_cs_ctx_free)                                                                       \
  X(AMD, amdgpu_cs_query_reset_state2)                                                             \
  X(AMD, amdgpu_cs_create_syncobj2)                                                                \
  X(AMD, amdgpu_cs_destroy_syncobj)                                                                \
  X(AMD, amdgpu_cs_syncobj_query)                                                                  \
  X(AMD, amdgpu_cs_syncobj_timeline_wait)                                                          \
  X(AMD, amdgpu_cs_submit_raw2)                                                                    \
  X(AMD, amdgpu_bo_alloc)                                                                          \
  X(AMD, amdgpu_bo_free)                                                                           \
  X(AMD, amdgpu_bo_cpu_map)                                                                        \
  X(AMD, amdgpu_bo_cpu_unmap)                                                                      \
  X(AMD, amdgpu_bo_export)                                                                         \
  X(AMD, amdgpu_create_bo_from_user_mem)                                                           \
  X(AMD, amdgpu_va_range_alloc)                                                                    \
  X(AMD, amdgpu_va_range_free)                                                                     \
  X(AMD, amdgpu_bo_va_op)                                                                          \
  X(AMD, amdgpu_query_info)                                                                        \
  X(AMD, amdgpu_cs_export_syncobj)                                                                 \
  X(AMD, amdgpu_cs_import_syncobj)

typedef struct drm_fns {
#define AMDGPU_MEMBER(lib, sym) __typeof__(&sym) sym;
  AMDGPU_SYMBOLS(AMDGPU_MEMBER)
#undef AMDGPU_MEMBER
} drm_fns;

extern drm_fns drm;

/* Loads libdrm.so.2 and libdrm_amdgpu.so.1 ($RIG_AMDGPU_LIBDRM and
 * $RIG_AMDGPU_LIBRARY name others, outside setuid programs) once per
 * process; later calls return the first one's result. RIG_EDGE_OK, or
 * RIG_EDGE_UNAVAILABLE with "amdgpu: no library: ...". Takes the open lock. */
int library_load(rig_edge_error *err);
/* The open lock: every open and devices() take it; the fork hook holds it
 * across a fork. */
void library_lock(bool lock);
/* In the child of a fork (the open lock held): every open the parent had is
 * lost ("forked"), and none of its files is touched again. */
void library_forked(void);
/* Whether this process is a child of fork of one that had an amdgpu device
 * open: its opens were the parent's. Lock-free. */
bool library_in_child(void);
struct amddev;
/* Lists and unlists an open that holds a render node (the fork hook's). The
 * open lock held. */
void library_hold(struct amddev *d);
void library_drop(struct amddev *d);

/* ---- node.c ------------------------------------------------------------------ */

/* An AMD render node as the list found it. */
typedef struct amd_node {
  char path[64]; /* "/dev/dri/renderD128" */
  char bus[32]; /* "0000:03:00.0", or "" */
  uint16_t device_id;
  uint8_t revision;
} amd_node;

/* The AMD render nodes, sorted by bus, into out[0..cap): *n how many there
 * are. RIG_EDGE_UNAVAILABLE with "amdgpu: no device: ..." naming each
 * render node looked at and why it is not one (another vendor, not PCI, no
 * render node) where none is AMD's. $RIG_AMDGPU_NODE (outside setuid
 * programs) names one file to take as the only node instead of the list:
 * for a test, or to pin a node. Loads nothing; the library loaded. */
int node_list(amd_node *out, uint32_t cap, uint32_t *n, rig_edge_error *err);

/* What an open learns of its node. */
typedef struct node_info {
  int fd;
  amdgpu_device_handle dev;
  struct amdgpu_gpu_info gpu;
  char arch[16]; /* gfx name */
  char name[96]; /* marketing name */
  uint64_t vram, gtt; /* heap sizes */
  uint32_t drm_major, drm_minor;
} node_info;

/* Opens the render node, checks that it is a DRM device bound to the
 * amdgpu kernel driver, of AMD's vendor, of a family with a gfx name, and
 * initialises libdrm_amdgpu on it; RIG_EDGE_UNAVAILABLE naming the node and
 * what it is otherwise (nothing left open). */
int node_open(const amd_node *node, node_info *out, rig_edge_error *err);
void node_close(node_info *info);

/* ---- the open: one rig device ----------------------------------------------------- */

#define IB_DWORDS (64u * 1024u) /* the IB ring: 256 KiB */
#define ARGS_BYTES (1u << 20) /* the ring of dispatch packets and arguments */
#define STAMPS 4096u /* timestamp pairs in flight (profiles) */
#define CHUNKS 16u /* each ring's reuse is tracked per sixteenth */
#define WAITS_MAX 32u /* peer waits one submit's chunk holds; more wait on the host */
#define RING_BYTES (IB_DWORDS * 4u + ARGS_BYTES + 4096u + STAMPS * 16u)

/* A buffer object with its GPU address: an allocation, a borrow, a ring,
 * an image. */
typedef struct amem {
  amdgpu_bo_handle bo;
  amdgpu_va_handle range;
  uint64_t va, bytes;
  void *host; /* its CPU mapping, the borrowed range, or NULL */
  uint32_t kms; /* its handle in the submit's BO list */
  bool cpu_mapped; /* host is amdgpu_bo_cpu_map's */
} amem;

/* A ring whose space is reused once the GPU passed the value that last
 * used each sixteenth of it. */
typedef struct ring {
  uint32_t size, head; /* in the ring's unit (dwords, bytes) */
  uint64_t used[CHUNKS]; /* the last value that wrote into each chunk */
} amdring;

typedef struct amdprof amdprof; /* profile.c */

typedef struct amddev {
  struct amddev *next; /* the opens holding a node (library.c) */
  char name[48];
  node_info node;
  amd_node where;
  amdgpu_context_handle ctx;
  uint32_t syncobj; /* the timeline: one point per value */
  uint32_t hang_ms;
  bool stopped;
  bool walk; /* $RIG_AMDGPU_WALK: each IB framing-walked before its submit */
  pm4_target target;
  rig_edge_facts facts;
  pthread_mutex_t mlock; /* the BO list */
  struct drm_amdgpu_bo_list_entry *list;
  uint32_t nlist, caplist;
  amem *rings; /* IB ring, argument ring, word, stamps: one GTT object */
  amdring ib, args;
  volatile uint64_t *word; /* the timeline word RELEASE_MEM writes */
  uint64_t word_va, zeros_va, stamps_va;
  uint64_t taken; /* the last value submitted (atomic) */
  int lost; /* a loss seen (atomic); lost_why set before */
  char lost_why[200];
  amdprof *prof;
} amddev;

/* ---- memory.c ---- */

/* A buffer object of bytes in domain (AMDGPU_GEM_DOMAIN_*) with flags,
 * mapped at a GPU address, listed for submits, CPU-mapped where host. */
int mem_make(amddev *d, uint64_t bytes, uint32_t domain, uint64_t flags, bool host, amem **out,
             rig_edge_error *err);
void mem_free(amddev *d, amem *m);
int memory_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                    rig_edge_error *err);
int memory_release(void *h, rig_edge_alloc *a, rig_edge_error *err);
int memory_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err);

/* ---- queue.c ---- */

int queue_make(amddev *d, rig_edge_error *err);
/* Waits (bounded by the hang bound) for what was submitted. */
void queue_end(amddev *d);
void queue_free(amddev *d);
int queue_signaled(void *h, uint64_t *out, rig_edge_error *err);
int queue_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err);
int queue_submit(void *h, const rig_edge_work *work, rig_edge_error *err);
int queue_check(void *h, const rig_edge_work *work, rig_edge_error *err);
/* Blocks until value is reached, the device lost, or the hang bound. */
int queue_reach(amddev *d, uint64_t value, rig_edge_error *err);

/* ---- encode.c ---- */

/* The IB dwords and argument bytes w takes, at most. */
void encode_size(const amddev *d, const rig_edge_work *w, uint32_t *dwords, uint32_t *bytes);
/* Writes w's parts into b (arguments into the argument ring from *args_at). */
int encode_work(amddev *d, const rig_edge_work *w, pm4_buf *b, uint32_t *args_at,
                rig_edge_error *err);
/* RIG_EDGE_UNSUPPORTED for a part the queue cannot run: a launch of a
 * kernel and shape the dispatch refuses. */
int encode_check(const amddev *d, const rig_edge_part *p, rig_edge_error *err);

/* ---- loss.c ---- */

/* Asks the kernel for the context's reset state; a reset loses the open
 * with the kernel's word (guilty or innocent, VRAM lost). Returns whether
 * it is lost. */
bool loss_query(amddev *d);
/* Loses the open with why (a hang, a failed submit). */
void loss_mark(amddev *d, const char *why);
/* RIG_EDGE_FAULT with the reason where the open is lost, else OK. */
int loss_check(const amddev *d, rig_edge_error *err);

/* ---- module.c ---- */

int module_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
                rig_edge_error *err);
int module_resolve(void *h, void *image, const char *name, void **out_function,
                   rig_edge_error *err);
int module_unload(void *h, void *image, rig_edge_error *err);

/* A resolved kernel: its record and its image's GPU address. */
typedef struct amdfn {
  const co_kernel *k;
  uint64_t base;
} amdfn;

/* ---- waits.c ---- */

int waits_map_peer(void *h, void *peer, void **out, rig_edge_error *err);
void waits_unmap(void *h, void *mapping);
/* w's waits as a SYNCOBJ_TIMELINE_WAIT chunk's entries (at most
 * WAITS_MAX; the rest waited for here, blocking). */
int waits_chunk(amddev *d, const rig_edge_work *w, struct drm_amdgpu_cs_chunk_syncobj *out,
                uint32_t *n, rig_edge_error *err);

/* ---- profile.c ---- */

int profile_hand(void *h, rig_edge_profile *ring, rig_edge_error *err);
/* Whether part i of w is timed; *slot its timestamp pair's index. */
bool profile_begin(amddev *d, const rig_edge_work *w, uint32_t i, uint32_t *slot);
/* Writes the records of timed parts whose value d reached. Trylock. */
void profile_harvest(amddev *d, uint64_t reached);
void profile_free(amddev *d);

#endif
