/* SPDX-License-Identifier: MIT */
/* profile.c: profiles (docs/profiling.md): the switch, each device's
 * ring, the labels parts are named by, and the take.
 *
 * Recording costs a submit no lock and no allocation: the switch is one
 * atomic, and a device's ring is made where profiling is switched on:
 * rig_profile_start makes one for each open device, an open while the
 * switch is on for its device, the host's making for the host (each
 * under that device's submit lock, as the edge ABI 1.6 asks), and hands
 * it to the driver, which then writes records into it lock-free
 * (edge/src/profile_ring.h). A submit makes one only where no arm came
 * first: a start inside a callback, which may not lock. Only
 * rig_profile_take locks among the readers: it drains every ring under
 * the profiles' lock, the ring's one reader.
 *
 * A ring lives for one occupancy of a device record: made for the device
 * that submitted, retired when the record's driver handle is destroyed
 * (no driver writes after its destroy), and freed by the next take once
 * drained. The list of rings grows at its head by a compare-exchange and
 * only the take unlinks, so a submit never waits for a take.
 *
 * Labels name the parts: a function's name, interned once when it is
 * resolved (image.c), so that a record holds a number, not a pointer into
 * an image that may be gone by the take. The table only grows, by names
 * distinct in the process, and its strings live for the process.
 */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_ring.h"

_Atomic bool rig__profiling;
static _Atomic size_t ring_records = RIG_PROFILE_RECORDS;

/* One ring of one device occupancy, on the list the take walks. */
typedef struct rig__prof {
  _Atomic(struct rig__prof *) next;
  rig_edge_profile *ring;
  char *name;              /* the device's, copied: the record may be reused */
  uint32_t slot;
  _Atomic bool retired;    /* the driver's destroy returned: no more writes */
} rig__prof;

static _Atomic(rig__prof *) rings;
/* The take's: the rings' one reader, and their unlinking. A leaf but for
 * the labels' lock, which it takes inside. */
static pthread_mutex_t take_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- labels -------------------------------------------------------------- */

static pthread_mutex_t labels_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static char **labels;
static uint32_t nlabels, caplabels;

uint32_t rig__profile_label(const char *name) {
  uint32_t id = 0;
  pthread_mutex_lock(&labels_lock);
  for (uint32_t i = 0; i < nlabels && !id; i++)
    if (strcmp(labels[i], name) == 0)
      id = i + 1;
  if (!id && nlabels == caplabels) {
    uint32_t cap = caplabels ? 2 * caplabels : 64;
    char **a = realloc(labels, cap * sizeof *a);
    if (a) {
      labels = a;
      caplabels = cap;
    }
  }
  if (!id && nlabels < caplabels && (labels[nlabels] = strdup(name)))
    id = ++nlabels;
  pthread_mutex_unlock(&labels_lock);
  return id; /* 0 without memory: the part is named by its kind */
}

static const char *kind_name(uint32_t kind) {
  static const char *const names[] = {"copy", "fill", "launch", "words"};
  return kind < sizeof names / sizeof names[0] ? names[kind] : "work";
}

/* A record's name: its label's, else its kind's. labels_lock held. */
static const char *name_of(const rig_edge_span *s) {
  return s->label && s->label <= nlabels ? labels[s->label - 1] : kind_name(s->kind);
}

/* ---- the switch and the rings ------------------------------------------- */

/* Every open device's ring, made now: the host's where it was made (the
 * RIG_PROFILE constructor starts before), and each device's of the
 * registry. One opened meanwhile arms itself (open.c). */
static void arm_open_devices(void) {
  if (rig__host_made())
    rig__profile_arm(rig__host_device());
  size_t n = 0;
  rig_device **list = rig__devices_all(&n);
  for (size_t i = 0; i < n; i++) {
    rig__profile_arm(list[i]);
    rig_device_release(list[i]);
  }
  free(list);
}

RIG_API void rig_profile_start(size_t n) {
  size_t cells = 64;
  if (!n)
    n = RIG_PROFILE_RECORDS;
  while (cells < n && cells < ((size_t)1 << 30))
    cells *= 2;
  atomic_store(&ring_records, cells);
  atomic_store(&rig__profiling, true);
  if (!rig__inside_lock()) /* else each submit that finds no ring makes it */
    arm_open_devices();
}

RIG_API void rig_profile_stop(void) { atomic_store(&rig__profiling, false); }

RIG_API bool rig_profile_active(void) { return atomic_load(&rig__profiling); }

static rig__prof *prof_make(const rig_device *d) {
  size_t cells = atomic_load(&ring_records);
  rig__prof *p = calloc(1, sizeof *p);
  rig_edge_profile *r = p ? malloc(sizeof *r + cells * sizeof r->cells[0]) : NULL;
  char *name = r ? strdup(d->name) : NULL;
  if (!name) {
    free(r);
    free(p);
    return NULL;
  }
  r->on = &rig__profiling;
  r->mask = cells - 1;
  atomic_init(&r->head, 0);
  atomic_init(&r->dropped, 0);
  atomic_init(&r->clock_error_ns, 0);
  r->tail = 0;
  for (size_t i = 0; i < cells; i++)
    atomic_init(&r->cells[i].seq, i);
  p->ring = r;
  p->name = name;
  p->slot = d->slot;
  return p;
}

static void prof_free(rig__prof *p) {
  free(p->ring);
  free(p->name);
  free(p);
}

/* A driver of ABI 1.6 or later with a profile entry times work. */
static bool times_work(const rig_device *d) {
  const rig_edge_driver *t = d->drv;
  return t->size >= offsetof(rig_edge_driver, profile) + sizeof t->profile && t->profile;
}

/* d's ring, handed to its driver: at its arm, or at its first submit
 * while profiling where none came first. d's submit lock held. A driver that times no work, or no memory for the
 * ring, leaves d untimed for this occupancy (the profile says nothing
 * of it, as of a memory device). */
void rig__profile_ready(rig_device *d) {
  d->profile.asked = true;
  if (!times_work(d))
    return;
  rig__prof *p = prof_make(d);
  if (!p)
    return;
  rig_edge_error err;
  rig__edge_error_clear(&err);
  if (RIG__DRIVER_OF(d, d->drv->profile(d->h, p->ring, &err)) != RIG_EDGE_OK) {
    prof_free(p);
    return;
  }
  d->profile.node = p;
  rig__prof *head = atomic_load(&rings);
  do
    atomic_store_explicit(&p->next, head, memory_order_relaxed);
  while (!atomic_compare_exchange_weak(&rings, &head, p));
}

void rig__profile_arm(rig_device *d) {
  rig__lock(&d->locks.submit);
  /* A lost device's driver takes no new call; a child of fork never calls
   * its parent's (STOP-20). */
  if (!d->profile.asked && !rig__is_lost(d) && !d->life.forked)
    rig__profile_ready(d);
  rig__unlock(&d->locks.submit);
}

/* d's driver handle is gone (device.c): its ring takes no more records. */
void rig__profile_retire(rig_device *d) {
  if (d->profile.node)
    atomic_store_explicit(&d->profile.node->retired, true, memory_order_release);
  d->profile.node = NULL;
}

void rig__profile_fork(rig__fork_phase ph) {
  rig__fork_mutex(&take_lock, ph);
  rig__fork_mutex(&labels_lock, ph);
}

/* ---- the take -------------------------------------------------------------- */

/* The index of the device named name in p, added where new; UINT32_MAX
 * without memory. */
static uint32_t device_index(rig_profile *p, const char *name) {
  for (uint32_t i = 0; i < p->ndevices; i++)
    if (strcmp(p->devices[i], name) == 0)
      return i;
  char **a = realloc(p->devices, (p->ndevices + 1) * sizeof *a);
  if (!a)
    return UINT32_MAX;
  p->devices = a;
  uint64_t *e = realloc(p->clock_error, (p->ndevices + 1) * sizeof *e);
  if (!e)
    return UINT32_MAX;
  p->clock_error = e;
  e[p->ndevices] = 0;
  if (!(a[p->ndevices] = strdup(name)))
    return UINT32_MAX;
  return p->ndevices++;
}

/* Room for one more record in p; false without memory. */
static bool room_for_one(rig_profile *p, size_t *cap) {
  if (p->n < *cap)
    return true;
  size_t c = *cap ? 2 * *cap : 1024;
  rig_profile_record *a = realloc(p->records, c * sizeof *a);
  if (!a)
    return false;
  p->records = a;
  *cap = c;
  return true;
}

/* Moves f's records into p; false without memory (the records not yet
 * taken from the ring stay there). take_lock and labels_lock held. */
static bool drain(rig_profile *p, size_t *cap, rig__prof *f) {
  p->dropped += atomic_exchange_explicit(&f->ring->dropped, 0, memory_order_relaxed);
  uint32_t dev = UINT32_MAX;
  rig_edge_span s;
  for (;;) {
    if (!room_for_one(p, cap))
      return false;
    if (!rig__ring_take(f->ring, &s))
      return true;
    if (dev == UINT32_MAX && (dev = device_index(p, f->name)) == UINT32_MAX)
      return false;
    uint64_t e = atomic_load_explicit(&f->ring->clock_error_ns, memory_order_relaxed);
    p->clock_error[dev] = e > p->clock_error[dev] ? e : p->clock_error[dev];
    p->records[p->n++] = (rig_profile_record){
        .device = dev, .queue = s.queue, .kind = (rig_part_kind)s.kind, .part = s.part,
        .name = name_of(&s), .point = rig_point_make(f->slot, s.value),
        .start_ns = s.start_ns, .end_ns = s.end_ns < s.start_ns ? s.start_ns : s.end_ns};
  }
}

/* Drains every ring; a ring retired before its drain began is empty
 * after it, for good, and goes. take_lock held. */
static bool drain_all(rig_profile *p) {
  size_t cap = 0;
  bool ok = true;
  pthread_mutex_lock(&labels_lock);
  _Atomic(rig__prof *) *link = &rings;
  for (rig__prof *f = atomic_load(link); f && ok; f = atomic_load(link)) {
    bool retired = atomic_load_explicit(&f->retired, memory_order_acquire);
    ok = drain(p, &cap, f);
    rig__prof *next = atomic_load(&f->next);
    rig__prof *expected = f;
    /* Only the take unlinks; a submit only pushes at the head, which a
     * compare-exchange tells apart. */
    if (ok && retired &&
        (link != &rings ? (atomic_store(link, next), true)
                        : atomic_compare_exchange_strong(link, &expected, next))) {
      prof_free(f);
      continue;
    }
    link = &f->next;
  }
  pthread_mutex_unlock(&labels_lock);
  return ok;
}

static int by_start(const void *a, const void *b) {
  const rig_profile_record *x = a, *y = b;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  return x->point < y->point ? -1 : x->point > y->point ? 1 : (int)x->part - (int)y->part;
}

RIG_API rig_status rig_profile_take(rig_profile **out) {
  rig_status st = rig__may_lock("rig_profile_take");
  if (st)
    return st;
  if (!out)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_profile_take: out is NULL");
  rig_profile *p = calloc(1, sizeof *p);
  if (!p)
    return rig__fail(RIG_OUT_OF_MEMORY, NULL, sizeof *p, "rig_profile_take: no memory");
  rig__lock(&take_lock);
  bool ok = drain_all(p);
  rig__unlock(&take_lock);
  if (!ok) {
    /* What was drained is lost with the profile: the rings' reader moved
     * past it. Rare (no memory), and said. */
    uint64_t n = p->n;
    rig_profile_free(p);
    return rig__fail(RIG_OUT_OF_MEMORY, NULL, n * sizeof(rig_profile_record),
                     "rig_profile_take: no memory for %llu records", (unsigned long long)n);
  }
  if (p->n > 1) /* qsort takes no NULL array, which an empty profile has */
    qsort(p->records, p->n, sizeof *p->records, by_start);
  *out = p;
  return RIG_OK;
}

RIG_API const rig_profile_record *rig_profile_records(const rig_profile *p, size_t *n) {
  if (n)
    *n = p ? p->n : 0;
  return p ? p->records : NULL;
}

RIG_API uint32_t rig_profile_devices(const rig_profile *p) { return p ? p->ndevices : 0; }

RIG_API const char *rig_profile_device(const rig_profile *p, uint32_t i) {
  return p && i < p->ndevices ? p->devices[i] : NULL;
}

RIG_API uint64_t rig_profile_dropped(const rig_profile *p) { return p ? p->dropped : 0; }

RIG_API uint64_t rig_profile_clock_error(const rig_profile *p, uint32_t i) {
  return p && i < p->ndevices ? p->clock_error[i] : 0;
}

RIG_API void rig_profile_free(rig_profile *p) {
  if (!p)
    return;
  for (uint32_t i = 0; i < p->ndevices; i++)
    free(p->devices[i]);
  free(p->devices);
  free(p->clock_error);
  free(p->records);
  free(p);
}
