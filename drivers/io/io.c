/* io.c: librig-driver-io.so, a file as an io device (docs/io.md).
 *
 * The device's memory is the file. Buffer.of_io names bytes already in it;
 * Buffer.create reserves a range past the file's size at open, which the
 * driver gives disk space with posix_fallocate so that a full file system
 * fails the create (RIG_EDGE_IO, ENOSPC) rather than a later write. The
 * host reads and writes it with pread and pwrite: for a file in the page
 * cache they are one copy each, which io_uring does not beat
 * (docs/io.md gives the measurement). Io.pages maps page-aligned ranges
 * with mmap(MAP_SHARED), so a device that maps host memory copies to and
 * from the file's pages itself. A child of fork inherits the descriptor
 * and goes on using it, as it does any open file (STOP-23).
 *
 * Every function is thread-safe: pread and pwrite need no lock, and the
 * range allocator takes the handle's mutex for a few list operations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <rig/edge.h>

/* A free range of the file's reserved tail. */
typedef struct span {
  uint64_t offset, bytes;
  struct span *next;
} span;

typedef struct io_dev {
  int fd;
  uint32_t flags;
  pthread_mutex_t lock;   /* frontier and free */
  uint64_t frontier;      /* the first byte no create reserved yet */
  span *free;             /* released ranges, reused first-fit */
} io_dev;

static int io_errno(rig_edge_error *err, const char *what, int e) {
  err->errnum = e;
  return rig_edge_fail(err, RIG_EDGE_IO, "%s: %s", what, strerror(e));
}

/* ---- open -------------------------------------------------------------- */

static int open_file(const rig_edge_io_args *a, int *out_fd, rig_edge_error *err) {
  int mode = (a->flags & RIG_EDGE_IO_READ_ONLY) ? O_RDONLY : O_RDWR;
  if (a->flags & RIG_EDGE_IO_CREATE)
    mode |= O_CREAT;
  int fd = open(a->target, mode | O_CLOEXEC, 0644);
  if (fd < 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: %s: %s", a->target, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: %s: not a regular file", a->target);
  }
  if ((a->flags & RIG_EDGE_IO_CREATE) && (uint64_t)st.st_size < a->size &&
      ftruncate(fd, (off_t)a->size) != 0) {
    int e = errno;
    close(fd);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: %s: size %llu: %s", a->target,
                         (unsigned long long)a->size, strerror(e));
  }
  *out_fd = fd;
  return RIG_EDGE_OK;
}

static int io_open(const char *args, void **out, rig_edge_error *err) {
  rig_edge_io_args a;
  if (rig_edge_io_args_parse(args, &a) != RIG_EDGE_OK)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "io: an io library; open it with rig_open_io");
  if ((a.flags & RIG_EDGE_IO_CREATE) && (a.flags & RIG_EDGE_IO_READ_ONLY))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: %s: create and read-only", a.target);
  if (a.size > (uint64_t)LLONG_MAX)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: %s: size too large", a.target);
  io_dev *d = calloc(1, sizeof *d);
  if (!d)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: out of memory");
  int r = open_file(&a, &d->fd, err);
  if (r != RIG_EDGE_OK) {
    free(d);
    return r;
  }
  struct stat st;
  fstat(d->fd, &st);
  d->flags = a.flags;
  d->frontier = (uint64_t)st.st_size;
  pthread_mutex_init(&d->lock, NULL);
  *out = d;
  return RIG_EDGE_OK;
}

static int io_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  f->flags = 0;         /* runs no work: no COMPUTES, no queue */
  f->arch[0] = '\0';    /* PROP-12 */
  f->bus[0] = '\0';
  f->alignment = 1;     /* PROP-28 */
  f->cache_bytes = 0;   /* PROP-32 */
  f->budget = 0;        /* core takes io->budget (RECLAIM-67) */
  f->queues = 0;
  for (int k = 0; k < RIG_EDGE_PART_KINDS; k++)
    f->part_queue[k] = RIG_EDGE_NO_QUEUE;
  return RIG_EDGE_OK;
}

/* An io device ends at once: its calls are the host's and none is under
 * way once core stops it. The descriptor stays for memory still out. */
static int io_stop(void *h, rig_edge_error *err) { return RIG_EDGE_OK; }

static void io_destroy(void *h) {
  io_dev *d = h;
  for (span *s = d->free, *n; s; s = n) {
    n = s->next;
    free(s);
  }
  close(d->fd);
  pthread_mutex_destroy(&d->lock);
  free(d);
}

/* ---- memory ------------------------------------------------------------ */

/* A released range of at least bytes, split; the handle's lock held. */
static bool take_free(io_dev *d, uint64_t bytes, uint64_t *out) {
  for (span **p = &d->free; *p; p = &(*p)->next) {
    span *s = *p;
    if (s->bytes < bytes)
      continue;
    *out = s->offset;
    s->offset += bytes;
    s->bytes -= bytes;
    if (!s->bytes) {
      *p = s->next;
      free(s);
    }
    return true;
  }
  return false;
}

static int io_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                       rig_edge_error *err) {
  io_dev *d = h;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: only its own kind of memory");
  if (d->flags & RIG_EDGE_IO_READ_ONLY)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: the file is open read-only");
  uint64_t off;
  pthread_mutex_lock(&d->lock);
  bool reused = bytes && take_free(d, bytes, &off);
  if (!reused) {
    off = d->frontier;
    d->frontier += bytes;
  }
  pthread_mutex_unlock(&d->lock);
  int e = bytes ? posix_fallocate(d->fd, (off_t)off, (off_t)bytes) : 0;
  if (e) {
    span *s = malloc(sizeof *s);
    pthread_mutex_lock(&d->lock);
    if (s) { /* the range goes back for a later, smaller create */
      *s = (span){off, bytes, d->free};
      d->free = s;
    }
    pthread_mutex_unlock(&d->lock);
    return io_errno(err, "io: posix_fallocate", e);
  }
  *out = (rig_edge_alloc){.handle = NULL, .host = NULL, .address = off, .bytes = bytes};
  return RIG_EDGE_OK;
}

/* The range returns to the free list; its disk space to the file system. */
static int io_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  io_dev *d = h;
  if (!a->bytes)
    return RIG_EDGE_OK;
  (void)fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->address,
                  (off_t)a->bytes);
  span *s = malloc(sizeof *s);
  if (!s)
    return RIG_EDGE_OK; /* the range stays unused: never handed out twice */
  pthread_mutex_lock(&d->lock);
  *s = (span){a->address, a->bytes, d->free};
  d->free = s;
  pthread_mutex_unlock(&d->lock);
  return RIG_EDGE_OK;
}

/* ---- the io interface -------------------------------------------------- */

static int io_read(void *h, uint64_t offset, void *dst, uint64_t bytes, rig_edge_error *err) {
  io_dev *d = h;
  char *p = dst;
  while (bytes) {
    size_t chunk = bytes > (1u << 30) ? (1u << 30) : (size_t)bytes;
    ssize_t n = pread(d->fd, p, chunk, (off_t)offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return io_errno(err, "io: pread", errno);
    if (n == 0) { /* the file ends before the range: truncated under rig */
      err->errnum = EIO;
      return rig_edge_fail(err, RIG_EDGE_IO, "io: pread at %llu: the file ends before it (%s)",
                           (unsigned long long)offset, strerror(EIO));
    }
    p += n;
    offset += (uint64_t)n;
    bytes -= (uint64_t)n;
  }
  return RIG_EDGE_OK;
}

static int io_sync(void *h, rig_edge_error *err) {
  io_dev *d = h;
  if (fdatasync(d->fd) != 0)
    return io_errno(err, "io: fdatasync", errno);
  return RIG_EDGE_OK;
}

static int io_write(void *h, uint64_t offset, const void *src, uint64_t bytes,
                    rig_edge_error *err) {
  io_dev *d = h;
  const char *p = src;
  if (d->flags & RIG_EDGE_IO_READ_ONLY) {
    err->errnum = EBADF;
    return rig_edge_fail(err, RIG_EDGE_IO, "io: pwrite: %s (the file is open read-only)",
                         strerror(EBADF));
  }
  while (bytes) {
    size_t chunk = bytes > (1u << 30) ? (1u << 30) : (size_t)bytes;
    ssize_t n = pwrite(d->fd, p, chunk, (off_t)offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return io_errno(err, "io: pwrite", n < 0 ? errno : ENOSPC);
    p += n;
    offset += (uint64_t)n;
    bytes -= (uint64_t)n;
  }
  return (d->flags & RIG_EDGE_IO_DURABLE) ? io_sync(h, err) : RIG_EDGE_OK;
}

static int io_pages(void *h, uint64_t offset, uint64_t bytes, void **out, rig_edge_error *err) {
  io_dev *d = h;
  long page = sysconf(_SC_PAGESIZE);
  if (offset % (uint64_t)page)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: pages at %llu: not on a page",
                         (unsigned long long)offset);
  int prot = PROT_READ | ((d->flags & RIG_EDGE_IO_READ_ONLY) ? 0 : PROT_WRITE);
  void *m = mmap(NULL, bytes ? bytes : 1, prot, MAP_SHARED, d->fd, (off_t)offset);
  if (m == MAP_FAILED)
    return io_errno(err, "io: mmap", errno);
  *out = m;
  return RIG_EDGE_OK;
}

static int io_unpages(void *h, void *host, uint64_t bytes, rig_edge_error *err) {
  if (munmap(host, bytes ? bytes : 1) != 0)
    return io_errno(err, "io: munmap", errno);
  return RIG_EDGE_OK;
}

/* What the file system lets creates reserve: its free bytes, none for a
 * file open read-only. */
static int io_budget(void *h, uint64_t *out, rig_edge_error *err) {
  io_dev *d = h;
  struct statvfs v;
  if (d->flags & RIG_EDGE_IO_READ_ONLY) {
    *out = 0;
    return RIG_EDGE_OK;
  }
  if (fstatvfs(d->fd, &v) != 0)
    return io_errno(err, "io: fstatvfs", errno);
  *out = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
  return RIG_EDGE_OK;
}

static const rig_edge_io io_calls = {
    .size = sizeof(rig_edge_io),
    .read = io_read,
    .write = io_write,
    .pages = io_pages,
    .unpages = io_unpages,
    .budget = io_budget,
    .sync = io_sync,
};

static const rig_edge_driver io_table = {
    .abi_major = RIG_EDGE_ABI_MAJOR,
    .abi_minor = RIG_EDGE_ABI_MINOR,
    .size = sizeof(rig_edge_driver),
    .name = "io",
    .open = io_open,
    .facts = io_facts,
    .stop = io_stop,
    .destroy = io_destroy,
    .allocate = io_allocate,
    .release = io_release,
    .io = &io_calls,
};

RIG_EDGE_DRIVER(io_table)
