/* SPDX-License-Identifier: MIT */
/* key.c: the shared secret's file and proofs (key.h). */
#include "key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <nettle/memops.h>

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
      snprintf(why, why_n, "key file %s: permissions %04o let others %s it; chmod 600 it", path,
               (unsigned)(st.st_mode & 07777), st.st_mode & 044 ? "read" : "change");
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
             r < 0  ? "cannot be read"
             : more ? "more than 4096 bytes"
                    : "empty");
    return false;
  }
  return true;
}

void rig_key_mac(const uint8_t *key, size_t key_n, const char *label, const uint8_t *a, size_t a_n,
                 const uint8_t *b, size_t b_n, uint8_t out[RIG_KEY_PROOF]) {
  struct hmac_sha256_ctx ctx;
  hmac_sha256_set_key(&ctx, key_n, key);
  hmac_sha256_update(&ctx, strlen(label), (const uint8_t *)label);
  hmac_sha256_update(&ctx, a_n, a);
  hmac_sha256_update(&ctx, b_n, b);
  hmac_sha256_digest(&ctx, RIG_KEY_PROOF, out);
  memset(&ctx, 0, sizeof ctx); /* it holds the key's pads */
}

bool rig_key_equal(const uint8_t a[RIG_KEY_PROOF], const uint8_t b[RIG_KEY_PROOF]) {
  return memeql_sec(a, b, RIG_KEY_PROOF) != 0;
}
