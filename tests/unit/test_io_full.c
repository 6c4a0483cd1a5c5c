/* test_io_full.c: IO-9 on a full file system that has no fallocate: ext2
 * (the ext4 driver refuses fallocate for a file without extents), in a
 * 4 MiB image on a loop device. A put the disk's room refuses changes
 * nothing: not a byte, not the file's size. Before, its pwrite left the
 * first part of the bytes (16303 of 100000 here) and the file grown. Also
 * on a 1 MiB tmpfs, which reserves with fallocate. Needs root, a loop
 * device, losetup and mkfs.ext2: skipped (77) where one is missing.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rig/rig.h>

#include "check.h"

static char dir[64], mnt[96], img[96], loopdev[64];

/* Runs cmd; its first line of output into out (n bytes) where out. */
static bool shell(const char *cmd, char *out, size_t n) {
  FILE *p = popen(cmd, "r");
  if (!p)
    return false;
  char line[256] = "";
  if (!fgets(line, sizeof line, p))
    line[0] = 0;
  bool done = pclose(p) == 0;
  line[strcspn(line, "\n")] = 0;
  if (out)
    snprintf(out, n, "%s", line);
  return done;
}

/* A file f of 100 bytes 'a' on the file system at mnt, and the rest of
 * the room taken but `room` bytes. */
static void fill_but(size_t room) {
  char path[200];
  snprintf(path, sizeof path, "%s/f", mnt);
  int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  assert_true(fd >= 0);
  char a[100];
  memset(a, 'a', sizeof a);
  assert_int_equal(write(fd, a, sizeof a), (ssize_t)sizeof a);
  close(fd);
  snprintf(path, sizeof path, "%s/filler", mnt);
  fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  assert_true(fd >= 0);
  static char block[65536];
  off_t total = 0;
  ssize_t w;
  while ((w = write(fd, block, sizeof block)) > 0 || (w < 0 && errno == EINTR))
    total += w > 0 ? w : 0;
  while ((w = write(fd, block, 512)) > 0) /* the last blocks */
    total += w;
  assert_int_equal(ftruncate(fd, total > (off_t)room ? total - (off_t)room : 0), 0);
  fsync(fd);
  close(fd);
}

/* The put of n bytes 'x' at 81 of f is refused (RIG_IO, ENOSPC's text) and
 * f is as it was: 100 bytes 'a'. */
static void refused_put_changes_nothing(size_t n) {
  char path[200];
  snprintf(path, sizeof path, "%s/f", mnt);
  rig_io_opener o = {.library = "io", .target = path};
  rig_device *d;
  ok(rig_device_open_io(&o, &d));
  rig_buffer *b = NULL;
  ok(rig_buffer_of_io(d, 81, n, &b));
  char *x = malloc(n);
  memset(x, 'x', n);
  assert_int_equal(rig_buffer_put(b, 0, x, n), RIG_IO);
  if (!strstr(rig_error_last()->message, "No space left on device"))
    fail_msg("not ENOSPC: %s", rig_error_last()->message);
  assert_null(rig_device_lost(d));
  free(x);
  rig_buffer_release(b);
  close_release(d);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_size, 100); /* IO-9: not grown */
  char got[100];
  int fd = open(path, O_RDONLY);
  assert_int_equal(read(fd, got, sizeof got), 100);
  close(fd);
  for (int i = 0; i < 100; i++)
    if (got[i] != 'a')
      fail_msg("byte %d of the file is '%c', not 'a': the refused put wrote it", i, got[i]);
}

/* What fits still goes: a put of 4 KiB past the end. */
static void put_that_fits(void) {
  char path[200];
  snprintf(path, sizeof path, "%s/f", mnt);
  rig_io_opener o = {.library = "io", .target = path};
  rig_device *d;
  ok(rig_device_open_io(&o, &d));
  rig_buffer *b = NULL;
  ok(rig_buffer_of_io(d, 100, 4096, &b));
  char x[4096];
  memset(x, 'x', sizeof x);
  ok(rig_buffer_put(b, 0, x, sizeof x));
  rig_buffer_release(b);
  close_release(d);
}

/* A folder of its own under /tmp with mnt in it; false (skip) without root. */
static bool scratch(const char *what) {
  snprintf(dir, sizeof dir, "/tmp/rig-io-full-XXXXXX");
  if (geteuid() != 0 || !mkdtemp(dir)) {
    dir[0] = 0;
    print_message("skipped: needs root for %s\n", what);
    return false;
  }
  snprintf(mnt, sizeof mnt, "%s/mnt", dir);
  mkdir(mnt, 0700);
  return true;
}

/* The file system at mnt filled but 20000 bytes: a put of 100000 is
 * refused and changes nothing, and one of 4 KiB goes. */
static void full_file_system_checks(void) {
  fill_but(20000);
  refused_put_changes_nothing(100000);
  put_that_fits();
}

static void io_9_full_file_system_without_fallocate(void **state) {
  char cmd[400];
  if (!scratch("a loop device"))
    skip();
  snprintf(img, sizeof img, "%s/ext2.img", dir);
  snprintf(cmd, sizeof cmd,
           "truncate -s 4M %s && mkfs.ext2 -q -F %s 2>&1 && "
           "losetup -f --show %s 2>/dev/null",
           img, img, img);
  if (!shell(cmd, loopdev, sizeof loopdev) || strncmp(loopdev, "/dev/loop", 9) != 0 ||
      mount(loopdev, mnt, "ext2", 0, NULL) != 0) {
    print_message("skipped: no ext2 on a loop device here (%s)\n", loopdev);
    mnt[0] = 0;
    skip();
  }
  full_file_system_checks();
}

static void io_9_full_tmpfs(void **state) {
  if (!scratch("a tmpfs"))
    skip();
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m") != 0) {
    print_message("skipped: cannot mount a tmpfs here (%s)\n", strerror(errno));
    mnt[0] = 0;
    skip();
  }
  full_file_system_checks();
}

/* After each test, passed or failed: no mount, loop device or folder left. */
static int teardown(void **state) {
  char cmd[300];
  if (mnt[0]) /* lazily: a closed io device's file may close a moment later */
    umount2(mnt, MNT_DETACH);
  if (strncmp(loopdev, "/dev/loop", 9) == 0) {
    snprintf(cmd, sizeof cmd, "losetup -d %s", loopdev);
    shell(cmd, NULL, 0);
  }
  if (strncmp(dir, "/tmp/rig-io-full-", 17) == 0) {
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    shell(cmd, NULL, 0);
  }
  mnt[0] = loopdev[0] = dir[0] = 0;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(io_9_full_file_system_without_fallocate, teardown),
      cmocka_unit_test_teardown(io_9_full_tmpfs, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
