/* SPDX-License-Identifier: MIT */
/* host.c: the host device "CPU" (DEV-3..5) and its built-in driver.
 *
 * The host is this process: its memory is the C library's, its work runs
 * before submit returns (DOM-6), and it is never closed or lost. It has a
 * timeline of its own, whose values rig_buffer_submit_copy and
 * rig_buffer_submit_fill take for the copies and fills the host makes
 * (TL-3), but its work adds no point to any stamp (ORDER-21).
 */
#include <stdlib.h>
#include <string.h>

#include <rig/link.h>

#include "device.h"


static volatile uint64_t *host_word;

static int host_open(const char *args, void **out, rig_edge_error *err) {
  (void)args;
  (void)err;
  *out = (void *)&host_word;
  return RIG_EDGE_OK;
}

static int host_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  (void)h;
  (void)err;
  rig_edge_host_arch(f->arch, sizeof f->arch);                  /* PROP-13 */
  f->alignment = 16;                                            /* PROP-29 */
  f->cache_bytes = rig_edge_host_cache_bytes();                 /* PROP-36 */
  f->budget = INT64_MAX;                                        /* RECLAIM-65 */
  f->flags = RIG_EDGE_RUNS_ON_HOST | RIG_EDGE_HOST_ADDRESSES | RIG_EDGE_MAPS_HOST |
             RIG_EDGE_COMPUTES | RIG_EDGE_SYNCHRONOUS;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = 0;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
  f->type = RIG_EDGE_TYPE_CPU;
  return RIG_EDGE_OK;
}

static int host_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  (void)h;
  (void)err;
  host_word = word;
  return RIG_EDGE_OK;
}

/* PROP-30: 16 bytes below 128, 128 bytes up to 64 KiB, a page above, so
 * that large buffers map on devices that map only whole pages. */
static size_t host_alignment(uint64_t n) {
  return n < 128 ? 16 : n < 65536 ? 128 : RIG__PAGE;
}

static int host_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                         rig_edge_error *err) {
  (void)h;
  void *p = NULL;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "the host has only its own memory");
  /* Pages of a new buffer are not touched: they fault in at their first
   * write (RECLAIM-50). */
  if (posix_memalign(&p, host_alignment(bytes), bytes ? bytes : 1) != 0)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "the C library has no %llu bytes",
                         (unsigned long long)bytes);
  out->handle = p;
  out->host = p;
  out->address = (uint64_t)(uintptr_t)p;
  /* RECLAIM-27: whole words, and up to 112 more where it starts on 128. */
  out->bytes = bytes + (host_alignment(bytes) == 128 ? 112 : 0);
  return RIG_EDGE_OK;
}

static int host_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  (void)h;
  (void)err;
  free(a->handle);
  return RIG_EDGE_OK;
}

/* A launch on the submitting thread and the pool (LAUNCH-1, LAUNCH-3):
 * the threads of a group are numbered x fastest, then the groups
 * (LAUNCH-6); core checked the axes and the total (LAUNCH-13, 14). */
static uint64_t launch_groups(const rig_edge_part *p) {
  return p->u.launch.groups[0] * p->u.launch.groups[1] * p->u.launch.groups[2];
}

static void host_launch(const rig_edge_part *p) {
  uint64_t per = p->u.launch.threads[0] * p->u.launch.threads[1] * p->u.launch.threads[2];
  rig__pool_launch(p->u.launch.function, p->u.launch.params, launch_groups(p), per);
}

bool rig__host_work_spreads(const rig_edge_work *w) {
  for (uint32_t i = 0; i < w->nparts; i++)
    if (w->parts[i].kind == RIG_EDGE_PART_LAUNCH && rig__pool_spreads(launch_groups(&w->parts[i])))
      return true;
  return false;
}

static int host_run_part(const rig_edge_part *p, rig_edge_error *err) {
  if (p->kind == RIG_EDGE_PART_LAUNCH) {
    host_launch(p);
    return RIG_EDGE_OK;
  }
  return rig_edge_run_on_host(p, err);
}

/* The ring of the host's profile (edge ABI 1.6), once a submit handed it. */
static rig_edge_profile *_Atomic host_ring;

static int host_profile(void *h, rig_edge_profile *ring, rig_edge_error *err) {
  (void)h;
  (void)err;
  atomic_store(&host_ring, ring);
  return RIG_EDGE_OK;
}

/* The work, each part timed by the clock (LAUNCH-1: it runs on this
 * thread and the pool, and ends before its part returns). */
static int host_submit_timed(rig_edge_profile *ring, const rig_edge_work *w,
                             rig_edge_error *err) {
  for (uint32_t i = 0; i < w->nparts; i++) {
    rig_edge_span s = {.value = w->value, .part = i, .kind = w->parts[i].kind,
                       .queue = w->parts[i].queue, .label = rig_edge_work_label(w, i)};
    s.start_ns = rig_edge_now_ns();
    int r = host_run_part(&w->parts[i], err);
    s.end_ns = rig_edge_now_ns();
    if (r != RIG_EDGE_OK)
      return r;
    rig_edge_profile_record(ring, &s);
  }
  rig_edge_word_store(host_word, w->value);
  return RIG_EDGE_OK;
}

static int host_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  (void)h;
  rig_edge_profile *ring = atomic_load_explicit(&host_ring, memory_order_relaxed);
  if (__builtin_expect(ring != NULL, 0) && rig_edge_profile_on(ring))
    return host_submit_timed(ring, w, err);
  for (uint32_t i = 0; i < w->nparts; i++) {
    int r = host_run_part(&w->parts[i], err);
    if (r != RIG_EDGE_OK)
      return r;
  }
  rig_edge_word_store(host_word, w->value);
  return RIG_EDGE_OK;
}

/* Image.load on host: the linker's one-time link (HOST-2, Linking). Its
 * refusal is the text's Error, with the linker's message. */
static int host_load(void *h, const void *bytes, size_t n, void **out, uint64_t *code,
                     rig_edge_error *err) {
  char why[RIG_LINK_ERROR_BYTES];
  rig_link_image *im = NULL;
  rig_link_status st = rig_link_load(bytes, n, NULL, &im, why, sizeof why);
  if (st == RIG_LINK_NO_MEMORY)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s", why);
  if (st != RIG_LINK_OK)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s", why);
  *out = im;
  *code = rig_link_code_bytes(im);
  return RIG_EDGE_OK;
}

/* The named symbols of the image's executable sections (HOST-3). */
static int host_resolve(void *h, void *image, const char *name, void **out, rig_edge_error *err) {
  *out = rig_link_resolve(image, name);
  return RIG_EDGE_OK;
}

static int host_unload(void *h, void *image, rig_edge_error *err) {
  rig_link_free(image);
  return RIG_EDGE_OK;
}

static const rig_edge_driver host_driver = {
    RIG_EDGE_DRIVER_INIT("host"),
    .open = host_open,
    .facts = host_facts,
    .bind_word = host_bind_word,
    .submit = host_submit,
    .allocate = host_allocate,
    .release = host_release,
    .load = host_load,
    .resolve = host_resolve,
    .unload = host_unload,
    .profile = host_profile,
};

const rig_edge_driver *rig__host_driver(void) { return &host_driver; }

static rig_device host;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static atomic_bool host_ready; /* host_init has run */

/* The host takes slot 1 before any other device (OPEN-16). */
static void host_init(void) {
  host.is_host = true;
  host.own_code = true;
  host.name = "CPU";                                          /* DEV-3 */
  host.drv = &host_driver;
  atomic_store(&host.mem.mag_ok, true);
  atomic_store(&host.refs, 1);
  pthread_mutex_init(&host.locks.submit, NULL);
  pthread_mutex_init(&host.locks.mem, NULL);
  pthread_mutex_init(&host.locks.hang, NULL);
  rig_edge_error err = {0};
  host_driver.open("", &host.h, &err);
  host.facts.size = sizeof host.facts;
  host_driver.facts(host.h, &host.facts, &err);
  host.iset = strncmp(host.facts.arch, "arm64", 5) == 0 ? "arm64" : "x86_64";
  atomic_store(&host.mem.budget, host.facts.budget);
  rig__slot_take_first(&host);
  rig__fork_handlers();                                       /* STOP-18 */
  host_driver.bind_word(host.h, &host.tl.word, &err);
  atomic_store(&host_ready, true);
  if (atomic_load(&rig__profiling)) /* a start before the host was made */
    rig__profile_arm(&host);
}

bool rig__host_made(void) { return atomic_load(&host_ready); }

rig_device *rig__host_device(void) {
  pthread_once(&host_once, host_init);
  return &host;
}

RIG_API rig_device *rig_device_host(void) { return rig__host_device(); }
