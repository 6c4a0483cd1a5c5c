/* io.c: bench P8, 1 GiB from a file in the page cache into a host buffer
 * and into a memory device's buffer through an io device, vs a plain
 * read(2) loop into memory of its own. rig's read is one pread(2) of the
 * whole range, so the two sides make the same system call and differ only
 * in where the kernel copies to: the anchor's memory starts on a page, as
 * rig's buffers of that size do (PROP-30), and is written before the clock
 * starts, as theirs are. malloc's memory starts 16 bytes past a page, and
 * the kernel copied into it 10-20% faster on the machine of issue 20
 * (docs/benchmarks.md): that measured the alignment, not rig. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include "bench.h"

#define BYTES ((size_t)1 << 30)

struct ctx {
  rig_buffer *file, *into;
  int fd;
  char *plain;  /* the anchor's memory: page-aligned, as rig's */
  int failed;
};

static void with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++)
    if (rig_buffer_copy(c->file, c->into) != RIG_OK)
      c->failed = 1;
}

/* The anchor: read(2) of all that is left, until the file is in. */
static void with_read(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    size_t done = 0;
    lseek(c->fd, 0, SEEK_SET);
    while (done < BYTES) {
      ssize_t n = read(c->fd, c->plain + done, BYTES - done);
      if (n <= 0) {
        c->failed = 1;
        return;
      }
      done += (size_t)n;
    }
  }
}

/* Writes the file once, which leaves it in the page cache. */
static int make_file(const char *path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  char *chunk = malloc(1 << 20);
  if (fd < 0 || !chunk)
    return -1;
  for (size_t off = 0; off < BYTES; off += 1 << 20) {
    memset(chunk, (int)(off >> 20), 1 << 20);
    if (write(fd, chunk, 1 << 20) != 1 << 20)
      return -1;
  }
  free(chunk);
  return fd;
}

int rig_bench_io(FILE *out) {
  char path[256];
  const char *t = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/rig-bench-p8-%d", t && *t ? t : "/tmp", (int)getpid());
  struct ctx c = {.fd = make_file(path)};
  rig_io_opener o = {.library = "io", .target = path};
  rig_device *io = NULL, *m = NULL;
  rig_buffer *host = NULL, *mem = NULL;
  if (posix_memalign((void **)&c.plain, 4096, BYTES) != 0)
    c.plain = NULL;
  if (c.fd < 0 || !c.plain || rig_device_open_io(&o, &io) || rig_buffer_of_io(io, 0, BYTES, &c.file) ||
      rig_device_open_memory("bench-p8", &m) || rig_buffer_create(rig_device_host(), BYTES, &host) ||
      rig_buffer_create(m, BYTES, &mem)) {
    fprintf(out, "bench P8: %s\n", c.fd < 0 ? "cannot write the file" : rig_error_last()->message);
    unlink(path);
    return 1;
  }
  memset(c.plain, 0, BYTES); /* fault every page in before timing */
  rig_bench_status(rig_buffer_fill(host, 0, 1), "rig_buffer_fill(host, 0, 1)");
  rig_bench_status(rig_buffer_fill(mem, 0, 1), "rig_buffer_fill(mem, 0, 1)");
  char *own = c.plain;
  c.into = host;
  rig_bench_compare(out, "P8 file (page cache) -> host 1 GiB", with_rig, with_read, &c, 1, 7);
  c.into = mem;
  rig_bench_compare(out, "P8 file (page cache) -> memory 1 GiB", with_rig, with_read, &c, 1, 7);
  /* The same, with the anchor reading into the host buffer's own pages:
   * where the kernel copies to matters as much as who asks it, so this
   * line shows rig's own cost alone. */
  c.plain = rig_buffer_host_address(host);
  c.into = host;
  rig_bench_compare(out, "P8 file -> host 1 GiB, anchor in same pages", with_rig, with_read, &c,
                    1, 7);
  c.plain = own;
  rig_buffer_release(c.file);
  rig_buffer_release(host);
  rig_buffer_release(mem);
  rig_bench_status(rig_device_close(m), "rig_device_close(m)");
  rig_device_release(m);
  rig_bench_status(rig_device_close(io), "rig_device_close(io)");
  rig_device_release(io);
  close(c.fd);
  unlink(path);
  free(c.plain);
  return c.failed;
}
