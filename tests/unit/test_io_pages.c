/* test_io_pages.c: borrows of an io device's pages (docs/io.md, "Pages"):
 * pages past the file's end, a file cut short under a borrow by another
 * process, and the pages of a file open read-only.
 *
 * Each test that may raise a signal runs in a child of fork, with SIGBUS
 * and SIGSEGV at their defaults, so that the signal that would end a
 * program shows as the child's end, not the test runner's.
 *
 * Rules: docs/io.md's IO-10 (pages past the end), IO-11 (a cut under a
 * borrow), IO-12 (pages of a read-only file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io_util.h"
#include "util.h"

/* IO-10: a borrow of pages past the file's end is RIG_IO with EIO's text,
 * on the memory device and on the host alike; no write through it can
 * raise SIGBUS. Pages the file holds borrow and write as before. */
static int past_the_end(void) {
  rig_device *d, *m;
  rig_buffer *f, *inside, *on = NULL;
  if (open_io(RIG_IO_CREATE, 8192, &d) || rig_device_open("memory:io-past", &m))
    return 1;
  if (rig_buffer_of_io(d, 4096, 8192, &f) || rig_buffer_of_io(d, 0, 8192, &inside))
    return 2;
  rig_status st = rig_buffer_borrow(m, f, &on);
  if (st == RIG_OK) {
    rig_status fill = rig_buffer_fill(on, 0x5a, 1); /* before the fix: SIGBUS here */
    (void)fill; /* the borrow's status is what this checks */
  }
  if (st != RIG_IO || !strstr(rig_error_last()->message, "Input/output error") ||
      !strstr(rig_error_last()->message, "ends at 8192"))
    return 3;
  if (rig_buffer_borrow(rig_device_host(), f, &on) != RIG_IO || rig_device_lost(d))
    return 4;
  if (rig_buffer_borrow(m, inside, &on) || rig_buffer_fill(on, 0x5a, 1))
    return 5;
  unsigned char got[8192];
  if (rig_buffer_get(inside, 0, got, sizeof got))
    return 6;
  for (size_t i = 0; i < sizeof got; i++)
    if (got[i] != 0x5a)
      return 7;
  if (file_size() != 8192) /* nothing grew it */
    return 8;
  rig_buffer_release(on);
  rig_buffer_release(f);
  rig_buffer_release(inside);
  return rig_device_close(m) || rig_device_close(d) ? 9 : 0;
}

static void io_10_pages_past_the_end(void **state) { in_child(past_the_end); }

/* IO-10: the pages of a writable file get their disk space at the borrow.
 * On a tmpfs of 1 MiB, a file of 2 MiB with no block on disk (a sparse
 * create): a borrow of its first 512 KiB gives the file those blocks before
 * any touch, and a borrow of all 2 MiB, which the disk cannot hold, is
 * RIG_IO with ENOSPC's text at the borrow; the device serves on. */
static void io_10_a_borrow_reserves_disk_space(void **state) {
  char mnt[300], file[320];
  if (!small_tmpfs(mnt, sizeof mnt)) {
    print_message("skipped: cannot mount a tmpfs here (%s)\n", strerror(errno));
    skip();
  }
  snprintf(file, sizeof file, "%s/f", mnt);
  const size_t half = 512u << 10, all = 2u << 20;
  rig_io_opener o = {.library = "io", .target = file, .flags = RIG_IO_CREATE, .size = all};
  rig_device *d;
  ok(rig_device_open_io(&o, &d));
  struct stat st;
  assert_int_equal(stat(file, &st), 0);
  assert_int_equal(st.st_blocks, 0); /* sparse */
  rig_buffer *a, *b, *w;
  ok(rig_buffer_of_io(d, 0, half, &a));
  ok(rig_buffer_of_io(d, 0, all, &b));
  ok(rig_buffer_borrow(rig_device_host(), a, &w));
  assert_int_equal(stat(file, &st), 0);
  assert_true((uint64_t)st.st_blocks * 512 >= half); /* reserved, untouched */
  rig_buffer_release(w);
  w = NULL;
  assert_int_equal(rig_buffer_borrow(rig_device_host(), b, &w), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "No space left on device"));
  assert_null(w);
  assert_null(rig_device_lost(d));
  ok(rig_buffer_put(a, 0, "abcd", 4)); /* serves on */
  rig_buffer_release(a);
  rig_buffer_release(b);
  close_release(d);
  unlink(file);
  io_unmount(mnt);
}

/* IO-11: another process cuts the file short under a borrow; the memory
 * device's fill and copy through the borrow then touch pages the file no
 * longer has. No signal ends the program: the fill completes, the copy
 * reads zeros there, and the io device is lost at its next call, with the
 * byte in its message; every call on it is then RIG_LOST. */
static int cut_under_a_borrow(void) {
  rig_device *d, *m;
  rig_buffer *f, *on, *x;
  const size_t n = 16 * 4096;
  if (open_io(RIG_IO_CREATE, n, &d) || rig_device_open("memory:io-cut", &m))
    return 1;
  file_put(0, n, 3);
  if (rig_buffer_of_io(d, 0, n, &f) || rig_buffer_borrow(m, f, &on) ||
      rig_buffer_create(m, n, &x))
    return 2;
  pid_t cutter = fork();
  if (cutter == 0)
    _exit(truncate(io_path, 8192) == 0 ? 0 : 1);
  int status;
  if (waitpid(cutter, &status, 0) != cutter || !WIFEXITED(status) || WEXITSTATUS(status))
    return 3;
  if (rig_buffer_copy(on, x) != RIG_OK) /* before the fix: SIGBUS here */
    return 4;
  unsigned char *p = rig_buffer_host_address(x);
  if (!is_pattern(p, 8192, 3) || p[8192] != 0 || p[n - 1] != 0)
    return 5;                               /* the cut pages read as zeros */
  if (rig_buffer_fill(on, 0x77, 1) != RIG_OK)
    return 6;
  unsigned char got[16];
  if (rig_buffer_get(f, 0, got, sizeof got) != RIG_LOST) /* the next call: lost */
    return 7;
  if (!rig_device_lost(d) || !strstr(rig_device_lost(d), "byte 8192"))
    return 8;
  if (rig_device_io_sync(d) != RIG_LOST || rig_buffer_copy(on, x) != RIG_LOST ||
      rig_buffer_fill(on, 1, 1) != RIG_LOST)
    return 9;
  if (rig_device_lost(m))
    return 10;                              /* the memory device serves on */
  rig_buffer_release(on);
  rig_buffer_release(f);
  rig_buffer_release(x);
  if (rig_buffer_create(m, 16, &x) != RIG_OK) /* the move gives the pages back */
    return 11;
  rig_buffer_release(x);
  return rig_device_close(m) || rig_device_close(d) ? 12 : 0;
}

static void io_11_file_cut_under_a_borrow(void **state) { in_child(cut_under_a_borrow); }

/* IO-11: the release of a borrow whose pages were lost loses the device
 * too, where no other call came first (the pages go back at the memory
 * device's next move). */
static int cut_then_release(void) {
  rig_device *d, *m;
  rig_buffer *f, *on, *x;
  if (open_io(RIG_IO_CREATE, 4 * 4096, &d) || rig_device_open("memory:io-cut2", &m))
    return 1;
  if (rig_buffer_of_io(d, 0, 4 * 4096, &f) || rig_buffer_borrow(m, f, &on))
    return 2;
  if (truncate(io_path, 4096) != 0)
    return 3;
  if (rig_buffer_fill(on, 0x42, 1) != RIG_OK)
    return 4;
  rig_buffer_release(on);
  if (rig_buffer_create(m, 16, &x) != RIG_OK)
    return 5;
  if (!rig_device_lost(d) || !strstr(rig_device_lost(d), "byte 4096"))
    return 6;
  rig_buffer_release(x);
  rig_buffer_release(f);
  return rig_device_close(m) || rig_device_close(d) ? 7 : 0;
}

static void io_11_lost_pages_given_back(void **state) { in_child(cut_then_release); }

/* A SIGBUS that is no fault of the io library's pages goes to the
 * handler the program had: here the test's, which counts it. */
static volatile sig_atomic_t theirs;
static void count_sigbus(int sig) { theirs++; }

static int other_sigbus(void) {
  rig_device *d, *m;
  rig_buffer *f, *on;
  signal(SIGBUS, count_sigbus);
  if (open_io(RIG_IO_CREATE, 4096, &d) || rig_device_open("memory:io-chain", &m))
    return 1;
  if (rig_buffer_of_io(d, 0, 4096, &f) || rig_buffer_borrow(m, f, &on)) /* installs rig's */
    return 2;
  raise(SIGBUS);
  if (theirs != 1 || rig_device_lost(d))
    return 3;
  rig_buffer_release(on);
  rig_buffer_release(f);
  return rig_device_close(m) || rig_device_close(d) ? 4 : 0;
}

static void io_11_other_sigbus_goes_to_the_programs_handler(void **state) {
  in_child(other_sigbus);
}

/* IO-12: a borrow of a file open read-only admits only reads: its access
 * is RIG_READ, and every write of rig through it (copy into it, fill,
 * put, a submitted fill) is RIG_INVALID with a message; reads work. */
static int read_only_pages(void) {
  rig_device *d, *m;
  rig_buffer *f, *on, *host_on, *x;
  if (open_io(RIG_IO_CREATE, 8192, &d))
    return 1;
  file_put(0, 8192, 6);
  if (rig_device_close(d) || (rig_device_release(d), 0) || open_io(RIG_IO_READ_ONLY, 0, &d))
    return 2;
  if (rig_device_open("memory:io-ro", &m) || rig_buffer_of_io(d, 0, 8192, &f) ||
      rig_buffer_borrow(m, f, &on) || rig_buffer_borrow(rig_device_host(), f, &host_on) ||
      rig_buffer_create(m, 8192, &x))
    return 3;
  if (rig_buffer_access(on) != RIG_READ || rig_buffer_access(host_on) != RIG_READ)
    return 4;
  if (rig_buffer_fill(on, 1, 1) != RIG_INVALID || !strstr(rig_error_last()->message, "reads"))
    return 5;                               /* before the fix: SIGSEGV here */
  rig_point p;
  if (rig_buffer_copy(x, on) != RIG_INVALID || rig_buffer_put(on, 0, "x", 1) != RIG_INVALID ||
      rig_buffer_submit_fill(on, 1, 1, &p) != RIG_INVALID)
    return 6;
  rig_buffer *wide;
  if (rig_buffer_view(on, 0, 4096, RIG_READ_WRITE, &wide) == RIG_OK)
    return 7;                               /* no view widens it */
  if (rig_buffer_copy(on, x) || !is_pattern(rig_buffer_host_address(x), 8192, 6))
    return 8;                               /* reads work */
  if (rig_device_lost(d) || rig_device_lost(m))
    return 9;
  rig_buffer_release(on);
  rig_buffer_release(host_on);
  rig_buffer_release(f);
  rig_buffer_release(x);
  return rig_device_close(m) || rig_device_close(d) ? 10 : 0;
}

static void io_12_read_only_pages_admit_only_reads(void **state) { in_child(read_only_pages); }

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(io_10_pages_past_the_end, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_10_a_borrow_reserves_disk_space, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_11_file_cut_under_a_borrow, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_11_lost_pages_given_back, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_11_other_sigbus_goes_to_the_programs_handler, io_setup,
                                      io_teardown),
      cmocka_unit_test_setup_teardown(io_12_read_only_pages_admit_only_reads, io_setup,
                                      io_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
