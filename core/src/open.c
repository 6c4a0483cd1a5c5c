/* SPDX-License-Identifier: MIT */
/* open.c: names, opening and closing (DEV, OPEN, STOP-9, STOP-16).
 *
 * The registry lock guards the name table and the slot table. It is never
 * held while a driver runs: an open marks its name "opening" by its thread,
 * drops the lock, and others that open the name wait on the registry's
 * condition (DOM-4) while opens of other names go on.
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
static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
/* The open names, hashed: with every slot held an open still looks at a
 * handful of names, not at 65,534 of them (OPEN-18). */
#define NAME_BUCKETS 4096u
static name_entry *names[NAME_BUCKETS];

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

/* Binds core's word unless the driver keeps its own (edge.h). */
static rig_status bind_word(rig_device *d) {
  rig_edge_error err = {0};
  if ((d->facts.flags & RIG_EDGE_OWN_WORD) || !d->drv->bind_word)
    return RIG_OK;
  if (RIG__DRIVER(d->drv->bind_word(d->h, &d->tl.word, &err)) != RIG_EDGE_OK)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: %s", d->name, err.message);
  return RIG_OK;
}

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

/* Opens name with table t (the driver's open() with args), registering it.
 * Called with the name marked opening by this thread. */
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
  rig_status st = rig__facts_read(name, t, h, &f);
  if (st == RIG_OK)
    st = rig__device_make(name, t, h, &f, &d);
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
                              const char *driver, bool io, rig_device **out, bool *created);

/* The common open of name through table t (NULL: find the plugin driver).
 * *created (may be NULL): whether it opened a device rather than reused one. */
static rig_status open_named(const char *name, const rig_edge_driver *t, const char *args,
                             const char *driver, bool io, rig_device **out, bool *created) {
  rig_status st = rig__may_lock("rig_device_open");
  if (st)
    return st;
  if (!out || !name || !*name)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open: %s", !out ? "out is NULL" : "no name");
  if (rig_runtime_failure())
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s", rig_runtime_failure()); /* OPEN-4, ERR-41 */
  (void)rig__host_device(); /* with it the fork handlers, which call each driver's hook */
  pthread_mutex_lock(&registry);
  st = open_locked(name, t, args, driver, io, out, created);
  pthread_mutex_unlock(&registry);
  /* After the registry, where a start's walk looks: a start before the
   * open set the switch this reads, one after it walks past the device. */
  if (st == RIG_OK && atomic_load(&rig__profiling))
    rig__profile_arm(*out);
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

/* Whether the plugin is rig's own memory or io driver, whose calls need
 * no signal mask (RIG__DRIVER_OF, docs/decisions.md): loaded by that name,
 * with a table of that name. */
static bool own_driver(const char *driver, const rig_edge_driver *t) {
  return (strcmp(driver, "memory") == 0 || strcmp(driver, "io") == 0) &&
         strcmp(t->name, driver) == 0;
}

static rig_status open_locked(const char *name, const rig_edge_driver *t, const char *args,
                              const char *driver, bool io, rig_device **out, bool *created) {
  rig_status st = RIG_OK;
  if (created)
    *created = false;
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
  bool plugin = !t;
  if (plugin)
    st = rig__plugin_load(driver, NULL, &t);
  if (st == RIG_OK) { /* its fork hook (fork.c) from before the open, which takes the
                         driver's locks and may set up its library even where it fails */
    pthread_mutex_lock(&registry);
    rig__fork_note_driver(t);
    pthread_mutex_unlock(&registry);
  }
  rig_device *d = NULL;
  if (st == RIG_OK)
    st = open_new(name, t, args, io, &d);
  if (st == RIG_OK)
    d->own_code = plugin && own_driver(driver, t);
  pthread_mutex_lock(&registry);
  if (st == RIG_OK) {
    n->dev = d;
    if (rig_runtime_failure())
      rig__lose(d, rig_runtime_failure());                     /* ERR-42: it raced rig_runtime_fail */
    n->drv = t;
    n->opening = false;
    *out = rig_device_retain(d); /* the entry keeps the first reference */
    if (created)
      *created = true;
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

/* rig_device_open of a plugin's device for rig_device_list (list.c):
 * *created says whether it opened the device (the caller then closes it)
 * or reused one the program holds. */
rig_status rig__device_open_probe(const char *name, rig_device **out, bool *created) {
  char driver[64];
  const char *args;
  rig_status st = split(name, driver, sizeof driver, &args);
  return st ? st : open_named(name, NULL, args, driver, false, out, created);
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
    if (rig_runtime_failure())            /* as any open, Error after rig_runtime_fail (OPEN-4) */
      return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s", rig_runtime_failure());
    *out = rig_device_host();
    return RIG_OK;
  }
  if (strchr(name, '@'))
    return rig__open_at(name, out); /* NAME@MACHINE (machine.c) */
  rig_status st = split(name, driver, sizeof driver, &args);
  return st ? st : open_named(name, NULL, args, driver, false, out, NULL);
}

rig_status rig__open_as(const char *name, const char *driver, const char *args,
                        rig_device **out) {
  return open_named(name, NULL, args, driver, false, out, NULL);
}

RIG_API rig_status rig_device_open_memory(const char *name, rig_device **out) {
  char full[256];
  if (!name)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_memory: name is NULL");
  if (snprintf(full, sizeof full, "memory:%s", name) >= (int)sizeof full)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_memory: name too long");
  return rig_device_open(full, out);
}

RIG_API rig_status rig_device_open_driver(const char *name, const void *driver_table,
                                          const char *args, rig_device **out) {
  if (!driver_table)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_driver: table is NULL");
  rig_status st = rig__check_table(driver_table, name ? name : "(static driver)");
  return st ? st
            : open_named(name, driver_table, args, NULL,
                         ((const rig_edge_driver *)driver_table)->io, out, NULL);
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
    st = open_named(name, NULL, args, driver, true, out, NULL);
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
  if (d->machine && (st = rig__machine_close(d)) != RIG_OK)
    return st; /* a machine's host closes its devices first */
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
  if (d->drv && d->drv->io) /* ended borrows' pages: the file closes with the last */
    rig__borrows_release_everywhere();
  return stop_status(d, r, &err);
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

rig_device **rig__devices_all(size_t *n) {
  size_t count = 0;
  *n = 0;
  pthread_mutex_lock(&registry);
  for (unsigned b = 0; b < NAME_BUCKETS; b++)
    for (name_entry *e = names[b]; e; e = e->next)
      count += e->dev && !e->opening;
  pthread_mutex_unlock(&registry);
  rig_device **list = count ? malloc(count * sizeof *list) : NULL;
  if (list) /* one opened since is left out; its open did what the caller does */
    *n = rig__devices_retain(list, count);
  return list;
}

/* OPEN-24: each device that left its slot and that only its slot holds
 * gives up its driver handle (device.c's rig__handle_release); the record
 * stays, naming the device to its points (PROP-4). Not inside a lock: the
 * handle's last read and its destroy call the driver. */
void rig__left_handles_release(void) {
  if (rig__inside_lock() || !rig__left_waiting())
    return;
  for (;;) {
    pthread_mutex_lock(&registry);
    rig_device *d = rig__left_next();
    pthread_mutex_unlock(&registry);
    if (!d)
      return;
    if (!rig__handle_release(d)) { /* a lookup holds it: a later move */
      pthread_mutex_lock(&registry);
      rig__left_relink(d);
      pthread_mutex_unlock(&registry);
    }
    rig_device_release(d);
  }
}

/* Loses every open device with why (rig_runtime_fail). */
void rig__registry_lose(const char *why) {
  pthread_mutex_lock(&registry);
  for (unsigned b = 0; b < NAME_BUCKETS; b++)
    for (name_entry *e = names[b]; e; e = e->next)
      if (e->dev)
        rig__lose(e->dev, why);
  pthread_mutex_unlock(&registry);
}

/* ---- fork (fork.c) ---- */

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

void rig__registry_each(void (*fn)(rig_device *)) {
  for (unsigned b = 0; b < NAME_BUCKETS; b++)
    for (name_entry *e = names[b]; e; e = e->next)
      if (e->dev)
        fn(e->dev);
}
