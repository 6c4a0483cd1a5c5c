/* SPDX-License-Identifier: MIT */
/* submit.c: submit, which builds a run's parts and uses from its buffers
 * and hands them to the timeline (SUBMIT, RUN-2..7).
 *
 * A submission describes work for one device once: its parts and the slots
 * they name (submission.c). A run holds what one submit needs, so that
 * submit allocates nothing (SUBMIT-20): the driver's parts and the uses are
 * built into arrays the run owns, sized at make (run.c). Runs are pooled
 * per submission; submit gives its run back, also when it fails
 * (SUBMIT-12).
 */
#include <stdlib.h>
#include <string.h>

#include "submit.h"

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

/* Whether slot i is named by a ref of one of s's launches. */
static bool launched(const rig_submission *s, uint32_t i) {
  uint32_t slot;
  bool w, u;
  for (uint32_t j = 0; j < s->nparts; j++)
    for (uint32_t k = 0; s->parts[j].kind == RIG_PART_LAUNCH && k < s->parts[j].nrefs; k++)
      if (rig__part_use(&s->parts[j], k, &slot, &w, &u) && slot == i)
        return true;
  return false;
}

/* Whether slot i of a submit on d is this machine's memory that d, a
 * device of another machine whose work is done before submit returns,
 * copies or fills by its host address (docs/remote.md, "Copies of this
 * machine's bytes in a submission"): the driver moves the bytes over its
 * link as it does a staging's. Only copies and fills: a launch there
 * cannot address this machine's memory (MACH-18). */
static bool copied_here(const rig_device *d, const rig_submission *s, const rig_buffer *b,
                        uint32_t i) {
  return d->machine && !b->alloc->dev->machine && b->alloc->mem.host &&
         (d->facts.flags & RIG_EDGE_SYNCHRONOUS) && !launched(s, i);
}

/* A buffer as slot i of a submit on d (VALID-13..16). */
static rig_status check_buffer(rig_device *d, const rig_submission *s, rig_buffer *b,
                               uint32_t i) {
  rig_status st = rig__buffer_usable(b, "rig_run_submit");
  if (st)
    return st;
  if (b->dev != d && (!rig_device_reaches(d, b->alloc->dev) || !rig__mem_for(d, b)) &&
      !copied_here(d, s, b, i))
    return foreign(d, b, "slot", i);
  if (s->slot_writes[i] && b->access != RIG_READ_WRITE)
    return rig__fail(RIG_INVALID, d, 0, "rig_run_submit: slot %u is written through a Read buffer",
                     i);                                   /* VALID-16 */
  return RIG_OK;
}

/* b as d's work names it (borrow.c's rig__mem_for; check_buffer made
 * sure there is one), or for memory of this machine that a device of
 * another machine copies (copied_here), the allocation's own record, of
 * which its driver reads the host address only. */
static rig_edge_range range_of(const rig_device *d, rig_buffer *b) {
  const rig_edge_alloc *m = rig__mem_for(d, b);
  rig_edge_range r = {m ? m : &b->alloc->mem, b->offset, b->length};
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

/* What a ref of b stores on s's device, checked as a fixed ref's buffer
 * is at submit (VALID-4, VALID-6, VALID-13, VALID-19), with no lock:
 * Submission.address. */
RIG_API rig_status rig_submission_address(const rig_submission *s, const rig_buffer *b,
                                          uint64_t *out) {
  if (!s || !b || !out)
    return rig__fail(RIG_INVALID, s ? s->dev : NULL, 0, "rig_submission_address: %s is NULL",
                     !s ? "submission" : !b ? "buffer" : "out");
  rig_device *d = s->dev;
  rig_status st = rig__buffer_usable(b, "rig_submission_address");
  if (st)
    return st;
  if (b->dev != d && (!rig_device_reaches(d, b->alloc->dev) || !rig__mem_for(d, b)))
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_address: the buffer is on %s, whose "
                     "memory %s's work does not address as it is: borrow it onto %s",
                     b->dev->name, d->name, d->name);
  const rig_edge_alloc *m = rig__mem_for(d, b);
  if (!m->host && !m->address)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_address: the buffer's memory on %s has "
                     "no address, only its driver's handle", d->name);
  *out = address_of(d, b);
  return RIG_OK;
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
      rig__part_use(p, k, &slot, &w, &u);
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

/* The buffer of use k of p, slot or fixed, and whether it writes; NULL
 * for an entry ref. */
static rig_buffer *buffer_of(const rig_part *p, uint32_t k, rig_buffer *const *bufs, bool *write) {
  uint32_t slot;
  bool u;
  if (rig__part_use(p, k, &slot, write, &u))
    return bufs[slot];
  return p->kind == RIG_PART_LAUNCH ? p->refs[k].fixed : NULL;
}

/* Whether parts i and j may share memory where one writes (ORDER-3):
 * buffers sharing a word count as one memory (WORD-4). */
static bool conflict(const rig_part *a, const rig_part *b, rig_buffer *const *bufs) {
  bool wa, wb;
  for (uint32_t x = 0; x < rig__part_nuses(a); x++)
    for (uint32_t y = 0; y < rig__part_nuses(b); y++) {
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

/* Takes r off the spare or the free list for this submit: RIG_OK, or
 * RIG_INVALID when it is in neither. A free run left there would be handed
 * out by a take while this submit uses it, and put back a second time by
 * run_free (SUBMIT-12, SUBMIT-14). A try (at_once) that finds the pool's
 * lock held answers RIG_BUSY, having taken nothing. */
static rig_status claim_free(rig_run *r, bool at_once) {
  rig_submission *s = r->s;
  if (!at_once)
    pthread_mutex_lock(s->lock); /* not counted, as in run_free */
  else if (pthread_mutex_trylock(s->lock) != 0)
    return rig__fail(RIG_BUSY, s->dev, 0, "rig_run_submit_try: another thread holds the run pool");
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
  if (!free_run)
    return rig__fail(RIG_INVALID, s->dev, 0, "rig_run_submit: another submit of the run is under way");
  return RIG_OK;
}

/* Takes r for this submit: the caller's own run, or a free one
 * (SUBMIT-14, SUBMIT-25, SUBMIT-26); *was_free says which. */
static rig_status claim_run(rig_run *r, bool at_once, bool *was_free) {
  int want = RUN_TAKEN;
  *was_free = false;
  if (!atomic_compare_exchange_strong(&r->state, &want, RUN_SUBMITTING)) {
    *was_free = true;
    return claim_free(r, at_once);
  }
  if (!pthread_equal(r->owner, pthread_self())) {
    atomic_store_explicit(&r->state, RUN_TAKEN, memory_order_release);
    return rig__fail(RIG_INVALID, r->s->dev, 0, "rig_run_submit: another thread took the run");
  }
  return RIG_OK;
}

static rig_status submit_run(rig_run *r, rig_buffer *const *bufs, size_t n,
                             const rig_point *waits, size_t nwaits, rig_point *out, bool at_once) {
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
  rig_edge_work work = {.size = sizeof work, .nparts = s->nparts, .parts = r->parts,
                        .labels = s->labels};
  if (at_once)
    return rig__timeline_submit_try(d, &work, r->uses, nuses, waits, nwaits, out);
  return rig__timeline_submit(d, &work, r->uses, nuses, waits, nwaits, out);
}

/* rig_run_submit, and its try (at_once): a busy try gives r back as it
 * found it, taken by the caller or free, for a later submit. */
static inline __attribute__((always_inline)) rig_status
submit(rig_run *r, rig_buffer *const *buffers, size_t nbuffers, const rig_point *waits,
       size_t nwaits, rig_point *out, bool at_once) {
  if (!r)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_run_submit: run is NULL");
  bool was_free;
  rig_status st = claim_run(r, at_once, &was_free);
  if (st)
    return st;
  st = rig__may_lock("rig_run_submit");                     /* DOM-15: still frees r */
  if (st == RIG_OK)
    st = submit_run(r, buffers, nbuffers, waits, nwaits, out, at_once);
  if (st == RIG_BUSY && !was_free) {
    atomic_store_explicit(&r->state, RUN_TAKEN, memory_order_release);
    return st;
  }
  rig__run_free(r);                                          /* SUBMIT-12, 13 */
  return st;
}

RIG_API rig_status rig_run_submit(rig_run *r, rig_buffer *const *buffers, size_t nbuffers,
                                  const rig_point *waits, size_t nwaits, rig_point *out) {
  return submit(r, buffers, nbuffers, waits, nwaits, out, false);
}

RIG_API rig_status rig_run_submit_try(rig_run *r, rig_buffer *const *buffers, size_t nbuffers,
                                      const rig_point *waits, size_t nwaits, rig_point *out) {
  return submit(r, buffers, nbuffers, waits, nwaits, out, true);
}
