/* SPDX-License-Identifier: MIT */
/* device.c: a device's record and what it says about itself: properties
 * (PROP, MACH), timeline reads, the records' pool, the facts a driver gives
 * at open (OPEN-33, OPEN-35), and the stopped state (STOP-1). Opening and
 * closing are open.c's; loss and the process's failure loss.c's.
 *
 * Device records are type-stable: a record whose last reference goes is
 * kept in a pool and reused, never given back to libc, so that
 * rig_point_device can take a reference without a lock (slot.c).
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static rig_device *pool;             /* free device records, linked by h */

/* ---- properties (lock-free) ---- */

RIG_API const char *rig_device_name(const rig_device *d) { return d ? d->name : ""; }
RIG_API bool rig_device_equal(const rig_device *a, const rig_device *b) { return a == b; }
RIG_API const char *rig_device_arch(const rig_device *d) { return d ? d->facts.arch : ""; }
RIG_API const char *rig_device_instruction_set(const rig_device *d) { return d ? d->iset : ""; }
RIG_API const char *rig_device_bus(const rig_device *d) {
  return d && d->facts.bus[0] ? d->facts.bus : NULL;
}
RIG_API bool rig_device_runs_on_host(const rig_device *d) { return d && rig__runs_on_host(d); }
RIG_API bool rig_device_computes(const rig_device *d) {
  return d && (d->facts.flags & RIG_EDGE_COMPUTES);
}
RIG_API bool rig_device_queue_waits(const rig_device *d) {
  return d && (d->facts.flags & RIG_EDGE_QUEUE_WAITS);
}
RIG_API const char *rig_device_model(const rig_device *d) {
  return d ? d->facts.model : "";
}
RIG_API const char *rig_device_driver_version(const rig_device *d) {
  return d ? d->facts.version : "";
}
RIG_API bool rig_device_launches(const rig_device *d) {
  return d && d->facts.part_queue[RIG_EDGE_PART_LAUNCH] != RIG_EDGE_NO_QUEUE;
}
RIG_API uint64_t rig_device_alignment(const rig_device *d) { return d ? d->facts.alignment : 0; }
RIG_API bool rig_device_cache_bytes(const rig_device *d, uint64_t *out) {
  if (!d || d->facts.cache_bytes == 0)
    return false;
  if (out)
    *out = d->facts.cache_bytes;
  return true;
}
RIG_API const void *rig_device_capability(const rig_device *d, const char *key) {
  if (!d || !key || !d->drv->capability || rig__is_lost(d))
    return NULL;
  return RIG__DRIVER(d->drv->capability(d->h, key)); /* ERR-17 */
}

RIG_API size_t rig_device_format(const rig_device *d, char *out, size_t n) {
  const char *why = d ? atomic_load(&d->life.lost) : NULL;
  int len = why ? snprintf(out, n, "%s (lost: %s)", rig_device_name(d), why)
                : snprintf(out, n, "%s", rig_device_name(d));
  return len < 0 ? 0 : (size_t)len;
}

static bool has(const rig_device *d, uint32_t flag) { return d->facts.flags & flag; }
static bool is_memory(const rig_device *d) { return strcmp(d->facts.arch, "memory") == 0; }
static bool is_io(const rig_device *d) { return d->drv->io != NULL; }

/* MACH-10..20: a function of the two devices alone. */
RIG_API bool rig_device_reaches(const rig_device *d, const rig_device *e) {
  if (!d || !e)
    return false;
  if (d == e)
    return true;                                     /* MACH-12 */
  if (d->machine != e->machine)
    return false;                                    /* MACH-18 */
  if (is_io(d) || is_io(e))
    return false;                                    /* MACH-19 */
  if (d->is_host)
    return is_memory(e) || has(e, RIG_EDGE_HOST_ADDRESSES); /* MACH-13, 14 */
  if (has(d, RIG_EDGE_MAPS_HOST) && (e->is_host || is_memory(e)))
    return true;                                     /* MACH-15, 16 */
  if (d->drv == e->drv && d->drv->peer && !rig__is_lost(d))
    return d->drv->peer(d->h, e->h);                 /* MACH-17 */
  return false;                                      /* MACH-20 */
}

/* ---- timeline reads ---- */

RIG_API uint64_t rig_device_submitted(const rig_device *d) {
  return d ? atomic_load(&d->tl.submitted) : 0;
}

/* Reads the value d has reached: core's word, or the driver's own word
 * (OWN_WORD). A driver read that fails loses d (TL-25). */
static rig_status read_value(rig_device *d, uint64_t *out) {
  uint64_t v = rig_edge_word_load(&d->tl.word);
  if (has(d, RIG_EDGE_OWN_WORD) && d->drv->signaled) {
    rig_edge_error err = {0};
    if (d->drv->signaled(d->h, &v, &err) != RIG_EDGE_OK) {
      rig__lose(d, err.message);                    /* TL-25 */
      *out = atomic_load(&d->tl.signaled);
      return rig__lost_error(d);
    }
  }
  *out = rig__signaled_raise(d, v);
  return RIG_OK;
}

uint64_t rig__signaled_raise(rig_device *d, uint64_t v) {
  uint64_t old = atomic_load(&d->tl.signaled);
  while (v > old && !atomic_compare_exchange_weak(&d->tl.signaled, &old, v))
    ;
  return v > old ? v : old;
}

/* Whether signaled may read d now, rather than answer the last value read:
 * never inside a lock, and for a lost device with a word of its own only
 * once its stop has returned (TL-22, TL-23). */
static bool may_read(const rig_device *d) {
  if (rig__inside_lock() || d->life.forked)
    return false; /* a child of fork never calls the parent's driver (STOP-20) */
  if (atomic_load(&d->life.handle_gone))
    return false; /* its final value was read before its handle went (OPEN-24) */
  return !rig__is_lost(d) || !has(d, RIG_EDGE_OWN_WORD) ||
         __atomic_load_n(&d->life.stop_returned, __ATOMIC_ACQUIRE); /* STOP-6 */
}

uint64_t rig__read_signaled(rig_device *d) {
  uint64_t v = atomic_load(&d->tl.signaled);
  if (may_read(d))
    (void)read_value(d, &v);
  return v;
}

RIG_API rig_status rig_device_signaled(rig_device *d, uint64_t *out) {
  if (!d || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_device_signaled: %s is NULL", d ? "out" : "device");
  bool was_lost = rig__is_lost(d);
  if (!may_read(d)) {
    *out = atomic_load(&d->tl.signaled);               /* TL-23 */
    return RIG_OK;
  }
  rig_status st = read_value(d, out);
  if (st == RIG_OK && !was_lost && rig__is_lost(d))
    st = rig__lost_error(d);                        /* TL-26 */
  return st;
}

RIG_API rig_point rig_device_point(const rig_device *d, uint64_t value) {
  return d ? rig_point_make(d->slot, value) : RIG_POINT_NONE;
}

/* ---- records ---- */

RIG_API rig_device *rig_device_retain(rig_device *d) {
  if (d && !d->is_host)
    atomic_fetch_add(&d->refs, 1);
  return d;
}

RIG_API void rig_device_release(rig_device *d) {
  if (!d || d->is_host)
    return;
  uint32_t was = atomic_fetch_sub(&d->refs, 1);
  if (was == 1)
    rig__device_free(d);
  else if (was == 2 && atomic_load(&d->life.left_live))
    rig__left_ready(); /* its slot alone holds it: its handle may go (OPEN-24) */
}

/* Destroys d's driver handle, once: at its record's last release, or
 * earlier for a device that left its slot (rig__handle_release). */
static void handle_destroy(rig_device *d) {
  if (d->drv && d->drv->destroy && d->h && !d->life.forked) {
    sigset_t old;
    rig__signals_block(&old); /* a driver's finaliser takes no signal (ERR-18) */
    d->drv->destroy(d->h);
    rig__signals_restore(&old);
  }
  rig__profile_retire(d);
  d->h = NULL;
}

/* OPEN-24: d left its slot, and the caller holds the reference it took
 * beside the slot's. d's final value is read while its handle still
 * reads it; then handle_gone, after which no call asks the driver for
 * it; then, where no one else holds d, its handle goes. A lookup through
 * a point takes its reference without a lock (slot.c's device_of): it
 * shows in refs here, or, coming later, it reads handle_gone and calls
 * no driver. Returns false where such a lookup holds d: its handle stays
 * for a later move. */
bool rig__handle_release(rig_device *d) {
  if (d->h && !atomic_load(&d->life.handle_gone)) /* h: an open that failed has none */
    (void)rig__read_signaled(d);
  atomic_store(&d->life.handle_gone, true);
  if (atomic_load(&d->refs) != 2)
    return false;
  handle_destroy(d);
  return true;
}

void rig__device_free(rig_device *d) {
  handle_destroy(d);
  free(d->name);
  d->name = NULL;
  pthread_mutex_lock(&pool_lock);
  d->h = pool;
  pool = d;
  pthread_mutex_unlock(&pool_lock);
}

/* Every record ever made, newest first, linked by all_next: records are
 * never freed, so it is read without a lock. A record joins it under
 * records_lock, which a fork holds first, so that its handlers walk one
 * list and take and give back the locks of the same records (fork.c). */
static pthread_mutex_t records_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(rig_device *) records;

/* A record made once: its locks, and its place on the list of records. */
static rig_device *record_make(void) {
  rig_device *d = calloc(1, sizeof *d);
  if (!d)
    return NULL;
  pthread_mutex_init(&d->locks.submit, NULL);
  pthread_mutex_init(&d->locks.mem, NULL);
  pthread_mutex_init(&d->locks.hang, NULL);
  pthread_mutex_lock(&records_lock);
  d->all_next = atomic_load(&records);
  atomic_store(&records, d);
  pthread_mutex_unlock(&records_lock);
  return d;
}

/* A record with one reference; type-stable (see the top of the file). A
 * reused one keeps its slot until the new device takes one (see
 * device_of), and its locks, unlocked but maybe held by a fork's prepare
 * handler this moment: the rest is zeroed. */
static rig_device *record_new(void) {
  pthread_mutex_lock(&pool_lock);
  rig_device *d = pool;
  if (d)
    pool = d->h;
  pthread_mutex_unlock(&pool_lock);
  if (!d && !(d = record_make()))
    return NULL;
  memset(&d->start, 0, sizeof *d - offsetof(rig_device, start));
  atomic_store(&d->refs, 1);
  return d;
}

/* ---- facts ---- */

/* Empty, or DDDD:BB:DD.F with a hex digit at each D, B and F (OPEN-35).
 * Checked character by character: sscanf's %x would also take a sign,
 * leading blanks and a "0x" prefix ("0x00:03:00.0", " 000:03:00.0"). */
static bool bus_ok(const char *b) {
  static const char form[] = "hhhh:hh:hh.h";
  if (b[0] == 0)
    return true;
  for (size_t i = 0; i < sizeof form - 1; i++)
    if (form[i] == 'h' ? !isxdigit((unsigned char)b[i]) : b[i] != form[i])
      return false;
  return b[sizeof form - 1] == 0;
}

static const char *const kind_names[RIG_EDGE_PART_KINDS] = {
    "RIG_EDGE_PART_COPY", "RIG_EDGE_PART_FILL", "RIG_EDGE_PART_LAUNCH", "RIG_EDGE_PART_WORDS"};

/* The facts' queues (OPEN-35), each fact named as the driver spells it:
 * no kind on a queue past facts.queues; a kind on a queue only for a
 * device that computes (core calls submit only there) and a launch only
 * for one that loads code, from ABI 1.9 on (before, a kind left unset was
 * on queue 0, and such a driver opens as it did). commit_k is not
 * checked: rig never reads k (TL-11), and a wait commits whatever a
 * driver holds back, so no k breaks anything. Writes the fault into why;
 * false where one is found. */
static bool queues_ok(const rig_edge_driver *t, const rig_edge_facts *f, char *why, size_t n) {
  for (int k = 0; k < RIG_EDGE_PART_KINDS; k++) {
    unsigned q = f->part_queue[k];
    if (q == RIG_EDGE_NO_QUEUE)
      continue;
    if (q >= f->queues) {
      snprintf(why, n, "facts.part_queue[%s] is queue %u, past facts.queues (%u)%s", kind_names[k],
               q, f->queues,
               t->abi_minor < 9 ? "" : "; a kind the device does not run stays RIG_EDGE_NO_QUEUE");
      return false;
    }
    if (t->abi_minor < 9) /* zeroed facts put it there: what an older driver opened with */
      continue;
    if (!(f->flags & RIG_EDGE_COMPUTES)) {
      snprintf(why, n,
               "facts.part_queue[%s] is queue %u, but COMPUTES is not in facts.flags: a "
               "device that runs no work puts no kind on a queue",
               kind_names[k], q);
      return false;
    }
    if (k == RIG_EDGE_PART_LAUNCH && !t->load) {
      snprintf(why, n,
               "facts.part_queue[RIG_EDGE_PART_LAUNCH] is queue %u, but the driver has no "
               "load: it runs no code; leave it RIG_EDGE_NO_QUEUE",
               q);
      return false;
    }
  }
  return true;
}

/* OPEN-35: facts that break a rule make the open RIG_INVALID, with a
 * message that names the rule and the fact. */
static rig_status check_facts(const char *name, const rig_edge_driver *t,
                              const rig_edge_facts *f) {
  const char *bad = NULL;
  char why[200];
  bool computes = f->flags & RIG_EDGE_COMPUTES;
  if (f->alignment == 0 || (f->alignment & (f->alignment - 1)))
    bad = "alignment is not a power of two";
  else if (computes && !memchr(f->arch, 0, sizeof f->arch))
    bad = "arch is not terminated";
  else if (computes && f->arch[0] == 0)
    bad = "arch is empty";
  else if (!memchr(f->bus, 0, sizeof f->bus) || !bus_ok(f->bus))
    bad = "bus is not a PCI address DDDD:BB:DD.F";
  else if ((f->flags & RIG_EDGE_OWN_WORD) && !t->signaled)
    bad = "OWN_WORD without signaled";
  else if (!(f->flags & RIG_EDGE_OWN_WORD) && computes && !t->bind_word)
    bad = "no word: neither OWN_WORD nor bind_word";
  else if ((f->flags & RIG_EDGE_QUEUE_WAITS) && (!t->map_word || !t->unmap_word))
    bad = "QUEUE_WAITS without map_word";
  else if (computes && !t->submit)
    bad = "a computing device without submit";
  else if (!t->allocate || !t->release)
    bad = "no allocate or release";
  else if (f->queues > RIG_EDGE_MAX_QUEUES)
    bad = "more queues than RIG_EDGE_MAX_QUEUES";
  else if (!queues_ok(t, f, why, sizeof why))
    bad = why;
  if (bad)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: facts break a rule (OPEN-35): %s", name, bad);
  return RIG_OK;
}

static const char *iset_of(const char *arch) {
  if (strncmp(arch, "x86-64", 6) == 0)
    return "x86_64";                                  /* PROP-23 */
  if (strncmp(arch, "arm64", 5) == 0)
    return "arm64";
  return arch;
}

/* Reads and checks the facts of a new handle (OPEN-33, OPEN-35). */
rig_status rig__facts_read(const char *name, const rig_edge_driver *t, void *h,
                             rig_edge_facts *f) {
  rig_edge_error err = {0};
  memset(f, 0, sizeof *f);
  f->size = sizeof *f;
  /* ABI 1.9: a part kind the driver leaves unset has no queue. Before,
   * zeroed facts put it on queue 0, and an older driver keeps that. */
  if (t->abi_minor >= 9)
    memset(f->part_queue, RIG_EDGE_NO_QUEUE, sizeof f->part_queue);
  if (RIG__DRIVER(t->facts(h, f, &err)) != RIG_EDGE_OK)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: %s", name, err.message);
  f->arch[sizeof f->arch - 1] = 0;
  f->model[sizeof f->model - 1] = 0;
  f->version[sizeof f->version - 1] = 0;
  return check_facts(name, t, f);
}

rig_status rig__device_make(const char *name, const rig_edge_driver *t, void *h,
                              const rig_edge_facts *f, rig_device **out) {
  rig_device *d = record_new();
  char *copy = strdup(name);
  if (!d || !copy) {
    free(copy);
    if (d)
      rig__device_free(d);
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", name);
  }
  d->name = copy;
  d->drv = t;
  d->h = h;
  d->facts = *f;
  d->iset = iset_of(d->facts.arch);
  atomic_store(&d->mem.budget, f->budget);
  atomic_store(&d->mem.mag_ok, t->io == NULL); /* RECLAIM-12: io memory is never kept */
  *out = d;
  return RIG_OK;
}

/* A device whose stop returned gives back its memory, then its slot once
 * nothing of it remains (OPEN-10..12, STOP-2), and the registry's reference. */
bool rig__check_stopped(rig_device *d) {
  if (__atomic_load_n(&d->life.stopped, __ATOMIC_ACQUIRE))
    return true;
  if (!__atomic_load_n(&d->life.stop_returned, __ATOMIC_ACQUIRE))
    return false;
  uint64_t reported = atomic_load(&d->tl.signaled);
  if (!d->life.forked && !d->is_host) { /* the word is read once more (STOP-6) */
    uint64_t w = rig_edge_word_load(&d->tl.word);
    if (d->facts.flags & RIG_EDGE_OWN_WORD && d->drv->signaled) {
      rig_edge_error err = {0};
      if (d->drv->signaled(d->h, &w, &err) != RIG_EDGE_OK)
        w = reported;
    }
    reported = w > reported ? w : reported;
  }
  if (reported < atomic_load(&d->tl.taken))
    return false;                                     /* STOP-5, STOP-7 */
  atomic_store(&d->mem.mag_ok, false);
  __atomic_store_n(&d->life.stopped, true, __ATOMIC_RELEASE);
  return true;
}

/* ---- fork (fork.c) ---- */

void rig__fork_mutex(pthread_mutex_t *m, rig__fork_phase ph) {
  if (ph == RIG__FORK_PREPARE)
    pthread_mutex_lock(m);
  else
    pthread_mutex_unlock(m);
}

void rig__records_list_fork(rig__fork_phase ph) { rig__fork_mutex(&records_lock, ph); }

void rig__devices_fork(rig__fork_phase ph, size_t lock) {
  rig__fork_mutex((pthread_mutex_t *)((char *)rig__host_device() + lock), ph);
  for (rig_device *d = atomic_load(&records); d; d = d->all_next)
    rig__fork_mutex((pthread_mutex_t *)((char *)d + lock), ph);
}

void rig__devices_each(void (*fn)(rig_device *)) {
  for (rig_device *d = atomic_load(&records); d; d = d->all_next)
    fn(d);
}

void rig__records_fork(rig__fork_phase ph) {
  rig__fork_mutex(&pool_lock, ph);
}
