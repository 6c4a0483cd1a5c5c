/* util.c: the helpers the unit tests share (util.h). */
#define _GNU_SOURCE
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- time -------------------------------------------------------------- */

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

/* ---- the deadline of blocking calls ------------------------------------ */

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

/* ---- calls that must succeed ------------------------------------------- */

/* Prints what failed and rig's message before the assertion, which shows
 * only the status's number. */
void check_ok(rig_status st, const char *what) {
  if (st != RIG_OK)
    print_error("%s: %s: %s\n", what, rig_status_name(st), rig_error_last()->message);
  assert_int_equal(st, RIG_OK);
}

/* The short form, for tests whose calls need no name: the status's name
 * and rig's message say enough. */
void ok(rig_status st) {
  if (st != RIG_OK)
    fail_msg("%s: %s", rig_status_name(st), rig_error_last()->message);
}

/* Names the device in the message, as most tests open several. */
rig_device *open_ok(const char *name) {
  rig_device *d = NULL;
  check_ok(rig_device_open(name, &d), name);
  assert_non_null(d);
  return d;
}

/* Buffers are made in nearly every test; a failure says which call. */
rig_buffer *create_ok(rig_device *d, size_t n) {
  rig_buffer *b = NULL;
  check_ok(rig_buffer_create(d, n, &b), "rig_buffer_create");
  return b;
}

void *kernel_object(const char *name, size_t *n) {
  char path[512];
  const char *dir = getenv("RIG_KERNELS");
  snprintf(path, sizeof path, "%s/%s.o", dir ? dir : ".", name);
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("no kernel %s: build the tests (RIG_KERNELS=%s)", path, dir ? dir : "");
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = malloc(*n ? *n : 1);
  assert_non_null(b);
  assert_int_equal(fread(b, 1, *n, f), *n);
  fclose(f);
  return b;
}

rig_image *kernel_load(const char *name) {
  size_t n;
  void *b = kernel_object(name, &n);
  rig_image *im = NULL;
  rig_status st = rig_image_load(rig_device_host(), b, n, &im);
  free(b);
  check_ok(st, "rig_image_load");
  return im;
}

/* Closes before releasing, so that the close's status is checked and the
 * device's slot and memory come back before the next test. */
void close_release(rig_device *d) {
  check_ok(rig_device_close(d), "rig_device_close");
  rig_device_release(d);
}

/* ---- slots and timelines ----------------------------------------------- */

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

/* ---- rig_runtime_fail, which fails the whole process --------------------------- */

void run_in_child(void (*child)(void)) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    child();
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    print_error("the child ended with status %#x\n", status);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_null(rig_runtime_failure());
}

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
