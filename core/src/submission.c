/* SPDX-License-Identifier: MIT */
/* submission.c: making and checking prepared submissions, and their
 * release (SUBS-1, RUN-8, VALID).
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


static uint32_t edge_kind(rig_part_kind k) {
  return k == RIG_PART_COPY     ? RIG_EDGE_PART_COPY
         : k == RIG_PART_FILL   ? RIG_EDGE_PART_FILL
         : k == RIG_PART_WORDS  ? RIG_EDGE_PART_WORDS
         : k == RIG_PART_LAUNCH ? RIG_EDGE_PART_LAUNCH
                                : RIG_EDGE_PART_KINDS;
}

static bool names(const rig_part *p, uint32_t slot) {
  uint32_t s;
  bool w, u;
  for (uint32_t k = 0; k < rig__part_nuses(p); k++)
    if (rig__part_use(p, k, &s, &w, &u) && s == slot)
      return true;
  return false;
}

/* A launch of NULL: most often a resolve's None for a misspelt name, which
 * the message names where this thread's resolve missed one. */
static rig_status no_function(rig_device *d, size_t i) {
  const char *dev, *name = rig__missing_function(&dev);
  if (name)
    return rig__fail(RIG_INVALID, d, 0,
                     "rig_submission_make: part %zu launches no function "
                     "(NULL); this thread's last rig_image_resolve that found none was of '%s' "
                     "on %s",
                     i, name, dev);
  return rig__fail(RIG_INVALID, d, 0,
                   "rig_submission_make: part %zu launches no function "
                   "(NULL, as rig_image_resolve gives for a name the image lacks)",
                   i);
}

/* A launch part: a function of an image on d, refs within the block, each
 * on 8 bytes (LAUNCH-5, OBJ-4). */
static rig_status check_launch(rig_device *d, const rig_part *p, size_t i) {
  if (!p->function)
    return no_function(d, i);
  if (rig_image_device(rig_function_image(p->function)) != d)
    return rig__fail(RIG_INVALID, d, 0,
                     "rig_submission_make: part %zu launches a function "
                     "of another device's image",
                     i);
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
  if (kind == RIG_EDGE_PART_WORDS && d->facts.part_queue[kind] == RIG_EDGE_NO_QUEUE)
    return rig__fail(RIG_INVALID, d, 0, "rig_submission_make: %s has no queue for part %zu%s: "
                     "the driver \"%s\" takes no words of its own", d->name, i,
                     d->is_host ? ": the host's runs only launches" : "",
                     d->drv->name ? d->drv->name : "?");               /* VALID-2, HOST-4 */
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
    for (uint32_t k = 0; k < rig__part_nuses(&parts[i]); k++) {
      if (!rig__part_use(&parts[i], k, &slot, &w, &u))
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

/* Whether a use of slot by any part is ordered. */
static bool ordered_use(const rig_part *parts, size_t n, uint32_t slot, size_t *who) {
  uint32_t s;
  bool w, u;
  for (size_t j = 0; j < n; j++)
    for (uint32_t k = 0; k < rig__part_nuses(&parts[j]); k++)
      if (rig__part_use(&parts[j], k, &s, &w, &u) && !u && s == slot) {
        *who = j;
        return true;
      }
  return false;
}

/* No slot is named by an unordered use and an ordered one (VALID-9). */
static rig_status check_unordered(rig_device *d, const rig_part *parts, size_t n) {
  uint32_t slot;
  bool w, u;
  size_t j;
  for (size_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < rig__part_nuses(&parts[i]); k++)
      if (rig__part_use(&parts[i], k, &slot, &w, &u) && u && ordered_use(parts, n, slot, &j))
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
  s->labels = calloc(n ? n : 1, sizeof *s->labels);
  s->words = words ? malloc(words * sizeof *s->words) : NULL;
  s->ref_array = refs ? malloc(refs * sizeof *s->ref_array) : NULL;
  if (!s->parts || !s->block_of || !s->labels || (words && !s->words) || (refs && !s->ref_array))
    return false;
  memcpy(s->parts, parts, n * sizeof *parts);
  for (size_t i = 0, at = 0, rat = 0; i < n; i++) {
    rig_part *p = &s->parts[i];
    s->block_of[i] = UINT32_MAX;
    s->nuses += rig__part_nuses(p);
    /* Kinds and counts read from parts[i], as the sums above; memcpy is
     * never given NULL (no array where the counts summed to none). */
    if (parts[i].kind == RIG_PART_WORDS) {
      if (s->words && parts[i].nwords)
        memcpy(s->words + at, parts[i].words, parts[i].nwords * sizeof *s->words);
      p->words = s->words + at;
      at += parts[i].nwords;
    } else if (parts[i].kind == RIG_PART_LAUNCH) {
      if (s->ref_array && parts[i].nrefs)
        memcpy(s->ref_array + rat, parts[i].refs, parts[i].nrefs * sizeof *s->ref_array);
      p->refs = s->ref_array + rat;
      rat += parts[i].nrefs;
      s->block_of[i] = s->nblocks++;
      s->labels[i] = rig__function_label(p->function); /* its name in profiles */
      rig_image_retain(rig_function_image(p->function)); /* the code stays (RUN-8) */
      for (uint32_t k = 0; k < parts[i].nrefs; k++)
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
    rig__run_destroy(r);
  }
  free(s->keep_node);
  free(s->memory_node);
  free(s->parts);
  free(s->words);
  free(s->ref_array);
  free(s->block_of);
  free(s->labels);
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
    for (uint32_t k = 0; k < rig__part_nuses(&parts[i]); k++) {
      uint32_t slot;
      bool w, u;
      if (rig__part_use(&parts[i], k, &slot, &w, &u) && w)
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
