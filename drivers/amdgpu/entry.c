/* SPDX-License-Identifier: MIT */
/* entry.c: the amdgpu driver, librig-driver-amdgpu.so (drivers/amdgpu/README.md):
 * its table, arguments, open, facts, stop, destroy and devices.
 *
 * Opened as "amdgpu:N[,hang_ms=MS]" for the Nth AMD render node in the
 * order of PCI addresses:
 *
 *   hang_ms=MS  the hang bound it states (HANG-1): core loses the device
 *               once its committed work makes no progress for MS ms (0:
 *               none); default 10000. The kernel's own job timeout resets
 *               a GPU stuck far longer; the bound answers sooner.
 *
 * It links librig-edge and the C library only: libdrm.so.2 and
 * libdrm_amdgpu.so.1 are dlopened at the first open (library.c), so "no
 * library" and "no device" are an open's RIG_UNAVAILABLE with the reason,
 * never a failure to load the plugin.
 *
 * Per open: a file of the render node, libdrm_amdgpu's device on it, one
 * context (its own loss domain), one timeline syncobj and one GTT buffer
 * object of about 1.4 MiB (the IB ring, the argument ring, the timeline
 * word, the timestamps). k (commit): 1, every submit goes to the kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_private.h"

static int parse(amddev *d, const char *args, uint32_t *index, rig_edge_error *err) {
  enum { HANG, NKEYS };
  rig_edge_arg keys[NKEYS] = {
      [HANG] = {.key = "hang_ms",
                .type = RIG_EDGE_ARG_NUMBER,
                .max = UINT32_MAX,
                .value = DEFAULT_HANG_MS},
  };
  size_t head;
  uint64_t n = 0;
  int r = rig_edge_args_parse("amdgpu", args, keys, NKEYS, &head, err);
  if (r != RIG_EDGE_OK)
    return r;
  if (!head || !rig_edge_args_number(args, head, 0, NODES_MAX - 1, &n))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "amdgpu: '%.*s' is not N, an AMD render node's index (0..%u)", (int)head,
                         args, NODES_MAX - 1);
  *index = (uint32_t)n;
  d->hang_ms = (uint32_t)keys[HANG].value;
  snprintf(d->name, sizeof d->name, "amdgpu:%u", *index);
  return RIG_EDGE_OK;
}

static void make_facts(amddev *d) {
  rig_edge_facts *f = &d->facts;
  f->size = sizeof *f;
  snprintf(f->arch, sizeof f->arch, "%s", d->node.arch); /* PROP-12 */
  f->type = RIG_EDGE_TYPE_GPU;
  snprintf(f->bus, sizeof f->bus, "%s", d->where.bus); /* PROP-24 */
  f->alignment = ALIGNMENT; /* PROP-28 */
  f->cache_bytes = 0; /* the kernel reports none */
  f->budget = d->node.vram; /* RECLAIM-66 */
  f->hang_ms = d->hang_ms;
  f->commit_k = 1;
  /* MAY_BLOCK: a submit waits for the rings' space the GPU has not passed. */
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_OWN_WORD | RIG_EDGE_MAPS_HOST | RIG_EDGE_MAY_BLOCK;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = 0;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
}

static int amd_facts(void *h, rig_edge_facts *out, rig_edge_error *err) {
  amddev *d = h;
  (void)err;
  uint32_t size = out->size; /* an older core knows a shorter struct */
  memcpy(out, &d->facts, size < sizeof d->facts ? size : sizeof d->facts);
  out->size = size;
  return RIG_EDGE_OK;
}

/* PROP-6: the queue ends once its work is done (bounded by the hang bound:
 * past it the open is lost). Memory, code and the word stay until destroy. */
static int amd_stop(void *h, rig_edge_error *err) {
  amddev *d = h;
  (void)err;
  if (!d->stopped)
    queue_end(d);
  d->stopped = true;
  return RIG_EDGE_OK;
}

/* A child of fork never calls into the parent's file (the fork hook marks
 * it): its handles are dropped, nothing given back to the kernel. */
static void amd_destroy(void *h) {
  amddev *d = h;
  if (d->node.dev && !library_in_child()) {
    queue_end(d);
    queue_free(d);
    free(d->list);
    if (d->syncobj)
      drm.amdgpu_cs_destroy_syncobj(d->node.dev, d->syncobj);
    if (d->ctx)
      drm.amdgpu_cs_ctx_free(d->ctx);
    node_close(&d->node);
  } else {
    free(d->list);
  }
  if (d->node.dev) {
    library_lock(true);
    library_drop(d);
    library_lock(false);
  }
  pthread_mutex_destroy(&d->mlock);
  free(d);
}

/* The context and timeline of an open, on its initialised node. */
static int make_queue(amddev *d, rig_edge_error *err) {
  int r = drm.amdgpu_cs_ctx_create2(d->node.dev, AMDGPU_CTX_PRIORITY_NORMAL, &d->ctx);
  if (r != 0) {
    d->ctx = NULL;
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: amdgpu_cs_ctx_create2: %s", d->name,
                         strerror(-r));
  }
  r = drm.amdgpu_cs_create_syncobj2(d->node.dev, 0, &d->syncobj);
  if (r != 0) {
    d->syncobj = 0;
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: amdgpu_cs_create_syncobj2: %s", d->name,
                         strerror(-r));
  }
  return queue_make(d, err);
}

/* Under the open lock: the library, the node of index, its open. */
static int open_node(amddev *d, uint32_t index, rig_edge_error *err) {
  amd_node nodes[NODES_MAX];
  uint32_t n = 0;
  int r = library_load(err);
  if (r == RIG_EDGE_OK)
    r = node_list(nodes, NODES_MAX, &n, err);
  if (r == RIG_EDGE_OK && index >= n)
    r = rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                      "amdgpu: no device: amdgpu:%u asked, %u AMD render node%s found", index, n,
                      n == 1 ? "" : "s");
  if (r == RIG_EDGE_OK) {
    d->where = nodes[index];
    r = node_open(&d->where, &d->node, err);
  }
  if (r == RIG_EDGE_OK)
    library_hold(d);
  return r;
}

static int amd_open(const char *args, void **out, rig_edge_error *err) {
  amddev *d = calloc(1, sizeof *d);
  if (!d)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: out of memory");
  d->node.fd = -1;
  pthread_mutex_init(&d->mlock, NULL);
  uint32_t index = 0;
  int r = parse(d, args, &index, err);
  if (r == RIG_EDGE_OK) {
    library_lock(true);
    r = open_node(d, index, err);
    library_lock(false);
  }
  if (r == RIG_EDGE_OK)
    r = make_queue(d, err);
  if (r != RIG_EDGE_OK) {
    amd_destroy(d);
    return r;
  }
  make_facts(d);
  *out = d;
  return RIG_EDGE_OK;
}

/* The fork hook (ABI 1.4): a fork waits for an open under way (it holds
 * the open lock while it loads the libraries and opens a node). In the
 * child, where the parent held a node, amdgpu is refused: libdrm_amdgpu
 * keeps one device per GPU for the process, and a child's initialise would
 * be handed the parent's file. */
static void amd_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_CHILD)
    library_forked();
  library_lock(phase == RIG_EDGE_FORK_PREPARE);
}

/* devices (ABI 1.5): "0".."N-1", the AMD render nodes; where there is
 * none, RIG_EDGE_UNAVAILABLE naming each DRM device looked at and why it is
 * not one, or "no library". */
static int amd_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  amd_node nodes[NODES_MAX];
  uint32_t count = 0;
  library_lock(true);
  int r = library_load(err);
  if (r == RIG_EDGE_OK)
    r = node_list(nodes, NODES_MAX, &count, err);
  library_lock(false);
  rig_edge_devices_numbered(names, cap, r == RIG_EDGE_OK ? count : 0, n);
  return r;
}

static const rig_edge_driver amdgpu_driver = {
    .abi_major = RIG_EDGE_ABI_MAJOR,
    .abi_minor = RIG_EDGE_ABI_MINOR,
    .size = sizeof(rig_edge_driver),
    .name = "amdgpu",
    .open = amd_open,
    .facts = amd_facts,
    .stop = amd_stop,
    .destroy = amd_destroy,
    .signaled = queue_signaled,
    .wait = queue_wait,
    .submit = queue_submit,
    .allocate = memory_allocate,
    .release = memory_release,
    .map = memory_map,
    .unmap = memory_release,
    .load = module_load,
    .resolve = module_resolve,
    .unload = module_unload,
    .check = queue_check,
    .map_peer = waits_map_peer,
    .unmap_word = waits_unmap,
    .fork = amd_fork,
    .devices = amd_devices,
    .profile = profile_hand,
};

RIG_EDGE_DRIVER(amdgpu_driver)
