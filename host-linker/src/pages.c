/* SPDX-License-Identifier: MIT */
/* pages.c: the pages of small images, carved from shared chunks (LINK-14,
 * LINK-15, PLAT-3).
 *
 * Why: a mapping of its own per image costs an mmap, a fault or a populate
 * per page, an mprotect and a munmap; and the mprotect that turns written
 * pages read-execute changes live page-table entries, so it flushes the
 * TLB, which on a virtual machine is a call into the hypervisor: 53% of a
 * load (bench P5, docs/benchmarks.md). Here no page of an image is ever
 * writable, through any address:
 *
 * - a chunk is an address range reserved with PROT_NONE, and a memfd of
 *   the same size whose offset o backs the page at base + o;
 * - a load takes free pages of a chunk, links the image into ordinary heap
 *   memory as if it lay at their address (image.c), writes those bytes into
 *   the memfd with pwrite(2), and maps that part of the file read-execute,
 *   populated, over its reservation (rig__link_pool_place). Replacing
 *   pages that were never touched clears no page-table entry, so that mmap
 *   flushes nothing; nothing in the process maps the file writable;
 * - freeing batches the pages, as malloc trims its heap: the pages of
 *   freed images wait, still USED, until RIG__LINK_PENDING_BYTES of them or
 *   PENDING_RANGES images have gathered, or a load finds no room without
 *   them; then each run of adjacent ones is reserved again (one mmap, one
 *   TLB flush) and its file pages are freed (FALLOC_FL_PUNCH_HOLE), which
 *   returns the memory to the system.
 *
 * Images take the lowest free pages that hold them (first fit): images
 * loaded one after another lie next to each other, and those freed
 * together go back in one call.
 *
 * fork: a child maps the same file, so a page its parent freed and wrote
 * again would change the child's code under it. At a fork both sides
 * retire every chunk: a retired chunk takes no new image and its freed
 * pages are reserved again but never rewritten or punched; it is unmapped
 * and its file closed once it holds no image, and the file's memory goes
 * with the last process that maps it.
 *
 * Where the system refuses a memfd, or refuses to map one executable, the
 * pool gives nothing and each image maps its own (image.c). Images larger
 * than a chunk's eighth, or aligned past a page, map their own too. One
 * lock guards the chunks; no system call is made under it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x10U
#endif

#define CHUNK_BYTES ((size_t)8 << 20)
#define PENDING_RANGES 64
#define RESERVE (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

enum { FREE = 0, USED };

typedef struct chunk {
  struct chunk *next;
  unsigned char *base; /* its reservation */
  int fd;              /* its memfd */
  bool retired;        /* at a fork: never written again */
  size_t npages, used; /* pages, and how many are USED */
  size_t low;          /* every page below it is USED: where searches start */
  unsigned char *state; /* one per page */
} chunk;

/* Pages freed and not yet given back: run r of chunk c. */
typedef struct range {
  unsigned char *p;
  size_t bytes;
} range;

typedef struct batch {
  range v[PENDING_RANGES];
  size_t n, bytes;
} batch;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static chunk *chunks;
static batch pending;
static size_t page_bytes;
static _Atomic bool refused; /* no memfd, or none mapped executable */

static void retire_all(void) {
  for (chunk *c = chunks; c; c = c->next)
    c->retired = true;
}

/* A fork while another thread holds the lock leaves the child a lock no one
 * will release: take it around fork, as malloc does; both sides retire
 * the chunks they now share. */
static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork(void) {
  retire_all();
  pthread_mutex_unlock(&lock);
}

static void init(void) {
  page_bytes = (size_t)sysconf(_SC_PAGESIZE);
  pthread_atfork(before_fork, after_fork, after_fork);
}

size_t rig__link_pool_limit(void) {
  pthread_once(&once, init);
  return CHUNK_BYTES / 8;
}

/* A memfd of CHUNK_BYTES that maps executable; -1 where the system
 * refuses. MFD_EXEC asks for an executable file where vm.memfd_noexec
 * would seal it otherwise; a kernel before 6.3 refuses the flag. */
static int exec_memfd(void) {
  int fd = memfd_create("rig-image", MFD_CLOEXEC | MFD_EXEC);
  if (fd < 0 && errno == EINVAL)
    fd = memfd_create("rig-image", MFD_CLOEXEC);
  if (fd < 0)
    return -1;
  void *probe = MAP_FAILED;
  if (ftruncate(fd, (off_t)CHUNK_BYTES) == 0)
    probe = mmap(NULL, page_bytes, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (probe == MAP_FAILED) {
    close(fd);
    return -1;
  }
  munmap(probe, page_bytes);
  return fd;
}

/* A new chunk, made without the lock; NULL where the system refuses. */
static chunk *chunk_new(void) {
  chunk *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->npages = CHUNK_BYTES / page_bytes;
  c->state = calloc(c->npages, 1); /* all FREE */
  c->fd = exec_memfd();
  if (c->fd < 0)
    refused = true;
  void *m = c->fd < 0 ? MAP_FAILED : mmap(NULL, CHUNK_BYTES, PROT_NONE, RESERVE, -1, 0);
  if (!c->state || m == MAP_FAILED) {
    if (c->fd >= 0)
      close(c->fd);
    free(c->state);
    free(c);
    return NULL;
  }
  c->base = m;
  return c;
}

static void chunk_drop(chunk *c) {
  munmap(c->base, CHUNK_BYTES);
  close(c->fd);
  free(c->state);
  free(c);
}

/* The lowest run of n free pages in c; npages if none. */
static size_t find(const chunk *c, size_t n) {
  size_t run = 0;
  for (size_t i = c->low; i < c->npages; i++) {
    run = c->state[i] == USED ? 0 : run + 1;
    if (run == n)
      return i + 1 - n;
  }
  return c->npages;
}

/* Takes n pages of c; false where c has no room or is retired. */
static bool take(chunk *c, size_t n, rig__link_pages *out) {
  size_t at = c->retired ? c->npages : find(c, n);
  if (at == c->npages)
    return false;
  memset(c->state + at, USED, n);
  c->used += n;
  if (at == c->low)
    c->low = at + n;
  *out = (rig__link_pages){c->base + at * page_bytes, c->fd, (off_t)(at * page_bytes)};
  return true;
}

static bool take_any(size_t n, rig__link_pages *out) {
  for (chunk *c = chunks; c; c = c->next)
    if (take(c, n, out))
      return true;
  return false;
}

static chunk *owner(const unsigned char *p, chunk ***link) {
  for (chunk **l = &chunks; *l; l = &(*l)->next)
    if (p >= (*l)->base && p < (*l)->base + CHUNK_BYTES) {
      *link = l;
      return *l;
    }
  return NULL;
}

/* Whether a chunk but c takes new images. */
static bool another_live(const chunk *c) {
  for (const chunk *o = chunks; o; o = o->next)
    if (o != c && !o->retired)
      return true;
  return false;
}

/* Marks run r of chunk c free; returns c where that left it holding no
 * image and it may go: it is retired, or another chunk takes new images
 * (the last that does keeps its address space and file). Under the
 * lock. */
static chunk *mark_free(chunk *c, const range *r) {
  size_t at = (size_t)(r->p - c->base) / page_bytes, n = r->bytes / page_bytes;
  memset(c->state + at, FREE, n);
  c->used -= n;
  if (at < c->low)
    c->low = at;
  if (c->used || (!c->retired && !another_live(c)))
    return NULL;
  for (chunk **l = &chunks; *l; l = &(*l)->next)
    if (*l == c) {
      *l = c->next;
      break;
    }
  return c;
}

static int by_address(const void *a, const void *b) {
  const range *x = a, *y = b;
  return x->p < y->p ? -1 : x->p > y->p;
}

/* Reserves run r of chunk c again, which unmaps its code, and frees its
 * file pages unless c is retired (a child may map them). */
static void give_back(const chunk *c, bool retired, const range *r) {
  (void)mmap(r->p, r->bytes, PROT_NONE, RESERVE | MAP_FIXED, -1, 0);
  if (!retired)
    (void)fallocate(c->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, r->p - c->base,
                    (off_t)r->bytes);
}

/* Gives the pages of batch b back, a run of adjacent ones in a chunk at a
 * time, then marks them free: once they are, another load may take and
 * write them, which a late punch would undo. The chunks are looked up
 * under the lock (the list changes), the calls made without it; a chunk
 * whose pages are USED stays in the list. */
static void flush(batch *b) {
  chunk *of[PENDING_RANGES], **link;
  bool retired[PENDING_RANGES];
  qsort(b->v, b->n, sizeof *b->v, by_address);
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < b->n; i++) {
    of[i] = owner(b->v[i].p, &link);
    retired[i] = of[i]->retired;
  }
  pthread_mutex_unlock(&lock);
  for (size_t i = 0, j; i < b->n; i = j) {
    range run = b->v[i];
    for (j = i + 1; j < b->n && of[j] == of[i] && b->v[j].p == run.p + run.bytes; j++)
      run.bytes += b->v[j].bytes;
    give_back(of[i], retired[i], &run);
  }
  chunk *dead[PENDING_RANGES];
  size_t ndead = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < b->n; i++) {
    chunk *c = mark_free(of[i], &b->v[i]);
    if (c)
      dead[ndead++] = c;
  }
  pthread_mutex_unlock(&lock);
  for (size_t i = 0; i < ndead; i++)
    chunk_drop(dead[i]);
}

/* Takes the pending batch, under the lock: *b is what to flush. */
static bool take_pending(batch *b) {
  if (!pending.n)
    return false;
  *b = pending;
  pending.n = pending.bytes = 0;
  return true;
}

bool rig__link_pool_take(size_t bytes, rig__link_pages *out) {
  pthread_once(&once, init);
  if (!bytes || bytes % page_bytes || bytes > CHUNK_BYTES / 8 || refused)
    return false;
  size_t n = bytes / page_bytes;
  batch b;
  pthread_mutex_lock(&lock);
  bool got = take_any(n, out);
  /* Out of room: what frees left pending may be what it takes. */
  if (!got && take_pending(&b)) {
    pthread_mutex_unlock(&lock);
    flush(&b);
    pthread_mutex_lock(&lock);
    got = take_any(n, out);
  }
  pthread_mutex_unlock(&lock);
  if (got)
    return true;
  chunk *c = chunk_new();
  if (!c)
    return false;
  pthread_mutex_lock(&lock);
  c->next = chunks;
  chunks = c;
  got = take(c, n, out);
  pthread_mutex_unlock(&lock);
  return got;
}

bool rig__link_pool_place(const rig__link_pages *pg, const void *bytes, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t w = pwrite(pg->fd, (const char *)bytes + done, n - done, pg->off + (off_t)done);
    if (w == 0)
      errno = EIO; /* the file is sized for every page: never */
    if (w == 0 || (w < 0 && errno != EINTR))
      return false;
    done += w > 0 ? (size_t)w : 0;
  }
  /* Populated: the image's tables are read at once, its code soon after;
   * one call fills what would be a fault per page. */
  return mmap(pg->at, n, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, pg->fd,
              pg->off) != MAP_FAILED;
}

void rig__link_pool_give(void *p, size_t bytes) {
  batch b;
  bool full;
  pthread_mutex_lock(&lock);
  pending.v[pending.n++] = (range){p, bytes};
  pending.bytes += bytes;
  full = pending.bytes >= RIG__LINK_PENDING_BYTES || pending.n == PENDING_RANGES;
  if (full)
    full = take_pending(&b);
  pthread_mutex_unlock(&lock);
  if (full)
    flush(&b);
}
