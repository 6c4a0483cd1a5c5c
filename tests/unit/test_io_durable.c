/* test_io_durable.c: what an io device's writes leave on disk
 * (docs/io.md, "Durability" and "Failed writes").
 *
 * The test program defines fdatasync, fsync and msync, counting each call
 * and passing it on (dlsym RTLD_NEXT); it is linked with --export-dynamic,
 * so that the io library, a plugin, calls these. Each count says that a
 * path asked the disk for its bytes before rig returned.
 *
 * Rules: docs/io.md's IO-8 (durability of every path), IO-9 (a failed
 * write), IO-13 (a second open asks the same flags).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_util.h"
#include "util.h"

/* ---- the counted syncs -------------------------------------------------- */

static _Atomic int fdatasyncs, file_fsyncs, folder_fsyncs, msyncs;
/* An errno the next call of each fails with, once, the disk untouched
 * (0: none): the failures IO-8 reports. */
static _Atomic int fail_fdatasync, fail_msync;
/* The build hides symbols by default: these are for the plugin to find. */
#define SEEN __attribute__((visibility("default")))

/* Fails with *injected, once, where it is set. */
static int injected_failure(_Atomic int *injected) {
  int e = atomic_exchange(injected, 0);
  if (!e)
    return 0;
  errno = e;
  return -1;
}

SEEN int fdatasync(int fd) {
  int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  fdatasyncs++;
  return injected_failure(&fail_fdatasync) ? -1 : next(fd);
}

SEEN int fsync(int fd) {
  int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
    folder_fsyncs++;
  else
    file_fsyncs++;
  return next(fd);
}

SEEN int msync(void *addr, size_t n, int flags) {
  int (*next)(void *, size_t, int) = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "msync");
  msyncs++;
  return injected_failure(&fail_msync) ? -1 : next(addr, n, flags);
}

/* The syncs of the file since the last call: fdatasync, fsync, msync. */
static int file_syncs(void) {
  static int seen;
  int now = fdatasyncs + file_fsyncs + msyncs, n = now - seen;
  seen = now;
  return n;
}

/* ---- IO-8 --------------------------------------------------------------- */

/* IO-8: with RIG_IO_DURABLE, every path that writes the file's bytes asks
 * the disk for them before rig reports it done: the open that makes the
 * file (the file, and its name in the folder), put, a copy from host
 * memory and from io memory, fill, the pages of a borrow when they go
 * back, and rig_device_io_sync. A device without it syncs only at rig_device_io_sync. */
static void io_8_every_durable_path_syncs(void **state) {
  const size_t n = 64u << 10;
  folder_fsyncs = 0;
  rig_device *d = open_io_ok(RIG_IO_CREATE | RIG_IO_DURABLE, 4 * n);
  assert_true(folder_fsyncs >= 1);                        /* the new name */
  assert_true(file_syncs() >= 1);                         /* its size */
  rig_device *m = open_ok("memory:io-durable");
  rig_buffer *a, *b, *h = create_ok(rig_device_host(), n), *on, *x;
  ok(rig_buffer_of_io(d, 0, n, &a));
  ok(rig_buffer_of_io(d, n, n, &b));
  host_pattern(h, 4);
  ok(rig_buffer_put(a, 0, "abcd", 4));
  assert_true(file_syncs() >= 1);                         /* put */
  ok(rig_buffer_copy(h, a));
  assert_true(file_syncs() >= 1);                         /* copy from the host */
  ok(rig_buffer_copy(a, b));
  assert_true(file_syncs() >= 1);                         /* copy from io */
  ok(rig_buffer_fill(b, 0x11, 1));
  assert_true(file_syncs() >= 1);                         /* fill */
  ok(rig_buffer_borrow(m, a, &on));
  ok(rig_buffer_fill(on, 0x22, 1));                       /* the memory device's write */
  rig_buffer_release(on);
  ok(rig_buffer_create(m, 16, &x));                       /* the move gives the pages back */
  assert_true(file_syncs() >= 1);                         /* the borrow's pages */
  rig_buffer_release(x);
  ok(rig_device_io_sync(d));
  assert_true(file_syncs() >= 1);
  rig_buffer_release(a);
  rig_buffer_release(b);
  close_release(d);
  unlink(io_path);
  d = open_io_ok(RIG_IO_CREATE, n);                       /* the contrast */
  ok(rig_buffer_of_io(d, 0, n, &a));
  file_syncs();
  ok(rig_buffer_put(a, 0, "abcd", 4));
  ok(rig_buffer_copy(h, a));
  assert_int_equal(file_syncs(), 0);
  ok(rig_device_io_sync(d));
  assert_int_equal(file_syncs(), 1);
  rig_buffer_release(a);
  rig_buffer_release(h);
  close_release(d);
  close_release(m);
}

/* IO-8, its failures: a durable write whose fdatasync fails is RIG_IO with
 * the errno's text, and so is rig_device_io_sync's; a durable open that
 * made the file and cannot make it durable is RIG_UNAVAILABLE and leaves
 * no file; an msync that fails as a borrow's pages go back, with no caller
 * to tell, makes the next rig_device_io_sync RIG_IO, once. No device is
 * lost by any of them. */
static void io_8_failed_syncs_are_reported(void **state) {
  rig_device *d = NULL;
  fail_fdatasync = EIO;
  assert_int_equal(open_io(RIG_IO_CREATE | RIG_IO_DURABLE, 8192, &d), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "Input/output error"));
  assert_int_equal(file_size(), -1); /* no file left */
  d = open_io_ok(RIG_IO_CREATE | RIG_IO_DURABLE, 8192);
  rig_buffer *a, *on, *x;
  ok(rig_buffer_of_io(d, 0, 8192, &a));
  fail_fdatasync = ENOSPC;
  assert_int_equal(rig_buffer_put(a, 0, "abcd", 4), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "No space left on device"));
  fail_fdatasync = EIO;
  assert_int_equal(rig_device_io_sync(d), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "fdatasync"));
  ok(rig_device_io_sync(d)); /* once: the disk is well */
  rig_device *m = open_ok("memory:io-msync");
  ok(rig_buffer_borrow(m, a, &on));
  ok(rig_buffer_fill(on, 0x33, 1));
  rig_buffer_release(on);
  fail_msync = EIO;
  ok(rig_buffer_create(m, 16, &x)); /* the move gives the pages back */
  assert_int_equal(fail_msync, 0); /* the msync ran, and failed */
  assert_int_equal(rig_device_io_sync(d), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "msync of a borrow's pages"));
  ok(rig_device_io_sync(d));
  assert_null(rig_device_lost(d));
  rig_buffer_release(x);
  rig_buffer_release(a);
  close_release(m);
  close_release(d);
}

/* ---- IO-13 -------------------------------------------------------------- */

/* IO-13: a second rig_device_open_io of an open file asks its READ_ONLY and
 * DURABLE again, or it is RIG_INVALID naming both; CREATE asks nothing of
 * a file that is there. Once closed, the file opens with other flags; a
 * flag the library does not know is RIG_INVALID, never dropped. */
static void io_13_a_second_open_asks_the_same_flags(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 4096), *again = NULL;
  assert_int_equal(open_io(RIG_IO_READ_ONLY, 0, &again), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "open read-write"));
  assert_non_null(strstr(rig_error_last()->message, "asks it read-only"));
  assert_int_equal(open_io(RIG_IO_DURABLE, 0, &again), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "durable"));
  assert_null(again);
  ok(open_io(RIG_IO_CREATE, 4096, &again));               /* the same device */
  assert_ptr_equal(again, d);
  rig_device_release(again);
  close_release(d);
  assert_int_equal(open_io(1u << 7, 0, &again), RIG_INVALID); /* no flag it would drop */
  assert_non_null(strstr(rig_error_last()->message, "unknown flags 0x80"));
  d = open_io_ok(RIG_IO_READ_ONLY, 0);                    /* closed: a new open */
  assert_int_equal(open_io(0, 0, &again), RIG_INVALID);
  rig_buffer *b;
  ok(rig_buffer_of_io(d, 0, 4096, &b));
  assert_int_equal(rig_buffer_put(b, 0, "x", 1), RIG_IO); /* still read-only */
  rig_buffer_release(b);
  close_release(d);
}

/* ---- IO-9 --------------------------------------------------------------- */

/* IO-9: a put, a copy from host memory, that the disk has no room for
 * changes nothing: the bytes it would have written over and the file's
 * size are as they were (the 1 MiB tmpfs, half of it the file's). */
static void io_9_a_write_the_disk_refuses_changes_nothing(void **state) {
  char mnt[300];
  if (!small_tmpfs(mnt, sizeof mnt)) {
    print_message("skipped: cannot mount a tmpfs here (%s)\n", strerror(errno));
    skip();
  }
  char keep[sizeof io_path];
  memcpy(keep, io_path, sizeof keep);
  if (snprintf(io_path, sizeof io_path, "%.290s/f", mnt) >= (int)sizeof io_path)
    fail_msg("the path is too long");
  const size_t half = 512u << 10;
  rig_device *d = open_io_ok(RIG_IO_CREATE, half);
  file_put(0, half, 5);
  rig_buffer *b, *h = create_ok(rig_device_host(), 3 * half);
  ok(rig_buffer_of_io(d, 0, 3 * half, &b));
  host_pattern(h, 9);
  assert_int_equal(rig_buffer_copy(h, b), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "No space left on device"));
  assert_int_equal(file_size(), half);                   /* not grown */
  assert_true(file_is_pattern(0, half, 5));               /* not a byte written */
  assert_int_equal(rig_buffer_put(b, 0, rig_buffer_host_address(h), 3 * half), RIG_IO);
  assert_true(file_is_pattern(0, half, 5));
  assert_null(rig_device_lost(d));
  ok(rig_buffer_put(b, 0, rig_buffer_host_address(h), 4096)); /* what fits works */
  rig_buffer_release(b);
  rig_buffer_release(h);
  close_release(d);
  unlink(io_path);
  memcpy(io_path, keep, sizeof keep);
  io_unmount(mnt);
}

/* IO-9 under a file size limit of 12 MiB (RLIMIT_FSIZE), with SIGXFSZ at
 * its default, which ends the program: no call of rig raises it. An open,
 * a create and a put past the limit are refused with EFBIG's text and
 * change nothing; a fill of 16 MiB, written 8 MiB at a time, leaves its
 * first 8 MiB written and the file no longer. In a child, whose limit ends
 * with it. */
static int size_limit(void) {
  const size_t mib = 1u << 20, half = mib / 2;
  rig_device *d, *other;
  rig_buffer *b, *big, *h;
  struct rlimit lim = {12 * mib, 12 * mib};
  signal(SIGXFSZ, SIG_DFL);
  if (open_io(RIG_IO_CREATE, half, &d) != RIG_OK)
    return 1;
  file_put(0, half, 5);
  if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
    return 2;
  char path2[320];
  snprintf(path2, sizeof path2, "%s/g", io_dir);
  rig_io_opener o = {.library = "io", .target = path2, .flags = RIG_IO_CREATE, .size = 16 * mib};
  if (rig_device_open_io(&o, &other) != RIG_UNAVAILABLE || !strstr(rig_error_last()->message,
                                                            "File too large"))
    return 3;
  if (access(path2, F_OK) == 0)
    return 4;                                             /* no file left */
  if (rig_buffer_create(d, 16 * mib, &big) != RIG_IO)
    return 5;
  if (rig_buffer_of_io(d, 0, 16 * mib, &b) || rig_buffer_create(rig_device_host(), 16 * mib, &h))
    return 6;
  host_pattern(h, 7);
  if (rig_buffer_copy(h, b) != RIG_IO || !strstr(rig_error_last()->message, "File too large"))
    return 7;
  if (file_size() != (long long)half || !file_is_pattern(0, half, 5))
    return 8;                                             /* not a byte written */
  if (rig_buffer_fill(b, 0x33, 1) != RIG_IO)
    return 9;
  unsigned char got[2];
  if (file_size() != (long long)(8 * mib) || rig_buffer_get(b, 8 * mib - 1, got, 1) ||
      got[0] != 0x33)
    return 10;                                            /* the first chunk, no more */
  rig_buffer_release(b);
  rig_buffer_release(h);
  return rig_device_lost(d) || rig_device_close(d) ? 11 : 0;
}

static void io_9_a_write_past_the_size_limit_changes_nothing(void **state) {
  in_child(size_limit);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(io_8_every_durable_path_syncs, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_8_failed_syncs_are_reported, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_13_a_second_open_asks_the_same_flags, io_setup,
                                      io_teardown),
      cmocka_unit_test_setup_teardown(io_9_a_write_the_disk_refuses_changes_nothing, io_setup,
                                      io_teardown),
      cmocka_unit_test_setup_teardown(io_9_a_write_past_the_size_limit_changes_nothing, io_setup,
                                      io_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
