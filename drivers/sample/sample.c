/* SPDX-License-Identifier: MIT */
/* sample.c: the sample driver, librig-driver-sample.so, where a new driver
 * starts (docs/writing-a-driver.md walks through it entry by entry).
 *
 * It models an asynchronous GPU with host memory underneath: two queues,
 * fills on queue 0 (a compute queue) and copies on queue 1 (a copy engine),
 * each run by a worker thread of its own, so that work completes after
 * submit returns, as a GPU's does. Everything a real driver would ask of
 * its vendor library (memory, queues, a fence or semaphore) is done here
 * with libc and pthreads, in the same shape: replace each body, keep the
 * contract its comment states. It includes <rig/edge.h> only; core owns
 * every meaning (values, order, budgets, loss), the driver only executes.
 *
 * Opened as "sample:N[,budget=BYTES]", N the model device's index 0..3.
 * k (commit): 8. Per open: one record of about 28 KiB (its rings) and two
 * threads, freed at destroy. Not installed: the suite finds it through
 * RIG_DRIVER_PATH.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/edge.h>

#define DEVICES 4      /* model devices: "sample:0".."sample:3" */
#define QUEUES 2       /* queue 0 fills, queue 1 copies */
#define RING 64        /* pieces of work the queues hold */
#define RING_PARTS 256 /* their parts */
#define RING_WAITS 64  /* their waits on other devices' words */
#define K 8            /* submit commits itself once K values wait (TL-10) */
#define ALIGN 256      /* every allocation starts on it (PROP-28) */

/* A piece of work, one per value: its parts and waits in the rings. The
 * ring positions only grow; % RING_* finds the slot. */
typedef struct piece {
  uint64_t value, part0, wait0;
  uint32_t nparts, nwaits;
} piece;

typedef struct sample sample;
struct worker_arg { sample *s; uint32_t q; };

struct sample {
  volatile uint64_t *word; /* core's timeline word (bind_word) */
  uint64_t budget;
  pthread_mutex_t lock;    /* everything below; never held while work runs */
  pthread_cond_t more;     /* work, a finished part, a stop */
  pthread_t workers[QUEUES];
  struct worker_arg args[QUEUES];
  bool running, stopping;
  char fault[RIG_EDGE_MESSAGE_BYTES]; /* a queue's fault, "" while none */
  uint64_t committed;      /* the queues run values up to it (TL-8) */
  uint64_t taken;          /* the last value submit took */
  uint64_t head;           /* pieces [oldest, head) are held */
  uint64_t next[QUEUES];   /* per queue, the piece it runs next */
  uint64_t part_head, wait_head;
  piece ring[RING];
  rig_edge_part parts[RING_PARTS];
  uint32_t labels[RING_PARTS]; /* what a profile names each part by */
  rig_edge_profile *_Atomic profile; /* core's ring, once handed (ABI 1.6) */
  rig_edge_wait waits[RING_WAITS];
  bool done[RING_PARTS];   /* parts finished, for follows */
};

/* The oldest piece some queue has not finished: pieces before it are done
 * on every queue and their ring slots free. */
static uint64_t oldest(const sample *s) {
  return s->next[0] < s->next[1] ? s->next[0] : s->next[1];
}

static bool stopping(sample *s) { return __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE); }

/* A queue may start piece i once it is committed (TL-8: uncommitted work
 * never runs) and every lower value's work is done on every queue
 * (ORDER-2: value v's work follows all lower values' work, across all
 * queues), unless a queue faulted. */
static bool startable(const sample *s, uint64_t i) {
  return i < s->head && s->ring[i % RING].value <= s->committed && oldest(s) == i &&
         !s->fault[0];
}

/* The queue's waits (SUBMIT-2: the queue, not the host, waits for another
 * device's word to hold a value), in slices so that a stop ends a wait
 * for a word that never comes. Runs without the lock. */
static bool wait_words(sample *s, const piece *pc) {
  for (uint32_t i = 0; i < pc->nwaits; i++) {
    const rig_edge_wait *w = &s->waits[(pc->wait0 + i) % RING_WAITS];
    while (rig_edge_word_wait(w->mapping, w->value, 100) != RIG_EDGE_OK)
      if (stopping(s))
        return false;
  }
  return true;
}

/* Whether the parts p follows on the other queue are done (ORDER-3: of two
 * parts that may share memory, one writing, the later follows the
 * earlier; core computed follows, the driver only honours it). */
static bool followed(const sample *s, const piece *pc, const rig_edge_part *p) {
  for (uint32_t q = 0; q < QUEUES; q++)
    if (q != p->queue && p->follows[q] && !s->done[(pc->part0 + p->follows[q] - 1) % RING_PARTS])
      return false;
  return true;
}

/* Runs queue q's parts of pc in order, each after the parts it follows.
 * Called and returns with the lock held; false: stopped or faulted. */
static bool run_share(sample *s, const piece *pc, uint32_t q) {
  for (uint32_t k = 0; k < pc->nparts; k++) {
    uint64_t at = (pc->part0 + k) % RING_PARTS;
    const rig_edge_part *p = &s->parts[at];
    if (p->queue != q)
      continue;
    while (!s->stopping && !followed(s, pc, p))
      pthread_cond_wait(&s->more, &s->lock);
    if (s->stopping)
      return false;
    pthread_mutex_unlock(&s->lock);
    rig_edge_error err = {0};
    rig_edge_span span = {.value = pc->value, .part = k, .kind = p->kind, .queue = q,
                          .label = s->labels[at], .start_ns = rig_edge_now_ns()};
    int r = rig_edge_run_on_host(p, &err); /* the model's "hardware" */
    span.end_ns = rig_edge_now_ns();
    /* A profile: the part's time by the host's clock, as a GPU driver
     * would read its timestamps once the part is done. */
    rig_edge_profile *ring = __atomic_load_n(&s->profile, __ATOMIC_ACQUIRE);
    if (r == RIG_EDGE_OK && rig_edge_profile_on(ring))
      rig_edge_profile_record(ring, &span);
    pthread_mutex_lock(&s->lock);
    if (r != RIG_EDGE_OK) { /* the queue dies; the next call reports it (LOSS-1) */
      snprintf(s->fault, sizeof s->fault, "sample: queue %u: %.200s", q, err.message);
      return false;
    }
    s->done[at] = true;
    pthread_cond_broadcast(&s->more);
  }
  return true;
}

/* Queue q's worker: takes pieces in order, runs its share of each; the
 * queue that finishes a piece last stores its value into the word. */
static void *worker(void *arg) {
  sample *s = ((struct worker_arg *)arg)->s;
  uint32_t q = ((struct worker_arg *)arg)->q;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    uint64_t i = s->next[q];
    while (!s->stopping && !startable(s, i))
      pthread_cond_wait(&s->more, &s->lock);
    if (s->stopping)
      break;
    piece pc = s->ring[i % RING];
    pthread_mutex_unlock(&s->lock);
    bool waited = wait_words(s, &pc);
    pthread_mutex_lock(&s->lock);
    if (!waited || !run_share(s, &pc, q))
      break;
    s->next[q]++;
    if (oldest(s) > i) /* release order: waiters see the work's writes (TL-20) */
      rig_edge_word_store(s->word, pc.value);
    pthread_cond_broadcast(&s->more);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* Ends the workers: a part under way finishes, the rest is dropped unrun.
 * A close waited for all work before its stop (OPEN-45); after a loss,
 * the work of later values may be run, partly run or not run (LOSS-16).
 * Joins them, so that once it returns no thread touches memory. */
static void end_workers(sample *s, uint32_t n) {
  pthread_mutex_lock(&s->lock);
  __atomic_store_n(&s->stopping, true, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&s->more);
  pthread_mutex_unlock(&s->lock);
  for (uint32_t q = 0; q < n; q++)
    pthread_join(s->workers[q], NULL);
}

/* Starts a worker per queue with every signal blocked (ERR-19: threads
 * rig makes never take a signal; the program's own threads do). */
static bool start_workers(sample *s) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  uint32_t q = 0;
  for (; q < QUEUES; q++) {
    s->args[q] = (struct worker_arg){s, q};
    if (pthread_create(&s->workers[q], NULL, worker, &s->args[q]) != 0)
      break;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (q < QUEUES)
    end_workers(s, q);
  return q == QUEUES;
}

/* open: "N[,budget=BYTES]", read with librig-edge's one parser so that it
 * refuses what every driver refuses (RIG_EDGE_UNSUPPORTED: the open is
 * RIG_INVALID); a device that does not exist is RIG_EDGE_UNAVAILABLE with
 * the reason, which the open returns unchanged (OPEN-32). */
static int sample_open(const char *args, void **out, rig_edge_error *err) {
  rig_edge_arg keys[] = {{.key = "budget", .type = RIG_EDGE_ARG_NUMBER, .min = 1,
                          .max = INT64_MAX, .value = UINT64_C(1) << 30}};
  size_t head = 0;
  uint64_t index = 0;
  int r = rig_edge_args_parse("sample", args, keys, 1, &head, err);
  if (r != RIG_EDGE_OK)
    return r;
  if (!rig_edge_args_number(args, head, 0, DEVICES - 1, &index))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "sample: no device '%.*s' (0..%u)",
                         (int)head, args, DEVICES - 1);
  sample *s = calloc(1, sizeof *s);
  if (!s)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "sample: out of memory");
  s->budget = keys[0].value;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->more, NULL);
  if (!start_workers(s)) {
    free(s);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "sample: no worker thread");
  }
  s->running = true;
  *out = s;
  return RIG_EDGE_OK;
}

/* facts: read once at open, then checked (OPEN-35: alignment a power of
 * two, arch non-empty for a device that computes, a queue for no part
 * kind beyond queues). */
static int sample_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  sample *s = h;
  strcpy(f->arch, "sample");   /* a real driver names its ISA: "sm_89" */
  f->alignment = ALIGN;
  f->budget = s->budget;       /* the device's budget starts there (RECLAIM-66) */
  f->cache_bytes = 0;          /* unknown */
  f->hang_ms = 60000;          /* its queue can die with no vendor timeout (HANG-1) */
  f->commit_k = K;
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_MAPS_HOST | RIG_EDGE_HOST_ADDRESSES |
             RIG_EDGE_QUEUE_WAITS;
  f->queues = QUEUES;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_COPY] = 1;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE; /* it loads no code */
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;  /* nor raw packets */
  f->type = RIG_EDGE_TYPE_GPU; /* what it models; a real driver states its device's */
  return RIG_EDGE_OK;
}

/* devices: what rig_device_list shows. A real driver asks its library how
 * many devices there are; the model has DEVICES. */
static int sample_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  (void)err;
  rig_edge_devices_numbered(names, cap, DEVICES, n);
  return RIG_EDGE_OK;
}

/* stop: ends what the device needs only to run work (PROP-6), once. A
 * device counts stopped once its stop returned and it reported the last
 * value it took (STOP-1): nothing runs any more, so it reports it now. The
 * word only grows: a slot's word starts past 0 when it held a device. */
static int sample_stop(void *h, rig_edge_error *err) {
  sample *s = h;
  if (s->running)
    end_workers(s, QUEUES);
  s->running = false;
  if (s->word && rig_edge_word_load(s->word) < s->taken)
    rig_edge_word_store(s->word, s->taken);
  return RIG_EDGE_OK;
}

/* destroy: frees the handle once every allocation is back. */
static void sample_destroy(void *h) {
  sample *s = h;
  if (s->running) /* never stopped: ends its threads all the same */
    end_workers(s, QUEUES);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->more);
  free(s);
}

/* bind_word: core's word in host memory, before any work comes. A device
 * whose timeline is a GPU counter states OWN_WORD and gives signaled(). */
static int sample_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  ((sample *)h)->word = word;
  return RIG_EDGE_OK;
}

/* wait: blocks up to timeout_ms; core calls it in slices of at most 100 ms
 * and checks its hang clock and wait hook between them. A GPU driver waits
 * on its fence here (ERR-11: signals may be unblocked only inside a wait). */
static int sample_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  return rig_edge_word_wait(((sample *)h)->word, value, timeout_ms);
}

/* map_word: another device's word, for the queue to wait on. It is host
 * memory, which this model's queue reads directly; a GPU would import the
 * page into its address space here and give the mapping back in unmap. */
static int sample_map_word(void *h, volatile uint64_t *word, void **out, rig_edge_error *err) {
  *out = (void *)word;
  return RIG_EDGE_OK;
}

static void sample_unmap_word(void *h, void *mapping) {}

/* Whether w's parts and waits fit beside the work held (lock held). */
static bool fits(const sample *s, const rig_edge_work *w) {
  uint64_t o = oldest(s);
  uint64_t part0 = o < s->head ? s->ring[o % RING].part0 : s->part_head;
  uint64_t wait0 = o < s->head ? s->ring[o % RING].wait0 : s->wait_head;
  return s->head - o < RING && s->part_head - part0 + w->nparts <= RING_PARTS &&
         s->wait_head - wait0 + w->nwaits <= RING_WAITS;
}

/* room: whether the work fits now. No: core waits for one more value and
 * asks again (SUBMIT-4); on an idle device, for work larger than the
 * rings, core asks grow, and without grow the submit is RIG_INVALID
 * (VALID-21: fixed queues may limit a submission's size). */
static int sample_room(void *h, const rig_edge_work *w, bool *out) {
  sample *s = h;
  pthread_mutex_lock(&s->lock);
  *out = fits(s, w);
  pthread_mutex_unlock(&s->lock);
  return RIG_EDGE_OK;
}

/* The queue's fault, or OK (lock held). */
static int fault(const sample *s, rig_edge_error *err) {
  return s->fault[0] ? rig_edge_fail(err, RIG_EDGE_FAULT, "%s", s->fault) : RIG_EDGE_OK;
}

/* submit: takes the work into the rings (core's arrays are gone once it
 * returns), allocating nothing on this hot path. Any failure loses the
 * device (SUBMIT-30). Core serialises submit and commit (DOM-5). */
static int sample_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  sample *s = h;
  pthread_mutex_lock(&s->lock);
  int r = fault(s, err);
  if (r == RIG_EDGE_OK && !fits(s, w)) /* room said no */
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "sample: work past the queues' room");
  if (r != RIG_EDGE_OK) {
    pthread_mutex_unlock(&s->lock);
    return r;
  }
  s->ring[s->head++ % RING] = (piece){w->value, s->part_head, s->wait_head, w->nparts, w->nwaits};
  for (uint32_t i = 0; i < w->nparts; i++, s->part_head++) {
    s->parts[s->part_head % RING_PARTS] = w->parts[i];
    s->labels[s->part_head % RING_PARTS] = rig_edge_work_label(w, i);
    s->done[s->part_head % RING_PARTS] = false;
  }
  for (uint32_t i = 0; i < w->nwaits; i++)
    s->waits[s->wait_head++ % RING_WAITS] = w->waits[i];
  s->taken = w->value;
  if (w->value >= s->committed + K)
    s->committed = w->value; /* TL-10: commits itself at least every K values */
  pthread_cond_broadcast(&s->more);
  pthread_mutex_unlock(&s->lock);
  return RIG_EDGE_OK;
}

/* profile (ABI 1.6): core hands over the ring a profile's records go
 * into; the workers time each part from then on, while the profile is
 * being taken. The sample times by the host's clock; a GPU driver writes
 * timestamps around each part and reads them back once the value is
 * reached, converted to rig_edge_now_ns()'s clock. */
static int sample_profile(void *h, rig_edge_profile *ring, rig_edge_error *err) {
  (void)err;
  __atomic_store_n(&((sample *)h)->profile, ring, __ATOMIC_RELEASE);
  return RIG_EDGE_OK;
}

/* commit: releases work up to value to the queues (TL-7: work may wait
 * uncommitted; TL-8: uncommitted work never runs). Core commits before any
 * wait for a point (TL-9). A GPU driver sends its batch to the kernel here. */
static int sample_commit(void *h, uint64_t value, rig_edge_error *err) {
  sample *s = h;
  pthread_mutex_lock(&s->lock);
  int r = fault(s, err); /* a failed commit loses the device (LOSS-3) */
  if (r == RIG_EDGE_OK && value > s->committed)
    s->committed = value;
  pthread_cond_broadcast(&s->more);
  pthread_mutex_unlock(&s->lock);
  return r;
}

/* allocate: every kind is host memory here, which the host addresses
 * (HOST_ADDRESSES); a discrete GPU gives host NULL for its own memory and
 * core stages the host's accesses. NO_ROOM makes core reclaim and retry
 * (RECLAIM-52). bytes counts in the budget. */
static int sample_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                           rig_edge_error *err) {
  void *p = NULL;
  if (kind > RIG_EDGE_KIND_MAPPED)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "sample: no memory of kind %u", kind);
  /* Large ones start on a page, so that other devices may borrow them (MACH-23). */
  if (posix_memalign(&p, bytes >= 65536 ? 4096 : ALIGN, bytes ? bytes : 1) != 0)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "sample: no %llu bytes",
                         (unsigned long long)bytes);
  *out = (rig_edge_alloc){.handle = p, .host = p, .address = (uintptr_t)p, .bytes = bytes};
  return RIG_EDGE_OK;
}

/* release: core calls it only once no work of any device uses the memory. */
static int sample_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  free(a->handle);
  return RIG_EDGE_OK;
}

/* map: host memory for a borrow (page-aligned: MACH-23, MAPS_HOST). The
 * model addresses it as it is; a GPU pins it and maps it here. */
static int sample_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out,
                      rig_edge_error *err) {
  *out = (rig_edge_alloc){.handle = host, .host = host, .address = (uintptr_t)host,
                          .bytes = bytes};
  return RIG_EDGE_OK;
}

static int sample_unmap(void *h, rig_edge_alloc *a, rig_edge_error *err) { return RIG_EDGE_OK; }

/* peer: sample devices address each other's memory, all of it host
 * memory, so a copy between two runs on one's queue (MACH-17). */
static bool sample_peer(void *h, void *other) { return true; }

/* The table. NULL entries are the ones this device needs not: no signaled
 * (core keeps the word), no grow (fixed rings), no code (load), no
 * capability, no check (core refuses what no queue takes), no map_peer
 * (no OWN_WORD), no fork (no lock outside a handle's). */
static const rig_edge_driver sample_driver = {
    RIG_EDGE_DRIVER_INIT("sample"),
    .open = sample_open,
    .facts = sample_facts,
    .stop = sample_stop,
    .destroy = sample_destroy,
    .bind_word = sample_bind_word,
    .wait = sample_wait,
    .map_word = sample_map_word,
    .unmap_word = sample_unmap_word,
    .room = sample_room,
    .submit = sample_submit,
    .commit = sample_commit,
    .allocate = sample_allocate,
    .release = sample_release,
    .map = sample_map,
    .unmap = sample_unmap,
    .peer = sample_peer,
    .devices = sample_devices,
    .profile = sample_profile,
};

RIG_EDGE_DRIVER(sample_driver)
