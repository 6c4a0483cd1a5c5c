/* testdev.h: what the test device (testdev.c) shows its tests through its
 * capability "test.trace": the parts it ran, in the order they ran, with
 * the order core gave them (rig_edge_part.follows); and through
 * "test.destroys" (an _Atomic int, the driver's for the process): how many
 * of its handles core has destroyed. */
#ifndef RIG_TESTDEV_H
#define RIG_TESTDEV_H

#include <stddef.h>
#include <stdint.h>

#include <rig/edge.h>

typedef struct rig_test_trace_entry {
  uint64_t value;                          /* the work's value */
  uint32_t index;                          /* the part's index in its work */
  uint32_t kind, queue;                    /* enum rig_edge_part_kind */
  uint32_t follows[RIG_EDGE_MAX_QUEUES];
  uint32_t word0;                          /* a words part's first word */
} rig_test_trace_entry;

typedef struct rig_test_trace {
  void *h;
  /* Writes the last parts run, oldest first, at most max; returns how many. */
  size_t (*read)(void *h, rig_test_trace_entry *out, size_t max);
} rig_test_trace;

#endif
