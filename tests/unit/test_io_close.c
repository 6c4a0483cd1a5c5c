/* test_io_close.c: a closed io device lets go of its file. Once
 * rig_device_close returns, with no buffer of the device held, no
 * descriptor and no mapping of the file is left in the process
 * (/proc/self/fd, /proc/self/maps), and the file system it is on unmounts
 * at once; a buffer still held keeps the file until it is released and a
 * later call moves memory (rig.h, rig_device_close).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_util.h"
#include "util.h"

/* The device's file: on a tmpfs of its own where this machine lets the
 * test mount one (mnt then non-empty), else io_path. */
static void the_file(char *mnt, size_t m, char *file, size_t n) {
  if (!small_tmpfs(mnt, m)) {
    print_message("no tmpfs here (%s): the file is in %s\n", strerror(errno), io_dir);
    mnt[0] = 0;
    snprintf(file, n, "%s", io_path);
    return;
  }
  snprintf(file, n, "%s/f", mnt);
}

static rig_device *open_file_ok(const char *file) {
  rig_io_opener o = {.library = "io", .target = file, .flags = RIG_IO_CREATE, .size = 1u << 16};
  rig_device *d = NULL;
  ok(rig_device_open_io(&o, &d));
  return d;
}

/* Every use that takes the file: a create, a fill, a copy out, and a
 * borrow of its pages by the host, written through. */
static void use(rig_device *d, const char *file) {
  rig_buffer *b = create_ok(d, 1u << 16), *h = create_ok(rig_device_host(), 1u << 16), *w;
  ok(rig_buffer_fill(b, 7, 1));
  ok(rig_buffer_copy(b, h));
  ok(rig_buffer_borrow(rig_device_host(), b, &w));
  ((unsigned char *)rig_buffer_host_address(w))[0] = 9;
  assert_true(file_holds(file) >= 2); /* the descriptor and the borrow's pages */
  rig_buffer_release(w);
  rig_buffer_release(h);
  rig_buffer_release(b);
}

/* After the close, nothing of the file: it unmounts. */
static void a_closed_device_lets_go_of_its_file(void **state) {
  char mnt[300], file[320];
  the_file(mnt, sizeof mnt, file, sizeof file);
  rig_device *d = open_file_ok(file);
  use(d, file);
  ok(rig_device_close(d));
  assert_int_equal(file_holds(file), 0);
  rig_device_release(d);
  unlink(file);
  if (mnt[0])
    io_unmount(mnt); /* asserts the unmount */
}

/* A buffer held past the close keeps the file, as its memory is the
 * file's; released, the file goes at the next call that moves memory. So
 * does a borrow of its pages held past the close. */
static void a_held_buffer_keeps_the_file_until_released(void **state) {
  char mnt[300], file[320];
  the_file(mnt, sizeof mnt, file, sizeof file);
  rig_device *d = open_file_ok(file);
  rig_buffer *b = create_ok(d, 1u << 16), *w, *h;
  ok(rig_buffer_borrow(rig_device_host(), b, &w));
  ok(rig_device_close(d));
  assert_true(file_holds(file) >= 2);
  rig_buffer_release(b);
  rig_buffer_release(w);
  rig_device_release(d);
  h = create_ok(rig_device_host(), 64); /* a move of memory */
  rig_buffer_release(h);
  assert_int_equal(file_holds(file), 0);
  unlink(file);
  if (mnt[0])
    io_unmount(mnt);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_closed_device_lets_go_of_its_file, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(a_held_buffer_keeps_the_file_until_released, io_setup,
                                      io_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
