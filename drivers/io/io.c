/* SPDX-License-Identifier: MIT */
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
 * A stopped device lets go of its file as soon as core holds none of its
 * memory (its allocations and mapped pages): the program that closed it
 * may unmount the file system, or get an unlinked file's space back, at
 * once. Its descriptor then names no file (let_go), so that a read racing
 * the close fails rather than reading another file that took the number.
 *
 * Every function is thread-safe: pread and pwrite need no lock, and the
 * range allocator takes the handle's mutex for a few list operations. A
 * fork holds every handle's mutex (io_fork), so that the child finds each
 * free and its ranges whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <rig/edge.h>

#include "fault.h"

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
  uint64_t held; /* allocations and mapped pages core holds */
  bool stopped; /* core stopped it: the file goes with the last */
  bool let_go; /* the file is closed; fd names nothing */
  _Atomic uint64_t fault; /* 1 + the offset of the first page lost under
                             a mapping (fault.c), or 0 */
  _Atomic int pages_errno; /* a failed msync of returned pages, for the
                              next io_sync: the kernel told it only once */
  struct io_dev *prev, *next; /* every open handle (handles_lock) */
} io_dev;

/* Every open handle, for io_fork. */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static io_dev *handles;

/* The edge's fork hook (ABI 1.4): core calls it holding its own locks. The
 * list's lock, then each handle's, then the SIGBUS handler's installation
 * (fault.c), as no other call nests them. */
static void io_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_PREPARE) {
    pthread_mutex_lock(&handles_lock);
    for (io_dev *d = handles; d; d = d->next)
      pthread_mutex_lock(&d->lock);
    io_fault_fork(phase);
    return;
  }
  io_fault_fork(phase);
  for (io_dev *d = handles; d; d = d->next)
    pthread_mutex_unlock(&d->lock);
  pthread_mutex_unlock(&handles_lock);
}

static int io_errno(rig_edge_error *err, const char *what, int e) {
  err->errnum = e;
  return rig_edge_fail(err, RIG_EDGE_IO, "%s: %s", what, strerror(e));
}

/* ---- open -------------------------------------------------------------- */

/* The file's size limit (RLIMIT_FSIZE) checked before a call grows the
 * file to end: past it the kernel would raise SIGXFSZ, which ends the
 * program unless it is ignored, and write a part of the bytes. */
static int past_limit(uint64_t end, int code, const char *what, rig_edge_error *err) {
  struct rlimit l;
  if (getrlimit(RLIMIT_FSIZE, &l) != 0 || l.rlim_cur == RLIM_INFINITY || end <= l.rlim_cur)
    return RIG_EDGE_OK;
  err->errnum = EFBIG;
  return rig_edge_fail(err, code, "io: %s: up to byte %llu, past the file size limit %llu: %s", what,
                       (unsigned long long)end, (unsigned long long)l.rlim_cur,
                       strerror(EFBIG));
}

/* The page lost under a mapping, if one was: the device's every later
 * call is RIG_EDGE_FAULT, and core loses it (docs/io.md, "Pages"). */
static int faulted(io_dev *d, rig_edge_error *err) {
  uint64_t f = atomic_load(&d->fault);
  if (!f)
    return RIG_EDGE_OK;
  err->errnum = EIO;
  return rig_edge_fail(err, RIG_EDGE_FAULT,
                       "io: the file lost its page at byte %llu under a mapping (cut short or "
                       "failed: SIGBUS): what was written to it is gone, reads of it gave zeros",
                       (unsigned long long)(f - 1));
}

/* Opens the target; *created: whether this open made the file. */
static int open_fd(const rig_edge_io_args *a, bool *created) {
  *created = false;
  if (a->flags & RIG_EDGE_IO_CREATE) {
    int fd = open(a->target, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) {
      *created = fd >= 0;
      return fd;
    }
  }
  return open(a->target, ((a->flags & RIG_EDGE_IO_READ_ONLY) ? O_RDONLY : O_RDWR) | O_CLOEXEC);
}

/* A durable open that made or grew the file: its size on disk, and a new
 * file's name in its folder (fsync of the folder). */
static int open_durable(const char *target, int fd, bool created) {
  if (fdatasync(fd) != 0)
    return errno;
  char *copy = strdup(target);
  if (!created || !copy) {
    free(copy);
    return created ? ENOMEM : 0;
  }
  int dir = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC), e = 0;
  if (dir < 0 || fsync(dir) != 0)
    e = errno;
  if (dir >= 0)
    close(dir);
  free(copy);
  return e;
}

static int open_file(const rig_edge_io_args *a, int *out_fd, rig_edge_error *err) {
  bool created, grow = false;
  if ((a->flags & RIG_EDGE_IO_CREATE) &&
      past_limit(a->size, RIG_EDGE_UNAVAILABLE, a->target, err) != RIG_EDGE_OK)
    return RIG_EDGE_UNAVAILABLE;
  int fd = open_fd(a, &created), e = 0;
  if (fd < 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: %s: %s", a->target, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    e = -1;
  else if ((a->flags & RIG_EDGE_IO_CREATE) && (uint64_t)st.st_size < a->size)
    e = ftruncate(fd, (off_t)a->size) == 0 ? 0 : errno, grow = true;
  if (!e && (a->flags & RIG_EDGE_IO_DURABLE) && (created || grow))
    e = open_durable(a->target, fd, created);
  if (e) {
    close(fd);
    if (created)
      unlink(a->target); /* no file is left of a failed open */
    if (e < 0)
      return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: %s: not a regular file", a->target);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: %s (size %llu): %s", a->target,
                         (unsigned long long)a->size, strerror(e));
  }
  *out_fd = fd;
  return RIG_EDGE_OK;
}

static int io_open(const char *args, void **out, rig_edge_error *err) {
  rig_edge_io_args a;
  if (rig_edge_io_args_parse(args, &a) != RIG_EDGE_OK)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "io: an io library; open it with rig_device_open_io");
  const uint32_t known = RIG_EDGE_IO_CREATE | RIG_EDGE_IO_READ_ONLY | RIG_EDGE_IO_DURABLE;
  if (a.flags & ~known) /* a flag it would drop */
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: %s: unknown flags 0x%x", a.target,
                         a.flags & ~known);
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
  pthread_mutex_lock(&handles_lock);
  d->next = handles;
  if (handles)
    handles->prev = d;
  handles = d;
  pthread_mutex_unlock(&handles_lock);
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
  f->type = RIG_EDGE_TYPE_IO;
  return RIG_EDGE_OK;
}

/* Closes the file of a stopped device that core holds nothing of; the
 * handle's lock held. The descriptor's number stays taken, by an eventfd,
 * until io_destroy: a read or write racing the close gets ESPIPE from it,
 * never the bytes of a file opened since under the same number. Where no
 * eventfd can be made, the file stays open until io_destroy. */
static void let_go(io_dev *d) {
  if (!d->stopped || d->held || d->let_go)
    return;
  int none = eventfd(0, EFD_CLOEXEC);
  if (none < 0)
    return;
  d->let_go = dup3(none, d->fd, O_CLOEXEC) >= 0;
  close(none);
}

/* One allocation or mapping fewer: the last of a stopped device's lets go
 * of its file. */
static void unhold(io_dev *d) {
  pthread_mutex_lock(&d->lock);
  d->held--;
  let_go(d);
  pthread_mutex_unlock(&d->lock);
}

/* An io device ends at once: its calls are the host's and none is under
 * way once core stops it. The file stays open for memory still out, and
 * closes with the last of it (let_go). */
static int io_stop(void *h, rig_edge_error *err) {
  io_dev *d = h;
  pthread_mutex_lock(&d->lock);
  d->stopped = true;
  let_go(d);
  pthread_mutex_unlock(&d->lock);
  return RIG_EDGE_OK;
}

static void io_destroy(void *h) {
  io_dev *d = h;
  pthread_mutex_lock(&handles_lock);
  if (d->prev)
    d->prev->next = d->next;
  else
    handles = d->next;
  if (d->next)
    d->next->prev = d->prev;
  pthread_mutex_unlock(&handles_lock);
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
  int r = bytes ? past_limit(off + bytes, RIG_EDGE_IO, "posix_fallocate", err) : RIG_EDGE_OK;
  int e = bytes && r == RIG_EDGE_OK ? posix_fallocate(d->fd, (off_t)off, (off_t)bytes) : 0;
  if (r != RIG_EDGE_OK || e) {
    span *s = malloc(sizeof *s);
    pthread_mutex_lock(&d->lock);
    if (s) { /* the range goes back for a later, smaller create */
      *s = (span){off, bytes, d->free};
      d->free = s;
    }
    pthread_mutex_unlock(&d->lock);
    return e ? io_errno(err, "io: posix_fallocate", e) : r;
  }
  pthread_mutex_lock(&d->lock);
  d->held++;
  pthread_mutex_unlock(&d->lock);
  *out = (rig_edge_alloc){.handle = NULL, .host = NULL, .address = off, .bytes = bytes};
  return RIG_EDGE_OK;
}

/* The range returns to the free list; its disk space to the file system. */
static int io_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  io_dev *d = h;
  if (a->bytes)
    (void)fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->address,
                    (off_t)a->bytes);
  span *s = a->bytes ? malloc(sizeof *s) : NULL;
  pthread_mutex_lock(&d->lock);
  if (s) { /* without it the range stays unused: never handed out twice */
    *s = (span){a->address, a->bytes, d->free};
    d->free = s;
  }
  d->held--;
  let_go(d);
  pthread_mutex_unlock(&d->lock);
  return RIG_EDGE_OK;
}

/* ---- the io interface -------------------------------------------------- */

static int io_read(void *h, uint64_t offset, void *dst, uint64_t bytes, rig_edge_error *err) {
  io_dev *d = h;
  char *p = dst;
  if (faulted(d, err) != RIG_EDGE_OK)
    return RIG_EDGE_FAULT;
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
  int r = faulted(d, err), e;
  if (r == RIG_EDGE_OK && fdatasync(d->fd) != 0) /* pages written through mappings too */
    return io_errno(err, "io: fdatasync", errno);
  if (r == RIG_EDGE_OK && (e = atomic_exchange(&d->pages_errno, 0)))
    return io_errno(err, "io: msync of a borrow's pages", e);
  return r;
}

/* Disk space for [offset, offset+bytes) before bytes change: a file system
 * with no room fails here, with the file as it was (ENOSPC). One without
 * fallocate (ext2, some FUSE and network file systems) reserves nothing:
 * *reserved says so, and room_for then checks the free space instead. */
static int reserve(io_dev *d, uint64_t offset, uint64_t bytes, bool *reserved) {
  int r;
  *reserved = true;
  do
    r = bytes ? fallocate(d->fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)bytes) : 0;
  while (r != 0 && errno == EINTR);
  if (r != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
    *reserved = false;
    return 0;
  }
  return r == 0 ? 0 : errno;
}

/* Without a reservation: ENOSPC where the file system's free space (what
 * this process may use of it) cannot hold the bytes the write adds past
 * the file's end, with a block of the file system's bookkeeping per 256
 * and two more, so that a write the disk cannot hold changes nothing
 * rather than leave its first part (IO-9). 0 where it fits, or the size
 * is unknown. */
static int room_for(io_dev *d, uint64_t offset, uint64_t bytes, uint64_t size) {
  struct statvfs vs;
  if (offset + bytes <= size || fstatvfs(d->fd, &vs) != 0 || !vs.f_frsize)
    return 0;
  uint64_t grow = offset + bytes - (offset > size ? offset : size);
  uint64_t blocks = (grow + vs.f_frsize - 1) / vs.f_frsize;
  uint64_t free = geteuid() == 0 ? vs.f_bfree : vs.f_bavail; /* root may use the reserve */
  return blocks + blocks / 256 + 2 > free ? ENOSPC : 0;
}

/* A write failed after its first bytes went out: the file back to its
 * size before it, so that what it added past the end goes (IO-9). */
static void undo_growth(io_dev *d, uint64_t size) {
  struct stat st;
  if (fstat(d->fd, &st) == 0 && (uint64_t)st.st_size > size)
    (void)!ftruncate(d->fd, (off_t)size);
}

/* A write changes no byte where the size limit or the disk's room refuses
 * it: both are checked before the first byte (docs/io.md, IO-9). */
static int io_write(void *h, uint64_t offset, const void *src, uint64_t bytes,
                    rig_edge_error *err) {
  io_dev *d = h;
  const char *p = src;
  int r = faulted(d, err), e;
  if (r != RIG_EDGE_OK)
    return r;
  if (d->flags & RIG_EDGE_IO_READ_ONLY) {
    err->errnum = EBADF;
    return rig_edge_fail(err, RIG_EDGE_IO, "io: pwrite: %s (the file is open read-only)",
                         strerror(EBADF));
  }
  if ((r = past_limit(offset + bytes, RIG_EDGE_IO, "pwrite", err)) != RIG_EDGE_OK)
    return r;
  bool reserved;
  struct stat st;
  uint64_t size = fstat(d->fd, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
  if ((e = reserve(d, offset, bytes, &reserved)))
    return io_errno(err, "io: pwrite: fallocate", e);
  if (!reserved && size != UINT64_MAX && (e = room_for(d, offset, bytes, size)))
    return io_errno(err, "io: pwrite: the file system's free space", e);
  while (bytes) {
    size_t chunk = bytes > (1u << 30) ? (1u << 30) : (size_t)bytes;
    ssize_t n = pwrite(d->fd, p, chunk, (off_t)offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      e = n < 0 ? errno : ENOSPC;
      if (size != UINT64_MAX)
        undo_growth(d, size);
      return io_errno(err, "io: pwrite", e);
    }
    p += n;
    offset += (uint64_t)n;
    bytes -= (uint64_t)n;
  }
  return (d->flags & RIG_EDGE_IO_DURABLE) ? io_sync(h, err) : RIG_EDGE_OK;
}

/* Io.pages: only bytes the file holds, so that no touch of them raises
 * SIGBUS while the file keeps its size; writable pages get their disk
 * space first, so that no write fault finds the disk full. A later cut of
 * the file by another process is fault.c's. */
static int io_pages(void *h, uint64_t offset, uint64_t bytes, void **out, rig_edge_error *err) {
  io_dev *d = h;
  long page = sysconf(_SC_PAGESIZE);
  struct stat st;
  int r = faulted(d, err), e;
  if (r != RIG_EDGE_OK)
    return r;
  if (offset % (uint64_t)page)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "io: pages at %llu: not on a page",
                         (unsigned long long)offset);
  if (fstat(d->fd, &st) != 0)
    return io_errno(err, "io: fstat", errno);
  if (offset + bytes > (uint64_t)st.st_size) {
    err->errnum = EIO;
    return rig_edge_fail(err, RIG_EDGE_IO, "io: pages [%llu, +%llu): the file ends at %llu (%s)",
                         (unsigned long long)offset, (unsigned long long)bytes,
                         (unsigned long long)st.st_size, strerror(EIO));
  }
  bool writable = !(d->flags & RIG_EDGE_IO_READ_ONLY), reserved;
  if (writable && (e = reserve(d, offset, bytes, &reserved)))
    return io_errno(err, "io: pages: fallocate", e);
  int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  void *m = mmap(NULL, bytes ? bytes : 1, prot, MAP_SHARED, d->fd, (off_t)offset);
  if (m == MAP_FAILED)
    return io_errno(err, "io: mmap", errno);
  if (!io_fault_watch(&d->fault, m, bytes ? bytes : 1, offset, prot)) {
    munmap(m, bytes ? bytes : 1);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "io: no memory to watch a mapping");
  }
  pthread_mutex_lock(&d->lock);
  d->held++;
  pthread_mutex_unlock(&d->lock);
  *out = m;
  return RIG_EDGE_OK;
}

/* The pages go back; a durable device's are on disk first (msync), and
 * a failure waits for the next io_sync, core having no caller to tell. */
static int io_unpages(void *h, void *host, uint64_t bytes, rig_edge_error *err) {
  io_dev *d = h;
  int e = 0;
  if ((d->flags & RIG_EDGE_IO_DURABLE) && !(d->flags & RIG_EDGE_IO_READ_ONLY) &&
      !atomic_load(&d->fault) && msync(host, bytes ? bytes : 1, MS_SYNC) != 0) {
    int none = 0;
    atomic_compare_exchange_strong(&d->pages_errno, &none, errno);
  }
  io_fault_unwatch(host);
  if (munmap(host, bytes ? bytes : 1) != 0)
    e = errno;
  unhold(d);
  int r = faulted(d, err);
  return r == RIG_EDGE_OK && e ? io_errno(err, "io: munmap", e) : r;
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

/* An io device needs a target (a file) that no list can name: it offers
 * none, and rig_device_list shows the library with why. */
static int io_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  (void)names;
  (void)cap;
  (void)err;
  *n = 0;
  return RIG_EDGE_OK;
}

static const rig_edge_driver io_table = {
    RIG_EDGE_DRIVER_INIT("io"),
    .open = io_open,
    .facts = io_facts,
    .stop = io_stop,
    .destroy = io_destroy,
    .allocate = io_allocate,
    .release = io_release,
    .io = &io_calls,
    .fork = io_fork,
    .devices = io_devices,
};

RIG_EDGE_DRIVER(io_table)
