/* check.h: the cmocka side of the tests' helpers: calls that must succeed,
 * kernels that must load, children that must pass. Each fails the test
 * that calls it, with rig's message, where its call does not succeed. */
#ifndef RIG_TEST_CHECK_H
#define RIG_TEST_CHECK_H

#include <stddef.h>
#include <sys/types.h>

#include <rig/rig.h>

#include "clock.h"

/* UNDER_ASAN is defined when the file is built with AddressSanitizer, and
 * UNDER_TSAN with ThreadSanitizer: tests that cannot run under one skip. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* ---- calls that must succeed ------------------------------------------- */

/* Asserts st is RIG_OK, printing what and the last error when it is not. */
void check_ok(rig_status st, const char *what);
/* Asserts st is RIG_OK, failing with the last error's message when not. */
void ok(rig_status st);
/* Opens name, asserting it opened; the caller owns the reference. */
rig_device *open_ok(const char *name);
/* A new n-byte buffer of d, asserting it was made; the caller owns it. */
rig_buffer *create_ok(rig_device *d, size_t n);
/* Closes d, asserting the close succeeded, and drops the test's reference.
 * Blocks as rig_device_close does. */
void close_release(rig_device *d);

/* How often the stop of the loaded test plugin at path ran (its
 * rig_test_stops, tests/driver/badplugin.c); fails the test where the
 * plugin is not loaded. */
int plugin_stops(const char *path);

/* ---- host kernels (tests/kernels) --------------------------------------- */

/* The bytes of $RIG_KERNELS/NAME.o, which the caller frees; fails the test
 * when the kernel is not built. */
void *kernel_object(const char *name, size_t *n);
/* Kernel NAME.o loaded onto the host, asserting the load succeeded; the
 * caller owns the image. */
rig_image *kernel_load(const char *name);

/* $RIG_KERNELS/file (e.g. "kernels/vulkan/fill.spv") loaded onto d and its
 * function entry resolved into *f, asserting both; the caller owns the
 * image. */
rig_image *kernel_load_on(rig_device *d, const char *file, const char *entry, rig_function **f);

/* ---- children ----------------------------------------------------------- */

/* child_fork, asserting the fork succeeded. */
pid_t fork_ok(void);
/* Waits for pid and asserts that it exited 0, printing how it ended (its
 * status, or the signal that ended it) where it did not. Blocks. */
void wait_child_ok(pid_t pid);
/* Waits for pid, asserts that it exited rather than died of a signal, and
 * returns its exit status. Blocks. */
int wait_child_exit(pid_t pid);
/* child_exec_self (this program again as argv, without variable unset),
 * asserting that it exited rather than died of a signal: its exit status.
 * Blocks. */
int run_self(char *const argv[], const char *unset);
/* Runs child, which ends with _exit(0) when its checks hold, in a forked
 * child; asserts it did, and that this process has not failed. */
void run_in_child(void (*child)(void));
/* Runs body in a forked child with the fault signals at their defaults,
 * so that a signal that would end a program ends the child, not the test
 * runner; the child exits with what body returns. Asserts it exits 0,
 * printing which check failed (its exit status) or the signal. */
void in_child(int (*body)(void));

#endif
