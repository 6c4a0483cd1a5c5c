/* check.c: the cmocka side of the tests' helpers (check.h). */
#define _GNU_SOURCE
#include "check.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child.h"
#include "kernel_file.h"

/* ---- calls that must succeed ------------------------------------------- */

/* Prints what failed and rig's message before the assertion, which shows
 * only the status's number. */
void check_ok(rig_status st, const char *what) {
  if (st != RIG_OK)
    print_error("%s: %s: %s\n", what, rig_status_name(st), rig_error_last()->message);
  assert_int_equal(st, RIG_OK);
}

/* Names the device in the message, as most tests open several. */
rig_device *open_ok(const char *name) {
  rig_device *d = NULL;
  check_ok(rig_device_open(name, &d), name);
  assert_non_null(d);
  return d;
}

rig_device *open_or_skip(const char *name) {
  rig_device *d = NULL;
  if (rig_device_open(name, &d) != RIG_OK) {
    print_message("%s does not open here (%s): skipped\n", name, rig_error_last()->message);
    skip();
  }
  return d;
}

/* Buffers are made in nearly every test; a failure says which call. */
rig_buffer *create_ok(rig_device *d, size_t n) {
  rig_buffer *b = NULL;
  check_ok(rig_buffer_create(d, n, &b), "rig_buffer_create");
  return b;
}

/* Reads in pieces, so that a check of a large buffer needs no more. */
void expect_bytes(rig_buffer *b, uint64_t offset, size_t n, uint8_t byte) {
  uint8_t got[4096];
  for (size_t at = 0; at < n; at += sizeof got) {
    size_t k = n - at < sizeof got ? n - at : sizeof got;
    check_ok(rig_buffer_get(b, offset + at, got, k), "rig_buffer_get");
    for (size_t i = 0; i < k; i++)
      if (got[i] != byte)
        fail_msg("byte %llu is 0x%02x, want 0x%02x", (unsigned long long)(offset + at + i),
                 got[i], byte);
  }
}

/* Closes before releasing, so that the close's status is checked and the
 * device's slot and memory come back before the next test. */
void close_release(rig_device *d) {
  check_ok(rig_device_close(d), "rig_device_close");
  rig_device_release(d);
}

/* ---- the device under test (a driver's own tests) ---------------------- */

static char under_test[64];
static char under_test_named[192];

void device_under_test_from(const char *variable, const char *fallback) {
  const char *e = getenv(variable);
  snprintf(under_test, sizeof under_test, "%s", e && *e ? e : fallback);
}

const char *device_under_test(const char *options) {
  snprintf(under_test_named, sizeof under_test_named, "%s%s", under_test, options);
  return under_test_named;
}

rig_device *open_under_test(const char *options) {
  return open_ok(device_under_test(options));
}

/* ---- host kernels (tests/kernels) --------------------------------------- */

void *kernel_file_ok(const char *file, size_t *n) {
  char path[512];
  void *b = kernel_file_read(file, n);
  if (!b)
    fail_msg("no kernel %s: build the tests", kernel_file_path(file, path, sizeof path));
  return b;
}

void *kernel_object(const char *name, size_t *n) {
  char file[128];
  snprintf(file, sizeof file, "%s.o", name);
  return kernel_file_ok(file, n);
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

const char *ptx_text(const char *name, size_t *n) {
  char path[512];
  const char *dir = getenv("RIG_CUDA_KERNELS");
  snprintf(path, sizeof path, "%s/%s.ptx", dir && *dir ? dir : "drivers/cuda/kernels", name);
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("no kernel %s: %s", path, strerror(errno));
  static char text[1 << 16];
  *n = fread(text, 1, sizeof text - 1, f);
  text[*n] = '\0';
  fclose(f);
  return text;
}

rig_image *kernel_load_on(rig_device *d, const char *file, const char *entry, rig_function **f) {
  rig_image *im = NULL;
  check_ok(kernel_file_load(d, file, entry, &im, f), file);
  return im;
}

/* ---- launches ----------------------------------------------------------- */

rig_function *resolve_ok(rig_image *im, const char *name) {
  rig_function *f = NULL;
  check_ok(rig_image_resolve(im, name, &f), name);
  if (!f)
    fail_msg("the image has no function %s", name);
  return f;
}

rig_submission *launch_make_ok(rig_device *d, const rig_function *f, const rig_ref *refs,
                               uint32_t nrefs, uint32_t params) {
  rig_part launch = rig_part_launch(f, refs, nrefs, params);
  rig_submission *s = NULL;
  check_ok(rig_submission_make(d, &launch, 1, &s), "rig_submission_make");
  return s;
}

rig_run *take_ok(rig_submission *s) {
  rig_run *run = NULL;
  check_ok(rig_submission_take(s, &run), "rig_submission_take");
  return run;
}

void grid_ok(rig_run *run, uint32_t k, uint64_t groups, uint64_t threads) {
  check_ok(rig_run_groups(run, k, groups, 1, 1), "rig_run_groups");
  check_ok(rig_run_threads(run, k, threads, 1, 1), "rig_run_threads");
}

void add_example_inputs(float *xs, float *ys, float *zs, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    xs[i] = (float)i;
    ys[i] = 0.5f * (float)i;
    zs[i] = -1;
  }
}

rig_point add_example_run(rig_submission *s, rig_buffer *x, rig_buffer *y, rig_buffer *z,
                          int64_t n) {
  rig_run *run = take_ok(s);                                  /* RUN-5 */
  uint32_t k;
  check_ok(rig_submission_block(s, 0, &k), "rig_submission_block"); /* OBJ-5 */
  grid_ok(run, k, 64, (uint64_t)(n + 63) / 64);               /* OBJ-6 */
  check_ok(rig_run_int64(run, k, 24, n), "rig_run_int64");
  rig_buffer *bufs[3] = {x, y, z};
  rig_point p;
  check_ok(rig_run_submit(run, bufs, 3, NULL, 0, &p), "rig_run_submit"); /* RUN-6, RUN-7 */
  return p;
}

void add_example_expect(const float *zs, int64_t n, const char *where) {
  for (int64_t i = 0; i < n; i++)
    if (zs[i] != 1.5f * (float)i)
      fail_msg("%s: n %lld: z[%lld] is %g, want %g", where, (long long)n, (long long)i,
               (double)zs[i], 1.5 * (double)i);
}

/* ---- work on other threads --------------------------------------------- */

void *fill_thread_run(void *fill) {
  fill_thread *f = fill;
  f->st = rig_buffer_submit_fill(f->b, f->pattern, f->size, &f->p);
  atomic_store(&f->done, true);
  return NULL;
}

int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* ---- children ----------------------------------------------------------- */

pid_t fork_ok(void) {
  pid_t pid = child_fork();
  assert_true(pid >= 0);
  return pid;
}

/* A child's checks exit with a number of their own, so the status alone
 * says which failed; a signal says the child crashed. */
static void say_how_it_ended(int status) {
  if (status == -1)
    print_error("waitpid failed: %s\n", strerror(errno));
  else if (WIFSIGNALED(status))
    print_error("the child ended by signal %d (%s)\n", WTERMSIG(status),
                strsignal(WTERMSIG(status)));
  else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    print_error("the child exited %d: the number of its check that failed\n",
                WEXITSTATUS(status));
}

/* The exit status of a child that ended as status says, asserting that it
 * exited rather than died of a signal. */
static int exit_status_of(int status) {
  if (status == -1 || !WIFEXITED(status))
    say_how_it_ended(status);
  assert_true(status != -1 && WIFEXITED(status));
  return WEXITSTATUS(status);
}

int wait_child_exit(pid_t pid) { return exit_status_of(child_wait(pid)); }

int run_self(char *const argv[], const char *unset) {
  return exit_status_of(child_exec_self(argv, unset));
}

void wait_child_ok(pid_t pid) {
  int status = child_wait(pid);
  say_how_it_ended(status);
  assert_true(status != -1 && WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

void run_in_child(void (*child)(void)) {
  pid_t pid = fork_ok();
  if (pid == 0) {
    child();
    _exit(0);
  }
  wait_child_ok(pid);
  assert_null(rig_runtime_failure());
}

void in_child(int (*body)(void)) {
  pid_t pid = fork_ok();
  if (pid == 0) {
    signal(SIGBUS, SIG_DFL);
    signal(SIGSEGV, SIG_DFL);
    _exit(body());
  }
  wait_child_ok(pid);
}

int plugin_stops(const char *path) {
  void *so = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (!so)
    fail_msg("plugin %s is not loaded", path);
  int *n = dlsym(so, "rig_test_stops");
  assert_non_null(n);
  int v = *n;
  dlclose(so);
  return v;
}
