/* util.c: the unit tests' own helpers (util.h). */
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

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

/* ---- opens that fail ---- */

void expect_open(const char *name, rig_status want, const char *needle) {
  rig_device *d = (rig_device *)0x1;
  rig_status st = rig_device_open(name, &d);
  const char *msg = rig_error_last()->message;
  if (st != want || !strstr(msg, needle))
    print_error("%s: %s: %s\n", name, rig_status_name(st), msg);
  assert_int_equal(st, want);
  assert_non_null(strstr(msg, needle));
  assert_ptr_equal(d, (rig_device *)0x1); /* no out-parameter written on failure */
}
