/* util.c: the unit tests' own helpers (util.h). */
#include "util.h"

/* Read from d's point at value 0, which carries the slot (OPEN-9). */
uint32_t slot_of(const rig_device *d) { return rig_point_slot(rig_device_point(d, 0)); }

/* A memory device opened and closed with nothing submitted gives its slot
 * back with its start value, and the next open takes the most recently
 * freed slot. Tests that need an absolute value (a test device's fault_at)
 * learn it here, and check that it held. */
uint64_t probe_start(const char *name) {
  rig_device *p = NULL;
  check_ok(rig_device_open_memory(name, &p), "probe");
  uint64_t s = rig_device_submitted(p);
  close_release(p);
  return s;
}
