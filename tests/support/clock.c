/* clock.c: time in the tests (clock.h). */
#define _GNU_SOURCE
#include "clock.h"

#include <stdatomic.h>
#include <time.h>

/* Monotonic, so that a clock step cannot move a test's deadlines. */
double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps again for what is left after a signal, so that polls wait as long
 * as they say. */
void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

/* Read by past_deadline from whatever thread blocks in rig. */
static _Atomic double deadline;

/* Each test arms its own deadline (in its setup), so that one that hangs
 * cannot use up the time of the next. */
void arm_deadline(double secs) { atomic_store(&deadline, now_s() + secs); }

/* The wait hook ends a blocking call once the test's deadline passed: the
 * call then returns RIG_INTERRUPTED, which fails an assertion instead of
 * hanging the test. */
int past_deadline(void *ctx) {
  (void)ctx;
  return now_s() > atomic_load(&deadline);
}

int stop_now(void *ctx) {
  (void)ctx;
  return 1;
}
