/* clock.h: time in the tests: the monotonic clock, sleeps, and the
 * deadline that ends a test's blocking calls instead of letting it hang.
 * No test asserts on a time: these bound waits and print durations. */
#ifndef RIG_TEST_CLOCK_H
#define RIG_TEST_CLOCK_H

/* Seconds on the monotonic clock. Does not block. */
double now_s(void);
/* Sleeps ms milliseconds, whatever signals interrupt it. Blocks. */
void sleep_ms(unsigned ms);

/* Sets the test's deadline secs seconds from now. */
void arm_deadline(double secs);
/* A wait hook (rig_runtime_set_wait_hook): nonzero, ending a blocking
 * call, once the deadline armed last passed; ctx is unused. */
int past_deadline(void *ctx);
/* A wait hook that ends every wait at once: a call that has to wait
 * returns RIG_INTERRUPTED, one that need not wait never asks it; ctx is
 * unused. */
int stop_now(void *ctx);

#endif
