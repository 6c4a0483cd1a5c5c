/* test_io.c: files as io devices (drivers/io, core/src/io.c, docs/io.md).
 *
 * Each test works in a fresh folder under $TMPDIR and checks the file's
 * bytes with plain read(2) and write(2), beside rig's view of them.
 *
 * Rules: PRE-6 OPEN-37 MACH-19 MACH-23 PROP-12 PROP-24 PROP-28 PROP-32
 * RECLAIM-12 RECLAIM-16 RECLAIM-51 RECLAIM-67 ERR-26 STOP-23 STOP-24,
 * and docs/io.md's IO-1..IO-8 (IO-9..IO-13: test_io_pages.c and
 * test_io_durable.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io_util.h"
#include "util.h"

/* OPEN-37, PRE-6, PROP-21, PROP-24, PROP-28, PROP-37, MACH-19, RECLAIM-67:
 * what an io device is. */
static void open_37_an_io_device_and_its_properties(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 4096), *again = NULL;
  char name[400];
  snprintf(name, sizeof name, "io:%s", io_path);
  assert_string_equal(rig_device_name(d), name);
  assert_true(rig_device_is_io(d));
  assert_false(rig_device_computes(d));
  assert_string_equal(rig_device_arch(d), "");                   /* PROP-21 */
  assert_null(rig_device_bus(d));                                /* PROP-24 */
  assert_int_equal(rig_device_alignment(d), 1);                  /* PROP-28 */
  uint64_t cache;
  assert_false(rig_device_cache_bytes(d, &cache));               /* PROP-37 */
  rig_device *m = open_ok("memory:io-reach");
  assert_false(rig_device_reaches(d, rig_device_host()));               /* MACH-19 */
  assert_false(rig_device_reaches(rig_device_host(), d));
  assert_false(rig_device_reaches(d, m));
  assert_false(rig_device_reaches(m, d));
  struct statvfs v;
  assert_int_equal(statvfs(io_dir, &v), 0);
  uint64_t free_now = (uint64_t)v.f_bavail * v.f_frsize;  /* RECLAIM-67 */
  uint64_t slack = 64u << 20;                             /* others write to /tmp too */
  assert_true(rig_device_budget(d) + slack >= free_now && rig_device_budget(d) <= free_now + slack);
  ok(open_io(0, 0, &again));                              /* OPEN-30: the same device */
  assert_ptr_equal(again, d);
  rig_device_release(again);
  close_release(m);
  rig_buffer *b = NULL;
  ok(rig_buffer_create(d, 16, &b));
  ok(rig_buffer_put(b, 0, "ends", 4));
  ok(rig_device_close(d));                                       /* OPEN-56: it ends at once */
  assert_non_null(rig_device_lost(d));
  rig_buffer *c = NULL;
  assert_int_equal(rig_buffer_create(d, 16, &c), RIG_LOST);
  assert_null(c);
  rig_buffer_release(b);
  rig_device_release(d);
}

/* IO-1: io libraries open only through rig_device_open_io, and it opens nothing
 * else; a file that does not open is RIG_UNAVAILABLE with its errno text. */
static void io_1_openers_refuse_each_others_libraries(void **state) {
  rig_device *d = NULL;
  char name[400];
  snprintf(name, sizeof name, "io:%s", io_path);
  assert_int_equal(rig_device_open(name, &d), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "rig_device_open_io"));
  rig_io_opener mem = {.library = "memory", .target = "x"};
  assert_int_equal(rig_device_open_io(&mem, &d), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "not an io library"));
  rig_io_opener none = {.library = "io", .target = "/nonexistent-rig-dir/f"};
  assert_int_equal(rig_device_open_io(&none, &d), RIG_UNAVAILABLE);
  assert_non_null(strstr(rig_error_last()->message, "No such file"));
  assert_int_equal(rig_device_open_io(NULL, &d), RIG_INVALID);
  rig_io_opener empty = {.library = "io", .target = ""};
  assert_int_equal(rig_device_open_io(&empty, &d), RIG_INVALID);
  rig_io_opener bad = {.library = "../io", .target = io_path};
  assert_int_equal(rig_device_open_io(&bad, &d), RIG_INVALID);
  rig_io_opener both = {.library = "io", .target = io_path,
                        .flags = RIG_IO_CREATE | RIG_IO_READ_ONLY};
  assert_int_equal(rig_device_open_io(&both, &d), RIG_INVALID);
  assert_null(d);
}

/* IO-2: Buffer.of_io names the file's bytes as they are; get and put are
 * the library's read and write (HACC-5 on io memory). It charges nothing,
 * and its release gives nothing back: the bytes stay in the file after a
 * later move of the device's memory. */
static void io_2_of_io_reads_and_writes_the_file(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 1u << 16);
  file_put(1000, 5000, 3);
  rig_buffer *b;
  ok(rig_buffer_of_io(d, 1000, 5000, &b));
  assert_int_equal(rig_device_allocated(d), 0);                  /* charged nothing */
  unsigned char got[5000];
  ok(rig_buffer_get(b, 0, got, sizeof got));
  assert_true(is_pattern(got, sizeof got, 3));
  for (size_t i = 0; i < sizeof got; i++)
    got[i] = (unsigned char)(i * 7 + 9);
  ok(rig_buffer_put(b, 0, got, sizeof got));
  assert_true(file_is_pattern(1000, 5000, 9));
  assert_null(rig_buffer_host_address(b));                /* the host does not address it */
  void *p;
  assert_int_equal(rig_buffer_export(b, &p), RIG_INVALID);
  assert_int_equal(rig_buffer_of_io(rig_device_host(), 0, 1, &b), RIG_INVALID);
  rig_buffer_release(b);
  rig_buffer *moves;
  ok(rig_buffer_create(d, 16, &moves)); /* moves collected memory */
  assert_true(file_is_pattern(1000, 5000, 9)); /* nothing given back */
  rig_buffer_release(moves);
  close_release(d);
}

/* RECLAIM-12: io memory skips the cache and goes straight back to the
 * library; a memory device's stays cached (the contrast). */
static void reclaim_12_io_memory_bypasses_the_cache(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 0);
  rig_device *m = open_ok("memory:io-cache");
  rig_buffer *b, *c;
  ok(rig_buffer_create(d, 1u << 20, &b));
  ok(rig_buffer_create(m, 1u << 20, &c));
  assert_int_equal(rig_device_allocated(d), 1u << 20);
  rig_buffer_release(b);
  rig_buffer_release(c);
  ok(rig_buffer_create(d, 16, &b)); /* moves collected memory (RECLAIM-16) */
  ok(rig_buffer_create(m, 16, &c));
  assert_int_equal(rig_device_allocated(d), 16);                 /* the 1 MiB went back */
  assert_true(rig_device_allocated(m) > 1u << 20);               /* cached */
  rig_buffer_release(b);
  rig_buffer_release(c);
  close_release(m);
  close_release(d);
}

/* RECLAIM-51: an allocation larger than the whole budget is Out_of_memory
 * at once, naming the device and the bytes. */
static void reclaim_51_io_allocation_over_the_budget(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 0);
  ok(rig_device_set_budget(d, 1u << 20));
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_create(d, (1u << 20) + 1, &b), RIG_OUT_OF_MEMORY);
  assert_ptr_equal(rig_error_last()->device, d);
  assert_int_equal(rig_error_last()->bytes, (1u << 20) + 1);
  assert_null(b);
  assert_null(rig_device_lost(d));
  close_release(d);
}

/* IO-3: copies between io memory and the host's, a memory device's, the
 * test device's (through staging, several chunks) and another io
 * buffer's, each way; a fill of io memory. */
static void io_3_copies_between_io_and_every_memory(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 0);
  rig_device *m = open_ok("memory:io-copy");
  rig_device *g = open_ok("test:io-copy,delay_us=20");
  rig_device *on[3] = {rig_device_host(), m, g};
  size_t n = (20u << 20) + 12345; /* three chunks of staging, the last short */
  for (int k = 0; k < 3; k++) {
    rig_buffer *f, *x, *y;
    ok(rig_buffer_create(d, n, &f));
    ok(rig_buffer_create(on[k], n, &x));
    ok(rig_buffer_create(on[k], n, &y));
    if (rig_buffer_host_address(x))
      host_pattern(x, 11 + k);
    else {
      rig_buffer *h = create_ok(rig_device_host(), n);
      host_pattern(h, 11 + k);
      ok(rig_buffer_copy(h, x));
      rig_buffer_release(h);
    }
    ok(rig_buffer_copy(x, f));                            /* into io */
    ok(rig_buffer_copy(f, y));                            /* out of io */
    assert_true(buffer_is_pattern(f, 11 + k));
    assert_true(buffer_is_pattern(y, 11 + k));
    rig_buffer_release(f);
    rig_buffer_release(x);
    rig_buffer_release(y);
  }
  rig_buffer *a, *b;
  ok(rig_buffer_create(d, n, &a));
  ok(rig_buffer_create(d, n, &b));
  rig_buffer *h = create_ok(rig_device_host(), n);
  host_pattern(h, 77);
  ok(rig_buffer_copy(h, a));
  ok(rig_buffer_copy(a, b));                              /* io to io */
  assert_true(buffer_is_pattern(b, 77));
  rig_buffer *head;
  ok(rig_buffer_view(b, 0, 8u << 20, RIG_READ_WRITE, &head));
  ok(rig_buffer_fill(head, 0xa1b2c3d4u, 4));
  rig_buffer_release(head);
  unsigned char w[8];
  ok(rig_buffer_get(b, 4096, w, 8));
  assert_int_equal(w[0], 0xd4);
  assert_int_equal(w[3], 0xa1);
  assert_int_equal(w[4], 0xd4);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_buffer_release(h);
  close_release(g);
  close_release(m);
  close_release(d);
}

/* IO-4: a copy out of the test device into io follows the device's write
 * of the source, and a later device write of that source follows the
 * copy's read (ORDER-15 across io). */
static void io_4_copies_follow_the_devices_points(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 0);
  rig_device *g = open_ok("test:io-order,delay_us=2000");
  rig_buffer *x = create_ok(g, 1u << 16), *f;
  ok(rig_buffer_create(d, 1u << 16, &f));
  rig_point p;
  ok(rig_buffer_submit_fill(x, 0x5a5a5a5au, 4, &p));     /* slow: 2 ms late */
  ok(rig_buffer_copy(x, f));
  expect_bytes(f, 60000, 64, 0x5a);
  rig_buffer_release(x);
  rig_buffer_release(f);
  close_release(g);
  close_release(d);
}

/* ERR-26, IO-5: a file open read-only refuses writes and creates with a
 * status and the errno text, and stays usable. */
static void err_26_read_only_file(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 8192);
  close_release(d);
  file_put(0, 8192, 5);
  d = open_io_ok(RIG_IO_READ_ONLY, 0);
  assert_int_equal(rig_device_budget(d), 0);
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_create(d, 16, &b), RIG_OUT_OF_MEMORY); /* budget 0 */
  ok(rig_buffer_of_io(d, 0, 8192, &b));
  unsigned char one = 1;
  assert_int_equal(rig_buffer_put(b, 0, &one, 1), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "Bad file descriptor"));
  assert_ptr_equal(rig_error_last()->device, d); /* ERR-26: the device */
  assert_null(rig_device_lost(d));                               /* ERR-26 */
  assert_true(buffer_is_pattern(b, 5));                   /* still serves */
  rig_buffer_release(b);
  close_release(d);
}

/* ERR-26, IO-6: a file truncated under rig: reading past its new end is
 * RIG_IO with EIO's text; the device serves the rest. */
static void err_26_truncated_under_rig(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 1u << 16);
  file_put(0, 1u << 16, 1);
  rig_buffer *b, *head;
  ok(rig_buffer_of_io(d, 0, 1u << 16, &b));
  ok(rig_buffer_of_io(d, 0, 4096, &head));
  assert_int_equal(truncate(io_path, 8192), 0);
  unsigned char *p = malloc(1u << 16);
  assert_int_equal(rig_buffer_get(b, 0, p, 1u << 16), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "Input/output error"));
  assert_null(rig_device_lost(d));
  rig_buffer *h = create_ok(rig_device_host(), 1u << 16);
  assert_int_equal(rig_buffer_copy(b, h), RIG_IO);
  assert_true(buffer_is_pattern(head, 1));
  free(p);
  rig_buffer_release(h);
  rig_buffer_release(b);
  rig_buffer_release(head);
  close_release(d);
}

/* ERR-26, IO-7: a full file system: a create the budget allows but the
 * disk cannot hold is RIG_IO (ENOSPC), and so is a write past the space;
 * nothing is lost, and what fits still works. */
static void err_26_full_file_system(void **state) {
  char mnt[300], file[320];
  if (!small_tmpfs(mnt, sizeof mnt)) {
    print_message("skipped: cannot mount a tmpfs here (%s)\n", strerror(errno));
    skip();
  }
  snprintf(file, sizeof file, "%s/f", mnt);
  rig_io_opener o = {.library = "io", .target = file, .flags = RIG_IO_CREATE};
  rig_device *d;
  ok(rig_device_open_io(&o, &d));
  assert_true(rig_device_budget(d) <= 1u << 20);                 /* the file system's room */
  rig_buffer *b = NULL, *big = NULL;
  ok(rig_device_set_budget(d, 1u << 30));                        /* past the disk: the disk says no */
  assert_int_equal(rig_buffer_create(d, 4u << 20, &big), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "No space left on device"));
  assert_null(rig_device_lost(d));
  ok(rig_buffer_of_io(d, 0, 4u << 20, &big));             /* sparse: fails at the write */
  rig_buffer *h = create_ok(rig_device_host(), 4u << 20);
  host_pattern(h, 2);
  assert_int_equal(rig_buffer_copy(h, big), RIG_IO);
  assert_non_null(strstr(rig_error_last()->message, "No space left on device"));
  assert_null(rig_device_lost(d));
  ok(rig_buffer_create(d, 4096, &b));                     /* what fits still works */
  rig_buffer_release(big);
  rig_buffer_release(h);
  rig_buffer_release(b);
  close_release(d);
  unlink(file);
  io_unmount(mnt);
}

/* ERR-26, IO-7: a file that may not grow past 1 MiB (RLIMIT_FSIZE, which
 * needs no mount, so it runs on every machine): a create and a write past
 * the limit are RIG_IO with EFBIG's text, nothing is lost, and what fits
 * still works. In a child, whose limit ends with it. */
static void err_26_file_size_limit(void **state) {
  pid_t pid = fork_ok();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
    struct rlimit lim = {1u << 20, 1u << 20};
    rig_device *d;
    rig_buffer *big = NULL, *h = NULL, *small = NULL;
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0 || open_io(RIG_IO_CREATE, 0, &d) != RIG_OK)
      _exit(10);
    if (rig_buffer_create(d, 4u << 20, &big) != RIG_IO ||
        !strstr(rig_error_last()->message, "File too large") || rig_device_lost(d))
      _exit(11);
    if (rig_buffer_of_io(d, 0, 4u << 20, &big) != RIG_OK ||
        rig_buffer_create(rig_device_host(), 4u << 20, &h) != RIG_OK)
      _exit(12);
    if (rig_buffer_copy(h, big) != RIG_IO || !strstr(rig_error_last()->message, "File too large") ||
        rig_device_lost(d))
      _exit(13);
    if (rig_buffer_create(d, 4096, &small) != RIG_OK || rig_buffer_fill(small, 7, 1) != RIG_OK)
      _exit(14);
    rig_buffer_release(small);
    rig_buffer_release(big);
    rig_buffer_release(h);
    _exit(rig_device_close(d) == RIG_OK ? 0 : 15);
  }
  wait_child_ok(pid);
}

/* IO-8: durability: a device opened RIG_IO_DURABLE, and rig_device_io_sync. */
static void io_8_sync(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE | RIG_IO_DURABLE, 4096);
  rig_buffer *b;
  ok(rig_buffer_of_io(d, 0, 4096, &b));
  unsigned char x[4096];
  memset(x, 0x3c, sizeof x);
  ok(rig_buffer_put(b, 0, x, sizeof x));
  ok(rig_device_io_sync(d));
  assert_int_equal(rig_device_io_sync(rig_device_host()), RIG_INVALID);
  rig_buffer_release(b);
  close_release(d);
}

/* MACH-23: a device that reaches host maps an io device's memory that
 * starts on a page, through Io.pages; off a page it is refused. What a
 * device writes through the borrow is the file's. */
static void mach_23_borrow_io_pages(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 3 * 4096);
  file_put(4096, 4096, 8);
  rig_device *m = open_ok("memory:io-pages");
  rig_device *g = open_ok("test:io-pages,delay_us=20");
  rig_buffer *f, *odd, *on_m, *on_g, *x = create_ok(m, 4096), *y = create_ok(g, 4096);
  ok(rig_buffer_of_io(d, 4096, 4096, &f));
  ok(rig_buffer_of_io(d, 100, 4096, &odd));
  assert_int_equal(rig_buffer_borrow(m, odd, &on_m), RIG_INVALID);
  ok(rig_buffer_borrow(m, f, &on_m));
  ok(rig_buffer_borrow(g, f, &on_g));
  ok(rig_buffer_copy(on_m, x));                           /* the memory device reads the page */
  assert_true(buffer_is_pattern(x, 8));
  ok(rig_buffer_copy(on_g, y));                           /* the test device's engine, too */
  assert_true(buffer_is_pattern(y, 8));
  ok(rig_buffer_fill(on_g, 0x77777777u, 4));              /* its write is the file's */
  unsigned char got[16];
  ok(rig_buffer_get(f, 100, got, sizeof got));
  assert_int_equal(got[0], 0x77);
  rig_buffer_release(on_m);
  rig_buffer_release(on_g);
  rig_buffer_release(f);
  rig_buffer_release(odd);
  rig_buffer_release(x);
  rig_buffer_release(y);
  close_release(g);
  close_release(m);
  close_release(d);
}

/* STOP-23: a child of fork keeps using a live io device, as it keeps an
 * open file, while a memory device is lost "forked". */
static void stop_23_child_keeps_a_live_io_device(void **state) {
  rig_device *d = open_io_ok(RIG_IO_CREATE, 4096);
  rig_device *m = open_ok("memory:io-fork");
  file_put(0, 4096, 4);
  rig_buffer *b;
  ok(rig_buffer_of_io(d, 0, 4096, &b));
  pid_t pid = fork_ok();
  if (pid == 0) {
    unsigned char got[4096];
    int bad = rig_device_lost(d) != NULL;
    bad |= rig_buffer_get(b, 0, got, sizeof got) != RIG_OK || !is_pattern(got, 4096, 4);
    memset(got, 0x42, sizeof got);
    bad |= rig_buffer_put(b, 0, got, sizeof got) != RIG_OK;
    bad |= rig_device_lost(m) == NULL || strcmp(rig_device_lost(m), "forked") != 0;
    _exit(bad);
  }
  wait_child_ok(pid);
  unsigned char got[1];
  ok(rig_buffer_get(b, 0, got, 1));
  assert_int_equal(got[0], 0x42);                         /* the child's write */
  rig_buffer_release(b);
  close_release(m);
  close_release(d);
}

/* STOP-24: an io device whose stop had not returned at the fork (owed:
 * lost by rig_runtime_fail, not closed) stays lost in the child, which runs no stop
 * of it and frees none of its memory. The test forks twice, so that
 * rig_runtime_fail spares the test's process. */
static void stop_24_owed_io_stop_stays_the_parents(void **state) {
  pid_t outer = fork_ok();
  if (outer == 0) {
    rig_device *d;
    if (open_io(RIG_IO_CREATE, 0, &d) != RIG_OK)
      _exit(10);
    rig_buffer *b;
    if (rig_buffer_create(d, 8192, &b) != RIG_OK)
      _exit(11);
    rig_runtime_fail("failing for the test");
    if (!rig_device_lost(d))
      _exit(12);
    pid_t inner = fork();
    if (inner == 0) {
      if (rig_device_lost(d) == NULL)
        _exit(16);
      rig_buffer_release(b);
      if (rig_device_close(d) != RIG_OK)                         /* runs no stop */
        _exit(17);
      struct stat st;                                     /* frees nothing: */
      if (stat(io_path, &st) != 0 || st.st_blocks * 512 < 8192) /* no hole punched */
        _exit(19);
      _exit(0);
    }
    int status;
    if (waitpid(inner, &status, 0) != inner || !WIFEXITED(status))
      _exit(14);
    if (WEXITSTATUS(status))
      _exit(WEXITSTATUS(status));
    rig_buffer_release(b);                                /* the parent's own stop */
    if (rig_device_close(d) != RIG_OK || rig_device_allocated(d) != 0)
      _exit(15);
    struct stat st;
    if (stat(io_path, &st) != 0 || st.st_blocks * 512 >= 8192) /* its range went back */
      _exit(20);
    _exit(0);
  }
  wait_child_ok(outer);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(open_37_an_io_device_and_its_properties, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_1_openers_refuse_each_others_libraries, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_2_of_io_reads_and_writes_the_file, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(reclaim_12_io_memory_bypasses_the_cache, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(reclaim_51_io_allocation_over_the_budget, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_3_copies_between_io_and_every_memory, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_4_copies_follow_the_devices_points, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(err_26_read_only_file, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(err_26_truncated_under_rig, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(err_26_full_file_system, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(err_26_file_size_limit, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_8_sync, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(mach_23_borrow_io_pages, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(stop_23_child_keeps_a_live_io_device, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(stop_24_owed_io_stop_stays_the_parents, io_setup, io_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
