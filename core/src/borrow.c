/* SPDX-License-Identifier: MIT */
/* borrow.c: borrows, buffers on one device over another device's
 * allocation, with no copy (PRE-16, MACH-22..25, LIFE-2, LMEM-5, LMEM-9,
 * STAMP-15..17, RECLAIM-60..63, RECLAIM-79).
 *
 * A borrow shares its allocation's stamps and claims; only the address
 * the device's work uses differs: a mapping by the device's driver, except
 * on a device that runs on the host, which addresses host memory as it
 * is. A mapping goes back once no buffer uses it and the device has run
 * the work submitted until then (STAMP-17): its last release records that
 * point, and the calls that move the device's memory, and its stop, give
 * it back once the point is reached.
 */
#include <stdlib.h>

#include "alloc.h"


struct rig__borrow {
  _Atomic uint32_t refs;        /* buffers over the mapping */
  rig_device *dev;              /* the borrowing device */
  rig_edge_alloc map;
  bool mapped;                  /* by the driver: to unmap */
  void *pages;                  /* an io device's pages it maps (MACH-23) */
  rig_edge_alloc pages_mem;     /* ... as host memory, for the host's moves */
  rig_device *io;               /* ... and that device, retained */
  rig__alloc *pinned;           /* the program's memory, mapped: it waits for the
                                   mapping's return before it goes back to
                                   the program (rig_buffer_of_host) */
  rig_point until;              /* given back once reached */
  struct rig__borrow *next;     /* the device's retired borrows */
};

/* Whether d may borrow b's memory (MACH-22..25). A device that does not
 * run on the host maps host memory only where it starts on a page, the
 * host's and memory devices' included (MACH-23, MACH-25). */
static rig_status may_borrow(rig_device *d, const rig_buffer *b) {
  const rig_device *m = b->alloc->dev;
  if (m->drv->io) { /* through Io.pages, where d reaches host (MACH-19, MACH-23) */
    if (m->drv->io->pages && rig_device_reaches(d, rig_device_host()) && b->alloc->mem.address % RIG__PAGE == 0)
      return RIG_OK;
    return rig__fail(RIG_INVALID, d, 0,
                     "rig_buffer_borrow: %s maps no io memory of %s%s", d->name, m->name,
                     rig_device_reaches(d, rig_device_host()) ? " that starts off a page" : "");
  }
  const void *host = b->alloc->mem.host;
  bool paged = host && (uintptr_t)host % RIG__PAGE == 0;
  if (host && rig_device_runs_on_host(d))
    return RIG_OK;                                            /* MACH-24 */
  bool host_memory = host && (m->is_host || rig_device_runs_on_host(m) || m->drv != d->drv);
  if (rig_device_reaches(d, m) && (!host_memory || paged))
    return RIG_OK;                                            /* MACH-22 */
  if (paged && rig_device_reaches(d, rig_device_host()))
    return RIG_OK;                                            /* MACH-23 */
  return rig__fail(RIG_INVALID, d, 0, "rig_buffer_borrow: %s does not map %s's memory%s",
                   d->name, m->name,
                   host && rig_device_reaches(d, rig_device_host()) ? " that starts off a page" : "");
}

static rig_status map_host(rig_device *d, const rig_buffer *b, const rig_edge_alloc *mem,
                           struct rig__borrow *x);

/* An io allocation's pages: its memory as host memory, for the borrow's
 * life (Io.pages). */
static rig_status pages_of(const rig_buffer *b, struct rig__borrow *x, rig_edge_alloc *as) {
  rig_device *m = b->alloc->dev;
  rig_edge_error err = {0};
  int r = RIG__DRIVER(m->drv->io->pages(m->h, b->alloc->mem.address, b->alloc->bytes,
                                        &x->pages, &err));
  if (r != RIG_EDGE_OK)
    return rig__io_failed(m, r, b->alloc->bytes, &err); /* ERR-26 */
  x->io = rig_device_retain(m);
  x->pages_mem = (rig_edge_alloc){.host = x->pages, .bytes = b->alloc->bytes};
  *as = x->pages_mem;
  return RIG_OK;
}

static void unpages(struct rig__borrow *x) {
  rig_edge_error err = {0};
  if (!x->pages)
    return;
  if (!x->io->life.forked &&
      RIG__DRIVER(x->io->drv->io->unpages(x->io->h, x->pages, x->map.bytes, &err)) ==
          RIG_EDGE_FAULT)
    rig__lose_for(x->io, RIG_EDGE_FAULT, err.message); /* its pages lost bytes */
  rig_device_release(x->io);
  x->pages = NULL;
}

static rig_status map_on(rig_device *d, const rig_buffer *b, struct rig__borrow *x) {
  rig_edge_alloc pages;
  const rig_edge_alloc *mem = &b->alloc->mem;
  if (b->alloc->dev->drv->io) {
    rig_status st = pages_of(b, x, &pages);
    if (st)
      return st;
    mem = &pages;
  }
  rig_status st = map_host(d, b, mem, x);
  if (st)
    unpages(x);
  return st;
}

/* Maps b's allocation on d: one round of returning mappings and staging
 * when the driver has no room (RECLAIM-60). */
static rig_status map_host(rig_device *d, const rig_buffer *b, const rig_edge_alloc *mem,
                           struct rig__borrow *x) {
  if (rig_device_runs_on_host(d) || !mem->host || !d->drv->map) {
    x->map = *mem; /* addressed as it is, or a peer's, mapped at open */
    return RIG_OK;
  }
  rig_edge_error err = {0};
  int r = RIG__DRIVER(d->drv->map(d->h, mem->host, b->alloc->bytes, &x->map, &err));
  if (r == RIG_EDGE_NO_ROOM) {
    if (rig__reclaim_mappings() == RIG_INTERRUPTED)   /* RECLAIM-60, 61 */
      return rig__fail(RIG_INTERRUPTED, d, b->alloc->bytes, "%s: reclamation interrupted",
                       d->name);
    r = RIG__DRIVER(d->drv->map(d->h, mem->host, b->alloc->bytes, &x->map, &err));
  }
  if (r == RIG_EDGE_NO_ROOM)
    return rig__fail(RIG_OUT_OF_MEMORY, d, b->alloc->bytes,
                     "%s: no room to map %llu bytes: %s", d->name,
                     (unsigned long long)b->alloc->bytes, err.message); /* RECLAIM-79 */
  if (r != RIG_EDGE_OK) {
    rig__lose_for(d, r, err.message);                         /* ERR-23 */
    return rig__lost_error(d);
  }
  x->mapped = true;
  atomic_fetch_add(&d->waits.borrow_mappings, 1);
  return RIG_OK;
}

RIG_API rig_status rig_buffer_borrow(rig_device *d, rig_buffer *b, rig_buffer **out) {
  rig_point need[2 * RIG__STAMPS + 1];
  rig_status st = rig__may_lock("rig_buffer_borrow");
  if (st || (st = rig__buffer_usable(b, "rig_buffer_borrow")))
    return st;
  if (!d || !out)
    return rig__fail(RIG_INVALID, d, 0, "rig_buffer_borrow: %s is NULL", d ? "out" : "device");
  if (rig__is_lost(d)) {
    rig__move_collected(d); /* its mappings, once it stopped (STOP-4) */
    return rig__lost_error(d);                                /* LMEM-9 */
  }
  if ((st = may_borrow(d, b)))
    return st;
  if (rig__stamps_needed(b->alloc, true, need, 2 * RIG__STAMPS + 1) < 0)
    return RIG_LOST;                                          /* LMEM-5 */
  rig__move_collected(d);
  struct rig__borrow *x = calloc(1, sizeof *x);
  if (!x)
    return rig__fail(RIG_OUT_OF_MEMORY, d, sizeof *x, "rig_buffer_borrow: out of memory");
  if ((st = map_on(d, b, x))) {
    free(x);
    return st;
  }
  x->dev = rig_device_retain(d);
  atomic_store(&x->refs, 1);
  if (x->mapped && b->alloc->adopted && b->alloc->dev->is_host) {
    x->pinned = b->alloc;
    atomic_fetch_add(&b->alloc->maps, 1);
  }
  /* Pages of a file open read-only admit only reads (docs/io.md). */
  bool read_only = b->alloc->dev->io_flags & RIG_IO_READ_ONLY;
  rig_buffer *v = rig__buffer_new(b->alloc, d, b->offset, b->length,
                                  read_only ? RIG_READ : b->access);
  if (!v) {
    rig__borrow_drop(x); /* the mapping goes back at the next move */
    return rig__fail(RIG_OUT_OF_MEMORY, d, 0, "rig_buffer_borrow: out of memory");
  }
  v->borrow = x;
  v->mem = &x->map;
  atomic_fetch_add(&b->alloc->refs, 1);
  *out = v;
  return RIG_OK;
}

void rig__borrow_retain(rig__borrow *x) { atomic_fetch_add(&x->refs, 1); }

/* The last buffer over a mapping is gone: it goes back once its device
 * has run the work submitted until now (STAMP-17). Only queues. */
void rig__borrow_drop(rig__borrow *x) {
  if (atomic_fetch_sub(&x->refs, 1) > 1)
    return;
  rig_device *d = x->dev;
  x->until = rig_point_make(d->slot, atomic_load(&d->tl.submitted));
  rig__borrow *head = atomic_load(&d->mem.borrows);
  do
    x->next = head;
  while (!atomic_compare_exchange_weak(&d->mem.borrows, &head, x));
}

void rig__borrows_release(rig_device *d, bool all) {
  if (!atomic_load_explicit(&d->mem.borrows, memory_order_relaxed))
    return; /* as rig__keep_release: a load, not a locked exchange */
  rig__borrow *list = atomic_exchange(&d->mem.borrows, NULL), *keep = NULL;
  while (list) {
    rig__borrow *x = list;
    list = list->next;
    if (!all && !rig__is_stopped(d) && !rig__point_reached(x->until, false)) {
      x->next = keep;
      keep = x;
      continue;
    }
    rig_edge_error err = {0};
    if (x->mapped && d->drv->unmap && !rig__is_stopped(d) && !d->life.forked)
      (void)RIG__DRIVER(d->drv->unmap(d->h, &x->map, &err));
    if (x->mapped)
      atomic_fetch_sub(&d->waits.borrow_mappings, 1);
    if (x->pinned)
      atomic_fetch_sub(&x->pinned->maps, 1);
    unpages(x);
    rig_device_release(x->dev);
    free(x);
  }
  while (keep) { /* back on the list for a later call */
    rig__borrow *x = keep;
    keep = keep->next;
    rig__borrow *head = atomic_load(&d->mem.borrows);
    do
      x->next = head;
    while (!atomic_compare_exchange_weak(&d->mem.borrows, &head, x));
  }
}

void rig__borrows_release_everywhere(void) {
  rig_device *list[64];
  size_t n = rig__devices_retain(list, 64); /* as rig__reclaim_mappings */
  rig__borrows_release(rig__host_device(), false);
  for (size_t i = 0; i < n; i++) {
    rig__borrows_release(list[i], false);
    rig_device_release(list[i]);
  }
}

/* The memory record r's work uses for b, or NULL where r's work does not
 * address b's memory as it is. A borrow's mapping was made for its own
 * device and lives until that device passes its work (STAMP-17), so it is
 * only ever handed to that device's driver; every other device that runs
 * work over b gets the allocation's own record: its owner, a peer of the
 * owner (MACH-17), or a device that runs on the host and so reads only the
 * record's host address. An io allocation has no host address; its pages,
 * which a borrow maps, serve a device that runs on the host only where its
 * work is done before submit returns, while the caller's borrow holds them. */
const rig_edge_alloc *rig__mem_for(const rig_device *r, const rig_buffer *b) {
  const rig_device *m = b->alloc->dev;
  if (r == b->dev)
    return b->mem;
  if (r == m || (r->drv == m->drv && r->drv->peer && r->drv->peer(r->h, m->h)))
    return &b->alloc->mem;
  if (!rig__runs_on_host(r))
    return NULL;
  if (b->alloc->mem.host)
    return &b->alloc->mem;
  if (b->borrow && b->borrow->pages && (r->facts.flags & RIG_EDGE_SYNCHRONOUS))
    return &b->borrow->pages_mem;
  return NULL;
}

void *rig__host_bytes(const rig_buffer *b) {
  if (b->alloc->mem.host)
    return (unsigned char *)b->alloc->mem.host + b->offset;
  if (b->borrow && b->borrow->pages)
    return (unsigned char *)b->borrow->pages + b->offset;
  return NULL;
}
