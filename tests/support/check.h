/* check.h: the cmocka side of the tests' helpers: calls that must succeed,
 * kernels that must load, children that must pass. Each fails the test
 * that calls it, with rig's message, where its call does not succeed. */
#ifndef RIG_TEST_CHECK_H
#define RIG_TEST_CHECK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
/* Asserts that call, an expression of type rig_status, is RIG_OK: where
 * not, prints the call's own text, the status and rig's last message, so
 * that a failure says which of a test's many calls it was. */
#define ok(call) check_ok((call), #call)
/* Opens name, asserting it opened; the caller owns the reference. */
rig_device *open_ok(const char *name);
/* Opens name where it opens (the caller owns the reference); elsewhere
 * skips the test (cmocka's skip), printing why, as for a device this
 * machine lacks (vulkan:0 where no Vulkan driver is). */
rig_device *open_or_skip(const char *name);
/* A new n-byte buffer of d, asserting it was made; the caller owns it. */
rig_buffer *create_ok(rig_device *d, size_t n);
/* Closes d, asserting the close succeeded, and drops the test's reference.
 * Blocks as rig_device_close does. */
void close_release(rig_device *d);

/* How often the stop of the loaded test plugin at path ran (its
 * rig_test_stops, tests/driver/badplugin.c); fails the test where the
 * plugin is not loaded. */
int plugin_stops(const char *path);

/* ---- the device under test (a driver's own tests) ---------------------- */

/* Sets the device a driver's tests run on: $variable where it is set and
 * not empty (e.g. RIG_VK_DEVICE=vulkan:1), else fallback ("vulkan:0"). */
void device_under_test_from(const char *variable, const char *fallback);
/* The device under test's name with options (",k=1"; "" for none)
 * appended, in a buffer of check.c's that the next call rewrites. */
const char *device_under_test(const char *options);
/* The device under test opened with options, asserting it opened; the
 * caller owns the reference. */
rig_device *open_under_test(const char *options);

/* Asserts each of the n bytes of b from offset is byte, naming the first
 * that is not. Blocks as rig_buffer_get does. */
void expect_bytes(rig_buffer *b, uint64_t offset, size_t n, uint8_t byte);

/* ---- host kernels (tests/kernels) --------------------------------------- */

/* The bytes of $RIG_KERNELS/file (file: "add.o", "kernels/vulkan/fill.spv"),
 * which the caller frees; fails the test when the kernel is not built. */
void *kernel_file_ok(const char *file, size_t *n);
/* The bytes of $RIG_KERNELS/NAME.o, as kernel_file_ok. */
void *kernel_object(const char *name, size_t *n);
/* Kernel NAME.o loaded onto the host, asserting the load succeeded; the
 * caller owns the image. */
rig_image *kernel_load(const char *name);

/* The text of CUDA kernel NAME.ptx in $RIG_CUDA_KERNELS (where unset,
 * drivers/cuda/kernels), NUL-terminated, with *n its bytes before the NUL,
 * in a buffer of check.c's that the next call rewrites; fails the test
 * where the file cannot be read. */
const char *ptx_text(const char *name, size_t *n);

/* $RIG_KERNELS/file (e.g. "kernels/vulkan/fill.spv") loaded onto d and its
 * function entry resolved into *f, asserting both; the caller owns the
 * image. */
rig_image *kernel_load_on(rig_device *d, const char *file, const char *entry, rig_function **f);

/* ---- launches ----------------------------------------------------------- */

/* The function name of im, asserting it resolved to one; im owns it. */
rig_function *resolve_ok(rig_image *im, const char *name);
/* A submission on d of one launch of f over refs (nrefs of them; NULL
 * and 0 for none) with a parameter block of params bytes, asserting it
 * was made; the caller owns it, and it holds f's code (RUN-8). */
rig_submission *launch_make_ok(rig_device *d, const rig_function *f, const rig_ref *refs,
                               uint32_t nrefs, uint32_t params);
/* A run of s, asserting it was taken; the run is s's until submitted. */
rig_run *take_ok(rig_submission *s);
/* Sets block k of run to a grid of groups groups of threads threads on
 * the first axis (one on the others), asserting both calls succeeded. */
void grid_ok(rig_run *run, uint32_t k, uint64_t groups, uint64_t threads);

/* The seed's add example (tests/kernels/add.c, kernels/vulkan/add.comp):
 * z = x + y over n floats, its parameter block x, y, z at 0, 8, 16 and n
 * at 24. add_example_inputs sets x[i] = i, y[i] = i / 2, z[i] = -1;
 * add_example_run takes a run of s (one launch of add) and submits it
 * over x, y, z in 64 groups of (n + 63) / 64 threads, asserting each call
 * (RUN-5..7, OBJ-5, OBJ-6): its point; add_example_expect asserts every
 * z[i] is 1.5 i, naming where and the first float that is not. */
void add_example_inputs(float *xs, float *ys, float *zs, int64_t n);
rig_point add_example_run(rig_submission *s, rig_buffer *x, rig_buffer *y, rig_buffer *z,
                          int64_t n);
void add_example_expect(const float *zs, int64_t n, const char *where);

/* ---- work on other threads --------------------------------------------- */

/* A fill that fill_thread_run (a pthread_create start) submits on its own
 * thread: b filled with size bytes of pattern; then its point and status,
 * and done set once its submit returned. */
typedef struct fill_thread {
  rig_buffer *b;
  uint32_t pattern, size;
  rig_point p;
  rig_status st;
  atomic_bool done;
} fill_thread;
void *fill_thread_run(void *fill);

/* qsort's comparison of two uint64_t (rig_point values among them). */
int compare_u64(const void *a, const void *b);

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
