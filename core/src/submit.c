/* submit.c: prepared submissions, runs and submit (SUBS-1, RUN-2..8, VALID,
 * SUBMIT).
 *
 * A submission describes work for one device once: its parts and the slots
 * they name. A run holds what one submit needs, so that submit allocates
 * nothing (SUBMIT-20): the driver's parts and the uses are built into
 * arrays the run owns, sized at make. Runs are pooled per submission;
 * submit gives its run back, also when it fails (SUBMIT-12).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { RUN_FREE, RUN_TAKEN, RUN_SUBMITTING };

struct rig_run {
  rig_submission *s;
  _Atomic int state;
  pthread_t owner;
  rig_edge_part *parts;
  rig__use *uses;
  struct rig_run *next_free, *next_all;
};

struct rig_submission {
  _Atomic uint32_t refs;
  rig_device *dev;
  rig_part *parts;
  uint32_t nparts, nslots;
  uint32_t *words;               /* the words of words parts */
  void *keep;                    /* rig_submission_keep */
  rig_keep_release keep_release;
  uint8_t *slot_writes;          /* per slot: written by a part */
  pthread_mutex_t lock;          /* the run pool */
  rig_run *free_runs;
  rig_run *all_runs;
};

static uint32_t edge_kind(rig_part_kind k) {
  return k == RIG_PART_COPY ? RIG_EDGE_PART_COPY
         : k == RIG_PART_FILL ? RIG_EDGE_PART_FILL
         : k == RIG_PART_WORDS ? RIG_EDGE_PART_WORDS
                               : RIG_EDGE_PART_KINDS;
}

/* The slots a part names, and whether it writes each: a copy reads its
 * source and writes its destination, a fill writes its destination, words
 * name none. Returns how many. */
static int slots_of(const rig_part *p, uint32_t slot[2], bool writes[2]) {
  if (p->kind == RIG_PART_WORDS)
    return 0;
  slot[0] = p->dst;
  writes[0] = true;
  if (p->kind != RIG_PART_COPY)
    return 1;
  slot[1] = p->src;
  writes[1] = false;
  return 2;
}

static bool names(const rig_part *p, uint32_t slot) {
  uint32_t s[2];
  bool w[2];
  int n = slots_of(p, s, w);
  for (int k = 0; k < n; k++)
    if (s[k] == slot)
      return true;
  return false;
}

static rig_status check_part(rig_device *d, const rig_part *p, size_t i) {
  uint32_t kind = edge_kind(p->kind);
  if (kind == RIG_EDGE_PART_KINDS || kind == RIG_EDGE_PART_LAUNCH ||
      d->facts.part_queue[kind] == RIG_EDGE_NO_QUEUE)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %s has no queue for part %zu",
                     d->name, i);                             /* VALID-2 */
  if (kind == RIG_EDGE_PART_COPY && p->src == p->dst)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu copies a slot onto itself", i);
  if (kind == RIG_EDGE_PART_FILL && p->pattern_bytes != 1 && p->pattern_bytes != 2 &&
      p->pattern_bytes != 4)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: pattern of %u bytes", i,
                     p->pattern_bytes);
  if (kind == RIG_EDGE_PART_WORDS && (!p->words || p->nwords == 0 || p->nwords > 65536))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: %u words", i,
                     p->nwords);
  return RIG_OK;
}

/* Slots must be dense: each below the highest is named (VALID-8). */
static rig_status check_slots(rig_device *d, const rig_part *parts, size_t n, uint32_t *out) {
  uint32_t top = 0, slot[2];
  bool w[2];
  for (size_t i = 0; i < n; i++)
    for (int k = slots_of(&parts[i], slot, w); k-- > 0;) {
      if (slot[k] >= 1u << 20)
        return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: slot %u is too high", slot[k]);
      top = slot[k] + 1 > top ? slot[k] + 1 : top;
    }
  for (uint32_t s = 0; s < top; s++) {
    bool named = false;
    for (size_t i = 0; i < n && !named; i++)
      named = names(&parts[i], s);
    if (!named)
      return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: slot %u is named by no part", s);
  }
  *out = top;
  return RIG_OK;
}

/* No slot is named by an unordered use and an ordered one (VALID-9). */
static rig_status check_unordered(rig_device *d, const rig_part *parts, size_t n) {
  uint32_t slot[2];
  bool w[2];
  for (size_t i = 0; i < n; i++) {
    if (!(parts[i].flags & RIG_PART_UNORDERED))
      continue;
    for (int k = slots_of(&parts[i], slot, w); k-- > 0;)
      for (size_t j = 0; j < n; j++)
        if (!(parts[j].flags & RIG_PART_UNORDERED) && names(&parts[j], slot[k]))
          return rig__fail(RIG_INVALID, d, 0,
                           "rig_submission_make: parts %zu and %zu use a slot unordered and "
                           "ordered", i, j);
  }
  return RIG_OK;
}

static rig_status check_parts(rig_device *d, const rig_part *parts, size_t n, uint32_t *nslots) {
  rig_status st;
  if (n == 0 || n > 65536)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %zu parts", n);
  for (size_t i = 0; i < n; i++)
    if ((st = check_part(d, &parts[i], i)))
      return st;
  if ((st = check_slots(d, parts, n, nslots)) || (st = check_unordered(d, parts, n)))
    return st;
  return RIG_OK;
}

/* Copies the parts, and the words of words parts into one array. */
static bool copy_parts(rig_submission *s, const rig_part *parts, size_t n) {
  size_t words = 0;
  for (size_t i = 0; i < n; i++)
    words += parts[i].kind == RIG_PART_WORDS ? parts[i].nwords : 0;
  s->parts = malloc(n * sizeof *parts);
  s->words = words ? malloc(words * sizeof *s->words) : NULL;
  if (!s->parts || (words && !s->words))
    return false;
  memcpy(s->parts, parts, n * sizeof *parts);
  for (size_t i = 0, at = 0; i < n; i++)
    if (parts[i].kind == RIG_PART_WORDS) {
      memcpy(s->words + at, parts[i].words, parts[i].nwords * sizeof *s->words);
      s->parts[i].words = s->words + at;
      at += parts[i].nwords;
    }
  return true;
}

static void free_submission(rig_submission *s) {
  free(s->parts);
  free(s->words);
  free(s->slot_writes);
  free(s);
}

RIG_API rig_status rig_submission_make(rig_device *d, const rig_part *parts, size_t n,
                                       rig_submission **out) {
  rig_status st = rig__may_lock("rig_submission_make");
  if (st)
    return st;
  if (!d || !out || (!parts && n))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: NULL argument");
  if (rig__is_lost(d))
    return rig__lost_error(d);
  if (!rig_computes(d))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %s runs no work", d->name); /* VALID-1 */
  uint32_t nslots = 0;
  if ((st = check_parts(d, parts, n, &nslots)))
    return st;
  rig_submission *s = calloc(1, sizeof *s);
  if (!s || !copy_parts(s, parts, n) || !(s->slot_writes = calloc(nslots + 1, 1))) {
    if (s)
      free_submission(s);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), n * sizeof *parts,
                     "rig_submission_make: out of memory");
  }
  for (size_t i = 0; i < n; i++)
    if (parts[i].kind != RIG_PART_WORDS)
      s->slot_writes[parts[i].dst] = 1;
  s->nparts = (uint32_t)n;
  s->nslots = nslots;
  s->dev = rig_device_retain(d);
  pthread_mutex_init(&s->lock, NULL);
  atomic_store(&s->refs, 1);
  *out = s;
  return RIG_OK;
}

RIG_API rig_submission *rig_submission_retain(rig_submission *s) {
  if (s)
    atomic_fetch_add(&s->refs, 1);
  return s;
}

RIG_API rig_status rig_submission_keep(rig_submission *s, void *value, rig_keep_release release) {
  if (!s)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_submission_keep: submission is NULL");
  s->keep = value;
  s->keep_release = release;
  return RIG_OK;
}

RIG_API void rig_submission_release(rig_submission *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
    return;
  if ((s->keep || s->keep_release) &&
      rig__keep_queue(s->dev, s->keep, s->keep_release) != RIG_OK && s->keep_release)
    s->keep_release(s->keep); /* no memory to queue it: let it go now */
  for (rig_run *r = s->all_runs, *next; r; r = next) {
    next = r->next_all;
    free(r->parts);
    free(r->uses);
    free(r);
  }
  pthread_mutex_destroy(&s->lock);
  rig_device_release(s->dev);
  free_submission(s);
}

RIG_API uint32_t rig_submission_slots(const rig_submission *s) { return s ? s->nslots : 0; }
RIG_API rig_submission *rig_run_submission(const rig_run *r) { return r ? r->s : NULL; }

static rig_run *run_new(rig_submission *s) {
  rig_run *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->parts = calloc(s->nparts, sizeof *r->parts);
  r->uses = calloc(2 * (size_t)s->nparts, sizeof *r->uses);
  if (!r->parts || !r->uses) {
    free(r->parts);
    free(r->uses);
    free(r);
    return NULL;
  }
  r->s = s;
  return r;
}

RIG_API rig_status rig_submission_take(rig_submission *s, rig_run **out) {
  rig_status st = rig__may_lock("rig_submission_take");
  if (st)
    return st;
  if (!s || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_submission_take: NULL argument");
  /* A run is on the free list exactly while it is RUN_FREE; both change
   * together under s->lock (claim_run relies on it). */
  rig__lock(&s->lock);
  rig_run *r = s->free_runs;
  if (r) {
    s->free_runs = r->next_free;
    r->owner = pthread_self();
    atomic_store(&r->state, RUN_TAKEN);
  }
  rig__unlock(&s->lock);
  if (!r) {
    if (!(r = run_new(s)))
      return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), 0, "rig_submission_take: out of memory");
    r->owner = pthread_self();
    atomic_store(&r->state, RUN_TAKEN);
    rig__lock(&s->lock);
    r->next_all = s->all_runs;
    s->all_runs = r;
    rig__unlock(&s->lock);
  }
  *out = r;
  return RIG_OK;
}

static void run_free(rig_run *r) {
  rig_submission *s = r->s;
  pthread_mutex_lock(&s->lock); /* not counted: submit frees inside a lock too */
  atomic_store(&r->state, RUN_FREE);
  r->next_free = s->free_runs;
  s->free_runs = r;
  pthread_mutex_unlock(&s->lock);
}

/* A buffer as slot i of a submit on d (VALID-13..16). */
static rig_status check_buffer(rig_device *d, const rig_submission *s, rig_buffer *b,
                               uint32_t i) {
  rig_status st = rig__buffer_usable(b, "rig_submit");
  if (st)
    return st;
  if (b->dev != d && !rig_reaches(d, b->alloc->dev)) /* copies and fills only, so far */
    return rig__fail(RIG_INVALID, d, 0, "rig_submit: slot %u is on %s, which %s does not reach",
                     i, b->dev->name, d->name);
  if (s->slot_writes[i] && b->access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, d, 0, "rig_submit: slot %u is written through a Read buffer",
                     i);                                   /* VALID-16 */
  return RIG_OK;
}

static rig_edge_range range_of(rig_buffer *b) {
  rig_edge_range r = {b->mem, b->offset, b->length};
  return r;
}

/* Builds part i of r for the driver and its uses (VALID-17, VALID-18). */
static rig_status build_part(rig_run *r, uint32_t i, rig_buffer *const *bufs, size_t *nuses) {
  const rig_part *p = &r->s->parts[i];
  rig_device *d = r->s->dev;
  rig_edge_part *e = &r->parts[i];
  bool unordered = p->flags & RIG_PART_UNORDERED;
  memset(e, 0, sizeof *e);
  if (p->kind == RIG_PART_WORDS) {
    e->kind = RIG_EDGE_PART_WORDS;
    e->queue = d->facts.part_queue[e->kind];
    e->u.words.words = p->words;
    e->u.words.count = p->nwords;
    return RIG_OK;
  }
  rig_buffer *dst = bufs[p->dst];
  if (p->kind == RIG_PART_COPY) {
    rig_buffer *src = bufs[p->src];
    if (src->length != dst->length)
      return rig__fail(RIG_INVALID, d, 0, "rig_submit: part %u copies %llu bytes into %llu", i,
                       (unsigned long long)src->length, (unsigned long long)dst->length);
    if (rig_buffer_share_byte(src, dst))
      return rig__fail(RIG_INVALID, d, 0, "rig_submit: part %u copies between buffers sharing a byte", i);
    e->kind = RIG_EDGE_PART_COPY;
    e->u.copy.src = range_of(src);
    e->u.copy.dst = range_of(dst);
    r->uses[(*nuses)++] = (rig__use){src->alloc, false, unordered};
  } else {
    if (dst->length % p->pattern_bytes)
      return rig__fail(RIG_INVALID, d, 0, "rig_submit: part %u: pattern does not tile slot %u", i,
                       p->dst);
    e->kind = RIG_EDGE_PART_FILL;
    e->u.fill.dst = range_of(dst);
    e->u.fill.pattern = p->pattern;
    e->u.fill.pattern_bytes = p->pattern_bytes;
  }
  e->queue = d->facts.part_queue[e->kind];
  r->uses[(*nuses)++] = (rig__use){dst->alloc, true, unordered};
  return RIG_OK;
}

/* Whether parts i and j may share memory where one writes (ORDER-3):
 * buffers sharing a word count as one memory (WORD-4). */
static bool conflict(const rig_part *a, const rig_part *b, rig_buffer *const *bufs) {
  uint32_t sa[2], sb[2];
  bool wa[2], wb[2];
  int na = slots_of(a, sa, wa), nb = slots_of(b, sb, wb);
  for (int x = 0; x < na; x++)
    for (int y = 0; y < nb; y++)
      if ((wa[x] || wb[y]) && (sa[x] == sb[y] || rig_buffer_overlaps(bufs[sa[x]], bufs[sb[y]])))
        return true;
  return false;
}

/* Writes each part's follows: the last earlier part on each other queue
 * that it must follow. A words part follows every earlier part (ORDER-5);
 * parts of one queue run in order, which orders what follows a words part
 * on its queue (ORDER-6); parts that need no order get none (ORDER-7). */
static void order_parts(rig_run *r, rig_buffer *const *bufs) {
  const rig_part *parts = r->s->parts;
  for (uint32_t j = 0; j < r->s->nparts; j++)
    for (uint32_t i = 0; i < j; i++) {
      uint32_t q = r->parts[i].queue;
      if (q == r->parts[j].queue || q >= RIG_EDGE_MAX_QUEUES)
        continue;
      if (parts[j].kind == RIG_PART_WORDS || conflict(&parts[i], &parts[j], bufs))
        r->parts[j].follows[q] = i + 1;
    }
}

/* Takes r off the free list for this submit; false when it is not free. A
 * free run left on the list would be handed out by a take while this submit
 * uses it, and pushed a second time by run_free (SUBMIT-12, SUBMIT-14). */
static bool claim_free(rig_run *r) {
  rig_submission *s = r->s;
  pthread_mutex_lock(&s->lock); /* not counted, as in run_free */
  bool free_run = atomic_load(&r->state) == RUN_FREE;
  if (free_run) {
    for (rig_run **p = &s->free_runs; *p; p = &(*p)->next_free)
      if (*p == r) {
        *p = r->next_free;
        break;
      }
    r->owner = pthread_self();
    atomic_store(&r->state, RUN_SUBMITTING);
  }
  pthread_mutex_unlock(&s->lock);
  return free_run;
}

/* Takes r for this submit: the caller's own run, or a free one
 * (SUBMIT-14, SUBMIT-25, SUBMIT-26). */
static rig_status claim_run(rig_run *r) {
  int want = RUN_TAKEN;
  if (!atomic_compare_exchange_strong(&r->state, &want, RUN_SUBMITTING)) {
    if (!claim_free(r))
      return rig__fail(RIG_INVALID, r->s->dev, 0, "rig_submit: another submit of the run is under way");
  } else if (!pthread_equal(r->owner, pthread_self())) {
    atomic_store(&r->state, RUN_TAKEN);
    return rig__fail(RIG_INVALID, r->s->dev, 0, "rig_submit: another thread took the run");
  }
  return RIG_OK;
}

static rig_status submit_run(rig_run *r, rig_buffer *const *bufs, size_t n,
                             const rig_point *waits, size_t nwaits, rig_point *out) {
  rig_submission *s = r->s;
  rig_device *d = s->dev;
  if (n != s->nslots || (n && !bufs) || (nwaits && !waits) || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_submit: %zu buffers for %u slots", n, s->nslots);
  rig_status st;
  for (uint32_t i = 0; i < n; i++)                      /* SUBMIT-10: read once */
    if ((st = check_buffer(d, s, bufs[i], i)))
      return st;
  size_t nuses = 0;
  for (uint32_t i = 0; i < s->nparts; i++)
    if ((st = build_part(r, i, bufs, &nuses)))
      return st;
  order_parts(r, bufs);
  rig_edge_work work = {.size = sizeof work, .nparts = s->nparts, .parts = r->parts};
  return rig__timeline_submit(d, &work, r->uses, nuses, waits, nwaits, out);
}

RIG_API rig_status rig_submit(rig_run *r, rig_buffer *const *buffers, size_t nbuffers,
                              const rig_point *waits, size_t nwaits, rig_point *out) {
  if (!r)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_submit: run is NULL");
  rig_status st = claim_run(r);
  if (st)
    return st;
  st = rig__may_lock("rig_submit");                     /* DOM-15: still frees r */
  if (st == RIG_OK)
    st = submit_run(r, buffers, nbuffers, waits, nwaits, out);
  run_free(r);                                          /* SUBMIT-12, 13 */
  return st;
}
