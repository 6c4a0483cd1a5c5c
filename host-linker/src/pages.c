/* pages.c: the pages of small images, carved from shared chunks (LINK-14,
 * LINK-15, PLAT-3).
 *
 * Why: a mapping of its own per image costs an mmap, a fault or a populate
 * per page, an mprotect and a munmap; on a virtual machine whose page
 * tables are expensive that is most of a load (bench P5). Here an image
 * takes pages of a chunk, a larger anonymous mapping, and gives them back
 * when it is freed; the next image writes the same pages, which are still
 * mapped, so a load costs one mprotect (read-write to read-execute) and no
 * fault.
 *
 * Images take the lowest free pages that hold them (first fit): the
 * images loaded one after another lie next to each other, so that each
 * mprotect extends the mapping (VMA) of the image before rather than
 * splitting one, and a burst of loads after a burst of frees takes the
 * pages in the same order.
 *
 * Each page of a chunk is in one state:
 *   FRESH  read-write, never written;
 *   FREE   read-write, written by an image since freed (or refused);
 *   STALE  read-execute, a freed image's;
 *   USED   an image's: read-write while it is written, then read-execute.
 * A page is never writable and executable at once: STALE pages become
 * read-write only while no image holds them, in one mprotect over the whole
 * run of free pages around the taken ones, so that a burst of loads after a
 * burst of frees pays one call.
 *
 * Freeing returns the memory: the pages are given to the kernel with
 * MADV_FREE (MADV_DONTNEED where the kernel lacks it), which reclaims them
 * whenever it needs the memory; until it does, a load reuses them as they
 * are. Frees are batched, as malloc trims its heap: the pages of freed
 * images wait, still USED, until RIG__LINK_PENDING_BYTES of them or
 * PENDING_RANGES images have gathered, or a load finds no room without
 * them; then adjacent ranges go back in one madvise each. A chunk none of
 * whose pages is used is unmapped, but for the last one, which keeps only
 * its address space.
 *
 * Images larger than a chunk's eighth, or aligned past a page, take a
 * mapping of their own (load.c). One lock guards the chunks; no system
 * call but the mprotect of STALE runs is made under it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#ifndef MADV_FREE
#define MADV_FREE 8
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define CHUNK_BYTES ((size_t)8 << 20)
#define PENDING_RANGES 64

enum { FRESH = 0, FREE, STALE, USED };

typedef struct chunk {
  struct chunk *next;
  unsigned char *base;
  size_t npages, used;  /* pages, and how many are USED */
  size_t low;           /* every page below it is USED: where searches start */
  unsigned char *state; /* one per page */
} chunk;

/* Pages freed and not yet given back. */
typedef struct range {
  unsigned char *p;
  size_t bytes;
  bool stale; /* STALE once back (a loaded image's), else FREE */
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
static _Atomic int free_advice = MADV_FREE;

/* A fork while another thread holds the lock leaves the child a lock no one
 * will release: take it around fork, as malloc does. */
static void before_fork(void) { pthread_mutex_lock(&lock); }
static void after_fork(void) { pthread_mutex_unlock(&lock); }

static void init(void) {
  page_bytes = (size_t)sysconf(_SC_PAGESIZE);
  pthread_atfork(before_fork, after_fork, after_fork);
}

size_t rig__link_pool_limit(void) {
  pthread_once(&once, init);
  return CHUNK_BYTES / 8;
}

static chunk *chunk_new(void) {
  chunk *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->npages = CHUNK_BYTES / page_bytes;
  c->state = calloc(c->npages, 1); /* all FRESH */
  void *m = mmap(NULL, CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!c->state || m == MAP_FAILED) {
    free(c->state);
    free(c);
    return NULL;
  }
  c->base = m;
  c->next = chunks;
  chunks = c;
  return c;
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

/* Makes pages [at, at + n) of c writable: where some are STALE, the whole
 * run of free pages around them becomes read-write in one mprotect. */
static bool make_writable(chunk *c, size_t at, size_t n) {
  size_t lo = at, hi = at + n;
  bool stale = false;
  for (size_t i = at; i < at + n; i++)
    stale |= c->state[i] == STALE;
  if (!stale)
    return true;
  while (lo > 0 && c->state[lo - 1] != USED)
    lo--;
  while (hi < c->npages && c->state[hi] != USED)
    hi++;
  if (mprotect(c->base + lo * page_bytes, (hi - lo) * page_bytes, PROT_READ | PROT_WRITE) != 0)
    return false;
  for (size_t i = lo; i < hi; i++)
    if (c->state[i] == STALE)
      c->state[i] = FREE;
  return true;
}

/* Takes n pages of c, read-write, USED; NULL where c has no room. Whether
 * some were FRESH is in *fresh. */
static unsigned char *take(chunk *c, size_t n, bool *fresh) {
  size_t at = find(c, n);
  if (at == c->npages || !make_writable(c, at, n))
    return NULL;
  for (size_t i = at; i < at + n; i++) {
    *fresh |= c->state[i] == FRESH;
    c->state[i] = USED;
  }
  c->used += n;
  if (at == c->low)
    c->low = at + n;
  return c->base + at * page_bytes;
}

static chunk *owner(const unsigned char *p, chunk ***link) {
  for (chunk **l = &chunks; *l; l = &(*l)->next)
    if (p >= (*l)->base && p < (*l)->base + CHUNK_BYTES) {
      *link = l;
      return *l;
    }
  return NULL;
}

/* Marks a range given back free; returns a chunk it left wholly free to
 * unmap (but the last chunk). Under the lock. */
static chunk *mark_free(const range *r) {
  chunk **link, *c = owner(r->p, &link);
  if (!c)
    return NULL;
  size_t at = (size_t)(r->p - c->base) / page_bytes, n = r->bytes / page_bytes;
  memset(c->state + at, r->stale ? STALE : FREE, n);
  c->used -= n;
  if (at < c->low)
    c->low = at;
  if (c->used || !chunks->next)
    return NULL;
  *link = c->next;
  return c;
}

static int by_address(const void *a, const void *b) {
  const range *x = a, *y = b;
  return x->p < y->p ? -1 : x->p > y->p;
}

static void advise_free(void *p, size_t bytes) {
  if (madvise(p, bytes, free_advice) != 0 && free_advice == MADV_FREE) {
    free_advice = MADV_DONTNEED; /* a kernel before 4.5 */
    (void)madvise(p, bytes, MADV_DONTNEED);
  }
}

/* Gives the pages of batch b back to the kernel, then marks them free. The
 * memory goes back before they are marked: once they are, another load may
 * take and write them, which a late MADV_FREE would undo. Called without
 * the lock. */
static void flush(batch *b) {
  qsort(b->v, b->n, sizeof *b->v, by_address);
  for (size_t i = 0, j; i < b->n; i = j) {
    unsigned char *end = b->v[i].p + b->v[i].bytes;
    for (j = i + 1; j < b->n && b->v[j].p == end; j++)
      end += b->v[j].bytes;
    advise_free(b->v[i].p, (size_t)(end - b->v[i].p));
  }
  chunk *dead[PENDING_RANGES];
  size_t ndead = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < b->n; i++) {
    chunk *c = mark_free(&b->v[i]);
    if (c)
      dead[ndead++] = c;
  }
  pthread_mutex_unlock(&lock);
  for (size_t i = 0; i < ndead; i++) {
    munmap(dead[i]->base, CHUNK_BYTES);
    free(dead[i]->state);
    free(dead[i]);
  }
}

/* Takes the pending batch, under the lock: *b is what to flush. */
static bool take_pending(batch *b) {
  if (!pending.n)
    return false;
  *b = pending;
  pending.n = pending.bytes = 0;
  return true;
}

static unsigned char *take_any(size_t n, bool *fresh) {
  unsigned char *p = NULL;
  for (chunk *c = chunks; c && !p; c = c->next)
    p = take(c, n, fresh);
  return p;
}

void *rig__link_pool_take(size_t bytes) {
  pthread_once(&once, init);
  if (!bytes || bytes % page_bytes || bytes > CHUNK_BYTES / 8)
    return NULL;
  size_t n = bytes / page_bytes;
  bool fresh = false;
  batch b;
  pthread_mutex_lock(&lock);
  unsigned char *p = take_any(n, &fresh);
  /* Out of room: what frees left pending may be what it takes. */
  if (!p && take_pending(&b)) {
    pthread_mutex_unlock(&lock);
    flush(&b);
    pthread_mutex_lock(&lock);
    p = take_any(n, &fresh);
  }
  if (!p) {
    chunk *c = chunk_new();
    p = c ? take(c, n, &fresh) : NULL;
  }
  pthread_mutex_unlock(&lock);
  /* Never-written pages are filled in one call rather than one fault each,
   * as the image is written whole next; a kernel without it faults. */
  if (p && fresh)
    (void)madvise(p, bytes, MADV_POPULATE_WRITE);
  return p;
}

void rig__link_pool_give(void *p, size_t bytes, bool stale) {
  batch b;
  bool full;
  pthread_mutex_lock(&lock);
  pending.v[pending.n++] = (range){p, bytes, stale};
  pending.bytes += bytes;
  full = pending.bytes >= RIG__LINK_PENDING_BYTES || pending.n == PENDING_RANGES;
  if (full)
    take_pending(&b);
  pthread_mutex_unlock(&lock);
  if (full)
    flush(&b);
}
