/* test_rules_more.c: rules of submitting and of reaching that no other test
 * checks on its own (VALID-19, VALID-21, SUBMIT-5, MACH-10, RECLAIM-55,
 * RECLAIM-61, RECLAIM-62, ERR-10, OPEN-13, OPEN-14, OPEN-22).
 *
 * "fake" is a driver of this file, opened with rig_device_open_driver, whose
 * behaviour each test sets through its arguments:
 *   handle  its memory is handle-only: no host address, no device address
 *   limit=N its queue holds at most N words of one submission, a part
 *           counting one word and a words part its words (no grow)
 *   gate    its submit blocks until the test opens the gate (MAY_BLOCK);
 *           its work runs only once committed
 *   opengate  its open blocks while the test holds the open gate shut
 * Its work completes at once: submit (or commit, with gate) sets the word.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig/edge.h>

#include "driver_memory.h"
#include "util.h"

typedef struct fake {
  volatile uint64_t *word;
  bool handle_only, gate;
  uint32_t limit;
  _Atomic uint64_t taken;     /* the last value submitted */
  _Atomic int submits, in_submit, commits;
  _Atomic bool overlap;       /* a submit or commit ran beside a submit */
  _Atomic int peer_calls, peer_masked, submit_masked; /* SIGUSR1 blocked in peer, submit */
  pthread_mutex_t lock;
  pthread_cond_t opened;
  bool open;                  /* the gate */
} fake;

static fake *last_fake; /* the device the test opened last */

/* The open gate (opengate): shut, an open waits inside the driver. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t open_cond = PTHREAD_COND_INITIALIZER;
static bool open_shut, in_open;

static void open_gate_wait(void) {
  pthread_mutex_lock(&open_lock);
  in_open = true;
  pthread_cond_broadcast(&open_cond);
  while (open_shut)
    pthread_cond_wait(&open_cond, &open_lock);
  pthread_mutex_unlock(&open_lock);
}

static int fake_open(const char *args, void **out, rig_edge_error *err) {
  if (strstr(args, "opengate"))
    open_gate_wait();
  fake *f = calloc(1, sizeof *f);
  if (!f)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "fake: out of memory");
  f->handle_only = strstr(args, "handle") != NULL;
  f->gate = strstr(args, "gate") != NULL;
  const char *l = strstr(args, "limit=");
  f->limit = l ? (uint32_t)strtoul(l + 6, NULL, 10) : 0;
  f->open = true;
  pthread_mutex_init(&f->lock, NULL);
  pthread_cond_init(&f->opened, NULL);
  *out = last_fake = f;
  return RIG_EDGE_OK;
}

static int fake_facts(void *h, rig_edge_facts *out, rig_edge_error *err) {
  fake *f = h;
  strcpy(out->arch, "fake");
  out->alignment = 16;
  out->budget = 1 << 20;
  out->flags = RIG_EDGE_COMPUTES | (f->gate ? RIG_EDGE_MAY_BLOCK : 0);
  out->queues = 1;
  for (int k = 0; k < RIG_EDGE_PART_KINDS; k++)
    out->part_queue[k] = 0;
  return RIG_EDGE_OK;
}

static void fake_destroy(void *h) {
  fake *f = h;
  pthread_mutex_destroy(&f->lock);
  pthread_cond_destroy(&f->opened);
  free(f);
}

static int fake_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  ((fake *)h)->word = word;
  return RIG_EDGE_OK;
}

/* The words work puts on the queue: one per part, a words part's own. */
static uint64_t words_of(const rig_edge_work *w) {
  uint64_t n = 0;
  for (uint32_t i = 0; i < w->nparts; i++)
    n += w->parts[i].kind == RIG_EDGE_PART_WORDS ? w->parts[i].u.words.count : 1;
  return n;
}

static int fake_room(void *h, const rig_edge_work *w, bool *out) {
  fake *f = h;
  *out = !f->limit || words_of(w) <= f->limit;
  return RIG_EDGE_OK;
}

/* Whether the calling thread has SIGUSR1 blocked now. */
static bool usr1_blocked(void) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  return sigismember(&now, SIGUSR1) == 1;
}

static bool fake_peer(void *h, void *other) {
  fake *f = h;
  atomic_fetch_add(&f->peer_calls, 1);
  if (usr1_blocked())
    atomic_fetch_add(&f->peer_masked, 1);
  return true;
}

static int fake_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  fake *f = h;
  if (usr1_blocked())
    atomic_fetch_add(&f->submit_masked, 1);
  if (atomic_fetch_add(&f->in_submit, 1) > 0)
    atomic_store(&f->overlap, true);
  atomic_fetch_add(&f->submits, 1);
  pthread_mutex_lock(&f->lock);
  while (!f->open)
    pthread_cond_wait(&f->opened, &f->lock);
  pthread_mutex_unlock(&f->lock);
  atomic_store(&f->taken, w->value);
  if (!f->gate)
    rig_edge_word_store(f->word, w->value);
  atomic_fetch_sub(&f->in_submit, 1);
  return RIG_EDGE_OK;
}

static int fake_commit(void *h, uint64_t value, rig_edge_error *err) {
  fake *f = h;
  if (atomic_load(&f->in_submit) > 0)
    atomic_store(&f->overlap, true);
  atomic_fetch_add(&f->commits, 1);
  uint64_t t = atomic_load(&f->taken);
  rig_edge_word_store(f->word, value < t ? value : t);
  return RIG_EDGE_OK;
}

/* Memory the host does not address, handle-only where the test asks. */
static int fake_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                         rig_edge_error *err) {
  return driver_memory_take("fake", bytes, false, !((fake *)h)->handle_only, out, err);
}

static int fake_load(void *h, const void *bytes, size_t n, void **out_image,
                     uint64_t *out_code_bytes, rig_edge_error *err) {
  *out_image = h;
  *out_code_bytes = 0;
  return RIG_EDGE_OK;
}

static int fake_resolve(void *h, void *image, const char *name, void **out_function,
                        rig_edge_error *err) {
  *out_function = image;
  return RIG_EDGE_OK;
}

static int fake_unload(void *h, void *image, rig_edge_error *err) { return RIG_EDGE_OK; }

static const rig_edge_driver fake_driver = {
    RIG_EDGE_DRIVER_INIT("fake"),
    .open = fake_open,
    .facts = fake_facts,
    .destroy = fake_destroy,
    .bind_word = fake_bind_word,
    .room = fake_room,
    .submit = fake_submit,
    .allocate = fake_allocate,
    .release = driver_memory_release,
    .load = fake_load,
    .resolve = fake_resolve,
    .unload = fake_unload,
    .peer = fake_peer,
};

/* The same driver with a commit: with gate, work runs once committed. */
static rig_edge_driver committing_driver;

static rig_device *open_fake(const char *args, fake **out) {
  char name[64];
  snprintf(name, sizeof name, "fake:%s", args);
  committing_driver = fake_driver;
  committing_driver.commit = fake_commit;
  rig_device *d = NULL;
  check_ok(rig_device_open_driver(name, strstr(args, "gate") ? &committing_driver : &fake_driver, args,
                           &d),
           name);
  *out = last_fake;
  return d;
}

static void set_gate(fake *f, bool open) {
  pthread_mutex_lock(&f->lock);
  f->open = open;
  pthread_cond_broadcast(&f->opened);
  pthread_mutex_unlock(&f->lock);
}

/* Submits a launch of f whose one ref designates slot 0, with b there. */
static rig_status launch_on(rig_device *d, rig_function *fn, rig_buffer *b, rig_point *p) {
  rig_ref ref = rig_ref_read_write(0, 0);
  rig_part part = rig_part_launch(fn, &ref, 1, 8);
  rig_submission *s;
  rig_run *r;
  ok(rig_submission_make(d, &part, 1, &s));
  ok(rig_submission_take(s, &r));
  ok(rig_run_groups(r, 0, 1, 1, 1));
  ok(rig_run_threads(r, 0, 1, 1, 1));
  rig_status st = rig_run_submit(r, &b, 1, NULL, 0, p);
  rig_submission_release(s);
  return st;
}

/* VALID-19: a ref that designates handle-only memory (no address the
 * device's code could use) makes the submit invalid: RIG_INVALID, no value
 * taken, nothing reaches the driver, the device not lost. The same launch
 * on memory with an address runs. */
static void valid_19_no_ref_to_handle_only_memory(void **state) {
  (void)state;
  static const char code[] = "code";
  for (int handle_only = 1; handle_only >= 0; handle_only--) {
    fake *f;
    rig_device *d = open_fake(handle_only ? "handle" : "addressed", &f);
    rig_image *im;
    rig_function *fn;
    ok(rig_image_load(d, code, sizeof code, &im));
    ok(rig_image_resolve(im, "k", &fn));
    rig_buffer *b = create_ok(d, 64);
    uint64_t before = rig_device_submitted(d);
    rig_point p = RIG_POINT_NONE;
    rig_status st = launch_on(d, fn, b, &p);
    if (handle_only) {
      assert_int_equal(st, RIG_INVALID);
      assert_non_null(strstr(rig_error_last()->message, "no address"));
      assert_int_equal(p, RIG_POINT_NONE);
      assert_int_equal(rig_device_submitted(d), before);
      assert_int_equal(atomic_load(&f->submits), 0);
      assert_null(rig_device_lost(d));
    } else {
      ok(st);
      ok(rig_point_wait(p));
      assert_int_equal(atomic_load(&f->submits), 1);
    }
    rig_buffer_release(b);
    rig_image_release(im);
    close_release(d);
  }
}

/* Submits parts (one slot, b) on d. */
static rig_status submit_parts(rig_device *d, const rig_part *parts, size_t n, rig_buffer *b,
                               rig_point *p) {
  rig_submission *s;
  rig_run *r;
  ok(rig_submission_make(d, parts, n, &s));
  ok(rig_submission_take(s, &r));
  rig_status st = rig_run_submit(r, &b, 1, NULL, 0, p);
  rig_submission_release(s);
  return st;
}

/* VALID-21: a driver whose queue has a fixed maximum (room never true for
 * the work, no grow) limits the words of one submission, its own words
 * (a words part, the driver's packets) included: past it the submit is
 * RIG_INVALID, with no value taken and the device not lost; at the limit it
 * runs. */
static void valid_21_fixed_queue_limits_a_submission(void **state) {
  (void)state;
  fake *f;
  rig_device *d = open_fake("limit=2", &f);
  rig_buffer *b = create_ok(d, 64);
  static const uint32_t packet[2] = {1, 2};
  rig_part three[3] = {rig_part_fill(0, 1, 4), rig_part_fill(0, 2, 4), rig_part_fill(0, 3, 4)};
  rig_part with_words[2] = {rig_part_fill(0, 1, 4), rig_part_words(packet, 2)};
  rig_part two[2] = {rig_part_fill(0, 1, 4), rig_part_fill(0, 2, 4)};
  uint64_t before = rig_device_submitted(d);
  rig_point p = RIG_POINT_NONE;
  assert_int_equal(submit_parts(d, three, 3, b, &p), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "exceeds"));
  assert_int_equal(submit_parts(d, with_words, 2, b, &p), RIG_INVALID); /* 3 words */
  assert_int_equal(p, RIG_POINT_NONE);
  assert_int_equal(rig_device_submitted(d), before);
  assert_int_equal(atomic_load(&f->submits), 0);
  assert_null(rig_device_lost(d));
  ok(submit_parts(d, two, 2, b, &p));
  ok(rig_point_wait(p));
  assert_int_equal(rig_point_value(p), before + 1);
  rig_buffer_release(b);
  close_release(d);
}

struct in_thread {
  rig_buffer *b;
  rig_point p;
  rig_status st;
  _Atomic int done;
};

static void *submit_in_thread(void *arg) {
  struct in_thread *t = arg;
  t->st = rig_buffer_submit_fill(t->b, 5, 4, &t->p);
  atomic_store(&t->done, 1);
  return NULL;
}

static void *wait_in_thread(void *arg) {
  struct in_thread *t = arg;
  t->st = rig_point_wait(t->p);
  atomic_store(&t->done, 1);
  return NULL;
}

/* SUBMIT-5: a driver that blocks inside its submit until the work fits:
 * while it blocks, another submit and a commit (a wait's, for a value
 * submitted before) on that device wait for it; the driver never sees a
 * submit or a commit beside its blocked submit, and both go on once it
 * returns. The test looks for 50 ms: a broken rig shows the overlap then;
 * a correct one never does, however slow the machine. */
static void submit_5_a_blocking_submit_holds_submits_and_commits(void **state) {
  (void)state;
  fake *f;
  rig_device *d = open_fake("gate", &f);
  rig_buffer *x = create_ok(d, 64), *y = create_ok(d, 64), *z = create_ok(d, 64);
  rig_point first;
  ok(rig_buffer_submit_fill(x, 1, 4, &first)); /* taken, not committed */
  set_gate(f, false);
  struct in_thread blocked = {.b = y}, other = {.b = z}, waiter = {.p = first};
  pthread_t tb, to, tw;
  pthread_create(&tb, NULL, submit_in_thread, &blocked);
  while (atomic_load(&f->in_submit) == 0) /* inside the driver's submit */
    sleep_ms(1);
  pthread_create(&to, NULL, submit_in_thread, &other);
  pthread_create(&tw, NULL, wait_in_thread, &waiter);
  sleep_ms(50);
  assert_false(atomic_load(&f->overlap));
  assert_int_equal(atomic_load(&f->commits), 0);
  assert_int_equal(atomic_load(&other.done), 0);
  assert_int_equal(atomic_load(&waiter.done), 0);
  set_gate(f, true);
  pthread_join(tb, NULL);
  pthread_join(to, NULL);
  pthread_join(tw, NULL);
  assert_false(atomic_load(&f->overlap));
  ok(blocked.st);
  ok(other.st);
  ok(waiter.st);
  assert_true(atomic_load(&f->commits) > 0);
  ok(rig_point_wait(other.p));
  ok(rig_point_wait(blocked.p));
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  close_release(d);
}

/* MACH-10: reaches d e is true exactly where, through a borrow on d, d's
 * work reaches the memory of e itself: for each pair of host, a memory
 * device, two test devices whose memory the host addresses and one whose
 * memory it does not, a borrow onto d of e's buffer is made exactly where
 * reaches says, and then a fill d runs through it shows in e's buffer. */
static void mach_10_reaches_is_what_a_borrow_gives(void **state) {
  (void)state;
  rig_device *m, *devs[5];
  ok(rig_device_open_memory("mach-10", &m));
  devs[0] = rig_device_host();
  devs[1] = m;
  devs[2] = open_ok("test:mach-10-a,delay_us=0");
  devs[3] = open_ok("test:mach-10-b,delay_us=0");
  devs[4] = open_ok("test:mach-10-g,delay_us=0,host=0");
  int reached = 0, refused = 0;
  for (int i = 0; i < 5; i++) {
    rig_device *d = devs[i];
    if (d == m)
      continue; /* a memory device runs no fill of its own */
    for (int j = 0; j < 5; j++) {
      rig_device *e = devs[j];
      rig_buffer *be = create_ok(e, 65536), *bd = NULL;
      ok(rig_buffer_fill(be, 0, 4));
      bool reaches = rig_device_reaches(d, e);
      rig_status st = rig_buffer_borrow(d, be, &bd);
      if (!reaches) {
        assert_int_equal(st, RIG_INVALID);
        refused++;
      } else {
        check_ok(st, "rig_buffer_borrow where reaches is true");
        rig_point p;
        ok(rig_buffer_submit_fill(bd, 0x5a5a5a5a, 4, &p));
        ok(rig_point_wait(p));
        uint32_t w = 0;
        ok(rig_buffer_get(be, 65532, &w, sizeof w));
        assert_int_equal(w, 0x5a5a5a5a);
        rig_buffer_release(bd);
        reached++;
      }
      rig_buffer_release(be);
    }
  }
  assert_true(reached > 0 && refused > 0);
  for (int i = 2; i < 5; i++)
    close_release(devs[i]);
  close_release(m);
}

/* ---- reclamation of mappings and staging ------------------------------- */

static int hook_calls;
static uint64_t host_at_hook;
static rig_buffer *held_by_hook; /* a buffer the collector hook releases */

static void collector(void *ctx) {
  (void)ctx;
  hook_calls++;
  host_at_hook = rig_device_allocated(rig_device_host());
  if (held_by_hook) {
    rig_buffer_release(held_by_hook);
    held_by_hook = NULL;
  }
}

/* RECLAIM-55: a host allocation over the host's budget returns, from round
 * 2 on, the staging memory no copy holds, which counts in that budget
 * wherever a device keeps it: here a GPU's (host=0) staging of a put.
 * Round 1 leaves it: round 2's collector hook still finds it counted. */
static void reclaim_55_round_2_returns_idle_staging(void **state) {
  (void)state;
  rig_device *g = open_ok("test:reclaim-55,delay_us=0,host=0"), *host = rig_device_host();
  rig_buffer *on_g = create_ok(g, 65536), *h = NULL;
  ok(rig_device_free_cache(host)); /* round 1 finds no cache to give back */
  uint64_t budget = rig_device_budget(host), before = rig_device_allocated(host);
  ok(rig_device_set_budget(host, before + 2 * 65536));
  static unsigned char bytes[65536];
  ok(rig_buffer_put(on_g, 0, bytes, sizeof bytes)); /* through staging */
  ok(rig_buffer_wait(on_g, RIG_READ_WRITE));        /* its copy done: idle */
  uint64_t staged = rig_device_allocated(host) - before;
  assert_true(staged >= 65536);
  hook_calls = 0;
  rig_runtime_set_collector(collector, NULL);
  rig_status st = rig_buffer_create(host, 2 * 65536, &h);
  rig_runtime_set_collector(NULL, NULL);
  ok(rig_device_set_budget(host, budget));
  check_ok(st, "a host allocation that only staging's return lets fit");
  assert_true(hook_calls >= 1);
  assert_true(host_at_hook >= before + staged); /* round 1 kept it */
  rig_buffer_release(h);
  rig_buffer_release(on_g);
  close_release(g);
}

/* RECLAIM-61, RECLAIM-62: a borrow's mapping the driver has no room for
 * (map_limit) first runs the collector hook, waits for the devices' unfinished
 * work and returns the mappings of ended borrows, then asks again; it
 * returns no other cached memory. Three borrows need it: one ended while its
 * work still ran, one the collector hook releases, and the staging of a put
 * (a mapping too) after an ended borrow; a cached allocation of the device
 * stays counted throughout. */
static void reclaim_61_62_mapping_room_frees_borrows_and_staging(void **state) {
  (void)state;
  rig_device *g = open_ok("test:reclaim-61,delay_us=100000,map_limit=65536,host=0");
  rig_buffer *h1 = create_ok(rig_device_host(), 65536), *h2 = create_ok(rig_device_host(), 65536);
  rig_buffer *cached = create_ok(g, 65536), *b1 = NULL, *b2 = NULL;
  rig_buffer_release(cached);
  rig_buffer_release(create_ok(g, 256)); /* moves it into the cache */
  assert_true(rig_device_allocated(g) >= 65536 + 256);
  /* an ended borrow whose work has not finished */
  ok(rig_buffer_borrow(g, h1, &b1));
  rig_point p;
  ok(rig_buffer_submit_fill(b1, 7, 4, &p));
  rig_buffer_release(b1);
  check_ok(rig_buffer_borrow(g, h2, &b2), "a borrow once the ended one's work is done");
  assert_true(rig_point_reached(p));
  /* a borrow the collector hook releases */
  held_by_hook = b2;
  rig_runtime_set_collector(collector, NULL);
  rig_status st = rig_buffer_borrow(g, h1, &b1);
  rig_runtime_set_collector(NULL, NULL);
  check_ok(st, "a borrow once the collector released the other");
  assert_null(held_by_hook);
  /* staging (a mapping) once the borrow ended */
  rig_buffer_release(b1);
  rig_buffer *on_g = create_ok(g, 256);
  uint32_t w = 9;
  check_ok(rig_buffer_put(on_g, 0, &w, sizeof w), "a put whose staging needs the borrow's room");
  ok(rig_buffer_wait(on_g, RIG_READ_WRITE));
  assert_true(rig_device_allocated(g) >= 65536 + 256); /* RECLAIM-62: the cached 64 KiB stayed */
  rig_buffer_release(on_g);
  rig_buffer_release(h1);
  rig_buffer_release(h2);
  close_release(g);
}

/* ERR-10: the peer check waits for nothing, so rig calls it with the
 * caller's signal mask, not ERR-9's (all but the synchronous signals
 * blocked): the driver's peer sees SIGUSR1 unblocked, while its submit, a
 * call that may wait, sees it blocked. */
static void err_10_the_peer_check_runs_unmasked(void **state) {
  (void)state;
  fake *f, *g;
  rig_device *d = open_fake("err-10-a", &f), *e = open_fake("err-10-b", &g);
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_UNBLOCK, &usr1, &old);
  assert_true(rig_device_reaches(d, e)); /* MACH-17: asks d's driver */
  rig_buffer *b = create_ok(d, 64);
  rig_point p;
  ok(rig_buffer_submit_fill(b, 1, 4, &p));
  ok(rig_point_wait(p));
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  assert_true(atomic_load(&f->peer_calls) >= 1);
  assert_int_equal(atomic_load(&f->peer_masked), 0);
  assert_true(atomic_load(&f->submit_masked) >= 1); /* ERR-9 around the rest */
  rig_buffer_release(b);
  close_release(d);
  close_release(e);
}

/* ---- slots and word mappings ------------------------------------------- */

/* Submits a words-only piece of work on d: no buffer, so no memory holds
 * its slot (OPEN-11). */
static rig_status submit_words(rig_device *d, rig_point *p) {
  static const uint32_t packet[1] = {0};
  rig_part part = rig_part_words(packet, 1);
  rig_submission *s;
  rig_run *r;
  ok(rig_submission_make(d, &part, 1, &s));
  ok(rig_submission_take(s, &r));
  rig_status st = rig_run_submit(r, NULL, 0, NULL, 0, p);
  rig_submission_release(s);
  return st;
}

/* OPEN-13: a device that never stops keeps its slot: a test device whose
 * first work never finishes, lost by a fault, holding no memory, closed;
 * with silent_stop its stop never reports that work's value, so it never
 * stops, and through moves and eight opens no device takes its slot. The
 * same device whose stop reports gives its slot to the next open (the slot
 * freed last), which shows the opens would find it. */
static void open_13_a_device_that_never_stops_keeps_its_slot(void **state) {
  (void)state;
  for (int silent = 0; silent <= 1; silent++) {
    char name[64];
    snprintf(name, sizeof name, "test:open-13-%d,hang_nth=1,fault_nth=2,silent_stop=%d", silent,
             silent);
    rig_device *d = open_ok(name);
    uint32_t s = slot_of(d);
    rig_point p;
    ok(submit_words(d, &p));                            /* never finishes */
    assert_int_equal(submit_words(d, &p), RIG_LOST);   /* the fault */
    check_ok(rig_device_close(d), "close");                    /* its stop returns */
    for (int i = 0; i < 8; i++) {
      ok(rig_device_free_cache(d));
      ok(rig_device_free_cache(rig_device_host()));
      snprintf(name, sizeof name, "memory:open-13-%d-%d", silent, i);
      rig_device *e = open_ok(name);
      uint32_t got = slot_of(e);
      close_release(e);
      if (!silent) {
        assert_int_equal(got, s); /* stopped: its slot is free, and taken */
        break;
      }
      assert_int_not_equal(got, s);
    }
    rig_device_release(d);
  }
}

/* ---- OPEN-14: in a forked child, since rig_runtime_fail fails the process ---- */

#define CHILD_CHECK(n, cond)                                                 \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "check %d failed: %s (%s)\n", n, #cond,                \
              rig_error_last()->message);                                    \
      _exit(n);                                                              \
    }                                                                        \
  } while (0)

struct racing_open {
  rig_device *d;
  rig_status st;
};

static void *open_in_thread(void *arg) {
  struct racing_open *o = arg;
  o->st = rig_device_open_driver("fake:open-14-racing", &fake_driver, "opengate", &o->d);
  return NULL;
}

static void open_14_child(void) {
  rig_device *x = NULL, *q = NULL, *q2 = NULL;
  CHILD_CHECK(1, rig_device_open_memory("open-14-x", &x) == RIG_OK);
  uint32_t sx = slot_of(x);
  /* The slot freed last is the next open's: q's, as q2 shows. */
  CHILD_CHECK(2, rig_device_open_memory("open-14-q", &q) == RIG_OK);
  uint32_t sq = slot_of(q);
  CHILD_CHECK(3, rig_device_close(q) == RIG_OK);
  rig_device_release(q);
  CHILD_CHECK(4, rig_device_open_memory("open-14-q2", &q2) == RIG_OK && slot_of(q2) == sq);
  CHILD_CHECK(5, rig_device_close(q2) == RIG_OK);
  rig_device_release(q2);
  /* An open under way as rig_runtime_fail runs takes a slot after it (ERR-42). */
  struct racing_open o = {0};
  pthread_t t;
  open_shut = true;
  pthread_create(&t, NULL, open_in_thread, &o);
  pthread_mutex_lock(&open_lock);
  while (!in_open)
    pthread_cond_wait(&open_cond, &open_lock);
  pthread_mutex_unlock(&open_lock);
  rig_runtime_fail("open-14: failed on purpose");
  CHILD_CHECK(6, rig_device_lost(x) != NULL);
  CHILD_CHECK(7, rig_device_free_cache(x) == RIG_OK && rig_device_free_cache(rig_device_host()) == RIG_OK);
  pthread_mutex_lock(&open_lock);
  open_shut = false;
  pthread_cond_broadcast(&open_cond);
  pthread_mutex_unlock(&open_lock);
  pthread_join(t, NULL);
  CHILD_CHECK(8, o.st == RIG_OK && o.d && rig_device_lost(o.d));
  /* The failure took no slot: the racing open has the slot freed last;
   * and x, lost by it, kept its own. */
  CHILD_CHECK(9, slot_of(o.d) == sq);
  CHILD_CHECK(10, slot_of(x) == sx && sx != sq);
  rig_device *y = NULL;
  CHILD_CHECK(11, rig_device_open_memory("open-14-after", &y) == RIG_UNAVAILABLE); /* OPEN-4 */
  CHILD_CHECK(12, rig_device_close(o.d) == RIG_OK && rig_device_close(x) == RIG_OK);
  _exit(0);
}

/* OPEN-14, as docs/decisions.md settles it: the process's first failure
 * takes no slot of its own, and the devices it loses keep theirs, as any
 * lost device does (OPEN-12). Seen through the one open that can still
 * take a slot after rig_runtime_fail, an open under way as it runs (ERR-42): it
 * takes the slot freed last before the failure, neither one the failure
 * took nor the lost device's. */
static void open_14_the_failure_takes_no_slot(void **state) {
  (void)state;
  run_in_child(open_14_child);
}

/* A fill of b (its device's queue) after point w of another device. */
static rig_status fill_after(rig_buffer *b, rig_point w, rig_point *p) {
  rig_part part = rig_part_fill(0, 7, 4);
  rig_submission *s;
  rig_run *r;
  ok(rig_submission_make(rig_buffer_device(b), &part, 1, &s));
  ok(rig_submission_take(s, &r));
  rig_status st = rig_run_submit(r, &b, 1, &w, 1, p);
  rig_submission_release(s);
  return st;
}

static uint64_t word_mappings(const rig_device *d) {
  rig_stats st;
  rig_device_stats(d, &st);
  return st.word_mappings;
}

/* OPEN-22: d's queue waits on e1's word (a mapping); e1 closes and e2
 * takes its slot; d's next wait, on e2, retires e1's mapping while d's
 * work that read it is still uncommitted (commit_k), so it stays. Once
 * d's queue has passed that work, a wait alone keeps it; the next call
 * that moves d's memory (rig_device_free_cache) gives it back. */
static void open_22_a_move_releases_a_passed_mapping(void **state) {
  (void)state;
  rig_device *d = open_ok("test:open-22-d,commit_k=64");
  rig_device *e1 = open_ok("test:open-22-e1,commit_k=64,delay_us=50000");
  uint32_t s = slot_of(e1);
  rig_buffer *bd = create_ok(d, 64), *bd2 = create_ok(d, 64), *be = create_ok(e1, 64);
  rig_point p1, q1, p2, q2;
  ok(rig_buffer_submit_fill(be, 1, 4, &p1));
  ok(fill_after(bd, p1, &q1));
  assert_int_equal(word_mappings(d), 1);
  ok(rig_point_wait(p1));
  rig_buffer_release(be);
  close_release(e1);
  rig_device *e2 = open_ok("test:open-22-e2,commit_k=64,delay_us=50000");
  assert_int_equal(slot_of(e2), s);
  rig_buffer *be2 = create_ok(e2, 64);
  ok(rig_buffer_submit_fill(be2, 2, 4, &p2));
  ok(fill_after(bd2, p2, &q2));          /* not bd: q1 stays uncommitted */
  assert_int_equal(word_mappings(d), 2); /* e1's retired, not yet passed */
  ok(rig_point_wait(q2));                /* commits q1 too: d's queue passed it */
  assert_int_equal(word_mappings(d), 2);
  ok(rig_device_free_cache(d));                 /* a move of d's memory */
  assert_int_equal(word_mappings(d), 1); /* e2's stays */
  rig_buffer_release(be2);
  rig_buffer_release(bd);
  rig_buffer_release(bd2);
  close_release(e2);
  close_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(valid_19_no_ref_to_handle_only_memory),
      cmocka_unit_test(valid_21_fixed_queue_limits_a_submission),
      cmocka_unit_test(submit_5_a_blocking_submit_holds_submits_and_commits),
      cmocka_unit_test(mach_10_reaches_is_what_a_borrow_gives),
      cmocka_unit_test(reclaim_55_round_2_returns_idle_staging),
      cmocka_unit_test(err_10_the_peer_check_runs_unmasked),
      cmocka_unit_test(reclaim_61_62_mapping_room_frees_borrows_and_staging),
      cmocka_unit_test(open_13_a_device_that_never_stops_keeps_its_slot),
      cmocka_unit_test(open_14_the_failure_takes_no_slot),
      cmocka_unit_test(open_22_a_move_releases_a_passed_mapping),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
