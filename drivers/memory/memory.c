/* SPDX-License-Identifier: MIT */
/* memory.c: the memory driver, librig-driver-memory.so (OPEN-38..44).
 *
 * A memory device's memory is its own, in host memory this process
 * addresses, and its work is this process's: fills and copies that run
 * before submit returns, on a timeline of its own. It loads no code and
 * times no work. Tests use it to stand for a GPU in code that orders work
 * across devices. It links librig-edge only.
 *
 * Per open it keeps one small record, freed when the device is destroyed.
 * k (commit): every value is committed by submit itself.
 */
#include <stdlib.h>
#include <string.h>

#include <rig/edge.h>

#define ALIGN 64 /* PROP-29 */

typedef struct memdev {
  volatile uint64_t *word;
} memdev;

/* "memory:NAME": NAME is the device's name, and the driver takes no key,
 * so a ",key=value" is refused as unknown (rig_edge_args_parse) rather
 * than ignored. */
static int mem_open(const char *args, void **out, rig_edge_error *err) {
  int r = rig_edge_args_parse("memory", args, NULL, 0, NULL, err);
  if (r != RIG_EDGE_OK)
    return r;
  memdev *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "memory: out of memory");
  *out = m;
  return RIG_EDGE_OK;
}

static int mem_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  (void)h;
  (void)err;
  strcpy(f->arch, "memory");                            /* PROP-20 */
  f->alignment = ALIGN;
  f->cache_bytes = rig_edge_host_cache_bytes();         /* PROP-36 */
  f->budget = rig_edge_host_memory_bytes();             /* docs/decisions.md */
  f->flags = RIG_EDGE_MAPS_HOST | RIG_EDGE_HOST_ADDRESSES | RIG_EDGE_RUNS_ON_HOST |
             RIG_EDGE_COMPUTES | RIG_EDGE_SYNCHRONOUS;  /* MACH-16, PROP-26 */
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE; /* OPEN-42 */
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
  f->commit_k = 1;
  f->type = RIG_EDGE_TYPE_MEMORY;
  return RIG_EDGE_OK;
}

/* Every "memory:NAME" opens a memory device of its own, so there is no
 * list of them: it offers one, "memory:0", so that a program that lists
 * devices sees that memory devices open here (docs/finding-devices.md). */
static int mem_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  (void)err;
  rig_edge_devices_numbered(names, cap, 1, n);
  return RIG_EDGE_OK;
}

static int mem_stop(void *h, rig_edge_error *err) {
  (void)h;
  (void)err;
  return RIG_EDGE_OK; /* no queue: work ended with each submit */
}

static void mem_destroy(void *h) { free(h); }

static int mem_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  (void)err;
  ((memdev *)h)->word = word;
  return RIG_EDGE_OK;
}

static int mem_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                        rig_edge_error *err) {
  (void)h;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "memory: only its own memory");
  void *p = NULL;
  /* Large allocations start on a page, as the host's do, so that a copy
   * between the two does not stall on 4 KiB aliasing, and so that devices
   * that map only pages can borrow them. */
  size_t align = bytes >= 65536 ? 4096 : ALIGN;
  if (posix_memalign(&p, align, bytes ? bytes : 1) != 0)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "memory: no %llu bytes",
                         (unsigned long long)bytes);
  out->handle = p;
  out->host = p;
  out->address = (uint64_t)(uintptr_t)p;
  out->bytes = bytes;
  return RIG_EDGE_OK;
}

static int mem_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  (void)h;
  (void)err;
  free(a->handle);
  return RIG_EDGE_OK;
}

static int mem_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  memdev *m = h;
  for (uint32_t i = 0; i < w->nparts; i++) {
    int r = rig_edge_run_on_host(&w->parts[i], err);
    if (r != RIG_EDGE_OK)
      return r;
  }
  rig_edge_word_store(m->word, w->value); /* OPEN-41: done before submit returns */
  return RIG_EDGE_OK;
}

static const rig_edge_driver memory_driver = {
    RIG_EDGE_DRIVER_INIT("memory"),
    .open = mem_open,
    .facts = mem_facts,
    .stop = mem_stop,
    .destroy = mem_destroy,
    .bind_word = mem_bind_word,
    .submit = mem_submit,
    .allocate = mem_allocate,
    .release = mem_release,
    .devices = mem_devices,
};

RIG_EDGE_DRIVER(memory_driver)
