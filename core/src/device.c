/* device.c: devices, names, opening and closing, properties, loss and the
 * process's failure (DEV, OPEN, PROP, ERR-37..45).
 *
 * The registry lock guards the name table and the slot table. It is never
 * held while a driver runs: an open marks its name "opening" by its thread,
 * drops the lock, and others that open the name wait on the registry's
 * condition (DOM-4) while opens of other names go on.
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

typedef struct name_entry {
  char *name;
  rig_device *dev;          /* NULL while opening */
  const rig_edge_driver *drv;
  pthread_t opener;
  bool opening;
  struct name_entry *next;
} name_entry;

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
/* The open names, hashed: with every slot held an open still looks at a
 * handful of names, not at 65,534 of them (OPEN-18). */
#define NAME_BUCKETS 4096u
static name_entry *names[NAME_BUCKETS];
static rig_device *pool;             /* free device records, linked by h */
static _Atomic(const char *) failure;
static char failure_buf[RIG_MESSAGE_BYTES];
static atomic_flag failed = ATOMIC_FLAG_INIT;

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

/* ---- loss ---- */

RIG_API const char *rig_device_lost(const rig_device *d) { return d ? atomic_load(&d->life.lost) : NULL; }

/* One loss at a time: a leaf lock, taken under any other. */
static pthread_mutex_t losing = PTHREAD_MUTEX_INITIALIZER;

void rig__lose(rig_device *d, const char *why) {
  if (d->is_host || rig__is_lost(d))
    return;
  pthread_mutex_lock(&losing);
  if (!rig__is_lost(d)) {
    d->life.lost_at = rig_edge_word_load(&d->tl.word) > atomic_load(&d->tl.signaled)
                     ? rig_edge_word_load(&d->tl.word)
                     : atomic_load(&d->tl.signaled);    /* LOSS-15 */
    snprintf(d->life.lost_buf, sizeof d->life.lost_buf, "%s", why && *why ? why : "fault");
    atomic_store(&d->mem.mag_ok, false);
    atomic_store(&d->life.lost, d->life.lost_buf);             /* LOSS-10 */
  }
  pthread_mutex_unlock(&losing);
}

RIG_API void rig_runtime_fail(const char *why) {
  if (atomic_flag_test_and_set(&failed))
    return;                                          /* ERR-44 */
  /* The reason is every later open's message and the lost devices' reason:
   * never empty, so that no call fails saying nothing. */
  snprintf(failure_buf, sizeof failure_buf, "%s", why && *why ? why : RIG_FAIL_NO_REASON);
  atomic_store(&failure, failure_buf);
  pthread_mutex_lock(&registry);
  for (unsigned b = 0; b < NAME_BUCKETS; b++)
    for (name_entry *e = names[b]; e; e = e->next)
      if (e->dev)
        rig__lose(e->dev, failure_buf);              /* ERR-39, ERR-40 */
  pthread_mutex_unlock(&registry);
}

RIG_API const char *rig_runtime_failure(void) { return atomic_load(&failure); }

/* ---- records ---- */

RIG_API rig_device *rig_device_retain(rig_device *d) {
  if (d && !d->is_host)
    atomic_fetch_add(&d->refs, 1);
  return d;
}

RIG_API void rig_device_release(rig_device *d) {
  if (!d || d->is_host)
    return;
  if (atomic_fetch_sub(&d->refs, 1) == 1)
    rig__device_free(d);
}

void rig__device_free(rig_device *d) {
  if (d->drv && d->drv->destroy && d->h && !d->life.forked) {
    sigset_t old;
    rig__signals_block(&old); /* a driver's finaliser takes no signal (ERR-18) */
    d->drv->destroy(d->h);
    rig__signals_restore(&old);
  }
  free(d->name);
  d->name = NULL;
  d->h = NULL;
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

/* OPEN-35: facts that break a rule make the open RIG_INVALID. */
static rig_status check_facts(const char *name, const rig_edge_driver *t,
                              const rig_edge_facts *f) {
  const char *bad = NULL;
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
  if (!bad && f->queues > RIG_EDGE_MAX_QUEUES)
    bad = "more queues than RIG_EDGE_MAX_QUEUES";
  for (int k = 0; !bad && k < RIG_EDGE_PART_KINDS; k++)
    if (f->part_queue[k] != RIG_EDGE_NO_QUEUE && f->part_queue[k] >= f->queues)
      bad = "a part kind names a queue past facts.queues";
  if (bad)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: facts break a rule: %s", name, bad);
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
static rig_status read_facts(const char *name, const rig_edge_driver *t, void *h,
                             rig_edge_facts *f) {
  rig_edge_error err = {0};
  memset(f, 0, sizeof *f);
  f->size = sizeof *f;
  if (RIG__DRIVER(t->facts(h, f, &err)) != RIG_EDGE_OK)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: %s", name, err.message);
  f->arch[sizeof f->arch - 1] = 0;
  return check_facts(name, t, f);
}

/* ---- opening ---- */

/* The bucket of name (FNV-1a). */
static name_entry **bucket_of(const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    h = (h ^ *c) * 16777619u;
  return &names[h % NAME_BUCKETS];
}

static name_entry *find(const char *name) {
  for (name_entry *e = *bucket_of(name); e; e = e->next)
    if (strcmp(e->name, name) == 0)
      return e;
  return NULL;
}

static void unlink_entry(name_entry *x) {
  for (name_entry **p = bucket_of(x->name); *p; p = &(*p)->next)
    if (*p == x) {
      *p = x->next;
      return;
    }
}

/* Runs a lost device's owed stop (STOP-9). Its submits are done: the
 * submit lock keeps new ones out, and lost devices take none. */
static int run_stop(rig_device *d, rig_edge_error *err) {
  int r = RIG_EDGE_OK;
  atomic_store(&d->life.stopping, true);
  rig__lock(&d->locks.submit);
  if (!rig__is_stopped(d)) {
    if (d->drv->stop && !d->life.forked) /* the parent's to stop (STOP-20) */
      r = RIG__DRIVER(d->drv->stop(d->h, err));
    __atomic_store_n(&d->life.stop_returned, true, __ATOMIC_RELEASE);
  }
  rig__unlock(&d->locks.submit);
  rig__check_stopped(d);
  rig__mappings_release(d, true);                    /* OPEN-23, PROP-7 */
  rig__locals_drop(d);                               /* LOCAL-5, LOCAL-6 */
  return r;
}

/* What the call that ran a stop returns (STOP-16): a failure other than a
 * fault escaping the stop, as the status it maps to with the driver's
 * message; a fault is dropped. */
static rig_status stop_status(const rig_device *d, int r, const rig_edge_error *err) {
  if (r == RIG_EDGE_OK || r == RIG_EDGE_FAULT)
    return RIG_OK;
  return rig__fail(r == RIG_EDGE_IO             ? RIG_IO
                   : r == RIG_EDGE_NO_ROOM      ? RIG_OUT_OF_MEMORY
                   : r == RIG_EDGE_UNSUPPORTED  ? RIG_INVALID
                                                : RIG_UNAVAILABLE,
                   d, 0, "%s", err->message);
}

/* A handle that no device takes is stopped once (OPEN-29). */
static void discard_handle(const rig_edge_driver *t, void *h) {
  rig_edge_error err = {0};
  if (t->stop)
    (void)RIG__DRIVER(t->stop(h, &err));
  if (t->destroy) {
    sigset_t old;
    rig__signals_block(&old); /* ERR-18 */
    t->destroy(h);
    rig__signals_restore(&old);
  }
}

static rig_status make_device(const char *name, const rig_edge_driver *t, void *h,
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

/* Binds core's word unless the driver keeps its own (edge.h). */
static rig_status bind_word(rig_device *d) {
  rig_edge_error err = {0};
  if ((d->facts.flags & RIG_EDGE_OWN_WORD) || !d->drv->bind_word)
    return RIG_OK;
  if (RIG__DRIVER(d->drv->bind_word(d->h, &d->tl.word, &err)) != RIG_EDGE_OK)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: %s", d->name, err.message);
  return RIG_OK;
}

/* Opens name with table t (the driver's open() with args), registering it.
 * Called with the name marked opening by this thread. */
/* An io library opens only through rig_device_open_io, and rig_device_open_io opens
 * nothing else (OPEN-37). */
static rig_status check_io(const char *name, const rig_edge_driver *t, bool io) {
  if (io && !t->io)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: %s is not an io library", name, t->name);
  if (!io && t->io)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: %s is an io library: open it with rig_device_open_io",
                     name, t->name);
  return RIG_OK;
}

/* An io device's budget starts at Io.budget (RECLAIM-67). */
static rig_status io_budget(rig_device *d) {
  rig_edge_error err = {0};
  uint64_t n = 0;
  if (d->drv->io->budget && RIG__DRIVER(d->drv->io->budget(d->h, &n, &err)) != RIG_EDGE_OK)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: budget: %s", d->name, err.message);
  atomic_store(&d->mem.budget, n);
  return RIG_OK;
}

static rig_status open_new(const char *name, const rig_edge_driver *t, const char *args,
                           bool io, rig_device **out) {
  void *h = NULL;
  rig_edge_error err = {0};
  rig_status io_st = check_io(name, t, io);
  if (io_st)
    return io_st;
  int r = RIG__DRIVER(t->open(args ? args : "", &h, &err));
  if (r != RIG_EDGE_OK)
    return rig__fail(r == RIG_EDGE_UNSUPPORTED ? RIG_INVALID : RIG_UNAVAILABLE, NULL, 0,
                     "%s", err.message[0] ? err.message : "open failed"); /* OPEN-32 */
  rig_edge_facts f;
  rig_device *d = NULL;
  rig_status st = read_facts(name, t, h, &f);
  if (st == RIG_OK)
    st = make_device(name, t, h, &f, &d);
  if (st == RIG_OK && t->io)
    d->io_flags = rig__io_flags(args);
  if (st == RIG_OK && t->io && (st = io_budget(d)) != RIG_OK) {
    d->h = NULL;
    rig_device_release(d);
  }
  if (st != RIG_OK) {
    discard_handle(t, h);
    return st;
  }
  pthread_mutex_lock(&registry);
  st = rig__slot_take(d); /* an open racing rig_runtime_fail makes a lost device (ERR-42) */
  pthread_mutex_unlock(&registry);
  if (st == RIG_OK)
    st = bind_word(d);
  if (st != RIG_OK) {
    if (d->slot && rig__slot_of(d->slot) && atomic_load(&rig__slot_of(d->slot)->dev) == d) {
      pthread_mutex_lock(&registry);
      rig__slot_leave(d);
      pthread_mutex_unlock(&registry);
    }
    d->h = NULL;
    discard_handle(t, h);
    rig_device_release(d);
    return st;
  }
  *out = d;
  return RIG_OK;
}

/* Waits, with the registry held, until no other thread opens name; returns
 * the entry, NULL, or sets *st for a re-entrant open (OPEN-36). */
static name_entry *settle(const char *name, rig_status *st) {
  name_entry *e;
  while ((e = find(name)) && e->opening) {
    if (pthread_equal(e->opener, pthread_self())) {
      *st = rig__fail(RIG_INVALID, NULL, 0, "%s: opened again from inside its own open",
                      name);
      return NULL;
    }
    pthread_cond_wait(&registry_cond, &registry);
  }
  return e;
}

static rig_status open_locked(const char *name, const rig_edge_driver *t, const char *args,
                              const char *driver, bool io, rig_device **out);

/* The common open of name through table t (NULL: find the plugin driver). */
static rig_status open_named(const char *name, const rig_edge_driver *t, const char *args,
                             const char *driver, bool io, rig_device **out) {
  rig_status st = rig__may_lock("rig_device_open");
  if (st)
    return st;
  if (!out || !name || !*name)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open: %s", !out ? "out is NULL" : "no name");
  if (atomic_load(&failure))
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s", failure_buf); /* OPEN-4, ERR-41 */
  pthread_mutex_lock(&registry);
  st = open_locked(name, t, args, driver, io, out);
  pthread_mutex_unlock(&registry);
  return st;
}

static rig_status reuse(name_entry *e, const rig_edge_driver *t, const char *name,
                        const char *args, rig_device **out) {
  if (t && e->drv != t)
    return rig__fail(RIG_INVALID, e->dev, 0, "%s: open under another driver", name); /* OPEN-34 */
  rig_status st = e->dev->drv->io ? rig__io_reopen(e->dev, args) : RIG_OK;
  if (st)
    return st;                               /* no flag is dropped (docs/io.md) */
  *out = rig_device_retain(e->dev);                                  /* OPEN-30 */
  return RIG_OK;
}

/* Runs an earlier lost device's owed stop, then forgets its name
 * (OPEN-3, STOP-9). Called with the registry held; drops it meanwhile. */
static rig_status retire_lost(name_entry *e) {
  rig_device *old = e->dev;
  rig_edge_error err = {0};
  e->opening = true;
  e->opener = pthread_self();
  pthread_mutex_unlock(&registry);
  int r = run_stop(old, &err);
  pthread_mutex_lock(&registry);
  unlink_entry(e);
  free(e->name);
  free(e);
  pthread_cond_broadcast(&registry_cond);
  pthread_mutex_unlock(&registry);
  rig__device_stopped(old);
  pthread_mutex_lock(&registry);
  return stop_status(old, r, &err); /* the name is left unopened */
}

static rig_status open_locked(const char *name, const rig_edge_driver *t, const char *args,
                              const char *driver, bool io, rig_device **out) {
  rig_status st = RIG_OK;
  name_entry *e;
  while ((e = settle(name, &st))) {
    if (!rig__is_lost(e->dev))
      return reuse(e, t, name, args, out);
    if (atomic_load(&e->dev->life.stopping) && !__atomic_load_n(&e->dev->life.stopped, __ATOMIC_ACQUIRE))
      /* OPEN-5: another call runs the stop now */
      return rig__fail(RIG_UNAVAILABLE, e->dev, 0,
                       "%s: the stop of its lost device has not returned", name);
    if ((st = retire_lost(e)) != RIG_OK)             /* OPEN-3 */
      return st;
  }
  if (st)
    return st;
  name_entry *n = calloc(1, sizeof *n);
  if (!n || !(n->name = strdup(name))) {
    free(n);
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", name);
  }
  n->opening = true;
  n->opener = pthread_self();
  name_entry **b = bucket_of(name);
  n->next = *b;
  *b = n;
  pthread_mutex_unlock(&registry);
  if (!t)
    st = rig__plugin_load(driver, NULL, &t);
  rig_device *d = NULL;
  if (st == RIG_OK)
    st = open_new(name, t, args, io, &d);
  pthread_mutex_lock(&registry);
  if (st == RIG_OK) {
    n->dev = d;
    if (atomic_load(&failure))
      rig__lose(d, failure_buf);                     /* ERR-42: it raced rig_runtime_fail */
    n->drv = t;
    rig__fork_note_driver(t);                        /* its fork hook (fork.c) */
    n->opening = false;
    *out = rig_device_retain(d); /* the entry keeps the first reference */
  } else {
    unlink_entry(n);             /* ERR-4: no name stays opening */
    free(n->name);
    free(n);
  }
  pthread_cond_broadcast(&registry_cond);
  return st;
}

/* Splits "DRIVER:ARGS"; refuses driver names that could leave the folder. */
static rig_status split(const char *name, char *driver, size_t n, const char **args) {
  const char *colon = strchr(name, ':');
  size_t len = colon ? (size_t)(colon - name) : strlen(name);
  *args = colon ? colon + 1 : "";
  if (len == 0 || len >= n)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open: bad driver name in '%s'", name);
  memcpy(driver, name, len);
  driver[len] = 0;
  if (strchr(driver, '/') || strstr(driver, ".."))
    return rig__fail(RIG_INVALID, NULL, 0,
                     "rig_device_open: driver name '%s' has '/' or '..'", driver);
  return RIG_OK;
}

RIG_API rig_status rig_device_open(const char *name, rig_device **out) {
  char driver[64];
  const char *args;
  if (!name)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open: name is NULL");
  if (strcmp(name, "CPU") == 0 && out) { /* the host's name opens the host, */
    /* Refused inside a lock as any open is, though it takes none (DOM-14, DOM-16). */
    rig_status st = rig__may_lock("rig_device_open");
    if (st)
      return st;
    if (atomic_load(&failure))            /* as any open, Error after rig_runtime_fail (OPEN-4) */
      return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s", failure_buf);
    *out = rig_device_host();
    return RIG_OK;
  }
  rig_status st = split(name, driver, sizeof driver, &args);
  return st ? st : open_named(name, NULL, args, driver, false, out);
}

RIG_API rig_status rig_device_open_memory(const char *name, rig_device **out) {
  char full[256];
  if (!name)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_memory: name is NULL");
  if (snprintf(full, sizeof full, "memory:%s", name) >= (int)sizeof full)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_memory: name too long");
  return rig_device_open(full, out);
}

RIG_API rig_status rig_device_open_driver(const char *name, const void *table, const char *args,
                                   rig_device **out) {
  if (!table)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_driver: table is NULL");
  rig_status st = rig__check_table(table, name ? name : "(static driver)");
  return st ? st : open_named(name, table, args, NULL, ((const rig_edge_driver *)table)->io,
                              out);
}

RIG_API rig_status rig_device_open_io(const rig_io_opener *o, rig_device **out) {
  char driver[64];
  const char *rest;
  if (!o || !o->library || !o->target || !*o->target)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_io: %s",
                     !o ? "opener is NULL" : !o->library ? "no library" : "no target");
  if (strchr(o->library, ':'))
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_io: library '%s' has ':'", o->library);
  if (o->flags & ~(uint32_t)(RIG_IO_CREATE | RIG_IO_READ_ONLY | RIG_IO_DURABLE))
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_io: unknown flags %#x",
                     o->flags & ~(uint32_t)(RIG_IO_CREATE | RIG_IO_READ_ONLY | RIG_IO_DURABLE));
  size_t n = strlen(o->library) + strlen(o->target) + 2;
  char *name = malloc(n), *args = malloc(n + 64);
  rig_status st = RIG_OK;
  if (!name || !args)
    st = rig__fail(RIG_UNAVAILABLE, NULL, 0, "rig_device_open_io: out of memory");
  if (st == RIG_OK) {
    snprintf(name, n, "%s:%s", o->library, o->target);
    snprintf(args, n + 64, RIG_EDGE_IO_ARGS_PREFIX "%u %llu %s", o->flags,
             (unsigned long long)o->size, o->target);
    st = split(name, driver, sizeof driver, &rest);
  }
  if (st == RIG_OK)
    st = open_named(name, NULL, args, driver, true, out);
  free(name);
  free(args);
  return st;
}

/* ---- closing ---- */

RIG_API rig_status rig_device_close(rig_device *d) {
  rig_status st = rig__may_lock("rig_device_close");
  if (st)
    return st;
  if (!d || d->is_host)
    return rig__fail(RIG_INVALID, d, 0, "rig_device_close: %s", d ? "the host is never closed"
                                                           : "device is NULL"); /* OPEN-59 */
  if (!rig__is_lost(d)) {
    st = rig__point_wait(rig_point_make(d->slot, atomic_load(&d->tl.submitted))); /* OPEN-45 */
    if (st == RIG_INTERRUPTED)
      return st;                                                   /* OPEN-57 */
    rig__lose(d, "closed");                                        /* OPEN-46 */
  }
  rig_edge_error err = {0};
  int r = run_stop(d, &err);                                       /* OPEN-47, 55 */
  pthread_mutex_lock(&registry);
  name_entry *e = find(d->name);
  bool ours = e && e->dev == d && !e->opening;
  if (ours)
    unlink_entry(e);
  pthread_mutex_unlock(&registry);
  if (ours) {
    free(e->name);
    free(e);
    rig__device_stopped(d);
  }
  return stop_status(d, r, &err);
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

void rig__device_stopped(rig_device *d) {
  if (rig__check_stopped(d))
    rig__return_all(d);
  pthread_mutex_lock(&registry);
  bool leave = rig__is_stopped(d) && atomic_load(&d->mem.live_allocs) == 0 && rig__slot_of(d->slot) &&
               rig__slot_of(d->slot)->taken && atomic_load(&rig__slot_of(d->slot)->dev) == d;
  if (leave)
    rig__slot_leave(d);
  d->life.slot_pending = !leave;
  pthread_mutex_unlock(&registry);
  if (!leave)
    rig__stopped_add(d);
  rig_device_release(d);
}

/* The last allocation of a stopped device came back: leave the slot. */
void rig__device_drained(rig_device *d) {
  pthread_mutex_lock(&registry);
  if (d->life.slot_pending && rig__is_stopped(d) && atomic_load(&d->mem.live_allocs) == 0) {
    d->life.slot_pending = false;
    rig__slot_leave(d);
  }
  pthread_mutex_unlock(&registry);
}

/* Moves the collected memory of every open device, as a round of
 * reclamation does (RECLAIM-19): at most 64 devices a call, taken with a
 * reference each so that none goes while its memory moves. */
void rig__move_everywhere(void) {
  rig_device *list[64];
  size_t n = rig__devices_retain(list, 64);
  rig__move_collected(rig__host_device());
  for (size_t i = 0; i < n; i++) {
    rig__move_collected(list[i]);
    rig_device_release(list[i]);
  }
}

size_t rig__devices_retain(rig_device **list, size_t max) {
  size_t n = 0;
  pthread_mutex_lock(&registry);
  for (unsigned b = 0; b < NAME_BUCKETS && n < max; b++)
    for (name_entry *e = names[b]; e && n < max; e = e->next)
      if (e->dev && !e->opening)
        list[n++] = rig_device_retain(e->dev);
  pthread_mutex_unlock(&registry);
  return n;
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

/* A name another thread of the parent was opening, or retiring, at the
 * fork: no one in the child will finish it, and an open of the name would
 * wait for it for good. The child forgets it; the half-made device is the
 * parent's (STOP-20). */
static void forget_openings(void) {
  for (unsigned b = 0; b < NAME_BUCKETS; b++)
    for (name_entry **p = &names[b]; *p;) {
      name_entry *e = *p;
      if (e->opening && !pthread_equal(e->opener, pthread_self())) {
        *p = e->next;
        free(e->name);
        free(e);
      } else
        p = &e->next;
    }
}

void rig__registry_fork(rig__fork_phase ph) {
  if (ph == RIG__FORK_CHILD) {
    forget_openings();
    /* Threads of the parent that waited on it are not in the child, and a
     * broadcast could wait for them (glibc's condition variables). */
    pthread_cond_init(&registry_cond, NULL);
  }
  rig__fork_mutex(&registry, ph);
}

void rig__records_fork(rig__fork_phase ph) {
  rig__fork_mutex(&pool_lock, ph);
  rig__fork_mutex(&losing, ph);
}

void rig__registry_each(void (*fn)(rig_device *)) {
  for (unsigned b = 0; b < NAME_BUCKETS; b++)
    for (name_entry *e = names[b]; e; e = e->next)
      if (e->dev)
        fn(e->dev);
}

void rig__lose_for(rig_device *d, int result, const char *message) {
  char why[RIG_MESSAGE_BYTES];
  if (result == RIG_EDGE_HALF) /* ERR-29: the status's name and its message */
    snprintf(why, sizeof why, "RIG_EDGE_HALF(\"%s\")", message);
  else
    snprintf(why, sizeof why, "%s", message);              /* ERR-28 */
  rig__lose(d, why);
}
