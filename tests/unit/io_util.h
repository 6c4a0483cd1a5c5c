/* io_util.h: what the io device's unit tests (test_io*.c) share: a fresh
 * folder per test, the file in it, and its bytes read and written with
 * plain read(2) and write(2) beside rig's view of them. */
#ifndef RIG_UNIT_IO_UTIL_H
#define RIG_UNIT_IO_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

/* The test's folder under $TMPDIR and the file f in it (io_setup). */
extern char io_dir[256];
extern char io_path[300];

/* cmocka fixtures: a fresh folder; the file and folder removed, and a
 * tmpfs of small_tmpfs detached where the test failed before unmounting it. */
int io_setup(void **state);
int io_teardown(void **state);

/* Opens io_path as an io device with flags and size. */
rig_status open_io(uint32_t flags, uint64_t size, rig_device **out);
rig_device *open_io_ok(uint32_t flags, uint64_t size);

/* Writes n bytes of the pattern of seed into the file at off. */
void file_put(uint64_t off, size_t n, unsigned seed);
bool is_pattern(const unsigned char *b, size_t n, unsigned seed);
bool file_is_pattern(uint64_t off, size_t n, unsigned seed);
/* The file's size, or -1. */
long long file_size(void);

/* Fills a host-addressed buffer with the pattern of seed; whether b's
 * bytes (read with rig_buffer_get) are it. */
void host_pattern(rig_buffer *b, unsigned seed);
bool buffer_is_pattern(rig_buffer *b, unsigned seed);

/* Mounts a tmpfs of 1 MiB on io_dir/small and
 * writes its path into mnt; false where this machine does not let the
 * test mount (no CAP_SYS_ADMIN). io_unmount undoes it. */
bool small_tmpfs(char *mnt, size_t n);
/* Unmounts mnt and removes it, asserting that the unmount succeeded (a
 * busy file system is a file rig still holds); where it did not, the mount
 * is detached first, so that no failure leaves one behind. */
void io_unmount(const char *mnt);

/* How many of this process's descriptors (/proc/self/fd) and mappings
 * (/proc/self/maps) name the file at path. */
int file_holds(const char *path);

#endif
