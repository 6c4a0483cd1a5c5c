/* driver_memory.c: the memory of the tests' own drivers (driver_memory.h). */
#include "driver_memory.h"

#include <stdlib.h>

int driver_memory_take(const char *who, uint64_t bytes, bool host, bool address,
                       rig_edge_alloc *out, rig_edge_error *err) {
  void *p = NULL;
  if (posix_memalign(&p, bytes >= 65536 ? 4096 : 256, bytes ? bytes : 1) != 0)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: no %llu bytes", who,
                         (unsigned long long)bytes);
  out->handle = p;
  out->host = host ? p : NULL;
  out->address = address ? (uint64_t)(uintptr_t)p : 0;
  out->bytes = bytes;
  return RIG_EDGE_OK;
}

void driver_memory_queues(rig_edge_facts *f) {
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
}

int driver_memory_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                           rig_edge_error *err) {
  (void)h;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "only its own memory");
  return driver_memory_take("memory", bytes, true, true, out, err);
}

int driver_memory_allocate_unaddressed(void *h, uint32_t kind, uint64_t bytes,
                                       rig_edge_alloc *out, rig_edge_error *err) {
  (void)h;
  (void)kind;
  return driver_memory_take("memory", bytes, false, true, out, err);
}

int driver_memory_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  (void)h;
  (void)err;
  free(a->handle);
  return RIG_EDGE_OK;
}
