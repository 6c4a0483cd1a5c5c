/* util.h: what the unit tests (tests/unit/test_*.c) share. The helpers of
 * every test suite are in tests/support (check.h, clock.h, child.h); this
 * adds the unit tests' own, which read slots and timelines. */
#ifndef RIG_UNIT_UTIL_H
#define RIG_UNIT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

#include "check.h"
#include "clock.h"

/* ---- slots and timelines ----------------------------------------------- */

/* The slot d holds. */
uint32_t slot_of(const rig_device *d);
/* Where the timeline of the next device opened will start, learnt through
 * a memory device called name, opened and closed. */
uint64_t probe_start(const char *name);

/* ---- opens that fail ---------------------------------------------------- */

/* Asserts that rig_device_open(name) returns want with a message holding
 * needle, and writes no out-parameter. */
void expect_open(const char *name, rig_status want, const char *needle);

#endif
