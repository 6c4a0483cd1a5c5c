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

#include "waits.h"
#include "submit.h"

static void run_destroy(rig_run *r);

static uint32_t edge_kind(rig_part_kind k) {
  return k == RIG_PART_COPY     ? RIG_EDGE_PART_COPY
         : k == RIG_PART_FILL   ? RIG_EDGE_PART_FILL
         : k == RIG_PART_WORDS  ? RIG_EDGE_PART_WORDS
         : k == RIG_PART_LAUNCH ? RIG_EDGE_PART_LAUNCH
                                : RIG_EDGE_PART_KINDS;
}

/* How many uses of slots p makes: a copy reads its source and writes its
 * destination, a fill writes its destination, a launch uses each slot a
 * ref names, words name none. */
static uint32_t nuses_of(const rig_part *p) {
  switch (p->kind) {
  case RIG_PART_COPY:
    return 2;
  case RIG_PART_FILL:
    return 1;
  case RIG_PART_LAUNCH:
    return p->nrefs;
  default:
    return 0;
  }
}

/* Use k of p: its slot, whether it writes, whether it is unordered; false
 * for an entry ref, which names no slot. */
static inline __attribute__((always_inline)) bool use_of(const rig_part *p, uint32_t k,
                                                          uint32_t *slot, bool *write,
                                                          bool *unordered) {
  *unordered = p->flags & RIG_PART_UNORDERED;
  if (p->kind == RIG_PART_LAUNCH) {
    const rig_ref *r = &p->refs[k];
    *slot = r->slot;
    *write = r->kind != RIG_REF_READ;
    *unordered = *unordered || (r->flags & RIG_PART_UNORDERED);
    return r->kind != RIG_REF_ENTRY && !r->fixed;
  }
  *slot = k == 0 ? p->dst : p->src;
  *write = k == 0;
  return true;
}

static bool names(const rig_part *p, uint32_t slot) {
  uint32_t s;
  bool w, u;
  for (uint32_t k = 0; k < nuses_of(p); k++)
    if (use_of(p, k, &s, &w, &u) && s == slot)
      return true;
  return false;
}

/* A launch part: a function of an image on d, refs within the block, each
 * on 8 bytes (LAUNCH-5, OBJ-4). */
static rig_status check_launch(rig_device *d, const rig_part *p, size_t i) {
  if (!p->function || rig_image_device(rig_function_image(p->function)) != d)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu launches %s", i,
                     p->function ? "a function of another device's image" : "no function");
  if ((p->nrefs && !p->refs) || p->nrefs > 4096 || p->params_bytes > (1u << 20))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: %u refs, %u bytes", i,
                     p->nrefs, p->params_bytes);
  for (uint32_t k = 0; k < p->nrefs; k++) {
    const rig_ref *r = &p->refs[k];
    if (r->kind > RIG_REF_ENTRY || (r->kind == RIG_REF_ENTRY && !r->entry))
      return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: ref %u is malformed", i, k);
    if (r->at % 8 || (uint64_t)r->at + 8 > p->params_bytes)
      return rig__fail(RIG_INVALID, d, 0,
                       "rig_submission_make: part %zu: ref %u at byte %u of a %u-byte block", i,
                       k, r->at, p->params_bytes);
    if (r->fixed && r->kind == RIG_REF_ENTRY)
      return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: ref %u is malformed", i, k);
    if (r->fixed && rig_buffer_dead(r->fixed))
      return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: fixed buffer of ref %u "
                       "is dead", i, k);                       /* VALID-4 */
    if (r->fixed && r->kind != RIG_REF_READ && rig_buffer_access(r->fixed) != RIG_READ_WRITE)
      return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: ref %u writes a fixed "
                       "buffer that permits only reads", i, k);  /* VALID-7 */
  }
  return RIG_OK;
}

/* VALID-10: launches and fills take at most 2^31 - 1 bytes of queue, each
 * 16 + its parameter bytes rounded up to 16. */
static rig_status check_queue_bytes(rig_device *d, const rig_part *parts, size_t n) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    if (parts[i].kind == RIG_PART_LAUNCH || parts[i].kind == RIG_PART_FILL)
      total += 16 + (parts[i].kind == RIG_PART_LAUNCH ? (parts[i].params_bytes + 15u) / 16u * 16u : 0);
  if (total > INT32_MAX)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: launches and fills of %llu bytes",
                     (unsigned long long)total);
  return RIG_OK;
}

static rig_status check_part(rig_device *d, const rig_part *p, size_t i) {
  uint32_t kind = edge_kind(p->kind);
  if (kind == RIG_EDGE_PART_KINDS || d->facts.part_queue[kind] == RIG_EDGE_NO_QUEUE ||
      (d->is_host && kind != RIG_EDGE_PART_LAUNCH))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %s has no queue for part %zu%s",
                     d->name, i, d->is_host ? ": the host's runs only launches" : ""); /* VALID-2, HOST-4 */
  if (kind == RIG_EDGE_PART_COPY && p->src == p->dst)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu copies a slot onto itself", i);
  if (kind == RIG_EDGE_PART_FILL && p->pattern_bytes != 1 && p->pattern_bytes != 2 &&
      p->pattern_bytes != 4)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: pattern of %u bytes", i,
                     p->pattern_bytes);
  if (kind == RIG_EDGE_PART_WORDS && (!p->words || p->nwords == 0 || p->nwords > 65536))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: part %zu: %u words", i,
                     p->nwords);
  if (kind == RIG_EDGE_PART_LAUNCH)
    return check_launch(d, p, i);
  return RIG_OK;
}

/* Slots must be dense: each below the highest is named (VALID-8). */
static rig_status check_slots(rig_device *d, const rig_part *parts, size_t n, uint32_t *out) {
  uint32_t top = 0, slot;
  bool w, u;
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < nuses_of(&parts[i]); k++) {
      if (!use_of(&parts[i], k, &slot, &w, &u))
        continue;
      if (slot >= 1u << 20)
        return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: slot %u is too high", slot);
      top = slot + 1 > top ? slot + 1 : top;
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
/* Whether a use of slot by any part is ordered. */
static bool ordered_use(const rig_part *parts, size_t n, uint32_t slot, size_t *who) {
  uint32_t s;
  bool w, u;
  for (size_t j = 0; j < n; j++)
    for (uint32_t k = 0; k < nuses_of(&parts[j]); k++)
      if (use_of(&parts[j], k, &s, &w, &u) && !u && s == slot) {
        *who = j;
        return true;
      }
  return false;
}

static rig_status check_unordered(rig_device *d, const rig_part *parts, size_t n) {
  uint32_t slot;
  bool w, u;
  size_t j;
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < nuses_of(&parts[i]); k++)
      if (use_of(&parts[i], k, &slot, &w, &u) && u && ordered_use(parts, n, slot, &j))
        return rig__fail(RIG_INVALID, d, 0,
                         "rig_submission_make: parts %zu and %zu use a slot unordered and "
                         "ordered", i, j);
  return RIG_OK;
}

static rig_status check_parts(rig_device *d, const rig_part *parts, size_t n, uint32_t *nslots) {
  rig_status st;
  if (n == 0 || n > 65536)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %zu parts", n);
  for (size_t i = 0; i < n; i++)
    if ((st = check_part(d, &parts[i], i)))
      return st;
  if ((st = check_slots(d, parts, n, nslots)) || (st = check_unordered(d, parts, n)) ||
      (st = check_queue_bytes(d, parts, n)))
    return st;
  return RIG_OK;
}

/* Copies the parts, the words of words parts and the refs of launch parts
 * into one array each, numbers the launch blocks and holds their images. */
static bool copy_parts(rig_submission *s, const rig_part *parts, size_t n) {
  size_t words = 0, refs = 0;
  for (size_t i = 0; i < n; i++) {
    words += parts[i].kind == RIG_PART_WORDS ? parts[i].nwords : 0;
    refs += parts[i].kind == RIG_PART_LAUNCH ? parts[i].nrefs : 0;
  }
  s->parts = malloc(n * sizeof *parts);
  s->block_of = malloc(n * sizeof *s->block_of);
  s->words = words ? malloc(words * sizeof *s->words) : NULL;
  s->ref_array = refs ? malloc(refs * sizeof *s->ref_array) : NULL;
  if (!s->parts || !s->block_of || (words && !s->words) || (refs && !s->ref_array))
    return false;
  memcpy(s->parts, parts, n * sizeof *parts);
  for (size_t i = 0, at = 0, rat = 0; i < n; i++) {
    rig_part *p = &s->parts[i];
    s->block_of[i] = UINT32_MAX;
    s->nuses += nuses_of(p);
    if (p->kind == RIG_PART_WORDS) {
      memcpy(s->words + at, parts[i].words, parts[i].nwords * sizeof *s->words);
      p->words = s->words + at;
      at += parts[i].nwords;
    } else if (p->kind == RIG_PART_LAUNCH) {
      if (parts[i].nrefs)
        memcpy(s->ref_array + rat, parts[i].refs, parts[i].nrefs * sizeof *s->ref_array);
      p->refs = s->ref_array + rat;
      rat += parts[i].nrefs;
      s->block_of[i] = s->nblocks++;
      rig_image_retain(rig_function_image(p->function)); /* the code stays (RUN-8) */
      for (uint32_t k = 0; k < p->nrefs; k++)
        rig_buffer_retain(p->refs[k].fixed);              /* fixed memory */
    }
  }
  return true;
}

/* Lets go of the images and fixed buffers the parts hold: each returns its
 * memory only once the work that uses it is done, by its own stamps and
 * kept values (RUN-8). */
static void release_holds(rig_submission *s) {
  for (uint32_t i = 0; s->block_of && i < s->nparts; i++)
    if (s->block_of[i] != UINT32_MAX) {
      rig_image_release(rig_function_image(s->parts[i].function));
      for (uint32_t k = 0; k < s->parts[i].nrefs; k++)
        rig_buffer_release(s->parts[i].refs[k].fixed);
    }
}

/* The submission's own memory: parts, words, refs, runs. */
static void free_submission(rig_submission *s) {
  for (rig_run *r = s->all_runs, *next; r; r = next) {
    next = r->next_all;
    run_destroy(r);
  }
  free(s->keep_node);
  free(s->memory_node);
  free(s->parts);
  free(s->words);
  free(s->ref_array);
  free(s->block_of);
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
  if (!rig_device_computes(d))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %s runs no work", d->name); /* VALID-1 */
  uint32_t nslots = 0;
  if ((st = check_parts(d, parts, n, &nslots)))
    return st;
  rig_submission *s = calloc(1, sizeof *s);
  if (s)
    s->nparts = (uint32_t)n;
  if (!s || !copy_parts(s, parts, n) || !(s->slot_writes = calloc(nslots + 1, 1)) ||
      !(s->keep_node = rig__keep_new()) || !(s->memory_node = rig__keep_new())) {
    if (s) {
      release_holds(s);
      free_submission(s);
    }
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), n * sizeof *parts,
                     "rig_submission_make: out of memory");
  }
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < nuses_of(&parts[i]); k++) {
      uint32_t slot;
      bool w, u;
      if (use_of(&parts[i], k, &slot, &w, &u) && w)
        s->slot_writes[slot] = 1;
    }
  s->nslots = nslots;
  s->dev = rig_device_retain(d);
  s->lock = rig__object_lock(s);
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

static void free_later(void *v) { free_submission(v); }

/* The last release queues the kept value and the submission's memory on
 * its device: both go once the work submitted there until the next move
 * of its memory is done (RUN-8, RECLAIM-17), or at its stop. A driver may
 * read a part's words and blocks until its work runs. */
RIG_API void rig_submission_release(rig_submission *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
    return;
  rig_device *d = s->dev;
  if (s->keep || s->keep_release) {
    rig__keep_push(d, s->keep_node, s->keep, s->keep_release);
    s->keep_node = NULL;                     /* the queue owns it now */
  }
  release_holds(s);
  rig__kept *node = s->memory_node;
  s->memory_node = NULL;
  rig__keep_push(d, node, s, free_later);
  rig_device_release(d);
}

RIG_API uint32_t rig_submission_slots(const rig_submission *s) { return s ? s->nslots : 0; }
RIG_API rig_submission *rig_run_submission(const rig_run *r) { return r ? r->s : NULL; }

static void run_destroy(rig_run *r) {
  for (uint32_t k = 0; r->blocks && k < r->s->nblocks; k++)
    free(r->blocks[k].params);
  free(r->blocks);
  free(r->parts);
  free(r->uses);
  free(r->bufs);
  free(r);
}

/* A run with room for everything a submit builds, so that submit
 * allocates nothing (SUBMIT-20); its blocks' grids start at zero, which a
 * submit refuses until they are set (LAUNCH-13). */
static rig_run *run_new(rig_submission *s) {
  rig_run *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->s = s;
  r->parts = calloc(s->nparts, sizeof *r->parts);
  r->uses = calloc(s->nuses + 1, sizeof *r->uses);
  r->bufs = calloc(s->nslots + 1, sizeof *r->bufs);
  r->blocks = calloc(s->nblocks + 1, sizeof *r->blocks);
  bool ok = r->parts && r->uses && r->bufs && r->blocks;
  for (uint32_t i = 0; ok && i < s->nparts; i++) {
    uint32_t k = s->block_of[i];
    if (k != UINT32_MAX &&
        posix_memalign((void **)&r->blocks[k].params, 16, s->parts[i].params_bytes + 16u) != 0) {
      r->blocks[k].params = NULL;
      ok = false;
    } else if (k != UINT32_MAX) {
      memset(r->blocks[k].params, 0, s->parts[i].params_bytes + 16u);
      r->blocks[k].bytes = s->parts[i].params_bytes;
    }
  }
  if (!ok) {
    run_destroy(r);
    return NULL;
  }
  return r;
}

/* A run for take from the free list, under the pool's lock, or a slot for
 * a new one (*make); NULL with *make false while every run is taken. */
static rig_run *take_free(rig_submission *s, bool *make) {
  rig__lock(s->lock);
  /* The spare again: a run freed since the caller looked is free now. */
  rig_run *r = atomic_exchange(&s->spare, NULL);
  if (!r && (r = s->free_runs))
    s->free_runs = r->next_free;
  *make = !r && s->nruns < RIG_SUBMISSION_RUNS;
  if (*make)
    s->nruns++;
  rig__unlock(s->lock);
  return r;
}

RIG_API rig_status rig_submission_take(rig_submission *s, rig_run **out) {
  rig_status st = rig__may_lock("rig_submission_take");
  if (st)
    return st;
  if (!s || !out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_submission_take: NULL argument");
  /* A run leaves the spare or the free list before it leaves RUN_FREE, and
   * only claim_free, which finds it in one of them, takes it otherwise: so
   * no run is handed out twice (claim_run relies on it). */
  rig_run *r = atomic_exchange(&s->spare, NULL);
  bool make = false;
  if (!r && !(r = take_free(s, &make)) && !make)
    return rig__fail(RIG_INVALID, s->dev, 0,
                     "rig_submission_take: all %u runs of the submission are taken; "
                     "a submit gives its run back",
                     RIG_SUBMISSION_RUNS);
  if (make && !(r = run_new(s))) {
    rig__lock(s->lock);
    s->nruns--;
    rig__unlock(s->lock);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), 0, "rig_submission_take: out of memory");
  }
  r->owner = pthread_self();
  atomic_store_explicit(&r->state, RUN_TAKEN, memory_order_release);
  if (make) {
    rig__lock(s->lock);
    r->next_all = s->all_runs;
    s->all_runs = r;
    rig__unlock(s->lock);
  }
  *out = r;
  return RIG_OK;
}

static void run_free(rig_run *r) {
  rig_submission *s = r->s;
  rig_run *none = NULL;
  atomic_store_explicit(&r->state, RUN_FREE, memory_order_release);
  if (atomic_compare_exchange_strong(&s->spare, &none, r))
    return;
  pthread_mutex_lock(s->lock); /* not counted: submit frees inside a lock too */
  r->next_free = s->free_runs;
  s->free_runs = r;
  pthread_mutex_unlock(s->lock);
}

/* A buffer d's work cannot address as it is: one of another device that d
 * does not reach, or whose record is another driver's, such as host memory
 * a GPU reaches only through a mapping of its own (a borrow). */
static rig_status foreign(rig_device *d, const rig_buffer *b, const char *what, uint32_t i) {
  if (!rig_device_reaches(d, b->alloc->dev))
    return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: %s %u is on %s, which %s does not reach",
                     what, i, b->dev->name, d->name);
  return rig__fail(RIG_INVALID, d, 0,
                   "rig_run_submit: %s %u is on %s, whose memory %s's work does not address as it "
                   "is: borrow it onto %s", what, i, b->dev->name, d->name, d->name);
}

/* A buffer as slot i of a submit on d (VALID-13..16). */
static rig_status check_buffer(rig_device *d, const rig_submission *s, rig_buffer *b,
                               uint32_t i) {
  rig_status st = rig__buffer_usable(b, "rig_run_submit");
  if (st)
    return st;
  if (b->dev != d && (!rig_device_reaches(d, b->alloc->dev) || !rig__mem_for(d, b)))
    return foreign(d, b, "slot", i);
  if (s->slot_writes[i] && b->access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: slot %u is written through a Read buffer",
                     i);                                   /* VALID-16 */
  return RIG_OK;
}

/* b as d's work names it (borrow.c's rig__mem_for; check_buffer made
 * sure there is one). */
static rig_edge_range range_of(const rig_device *d, rig_buffer *b) {
  rig_edge_range r = {rig__mem_for(d, b), b->offset, b->length};
  return r;
}

/* A launch's grid: no axis of zero groups or threads (LAUNCH-13), at most
 * 2^62 threads (LAUNCH-14), no shared memory on a device that has none
 * (LAUNCH-12, VALID-20: the host). */
static rig_status check_grid(rig_device *d, const block *b, uint32_t i) {
  uint64_t total = 1;
  for (int a = 0; a < 3; a++) {
    if (!b->groups[a] || !b->threads[a])
      return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u: an axis of zero %s", i,
                       b->groups[a] ? "threads" : "groups");
    /* total stays at most 2^62, so a product past 2^64 is past 2^62 too */
    if (__builtin_mul_overflow(total, b->groups[a], &total) ||
        __builtin_mul_overflow(total, b->threads[a], &total) || total > (UINT64_C(1) << 62))
      return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u: more than 2^62 threads", i);
  }
  if (b->shared && rig__runs_on_host(d))
    return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u: %s has no shared memory", i,
                     d->name);
  return RIG_OK;
}

/* The address d's code uses for b: the host's for a device that runs on
 * the host (LAUNCH-5), else the device's. */
static uint64_t address_of(const rig_device *d, const rig_buffer *b) {
  const rig_edge_alloc *m = rig__mem_for(d, b);
  if (rig__runs_on_host(d))
    return (uint64_t)(uintptr_t)m->host + b->offset;
  return m->address + b->offset;
}

/* A launch part: its grid, its refs' addresses stored in the run's block,
 * and a use per slot it names. */
static rig_status build_launch(rig_run *r, uint32_t i, rig_buffer *const *bufs, size_t *nuses) {
  const rig_part *p = &r->s->parts[i];
  rig_device *d = r->s->dev;
  block *b = &r->blocks[r->s->block_of[i]];
  rig_edge_part *e = &r->parts[i];
  rig_status st = check_grid(d, b, i);
  if (st)
    return st;
  for (uint32_t k = 0; k < p->nrefs; k++) {
    const rig_ref *ref = &p->refs[k];
    uint64_t at;
    if (ref->kind == RIG_REF_ENTRY) {
      at = rig_function_entry(ref->entry);                    /* SYM-2 */
    } else {
      rig_buffer *x = ref->fixed ? ref->fixed : bufs[ref->slot];
      if (ref->fixed && (st = rig__buffer_usable(x, "rig_run_submit")))
        return st;                                            /* VALID-4, VALID-13 */
      if (ref->fixed && x->dev != d && (!rig_device_reaches(d, x->alloc->dev) || !rig__mem_for(d, x)))
        return foreign(d, x, "the fixed buffer of ref", k);  /* VALID-6 */
      const rig_edge_alloc *m = rig__mem_for(d, x);
      if (!m->host && !m->address)
        return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u: ref %u names memory with no "
                         "address", i, k);                    /* VALID-19 */
      at = address_of(d, x);
      uint32_t slot;
      bool w, u;
      use_of(p, k, &slot, &w, &u);
      r->uses[(*nuses)++] = (rig__use){x->alloc, w, u};
    }
    memcpy(b->params + ref->at, &at, sizeof at);
  }
  e->kind = RIG_EDGE_PART_LAUNCH;
  e->u.launch.function = rig__function_handle(p->function);
  e->u.launch.params = b->params;
  e->u.launch.params_bytes = p->params_bytes;
  e->u.launch.shared_bytes = b->shared;
  memcpy(e->u.launch.groups, b->groups, sizeof b->groups);
  memcpy(e->u.launch.threads, b->threads, sizeof b->threads);
  e->queue = d->facts.part_queue[e->kind];
  return RIG_OK;
}

/* Builds part i of r for the driver and its uses (VALID-17, VALID-18). */
static rig_status build_part(rig_run *r, uint32_t i, rig_buffer *const *bufs, size_t *nuses) {
  const rig_part *p = &r->s->parts[i];
  rig_device *d = r->s->dev;
  rig_edge_part *e = &r->parts[i];
  bool unordered = p->flags & RIG_PART_UNORDERED;
  memset(e->follows, 0, sizeof e->follows);
  if (p->kind == RIG_PART_LAUNCH)
    return build_launch(r, i, bufs, nuses);   /* sets every field it reads */
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
      return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u copies %llu bytes into %llu", i,
                       (unsigned long long)src->length, (unsigned long long)dst->length);
    if (rig_buffer_share_byte(src, dst))
      return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u copies between buffers sharing a byte", i);
    e->kind = RIG_EDGE_PART_COPY;
    e->u.copy.src = range_of(d, src);
    e->u.copy.dst = range_of(d, dst);
    r->uses[(*nuses)++] = (rig__use){src->alloc, false, unordered};
  } else {
    if (dst->length % p->pattern_bytes)
      return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: part %u: pattern does not tile slot %u", i,
                       p->dst);
    e->kind = RIG_EDGE_PART_FILL;
    e->u.fill.dst = range_of(d, dst);
    e->u.fill.pattern = p->pattern;
    e->u.fill.pattern_bytes = p->pattern_bytes;
  }
  e->queue = d->facts.part_queue[e->kind];
  r->uses[(*nuses)++] = (rig__use){dst->alloc, true, unordered};
  return RIG_OK;
}

/* Whether parts i and j may share memory where one writes (ORDER-3):
 * buffers sharing a word count as one memory (WORD-4). */
/* The buffer of use k of p, slot or fixed, and whether it writes; NULL
 * for an entry ref. */
static rig_buffer *buffer_of(const rig_part *p, uint32_t k, rig_buffer *const *bufs, bool *write) {
  uint32_t slot;
  bool u;
  if (use_of(p, k, &slot, write, &u))
    return bufs[slot];
  return p->kind == RIG_PART_LAUNCH ? p->refs[k].fixed : NULL;
}

static bool conflict(const rig_part *a, const rig_part *b, rig_buffer *const *bufs) {
  bool wa, wb;
  for (uint32_t x = 0; x < nuses_of(a); x++)
    for (uint32_t y = 0; y < nuses_of(b); y++) {
      rig_buffer *ba = buffer_of(a, x, bufs, &wa), *bb = buffer_of(b, y, bufs, &wb);
      if (ba && bb && (wa || wb) && (ba == bb || rig_buffer_overlaps(ba, bb)))
        return true;
    }
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

/* Takes r off the spare or the free list for this submit; false when it is
 * in neither. A free run left there would be handed out by a take while
 * this submit uses it, and put back a second time by run_free (SUBMIT-12,
 * SUBMIT-14). */
static bool claim_free(rig_run *r) {
  rig_submission *s = r->s;
  pthread_mutex_lock(s->lock); /* not counted, as in run_free */
  rig_run *spare = r;
  bool free_run = atomic_compare_exchange_strong(&s->spare, &spare, NULL);
  for (rig_run **p = &s->free_runs; !free_run && *p; p = &(*p)->next_free)
    if (*p == r) {
      *p = r->next_free;
      free_run = true;
      break;
    }
  if (free_run) {
    r->owner = pthread_self();
    atomic_store_explicit(&r->state, RUN_SUBMITTING, memory_order_release);
  }
  pthread_mutex_unlock(s->lock);
  return free_run;
}

/* Takes r for this submit: the caller's own run, or a free one
 * (SUBMIT-14, SUBMIT-25, SUBMIT-26). */
static rig_status claim_run(rig_run *r) {
  int want = RUN_TAKEN;
  if (!atomic_compare_exchange_strong(&r->state, &want, RUN_SUBMITTING)) {
    if (!claim_free(r))
      return rig__fail(RIG_INVALID, r->s->dev, 0, "rig_run_submit: another submit of the run is under way");
  } else if (!pthread_equal(r->owner, pthread_self())) {
    atomic_store_explicit(&r->state, RUN_TAKEN, memory_order_release);
    return rig__fail(RIG_INVALID, r->s->dev, 0, "rig_run_submit: another thread took the run");
  }
  return RIG_OK;
}

static rig_status submit_run(rig_run *r, rig_buffer *const *bufs, size_t n,
                             const rig_point *waits, size_t nwaits, rig_point *out) {
  rig_submission *s = r->s;
  rig_device *d = s->dev;
  if (n != s->nslots || (n && !bufs) || (nwaits && !waits) || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: %zu buffers for %u slots", n, s->nslots);
  rig_status st;
  /* Each element is read once, into the run: what another thread stores
   * into the array meanwhile changes nothing checked (SUBMIT-10). */
  for (uint32_t i = 0; i < n; i++)
    if ((st = check_buffer(d, s, r->bufs[i] = bufs[i], i)))
      return st;
  bufs = r->bufs;
  size_t nuses = 0;
  for (uint32_t i = 0; i < s->nparts; i++)
    if ((st = build_part(r, i, bufs, &nuses)))
      return st;
  order_parts(r, bufs);
  rig_edge_work work = {.size = sizeof work, .nparts = s->nparts, .parts = r->parts};
  return rig__timeline_submit(d, &work, r->uses, nuses, waits, nwaits, out);
}

RIG_API rig_status rig_run_submit(rig_run *r, rig_buffer *const *buffers, size_t nbuffers,
                              const rig_point *waits, size_t nwaits, rig_point *out) {
  if (!r)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_run_submit: run is NULL");
  rig_status st = claim_run(r);
  if (st)
    return st;
  st = rig__may_lock("rig_run_submit");                     /* DOM-15: still frees r */
  if (st == RIG_OK)
    st = submit_run(r, buffers, nbuffers, waits, nwaits, out);
  run_free(r);                                          /* SUBMIT-12, 13 */
  return st;
}
