/* util.h: the helpers the unit tests (tests/unit/test_*.c) share. util.c
 * is built into every unit test executable; it needs only <rig/rig.h> and
 * cmocka, so helpers that need <rig/edge.h> stay in their test files. */
#ifndef RIG_UNIT_UTIL_H
#define RIG_UNIT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

/* UNDER_ASAN is defined when the file is built with AddressSanitizer, and
 * UNDER_TSAN with ThreadSanitizer: tests that cannot run under one skip. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
/* ---- rig_runtime_fail, which fails the whole process --------------------------- */

/* Runs child, which ends with _exit(0) when its checks hold, in a forked
 * child; asserts it did, and that this process has not failed. */
void run_in_child(void (*child)(void));

#endif
/* ---- rig_runtime_fail, which fails the whole process --------------------------- */

/* Runs child, which ends with _exit(0) when its checks hold, in a forked
 * child; asserts it did, and that this process has not failed. */
void run_in_child(void (*child)(void));

#endif
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
/* ---- rig_runtime_fail, which fails the whole process --------------------------- */

/* Runs child, which ends with _exit(0) when its checks hold, in a forked
 * child; asserts it did, and that this process has not failed. */
void run_in_child(void (*child)(void));

#endif
/* ---- rig_runtime_fail, which fails the whole process --------------------------- */

/* Runs child, which ends with _exit(0) when its checks hold, in a forked
 * child; asserts it did, and that this process has not failed. */
void run_in_child(void (*child)(void));

#endif

/* ---- time -------------------------------------------------------------- */

/* Seconds on the monotonic clock. */
double now_s(void);
/* Sleeps ms milliseconds, whatever signals interrupt it. */
void sleep_ms(unsigned ms);

/* ---- the deadline of blocking calls ------------------------------------ */

/* Sets the test's deadline secs seconds from now. */
void arm_deadline(double secs);
/* A wait hook (rig_runtime_set_wait_hook): ends a blocking call once the deadline
 * armed last passed; ctx is unused. */
int past_deadline(void *ctx);

/* ---- calls that must succeed ------------------------------------------- */

/* Asserts st is RIG_OK, printing what and the last error when it is not. */
void check_ok(rig_status st, const char *what);
/* Asserts st is RIG_OK, failing with the last error's message when not. */
void ok(rig_status st);
/* Opens name, asserting it opened. */
rig_device *open_ok(const char *name);
/* A new n-byte buffer of d, asserting it was made. */
rig_buffer *create_ok(rig_device *d, size_t n);
/* Closes d, asserting the close succeeded, and drops the test's reference. */
void close_release(rig_device *d);

/* ---- host kernels (tests/kernels) --------------------------------------- */

/* The bytes of $RIG_KERNELS/NAME.o, which the caller frees; fails the test
 * when the kernel is not built. */
void *kernel_object(const char *name, size_t *n);
/* Kernel NAME.o loaded onto the host, asserting the load succeeded. */
rig_image *kernel_load(const char *name);

/* ---- slots and timelines ----------------------------------------------- */

/* The slot d holds. */
uint32_t slot_of(const rig_device *d);
/* Where the timeline of the next device opened will start, learnt through
 * a memory device called name, opened and closed. */
uint64_t probe_start(const char *name);

/* ---- opens that fail --------------------------------------------------------- */

/* Asserts that rig_device_open(name) returns want with a message holding
 * needle, and writes no out-parameter. */
void expect_open(const char *name, rig_status want, const char *needle);

/* ---- rig_runtime_fail, which fails the whole process --------------------------- */

/* Runs child, which ends with _exit(0) when its checks hold, in a forked
 * child; asserts it did, and that this process has not failed. */
void run_in_child(void (*child)(void));

#endif
