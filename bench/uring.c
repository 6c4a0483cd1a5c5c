/* uring.c: the measurement behind the io library's choice of pread over
 * io_uring (docs/io.md): 1 GiB from a file in the page cache into the same
 * aligned memory, by one pread, by preads of 8 MiB, and by io_uring reads
 * of 8 MiB with 32 in flight; best of 7 rounds each. Built where liburing
 * is found; not part of `rig bench`, since the choice is made. */
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BYTES ((size_t)1 << 30)
#define CHUNK ((size_t)8 << 20)
#define DEPTH 32

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static int uring_read(struct io_uring *r, int fd, char *dst) {
  size_t sub = 0, done = 0, n = BYTES / CHUNK;
  while (done < n) {
    while (sub < n && sub - done < DEPTH) {
      struct io_uring_sqe *s = io_uring_get_sqe(r);
      io_uring_prep_read(s, fd, dst + sub * CHUNK, CHUNK, sub * CHUNK);
      sub++;
    }
    io_uring_submit(r);
    struct io_uring_cqe *c;
    if (io_uring_wait_cqe(r, &c) != 0 || c->res != (int)CHUNK)
      return -1;
    io_uring_cqe_seen(r, c);
    done++;
  }
  return 0;
}

int main(void) {
  char path[] = "/tmp/rig-uring-XXXXXX";
  int fd = mkstemp(path);
  char *chunk = malloc(1 << 20), *dst;
  struct io_uring r;
  if (fd < 0 || !chunk || posix_memalign((void **)&dst, 1 << 21, BYTES) ||
      io_uring_queue_init(DEPTH, &r, 0))
    return 1;
  for (size_t off = 0; off < BYTES; off += 1 << 20) {
    memset(chunk, (int)(off >> 20), 1 << 20);
    if (write(fd, chunk, 1 << 20) != 1 << 20)
      return 1;
  }
  memset(dst, 0, BYTES);
  double one = 1e9, chunks = 1e9, uring = 1e9;
  for (int k = 0; k < 7; k++) {
    double t = now();
    if (pread(fd, dst, BYTES, 0) != (ssize_t)BYTES)
      return 1;
    double u = now() - t;
    one = u < one ? u : one;
    t = now();
    for (size_t off = 0; off < BYTES; off += CHUNK)
      if (pread(fd, dst + off, CHUNK, (off_t)off) != (ssize_t)CHUNK)
        return 1;
    u = now() - t;
    chunks = u < chunks ? u : chunks;
    t = now();
    if (uring_read(&r, fd, dst))
      return 1;
    u = now() - t;
    uring = u < uring ? u : uring;
  }
  printf("1 GiB from the page cache: pread %.3f s, pread of 8 MiB %.3f s, io_uring 8 MiB x %d "
         "in flight %.3f s\n", one, chunks, DEPTH, uring);
  unlink(path);
  return 0;
}
