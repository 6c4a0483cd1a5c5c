/* testdev.c: the test device, librig-driver-test.so. It ships nowhere; the
 * suite finds it through RIG_DRIVER_PATH. It stands for a real GPU's
 * asynchrony on machines without one: its queue runs on a worker thread, so
 * work completes after submit returns, after a configurable delay, and the
 * queue can wait on other devices' timeline words itself.
 *
 * Opened as "test:ID[,option...]", read strictly by librig-edge's parser
 * (rig_edge_args_parse): a number is decimal digits in its range (32 bits
 * for times and counts of values, 64 for values and bytes), a flag 0 or
 * 1, each option at most once, and anything else is RIG_INVALID naming it:
 *   delay_us=N   each piece of work takes at least N microseconds (0)
 *   waits=0|1    whether its queue waits on other devices' words (1)
 *   host=0|1     whether the host addresses its memory (1); with 0 it is
 *                a GPU whose memory the host does not address
 *   budget=N     its budget in bytes (1 GiB)
 *   commit_k=K   hold submitted work until rig commits it, or until K
 *                values wait uncommitted (TL-7, TL-10); 0 (the default):
 *                submit commits
 *   fault_at=N   the submit of value N fails with "injected fault at N"
 *   fault_nth=N  its N-th submit (counting from 1) fails with "injected
 *                fault at V", V its value: values go on past a reused
 *                slot's earlier devices, counts do not
 *   stop_ms=N    its stop takes N ms
 *   block_ms=N   its submit blocks N ms, as a driver whose queues fill may
 *                (MAY_BLOCK, DOM-5)
 *   map_limit=N  it maps at most N bytes of host memory at once (borrows,
 *                staging); past it, map has no room (RECLAIM-60..63)
 *   parts=N      its queues hold N parts at first (1..1024); more
 *                parts need grow, which allows up to grow_limit=N parts
 *                (1..1024), past which it has no memory (SUBMIT-19,
 *                RECLAIM-64)
 *   hang_ms=N    its facts state a hang bound of N ms (HANG-1)
 *   hang_nth=N   its N-th piece of work never finishes: the device stands
 *                still until its stop (HANG-6)
 *   half_alloc=N  its N-th allocation fails half-way: RIG_EDGE_HALF (ERR-23)
 *   fault_commit=1  its commit fails with "commit refused" (LOSS-3)
 *   silent_stop=1  its stop never reports the last value it took, as a
 *                device that stays busy past its stop (STOP-5, STOP-7)
 *   queues=1|2   with 2, copies run on a second queue, on a worker of their
 *                own, concurrently with fills and words but where core's
 *                follows order them (ORDER-3..7)
 *   fault_halts=1  an injected fault (fault_at, fault_nth) halts its queues,
 *                as a GPU whose queue dies with the fault: from the failing
 *                submit on, no part starts and no value is reported until
 *                its stop, which reports the last value it took (STOP-1);
 *                a part under way may finish, but its value is never
 *                reported. Without it, work taken before the fault runs on
 *                (LOSS-16, STOP-12).
 *   half_map=N   its N-th map (a borrow's or staging's) fails half-way:
 *                RIG_EDGE_HALF (ERR-23, LOSS-4)
 *   report_ms=N  its stop returns at once and reports the last value it
 *                took N ms later, from a thread of its own: a device that
 *                stops after its stop returned (STOP-4). The test keeps a
 *                reference to the device until the report, so that the
 *                word stays its own.
 *   shared=G     (1..15; 0: none) devices of group G share a resource, as CUDA's
 *                devices share its context: an injected fault of one fails
 *                every later submit, commit and allocation of the others
 *                with "shared fault: MESSAGE" (LOSS-14). Groups are the
 *                process's: each test takes a group of its own.
 *
 * k (commit): commit_k, or 1.
 * Per open: one record of about 70 KiB (its ring), freed at destroy.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rig/edge.h>

#include "driver_memory.h"
#include "testdev.h"

#define MAX_Q 2
#define TRACE 256
#define RING 256        /* pieces of work in flight */
#define RING_PARTS 1024 /* their parts */
#define RING_WAITS 256  /* their queue waits */
#define SHARED_GROUPS 16

typedef struct item {
  uint64_t value;
  uint32_t first_part, nparts, first_wait, nwaits;
} item;

typedef struct testdev {
  volatile uint64_t *word;
  uint32_t delay_us;
  bool waits, host;
  uint64_t budget;
  uint32_t commit_k, stop_ms, block_ms;
  uint64_t map_limit, mapped;
  uint32_t capacity, grow_limit;   /* parts its queues hold, and may hold */
  uint32_t hang_ms;
  bool silent_stop, fault_commit;
  bool fault_halts;
  _Atomic bool halted;             /* fault_halts: the queues are dead */
  pthread_mutex_t halt_lock;       /* a report and the halt, one at a time */
  uint64_t half_map;
  _Atomic uint64_t maps;
  uint32_t report_ms;
  bool reported_late;              /* report_ms: the reporter started */
  uint32_t shared;
  uint64_t half_alloc;
  _Atomic uint64_t allocs;
  uint64_t last_taken;             /* the last value submit took */
  uint64_t hang_nth;
  _Atomic uint64_t started;        /* pieces of work begun, for hang_nth */
  uint64_t fault_at, fault_nth, submits;
  uint64_t committed;              /* the workers run values up to it */
  uint32_t nqueues;
  pthread_t workers[MAX_Q];
  struct worker_arg { struct testdev *t; uint32_t q; } args[MAX_Q];
  uint64_t qtail[MAX_Q];           /* per queue: the next item it runs */
  _Atomic uint32_t remaining[RING]; /* queues yet to finish each item */
  _Atomic uint8_t done[RING_PARTS]; /* parts finished */
  pthread_mutex_t trace_lock;
  rig_test_trace_entry trace[TRACE];
  uint64_t ntrace;
  rig_test_trace trace_rec;
  bool running;
  pthread_mutex_t lock;
  pthread_cond_t more;
  item ring[RING];
  rig_edge_part parts[RING_PARTS];
  rig_edge_wait waits_ring[RING_WAITS];
  uint64_t head, tail;             /* items: [tail, head) queued */
  uint64_t part_head, part_tail;   /* ring positions of parts */
  uint64_t wait_head, wait_tail;
  _Atomic bool stopping;
} testdev;

/* Parses "ID[,option...]" with librig-edge's parser: ID is the test's
 * own, each option of the table above at most once, strictly. */
static int parse(testdev *t, const char *args, rig_edge_error *err) {
  enum { DELAY_US, WAITS, HOST, BUDGET, COMMIT_K, FAULT_AT, FAULT_NTH, STOP_MS, HALF_ALLOC,
         FAULT_COMMIT, SILENT_STOP, HANG_MS, HANG_NTH, PARTS, GROW_LIMIT, MAP_LIMIT, BLOCK_MS,
         QUEUES, FAULT_HALTS, HALF_MAP, REPORT_MS, SHARED, NKEYS };
#define U32(name) {.key = name, .type = RIG_EDGE_ARG_NUMBER, .max = UINT32_MAX}
#define U64(name) {.key = name, .type = RIG_EDGE_ARG_NUMBER, .max = UINT64_MAX}
#define FLAG(name, on) {.key = name, .type = RIG_EDGE_ARG_BOOL, .value = on}
  rig_edge_arg k[NKEYS] = {
      [DELAY_US] = U32("delay_us"),
      [WAITS] = FLAG("waits", 1),
      [HOST] = FLAG("host", 1),
      [BUDGET] = {.key = "budget", .type = RIG_EDGE_ARG_NUMBER, .max = INT64_MAX,
                  .value = UINT64_C(1) << 30},
      [COMMIT_K] = U32("commit_k"),
      [FAULT_AT] = U64("fault_at"),
      [FAULT_NTH] = U64("fault_nth"),
      [STOP_MS] = U32("stop_ms"),
      [HALF_ALLOC] = U64("half_alloc"),
      [FAULT_COMMIT] = FLAG("fault_commit", 0),
      [SILENT_STOP] = FLAG("silent_stop", 0),
      [HANG_MS] = U32("hang_ms"),
      [HANG_NTH] = U64("hang_nth"),
      [PARTS] = {.key = "parts", .type = RIG_EDGE_ARG_NUMBER, .min = 1, .max = RING_PARTS,
                 .value = RING_PARTS},
      [GROW_LIMIT] = {.key = "grow_limit", .type = RIG_EDGE_ARG_NUMBER, .min = 1,
                      .max = RING_PARTS, .value = RING_PARTS},
      [MAP_LIMIT] = U64("map_limit"),
      [BLOCK_MS] = U32("block_ms"),
      [QUEUES] = {.key = "queues", .type = RIG_EDGE_ARG_NUMBER, .min = 1, .max = MAX_Q,
                  .value = 1},
      [FAULT_HALTS] = FLAG("fault_halts", 0),
      [HALF_MAP] = U64("half_map"),
      [REPORT_MS] = U32("report_ms"),
      [SHARED] = {.key = "shared", .type = RIG_EDGE_ARG_NUMBER, .max = SHARED_GROUPS - 1},
  };
#undef U32
#undef U64
#undef FLAG
  int r = rig_edge_args_parse("test", args, k, NKEYS, NULL, err);
  if (r != RIG_EDGE_OK)
    return r;
  t->delay_us = (uint32_t)k[DELAY_US].value;
  t->waits = k[WAITS].value;
  t->host = k[HOST].value;
  t->budget = k[BUDGET].value;
  t->commit_k = (uint32_t)k[COMMIT_K].value;
  t->fault_at = k[FAULT_AT].value;
  t->fault_nth = k[FAULT_NTH].value;
  t->stop_ms = (uint32_t)k[STOP_MS].value;
  t->half_alloc = k[HALF_ALLOC].value;
  t->fault_commit = k[FAULT_COMMIT].value;
  t->silent_stop = k[SILENT_STOP].value;
  t->hang_ms = (uint32_t)k[HANG_MS].value;
  t->hang_nth = k[HANG_NTH].value;
  t->capacity = (uint32_t)k[PARTS].value;
  t->grow_limit = (uint32_t)k[GROW_LIMIT].value;
  t->map_limit = k[MAP_LIMIT].value;
  t->block_ms = (uint32_t)k[BLOCK_MS].value;
  t->nqueues = (uint32_t)k[QUEUES].value;
  t->fault_halts = k[FAULT_HALTS].value;
  t->half_map = k[HALF_MAP].value;
  t->report_ms = (uint32_t)k[REPORT_MS].value;
  t->shared = (uint32_t)k[SHARED].value;
  return RIG_EDGE_OK;
}

/* shared=G: the fault each group's resource took, "" while none. */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static char shared_fault[SHARED_GROUPS][RIG_EDGE_MESSAGE_BYTES];

/* The edge's fork hook (ABI 1.4): the child's own devices take
 * shared_lock; it never calls the parent's handles (STOP-20), so their
 * locks are not taken. */
static void td_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_PREPARE)
    pthread_mutex_lock(&shared_lock);
  else
    pthread_mutex_unlock(&shared_lock);
}

/* Fails with the group's fault once its resource took one (LOSS-14). */
static int shared_check(const testdev *t, rig_edge_error *err) {
  if (!t->shared)
    return RIG_EDGE_OK;
  char why[RIG_EDGE_MESSAGE_BYTES];
  pthread_mutex_lock(&shared_lock);
  memcpy(why, shared_fault[t->shared], sizeof why);
  pthread_mutex_unlock(&shared_lock);
  if (!why[0])
    return RIG_EDGE_OK;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "shared fault: %s", why);
}

static void sleep_us(uint32_t us) {
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  while (us && nanosleep(&ts, &ts) != 0)
    ;
}

/* Runs a part on the driver's own pointers (alloc->handle), which exist
 * also where the host does not address the memory. */
static void run_part(const rig_edge_part *p) {
  if (p->kind == RIG_EDGE_PART_COPY) {
    const rig_edge_range *s = &p->u.copy.src, *d = &p->u.copy.dst;
    memmove((char *)d->alloc->handle + d->offset, (char *)s->alloc->handle + s->offset, d->bytes);
  } else if (p->kind == RIG_EDGE_PART_FILL) {
    rig_edge_alloc a = *p->u.fill.dst.alloc;
    rig_edge_part q = *p;
    a.host = a.handle;
    q.u.fill.dst.alloc = &a;
    rig_edge_error err;
    rig_edge_run_on_host(&q, &err);
  }
}

static void record(testdev *t, const item *it, uint32_t index, const rig_edge_part *p) {
  rig_test_trace_entry e = {it->value, index, p->kind, p->queue, {0}, 0};
  memcpy(e.follows, p->follows, sizeof e.follows);
  if (p->kind == RIG_EDGE_PART_WORDS && p->u.words.count)
    e.word0 = p->u.words.words[0];
  pthread_mutex_lock(&t->trace_lock);
  t->trace[t->ntrace++ % TRACE] = e;
  pthread_mutex_unlock(&t->trace_lock);
}

static size_t trace_read(void *h, rig_test_trace_entry *out, size_t max) {
  testdev *t = h;
  pthread_mutex_lock(&t->trace_lock);
  size_t n = t->ntrace < TRACE ? t->ntrace : TRACE;
  n = n < max ? n : max;
  for (size_t i = 0; i < n; i++)
    out[i] = t->trace[(t->ntrace - n + i) % TRACE];
  pthread_mutex_unlock(&t->trace_lock);
  return n;
}

/* Waits until the parts p follows on other queues are done. */
static void wait_follows(testdev *t, const item *it, const rig_edge_part *p) {
  for (uint32_t q = 0; q < MAX_Q; q++)
    if (p->follows[q] && q != p->queue)
      while (!atomic_load(&t->done[(it->first_part + p->follows[q] - 1) % RING_PARTS]))
        sleep_us(20);
}

/* The word only grows: two queues may finish items out of turn. A
 * thread asleep on it wakes (edge ABI 1.7). */
static void signal_value(testdev *t, uint64_t v) {
  uint64_t old = rig_edge_word_load(t->word);
  while (old < v && !__atomic_compare_exchange_n(t->word, &old, v, false, __ATOMIC_RELEASE,
                                                 __ATOMIC_ACQUIRE))
    ;
  rig_edge_word_changed(t->word);
}

/* Runs queue q's share of an item: after its waits, its parts in order,
 * each after the parts of other queues it follows. */
static void run_item(testdev *t, const item *it, uint64_t index, uint32_t q) {
  /* Device order: the work of a value follows every lower value's, on
   * every queue (ORDER-2), so the queues meet between pieces of work. */
  while (rig_edge_word_wait(t->word, it->value - 1, 100) != RIG_EDGE_OK)
    if (t->stopping)
      return;
  if (q == 0 && t->hang_nth && atomic_fetch_add(&t->started, 1) + 1 == t->hang_nth)
    while (!t->stopping) /* stands still until its stop */
      sleep_us(1000);
  if (t->stopping && t->hang_nth)
    return;
  for (uint32_t i = 0; i < it->nwaits; i++) {
    const rig_edge_wait *w = &t->waits_ring[(it->first_wait + i) % RING_WAITS];
    while (rig_edge_word_wait(w->mapping, w->value, 100) != RIG_EDGE_OK)
      if (t->stopping)
        return; /* a stop ends work that waits for a word never written */
  }
  bool slept = false;
  for (uint32_t i = 0; i < it->nparts; i++) {
    uint32_t at = (it->first_part + i) % RING_PARTS;
    const rig_edge_part *p = &t->parts[at];
    if (p->queue != q)
      continue;
    wait_follows(t, it, p);
    if (!slept)
      sleep_us(t->delay_us);
    slept = true;
    if (atomic_load(&t->halted))
      return; /* fault_halts: nothing starts after the fault */
    run_part(p);
    record(t, it, i, p);
    atomic_store(&t->done[at], 1);
  }
  if (atomic_fetch_sub(&t->remaining[index % RING], 1) == 1) {
    if (!t->fault_halts) {
      signal_value(t, it->value);
      return;
    }
    /* Reported before the halt, or never: the submit that faults halts
     * under the same lock, so that once it returned the word holds still. */
    pthread_mutex_lock(&t->halt_lock);
    if (!atomic_load(&t->halted))
      signal_value(t, it->value);
    pthread_mutex_unlock(&t->halt_lock);
  }
}

/* The ring's tail is the oldest item some queue has not finished. */
static void advance_tail(testdev *t) {
  uint64_t low = t->qtail[0];
  for (uint32_t q = 1; q < t->nqueues; q++)
    low = t->qtail[q] < low ? t->qtail[q] : low;
  for (; t->tail < low; t->tail++) {
    t->part_tail += t->ring[t->tail % RING].nparts;
    t->wait_tail += t->ring[t->tail % RING].nwaits;
  }
}

static bool runnable(testdev *t, uint32_t q) {
  return t->qtail[q] != t->head && t->ring[t->qtail[q] % RING].value <= t->committed;
}

static void *worker(void *arg) {
  struct worker_arg *a = arg;
  testdev *t = a->t;
  pthread_mutex_lock(&t->lock);
  for (;;) {
    /* Only committed work runs (TL-8); a stop ends the rest unrun. */
    while (!runnable(t, a->q) && !t->stopping)
      pthread_cond_wait(&t->more, &t->lock);
    if (!runnable(t, a->q))
      break;
    uint64_t index = t->qtail[a->q];
    item it = t->ring[index % RING];
    pthread_mutex_unlock(&t->lock);
    run_item(t, &it, index, a->q);
    pthread_mutex_lock(&t->lock);
    t->qtail[a->q]++;
    advance_tail(t);
    pthread_cond_broadcast(&t->more);
  }
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

/* Starts a worker per queue, with every signal blocked (ERR-19). */
static bool start_workers(testdev *t) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  uint32_t q = 0;
  for (; q < t->nqueues; q++) {
    t->args[q] = (struct worker_arg){t, q};
    if (pthread_create(&t->workers[q], NULL, worker, &t->args[q]) != 0)
      break;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  t->nqueues = q ? q : 1;
  return q > 0;
}

static int td_open(const char *args, void **out, rig_edge_error *err) {
  testdev *t = calloc(1, sizeof *t);
  if (!t)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "test: out of memory");
  int r = parse(t, args, err);
  if (r != RIG_EDGE_OK) {
    free(t);
    return r;
  }
  pthread_mutex_init(&t->lock, NULL);
  pthread_mutex_init(&t->trace_lock, NULL);
  pthread_mutex_init(&t->halt_lock, NULL);
  pthread_cond_init(&t->more, NULL);
  t->trace_rec = (rig_test_trace){t, trace_read};
  if (!start_workers(t)) {
    free(t);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "test: no worker thread");
  }
  t->running = true;
  *out = t;
  return RIG_EDGE_OK;
}

static int td_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  testdev *t = h;
  strcpy(f->arch, "test");
  f->alignment = 256;
  f->budget = t->budget;
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_MAPS_HOST | (t->block_ms ? RIG_EDGE_MAY_BLOCK : 0) |
             (t->host ? RIG_EDGE_HOST_ADDRESSES : 0) | (t->waits ? RIG_EDGE_QUEUE_WAITS : 0);
  f->queues = t->nqueues;
  f->part_queue[RIG_EDGE_PART_COPY] = (uint8_t)(t->nqueues - 1);
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = 0; /* recorded in the trace, else ignored */
  f->commit_k = t->commit_k ? t->commit_k : 1;
  f->hang_ms = t->hang_ms;
  f->type = RIG_EDGE_TYPE_GPU; /* it stands for one */
  return RIG_EDGE_OK;
}

/* "test:ID" opens a device of its own for any ID: it offers "test:0". */
static int td_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  (void)err;
  rig_edge_devices_numbered(names, cap, 1, n);
  return RIG_EDGE_OK;
}

/* report_ms: a thread that reports value into word ms from now. It
 * touches nothing of the handle, which may be gone by then. */
struct late { volatile uint64_t *word; uint64_t value; uint32_t ms; };

static void *reporter(void *arg) {
  struct late *l = arg;
  sleep_us(l->ms * 1000u);
  uint64_t old = rig_edge_word_load(l->word);
  while (old < l->value && !__atomic_compare_exchange_n(l->word, &old, l->value, false,
                                                        __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
    ;
  free(l);
  return NULL;
}

static bool report_later(volatile uint64_t *word, uint64_t value, uint32_t ms) {
  struct late *l = malloc(sizeof *l);
  pthread_t th;
  pthread_attr_t attr;
  sigset_t all, old;
  if (!l)
    return false;
  *l = (struct late){word, value, ms};
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old); /* ERR-19 */
  bool ok = pthread_create(&th, &attr, reporter, l) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  if (!ok)
    free(l);
  return ok;
}

static int td_stop(void *h, rig_edge_error *err) {
  testdev *t = h;
  if (t->stop_ms)
    sleep_us(t->stop_ms * 1000);
  pthread_mutex_lock(&t->lock);
  t->stopping = true;
  pthread_cond_broadcast(&t->more);
  pthread_mutex_unlock(&t->lock);
  if (t->running)
    for (uint32_t q = 0; q < t->nqueues; q++)
      pthread_join(t->workers[q], NULL);
  t->running = false;
  /* Its work has ended, run or not: it reports the last value it took, so
   * that core counts it stopped (STOP-1); report_ms: later. */
  if (!t->silent_stop && t->word && t->report_ms && !t->reported_late)
    t->reported_late = report_later(t->word, t->last_taken, t->report_ms);
  else if (!t->silent_stop && t->word && !t->report_ms)
    signal_value(t, t->last_taken);
  return RIG_EDGE_OK;
}

/* How many handles were destroyed: capability "test.destroys", which the
 * tests of when core destroys one read (test_points.c, OPEN-24). */
static _Atomic int destroys;

static void td_destroy(void *h) {
  testdev *t = h;
  atomic_fetch_add(&destroys, 1);
  rig_edge_error err;
  td_stop(t, &err);
  pthread_mutex_destroy(&t->lock);
  pthread_mutex_destroy(&t->trace_lock);
  pthread_mutex_destroy(&t->halt_lock);
  pthread_cond_destroy(&t->more);
  free(t);
}

static int td_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  ((testdev *)h)->word = word;
  return RIG_EDGE_OK;
}

static int td_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  return rig_edge_word_wait(((testdev *)h)->word, value, timeout_ms);
}

/* The word of another device lives in host memory: the mapping is its
 * address. */
static int td_map_word(void *h, volatile uint64_t *word, void **out, rig_edge_error *err) {
  *out = (void *)word;
  return RIG_EDGE_OK;
}

static void td_unmap_word(void *h, void *mapping) {}

/* Maps host memory: all of it is this process's, so the mapping is the
 * address itself; only the count of bytes mapped is kept, for map_limit. */
static int td_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err) {
  testdev *t = h;
  if (t->half_map && atomic_fetch_add(&t->maps, 1) + 1 == t->half_map)
    return rig_edge_fail(err, RIG_EDGE_HALF, "mapping half made");
  pthread_mutex_lock(&t->lock);
  bool room = !t->map_limit || t->mapped + bytes <= t->map_limit;
  if (room)
    t->mapped += bytes;
  pthread_mutex_unlock(&t->lock);
  if (!room)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "test: %llu bytes mapped of %llu",
                         (unsigned long long)t->mapped, (unsigned long long)t->map_limit);
  *out = (rig_edge_alloc){host, host, (uint64_t)(uintptr_t)host, bytes};
  return RIG_EDGE_OK;
}

static int td_unmap(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  testdev *t = h;
  pthread_mutex_lock(&t->lock);
  t->mapped -= a->bytes;
  pthread_mutex_unlock(&t->lock);
  return RIG_EDGE_OK;
}

/* Test devices map each other's memory, all of it host memory: copies
 * between two of them run on one's queue (MACH-17). */
static bool td_peer(void *h, void *other) { return true; }

static const void *td_capability(void *h, const char *key) {
  if (strcmp(key, "test.destroys") == 0)
    return &destroys;
  return strcmp(key, "test.trace") == 0 ? &((testdev *)h)->trace_rec : NULL;
}

static int td_room(void *h, const rig_edge_work *w, bool *out) {
  testdev *t = h;
  pthread_mutex_lock(&t->lock);
  *out = t->head - t->tail < RING && t->part_head + w->nparts - t->part_tail <= t->capacity &&
         t->wait_head + w->nwaits - t->wait_tail <= RING_WAITS;
  pthread_mutex_unlock(&t->lock);
  return RIG_EDGE_OK;
}

/* Grows the queues to hold the parts of bytes of work, up to grow_limit. */
static int td_grow(void *h, uint64_t bytes, rig_edge_error *err) {
  testdev *t = h;
  uint64_t parts = bytes / sizeof(rig_edge_part) + 1;
  if (parts > t->grow_limit || parts > RING_PARTS)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "test: cannot hold %llu parts",
                         (unsigned long long)parts);
  pthread_mutex_lock(&t->lock);
  if (parts > t->capacity)
    t->capacity = (uint32_t)parts;
  pthread_mutex_unlock(&t->lock);
  return RIG_EDGE_OK;
}

static int td_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  testdev *t = h;
  if (w->nparts > RING_PARTS || w->nwaits > RING_WAITS)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "test: work larger than the queue");
  sleep_us(t->block_ms * 1000);
  if (shared_check(t, err) != RIG_EDGE_OK)
    return RIG_EDGE_FAULT;
  bool nth = ++t->submits == t->fault_nth;
  if ((t->fault_at && w->value == t->fault_at) || nth) {
    rig_edge_fail(err, RIG_EDGE_FAULT, "injected fault at %llu", (unsigned long long)w->value);
    if (t->fault_halts) {
      pthread_mutex_lock(&t->halt_lock);
      atomic_store(&t->halted, true);
      pthread_mutex_unlock(&t->halt_lock);
    }
    if (t->shared) {
      pthread_mutex_lock(&shared_lock);
      if (!shared_fault[t->shared][0])
        memcpy(shared_fault[t->shared], err->message, sizeof err->message);
      pthread_mutex_unlock(&shared_lock);
    }
    return RIG_EDGE_FAULT;
  }
  pthread_mutex_lock(&t->lock);
  atomic_store(&t->remaining[t->head % RING], t->nqueues);
  for (uint32_t i = 0; i < w->nparts; i++)
    atomic_store(&t->done[(t->part_head + i) % RING_PARTS], 0);
  item *it = &t->ring[t->head % RING];
  *it = (item){w->value, (uint32_t)(t->part_head % RING_PARTS), w->nparts,
               (uint32_t)(t->wait_head % RING_WAITS), w->nwaits};
  for (uint32_t i = 0; i < w->nparts; i++)
    t->parts[(t->part_head + i) % RING_PARTS] = w->parts[i];
  for (uint32_t i = 0; i < w->nwaits; i++)
    t->waits_ring[(t->wait_head + i) % RING_WAITS] = w->waits[i];
  t->part_head += w->nparts;
  t->wait_head += w->nwaits;
  t->head++;
  t->last_taken = w->value;
  /* Commits on its own once k values wait (TL-10). */
  if (!t->commit_k || w->value >= t->committed + t->commit_k)
    t->committed = w->value;
  pthread_cond_broadcast(&t->more);
  pthread_mutex_unlock(&t->lock);
  return RIG_EDGE_OK;
}

static int td_commit(void *h, uint64_t value, rig_edge_error *err) {
  testdev *t = h;
  if (shared_check(t, err) != RIG_EDGE_OK)
    return RIG_EDGE_FAULT;
  if (t->fault_commit)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "commit refused");
  pthread_mutex_lock(&t->lock);
  if (value > t->committed)
    t->committed = value;
  pthread_cond_broadcast(&t->more);
  pthread_mutex_unlock(&t->lock);
  return RIG_EDGE_OK;
}

static int td_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                       rig_edge_error *err) {
  testdev *t = h;
  if (kind == RIG_EDGE_KIND_MAPPED)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "test: no Mapped memory");
  if (shared_check(t, err) != RIG_EDGE_OK)
    return RIG_EDGE_FAULT;
  if (t->half_alloc && atomic_fetch_add(&t->allocs, 1) + 1 == t->half_alloc)
    return rig_edge_fail(err, RIG_EDGE_HALF, "page table half written");
  /* Pinned memory is host memory it maps: the host addresses it. */
  return driver_memory_take("test", bytes, t->host || kind == RIG_EDGE_KIND_PINNED, true, out, err);
}

static const rig_edge_driver test_driver = {
    RIG_EDGE_DRIVER_INIT("test"),
    .open = td_open,
    .facts = td_facts,
    .stop = td_stop,
    .destroy = td_destroy,
    .bind_word = td_bind_word,
    .wait = td_wait,
    .map_word = td_map_word,
    .unmap_word = td_unmap_word,
    .room = td_room,
    .submit = td_submit,
    .grow = td_grow,
    .commit = td_commit,
    .allocate = td_allocate,
    .release = driver_memory_release,
    .peer = td_peer,
    .map = td_map,
    .unmap = td_unmap,
    .capability = td_capability,
    .fork = td_fork,
    .devices = td_devices,
};

RIG_EDGE_DRIVER(test_driver)
