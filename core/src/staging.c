/* SPDX-License-Identifier: MIT */
/* staging.c: staging memory, through which bytes pass between host memory
 * and a device's memory that the host does not address (HACC-6, HACC-7,
 * STAMP-1; the design is docs/copying.md).
 *
 * Staging memory is host memory, page-aligned, that the device maps with
 * its driver's map: the host moves bytes between it and host memory, and
 * the device's copy engine between it and the device's memory. It counts
 * in the host's budget, as Pinned memory does (RECLAIM-26). Each device
 * keeps what it staged through, for the next copy; a staging region is
 * held by its copy until that copy's point is reached, and returns to the
 * host at free_cache, set_budget and from the second round of reclamation
 * (RECLAIM-10, RECLAIM-55, RECLAIM-72).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define HELD UINT64_MAX /* busy: a copy fills or drains it now */

struct rig__staging {
  void *host;
  uint64_t bytes;
  rig_edge_alloc map;         /* the device's mapping of host */
  rig_point busy;             /* free once reached; HELD while a copy holds it */
  struct rig__staging *next;
};

static bool idle(const rig__staging *s) {
  return s->busy != HELD && (s->busy == 0 || rig__point_reached(s->busy, false));
}

/* Returns g's idle staging to the host; all: every region, at g's stop.
 * mem_lock held. */
static void release_locked(rig_device *g, bool all) {
  rig_device *host = rig__host_device();
  for (rig__staging **p = &g->mem.staging; *p;) {
    rig__staging *s = *p;
    if (!(all ? s->busy != HELD : idle(s))) {
      p = &s->next;
      continue;
    }
    *p = s->next;
    rig_edge_error err = {0};
    if (g->drv->unmap && !rig__is_stopped(g) && !g->life.forked)
      (void)RIG__DRIVER(g->drv->unmap(g->h, &s->map, &err));
    free(s->host);
    atomic_fetch_sub(&host->mem.allocated, s->bytes);
    free(s);
  }
}

void rig__staging_release(rig_device *g, bool all) {
  rig__lock(&g->locks.mem);
  release_locked(g, all);
  rig__unlock(&g->locks.mem);
}

/* A new region of n bytes mapped on g, or NULL with the error set: the
 * mapping refused once returns g's idle staging and asks again
 * (RECLAIM-60..63). */
static rig__staging *make(rig_device *g, uint64_t n) {
  rig__staging *s = calloc(1, sizeof *s);
  uint64_t bytes = (n + RIG__PAGE - 1) / RIG__PAGE * RIG__PAGE;
  if (!s || posix_memalign(&s->host, RIG__PAGE, bytes ? bytes : RIG__PAGE) != 0) {
    free(s);
    rig__fail(RIG_OUT_OF_MEMORY, g, n, "%s: no host memory for %llu bytes of staging", g->name,
              (unsigned long long)n);
    return NULL;
  }
  s->bytes = bytes;
  rig_edge_error err = {0};
  int r = g->drv->map ? RIG__DRIVER(g->drv->map(g->h, s->host, bytes, &s->map, &err))
                      : RIG_EDGE_UNSUPPORTED;
  if (r == RIG_EDGE_NO_ROOM && rig__reclaim_mappings() == RIG_INTERRUPTED) { /* RECLAIM-60, 61 */
    free(s->host);
    free(s);
    rig__fail(RIG_INTERRUPTED, g, n, "%s: reclamation interrupted", g->name);
    return NULL;
  }
  if (r == RIG_EDGE_NO_ROOM)
    r = RIG__DRIVER(g->drv->map(g->h, s->host, bytes, &s->map, &err));
  if (r != RIG_EDGE_OK) {
    free(s->host);
    free(s);
    if (r == RIG_EDGE_FAULT || r == RIG_EDGE_HALF) { /* a mapping half made (ERR-23, LOSS-4) */
      rig__lose_for(g, r, err.message);
      rig__lost_error(g);
      return NULL;
    }
    rig__fail(r == RIG_EDGE_NO_ROOM ? RIG_OUT_OF_MEMORY : RIG_INVALID, g, n,
              "%s: cannot map %llu bytes of staging: %s", g->name, (unsigned long long)n,
              err.message);                         /* RECLAIM-63 */
    return NULL;
  }
  atomic_fetch_add(&rig__host_device()->mem.allocated, bytes);
  return s;
}

rig__staging *rig__staging_take(rig_device *g, uint64_t n) {
  rig__staging *best = NULL;
  rig__lock(&g->locks.mem);
  for (rig__staging *s = g->mem.staging; s; s = s->next)
    if (s->bytes >= n && idle(s) && (!best || s->bytes < best->bytes))
      best = s;
  if (best)
    best->busy = HELD;
  rig__unlock(&g->locks.mem);
  if (best || !(best = make(g, n)))
    return best;
  best->busy = HELD;
  rig__lock(&g->locks.mem);
  best->next = g->mem.staging;
  g->mem.staging = best;
  rig__unlock(&g->locks.mem);
  return best;
}

void rig__staging_put(rig_device *g, rig__staging *s, rig_point until) {
  rig__lock(&g->locks.mem);
  s->busy = until;
  rig__unlock(&g->locks.mem);
}

void *rig__staging_host(rig__staging *s) { return s->host; }
const rig_edge_alloc *rig__staging_map(rig__staging *s) { return &s->map; }
