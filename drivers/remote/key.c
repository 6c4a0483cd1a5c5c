/* key.c: the shared secret's file and proofs (key.h). */
#include "key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool rig_key_read(const char *path, uint8_t *key, size_t *n, char *why, size_t why_n) {
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(why, why_n, "key file %s: cannot be read: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return false;
  }
  /* The key is the whole of the trust (docs/remote.md): a copy others can
   * read is one they can use. Checked on the file opened, not the path. */
  if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
    if (S_ISREG(st.st_mode))
      snprintf(why, why_n, "key file %s: permissions %04o let others %s it; chmod 600 it",
               path, (unsigned)(st.st_mode & 07777), st.st_mode & 044 ? "read" : "change");
    else
      snprintf(why, why_n, "key file %s: not a regular file", path);
    close(fd);
    return false;
  }
  size_t got = 0;
  uint8_t extra;
  ssize_t r = 1;
  while (got < RIG_KEY_MAX && (r = read(fd, key + got, RIG_KEY_MAX - got)) > 0)
    got += (size_t)r;
  bool more = r > 0 && read(fd, &extra, 1) == 1;
  close(fd);
  *n = got;
  if (r < 0 || got == 0 || more) {
    snprintf(why, why_n, "key file %s: %s", path,
             r < 0 ? "cannot be read" : more ? "more than 4096 bytes" : "empty");
    return false;
  }
  return true;
}
