/* amdgpu_private.h: what the files of the amdgpu driver share
 * (drivers/amdgpu/README.md). Nothing here is exported: the plugin is
 * built with hidden visibility and exports only its entry symbol.
 *
 *   library.c   libdrm.so.2 and libdrm_amdgpu.so.1 by dlopen, their entry points
 *   gfx.c       the gfx name of a family and revision; a DRM device's description
 *   node.c      render nodes: the list (drmGetDevices2), the AMD ones, opening one
 *   entry.c     the driver table: arguments, open, facts, stop, destroy, devices
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

#include "gfx.h"

#define AMD_VENDOR 0x1002u
#define ALIGNMENT 4096u        /* a GPU page: every buffer object starts on one */
#define DEFAULT_HANG_MS 10000u
#define NODES_MAX 64u          /* render nodes looked at; more are not listed */

/* ---- library.c ------------------------------------------------------------- */

/* Each entry point the driver calls: (library, symbol). The struct member is
 * a pointer of the header's own type (__typeof__), so a signature that
 * differs from libdrm's header does not compile. */
#define AMDGPU_SYMBOLS(X)                                                                     \
  X(DRM, drmGetDevices2)                                                                      \
  X(DRM, drmGetDevice2)                                                                       \
  X(DRM, drmFreeDevices)                                                                      \
  X(DRM, drmFreeDevice)                                                                       \
  X(DRM, drmGetVersion)                                                                       \
  X(DRM, drmFreeVersion)                                                                      \
  X(AMD, amdgpu_device_initialize)                                                            \
  X(AMD, amdgpu_device_deinitialize)                                                          \
  X(AMD, amdgpu_query_gpu_info)                                                               \
  X(AMD, amdgpu_query_heap_info)                                                              \
  X(AMD, amdgpu_query_hw_ip_info)                                                             \
  X(AMD, amdgpu_get_marketing_name)                                                           \
  X(AMD, amdgpu_cs_ctx_create2)                                                               \
  X(AMD, amdgpu_cs_ctx_free)                                                                  \
  X(AMD, amdgpu_cs_query_reset_state2)                                                        \
  X(AMD, amdgpu_cs_create_syncobj2)                                                           \
  X(AMD, amdgpu_cs_destroy_syncobj)                                                           \
  X(AMD, amdgpu_cs_syncobj_query)                                                             \
  X(AMD, amdgpu_cs_syncobj_timeline_wait)                                                     \
  X(AMD, amdgpu_cs_submit_raw2)                                                               \
  X(AMD, amdgpu_bo_alloc)                                                                     \
  X(AMD, amdgpu_bo_free)                                                                      \
  X(AMD, amdgpu_bo_cpu_map)                                                                   \
  X(AMD, amdgpu_bo_cpu_unmap)                                                                 \
  X(AMD, amdgpu_bo_export)                                                                    \
  X(AMD, amdgpu_create_bo_from_user_mem)                                                      \
  X(AMD, amdgpu_va_range_alloc)                                                               \
  X(AMD, amdgpu_va_range_free)                                                                \
  X(AMD, amdgpu_bo_va_op)

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
 * the parent's, and none of its files is touched again. */
void library_forked(void);
/* Whether this process is a child of fork of one that had an amdgpu device
 * open: its opens were the parent's. Lock-free. */
bool library_in_child(void);
/* Counts opens that hold a render node (the fork hook's question). */
void library_hold(int delta);

/* ---- node.c ------------------------------------------------------------------ */

/* An AMD render node as the list found it. */
typedef struct amd_node {
  char path[64];             /* "/dev/dri/renderD128" */
  char bus[32];              /* "0000:03:00.0", or "" */
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
  char arch[16];             /* gfx name */
  char name[96];             /* marketing name */
  uint64_t vram, gtt;        /* heap sizes */
  uint32_t drm_major, drm_minor;
} node_info;

/* Opens the render node, checks that it is a DRM device bound to the
 * amdgpu kernel driver, of AMD's vendor, of a family with a gfx name, and
 * initialises libdrm_amdgpu on it; RIG_EDGE_UNAVAILABLE naming the node and
 * what it is otherwise (nothing left open). */
int node_open(const amd_node *node, node_info *out, rig_edge_error *err);
void node_close(node_info *info);

/* ---- the open: one rig device ----------------------------------------------------- */

typedef struct amddev {
  char name[48];
  node_info node;
  amd_node where;
  amdgpu_context_handle ctx;
  uint32_t syncobj;          /* the timeline: one point per value */
  uint32_t hang_ms;
  bool stopped;
  rig_edge_facts facts;
} amddev;

#endif
