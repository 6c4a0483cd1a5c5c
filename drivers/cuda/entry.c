/* SPDX-License-Identifier: MIT */
/* entry.c: the CUDA driver, librig-driver-cuda.so (drivers/cuda/README.md):
 * its table, arguments, open, facts, stop and destroy.
 *
 * Opened as "cuda:N[,key=value...]" for the GPU of ordinal N:
 *
 *   stream=K    a further device on the same GPU with its own stream
 *               (0..255; default 0): cuda:0 and cuda:0,stream=1 are two rig
 *               devices, on one context, that order work between them
 *   hang_ms=MS  the hang bound it states (HANG-1): core loses the device
 *               once its committed work makes no progress for MS ms (0:
 *               none); default 10000
 *
 * It links librig-edge and the C library only: libcuda.so.1 is dlopened
 * at the first open (library.c), so "no library" and "no device" are an
 * open's RIG_UNAVAILABLE with the reason, never a failure to load the
 * plugin.
 *
 * k (commit): 1, every submit goes to its stream at once.
 * Per open: a stream, 64 bytes of pinned memory (its word) and a record of
 * about 17 KiB (its fallback ring); per GPU: the retained primary context.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_private.h"

static int parse(cudev *d, const char *args, int *ordinal, rig_edge_error *err) {
  enum { STREAM, HANG, NKEYS };
  rig_edge_arg keys[NKEYS] = {
      [STREAM] = {.key = "stream", .type = RIG_EDGE_ARG_NUMBER, .max = 255},
      [HANG] = {.key = "hang_ms", .type = RIG_EDGE_ARG_NUMBER, .max = UINT32_MAX,
                .value = DEFAULT_HANG_MS},
  };
  size_t head;
  uint64_t n = 0;
  int r = rig_edge_args_parse("cuda", args, keys, NKEYS, &head, err);
  if (r != RIG_EDGE_OK)
    return r;
  if (!head || !rig_edge_args_number(args, head, 0, 255, &n))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "cuda: '%.*s' is not N, a GPU's ordinal (0..255)", (int)head, args);
  *ordinal = (int)n;
  d->stream_label = (uint32_t)keys[STREAM].value;
  d->hang_ms = (uint32_t)keys[HANG].value;
  if (keys[STREAM].given)
    snprintf(d->name, sizeof d->name, "cuda:%d,stream=%u", *ordinal, d->stream_label);
  else
    snprintf(d->name, sizeof d->name, "cuda:%d", *ordinal);
  return RIG_EDGE_OK;
}

static void make_facts(cudev *d) {
  const gpu *g = d->g;
  rig_edge_facts *f = &d->facts;
  f->size = sizeof *f;
  snprintf(f->arch, sizeof f->arch, "%s", g->arch);  /* PROP-12 */
  f->type = RIG_EDGE_TYPE_GPU;
  snprintf(f->bus, sizeof f->bus, "%s", g->bus);     /* PROP-24 */
  f->alignment = ALIGNMENT;                          /* PROP-28 */
  f->cache_bytes = g->l2;                            /* PROP-32 */
  f->budget = g->memory;                             /* RECLAIM-66 */
  f->hang_ms = d->hang_ms;
  f->commit_k = 1;
  /* MAY_BLOCK: a launch or copy blocks while CUDA's queue of the stream
   * is full, and the fallback's submit while its ring is. */
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_OWN_WORD | RIG_EDGE_MAPS_HOST | RIG_EDGE_MAY_BLOCK |
             (d->waits ? RIG_EDGE_QUEUE_WAITS : 0);
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = 0;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
}

static void make_record(cudev *d, int ordinal) {
  const gpu *g = d->g;
  rig_cuda_device *c = &d->record;
  c->size = sizeof *c;
  c->ordinal = ordinal;
  snprintf(c->name, sizeof c->name, "%s", g->name);
  c->memory_bytes = g->memory;
  c->sm_count = g->sms;
  c->cc_major = g->cc_major;
  c->cc_minor = g->cc_minor;
  c->driver_version = g->driver_version;
  c->stream_mem_ops = d->waits;
  c->context = g->ctx;
  c->stream = d->stream;
}

static int cuda_facts(void *h, rig_edge_facts *out, rig_edge_error *err) {
  cudev *d = h;
  (void)err;
  uint32_t size = out->size; /* an older core knows a shorter struct */
  memcpy(out, &d->facts, size < sizeof d->facts ? size : sizeof d->facts);
  out->size = size;
  return RIG_EDGE_OK;
}

/* PROP-6: the stream ends once its work is done (bounded by the hang
 * bound: past it the context is lost). Memory, code and the word stay
 * until destroy: core may still give memory back, and peers' queues wait
 * on the word until their mappings are back. */
static int cuda_stop(void *h, rig_edge_error *err) {
  cudev *d = h;
  (void)err;
  if (d->stopped)
    return RIG_EDGE_OK;
  d->stopped = true;
  queue_end(d);
  return RIG_EDGE_OK;
}

static void cuda_destroy(void *h) {
  cudev *d = h;
  if (d->g) {
    queue_end(d);
    module_free_all(d);
    params_free(d);
    memory_free_all(d);
    queue_free(d);
    gpu_put(d->g);
  }
  pthread_mutex_destroy(&d->mlock);
  pthread_mutex_destroy(&d->ilock);
  free(d);
}

static int cuda_open(const char *args, void **out, rig_edge_error *err) {
  cudev *d = calloc(1, sizeof *d);
  if (!d)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "cuda: out of memory");
  pthread_mutex_init(&d->mlock, NULL);
  pthread_mutex_init(&d->ilock, NULL);
  int ordinal = 0;
  int r = parse(d, args, &ordinal, err);
  if (r == RIG_EDGE_OK && !(d->g = gpu_get(ordinal, err)))
    r = RIG_EDGE_UNAVAILABLE;
  if (r == RIG_EDGE_OK) {
    d->waits = d->g->mem_ops64;
    r = queue_make(d, err);
  }
  if (r != RIG_EDGE_OK) {
    cuda_destroy(d);
    return r;
  }
  make_facts(d);
  make_record(d, ordinal);
  *out = d;
  return RIG_EDGE_OK;
}

static const void *cuda_capability(void *h, const char *key) {
  cudev *d = h;
  return strcmp(key, RIG_CUDA_DEVICE) == 0 ? &d->record : NULL;
}

/* The edge's fork hook (ABI 1.4): a fork waits for an open under way,
 * which holds the open lock while it loads the library and retains a
 * context, so the child finds the lock free. In the child, before the lock
 * goes, the parent's GPUs are marked lost and CUDA refused (gpu_forked):
 * core calls no handle of the parent's there (STOP-20), and where one were
 * called it would fail without a call into the parent's context. */
static void cuda_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_CHILD)
    gpu_forked();
  gpu_lock_opens(phase == RIG_EDGE_FORK_PREPARE);
}

/* devices (ABI 1.5): "0".."N-1", the GPUs libcuda lists; "no library" or
 * "no device" where it lists none. */
static int cuda_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  uint32_t count = 0;
  int r = gpu_count(&count, err);
  rig_edge_devices_numbered(names, cap, count, n);
  return r;
}

static const rig_edge_driver cuda_driver = {
    .abi_major = RIG_EDGE_ABI_MAJOR,
    .abi_minor = RIG_EDGE_ABI_MINOR,
    .size = sizeof(rig_edge_driver),
    .name = "cuda",
    .open = cuda_open,
    .facts = cuda_facts,
    .stop = cuda_stop,
    .destroy = cuda_destroy,
    .signaled = queue_signaled,
    .wait = queue_wait,
    .map_word = queue_map_word,
    .unmap_word = queue_unmap_word,
    .submit = queue_submit,
    .allocate = memory_allocate,
    .release = memory_release,
    .map = memory_map,
    .unmap = memory_release,
    .peer = memory_peer,
    .load = module_load,
    .resolve = module_resolve,
    .unload = module_unload,
    .capability = cuda_capability,
    .check = module_check,
    .map_peer = queue_map_peer,
    .fork = cuda_fork,
    .devices = cuda_devices,
    .profile = profile_hand,
};

RIG_EDGE_DRIVER(cuda_driver)
