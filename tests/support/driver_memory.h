/* driver_memory.h: what the drivers the tests define (tables passed to
 * rig_device_open_driver, and the test plugins) take from the memory
 * driver (drivers/memory): its host memory, taken and given back, and its
 * queues, so that each test's table states only what its test is about.
 * Needs <rig/edge.h> only, as a driver does. */
#ifndef RIG_TEST_DRIVER_MEMORY_H
#define RIG_TEST_DRIVER_MEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include <rig/edge.h>

/* Takes bytes of host memory into out: large ones start on a page, as a
 * GPU's and the host's do, so that other drivers can borrow them
 * (MACH-23). host: whether the host addresses them (out->host); address:
 * whether they have a device address (else handle-only, 0). Returns
 * RIG_EDGE_OK, or RIG_EDGE_NO_ROOM with a message that begins with who.
 * Does not block; the memory is not zeroed. */
int driver_memory_take(const char *who, uint64_t bytes, bool host, bool address,
                       rig_edge_alloc *out, rig_edge_error *err);

/* Sets the queues of f as the memory driver states them: one, that runs
 * copies and fills; no queue for launches or words. */
void driver_memory_queues(rig_edge_facts *f);

/* Table entries (rig_edge_driver's allocate and release). */
/* The memory driver's: its own memory (RIG_EDGE_KIND_DEVICE) only, which
 * the host addresses; other kinds are RIG_EDGE_UNSUPPORTED. */
int driver_memory_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                           rig_edge_error *err);
/* Any kind, as device memory the host does not address. */
int driver_memory_allocate_unaddressed(void *h, uint32_t kind, uint64_t bytes,
                                       rig_edge_alloc *out, rig_edge_error *err);
/* Gives back what either took. Returns RIG_EDGE_OK. */
int driver_memory_release(void *h, rig_edge_alloc *a, rig_edge_error *err);

#endif
