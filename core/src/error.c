/* SPDX-License-Identifier: MIT */
/* error.c: status codes and the thread's last error (ARCHITECTURE.md:
 * exceptions become statuses; the device, bytes and message go to
 * rig_error_last() with no allocation). */
#include <stdarg.h>
#include <stdio.h>

#include "device.h"
#include "message_fit.h"

static _Thread_local rig_error last;
/* The whole message, before it is fitted into last.message: paths give way
 * so that the advice after them stays (message_fit.h). */
static _Thread_local char whole[RIG__FIT_SCRATCH];

RIG_API const rig_error *rig_error_last(void) { return &last; }

RIG_API const char *rig_status_name(rig_status s) {
  switch (s) {
  case RIG_OK: return "RIG_OK";
  case RIG_INVALID: return "RIG_INVALID";
  case RIG_LOST: return "RIG_LOST";
  case RIG_OUT_OF_MEMORY: return "RIG_OUT_OF_MEMORY";
  case RIG_UNAVAILABLE: return "RIG_UNAVAILABLE";
  case RIG_INTERRUPTED: return "RIG_INTERRUPTED";
  case RIG_IO: return "RIG_IO";
  case RIG_BUSY: return "RIG_BUSY";
  }
  return "RIG_UNKNOWN";
}

/* Parenthesised, as rig__lost_error: the analyzer's build defines both
 * as macros (internal.h). */
rig_status(rig__fail)(rig_status s, const rig_device *d, uint64_t bytes, const char *fmt, ...) {
  va_list ap;
  last.status = s;
  last.device = d;
  last.bytes = bytes;
  va_start(ap, fmt);
  int n = vsnprintf(whole, sizeof whole, fmt, ap);
  va_end(ap);
  rig__message_fit(last.message, sizeof last.message, whole);
  /* A failing call always says something: a reason that came out empty
   * (a driver's empty text, say) still names the status. */
  if (n <= 0 && s != RIG_OK)
    snprintf(last.message, sizeof last.message, "%s (no reason given)", rig_status_name(s));
  return s;
}

rig_status(rig__lost_error)(const rig_device *d) {
  const char *why = atomic_load(&d->life.lost);
  return rig__fail(RIG_LOST, d, 0, "%s lost: %s", d->name, why ? why : "?");
}
