/* io_util.c: the io unit tests' shared helpers (io_util.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_util.h"
#include "util.h"

char io_dir[256];
char io_path[300];

int io_setup(void **state) {
  const char *t = getenv("TMPDIR");
  snprintf(io_dir, sizeof io_dir, "%s/rig-io-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(io_dir))
    return -1;
  snprintf(io_path, sizeof io_path, "%s/f", io_dir);
  return 0;
}

int io_teardown(void **state) {
  unlink(io_path);
  /* A test that failed before its io_unmount leaves no mount behind. */
  char mnt[300];
  snprintf(mnt, sizeof mnt, "%s/small", io_dir);
  if (umount2(mnt, MNT_DETACH) == 0 || errno != ENOENT)
    rmdir(mnt);
  rmdir(io_dir);
  return 0;
}

rig_status open_io(uint32_t flags, uint64_t size, rig_device **out) {
  rig_io_opener o = {.library = "io", .target = io_path, .flags = flags, .size = size};
  return rig_device_open_io(&o, out);
}

rig_device *open_io_ok(uint32_t flags, uint64_t size) {
  rig_device *d = NULL;
  ok(open_io(flags, size, &d));
  return d;
}

void file_put(uint64_t off, size_t n, unsigned seed) {
  int fd = open(io_path, O_WRONLY);
  assert_true(fd >= 0);
  unsigned char *b = malloc(n);
  for (size_t i = 0; i < n; i++)
    b[i] = (unsigned char)(i * 7 + seed);
  assert_int_equal(pwrite(fd, b, n, (off_t)off), (ssize_t)n);
  free(b);
  close(fd);
}

bool is_pattern(const unsigned char *b, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (b[i] != (unsigned char)(i * 7 + seed))
      return false;
  return true;
}

bool file_is_pattern(uint64_t off, size_t n, unsigned seed) {
  int fd = open(io_path, O_RDONLY);
  unsigned char *b = malloc(n);
  bool same = fd >= 0 && pread(fd, b, n, (off_t)off) == (ssize_t)n && is_pattern(b, n, seed);
  free(b);
  if (fd >= 0)
    close(fd);
  return same;
}

long long file_size(void) {
  struct stat st;
  return stat(io_path, &st) == 0 ? (long long)st.st_size : -1;
}

void host_pattern(rig_buffer *b, unsigned seed) {
  unsigned char *p = rig_buffer_host_address(b);
  for (size_t i = 0; i < rig_buffer_length(b); i++)
    p[i] = (unsigned char)(i * 7 + seed);
}

bool buffer_is_pattern(rig_buffer *b, unsigned seed) {
  size_t n = rig_buffer_length(b);
  unsigned char *p = malloc(n);
  bool same = rig_buffer_get(b, 0, p, n) == RIG_OK && is_pattern(p, n, seed);
  free(p);
  return same;
}

bool small_tmpfs(char *mnt, size_t n) {
  snprintf(mnt, n, "%s/small", io_dir);
  if (mkdir(mnt, 0700) != 0)
    return false;
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m") != 0) {
    rmdir(mnt);
    return false;
  }
  return true;
}

void io_unmount(const char *mnt) {
  int r = umount(mnt), e = errno;
  if (r != 0)
    umount2(mnt, MNT_DETACH); /* nothing left mounted, whatever held it */
  rmdir(mnt);
  if (r != 0)
    fail_msg("umount %s: %s", mnt, strerror(e));
}

/* Whether s, a link's target or a mapping's name, is path, or path
 * unlinked since. */
static bool names(const char *s, const char *path) {
  size_t n = strlen(path);
  return strncmp(s, path, n) == 0 && (!s[n] || strcmp(s + n, " (deleted)") == 0);
}

int file_holds(const char *path) {
  int n = 0;
  char link[300], to[4096], line[4096 + 128];
  DIR *fds = opendir("/proc/self/fd");
  assert_non_null(fds);
  for (struct dirent *e; (e = readdir(fds));) {
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t k = readlink(link, to, sizeof to - 1);
    if (k > 0) {
      to[k] = 0;
      n += names(to, path);
    }
  }
  closedir(fds);
  FILE *maps = fopen("/proc/self/maps", "r");
  assert_non_null(maps);
  while (fgets(line, sizeof line, maps)) {
    line[strcspn(line, "\n")] = 0;
    char *name = strchr(line, '/');
    n += name && names(name, path);
  }
  fclose(maps);
  return n;
}
