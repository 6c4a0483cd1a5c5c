/* test_seams.c: where one device's memory meets another device's work.
 *
 * Each test here guards a crash, a corruption or a wrong answer found at a
 * seam: a borrow of io pages copied on the host, a buffer whose memory one
 * driver owns named in another driver's work, a buffer freed under a host
 * copy, a submission released while its work still reads it, and calls
 * that must refuse or assign nothing. Vulkan's parts skip where no Vulkan
 * device opens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../driver/testdev.h"
#include "kernels.h"
#include "io_util.h"
#include "util.h"

static unsigned char pat(size_t i, unsigned seed) { return (unsigned char)(i * 13 + seed); }

static void put_pattern(rig_buffer *b, unsigned seed) {
  size_t n = rig_buffer_length(b);
  unsigned char *x = malloc(n);
  for (size_t i = 0; i < n; i++)
    x[i] = pat(i, seed);
  ok(rig_buffer_put(b, 0, x, n));
  free(x);
}

static bool has_pattern(rig_buffer *b, unsigned seed) {
  size_t n = rig_buffer_length(b);
  unsigned char *x = malloc(n);
  ok(rig_buffer_get(b, 0, x, n));
  bool same = true;
  for (size_t i = 0; i < n && same; i++)
    same = x[i] == pat(i, seed);
  free(x);
  return same;
}

/* An io device over a new file of n bytes (io_util.c's io_path). */
static rig_device *open_file(size_t n) { return open_io_ok(RIG_IO_CREATE, n); }

/* The Vulkan device name, opened; NULL (the caller skips) where none opens. */
static rig_device *open_vulkan(const char *name) {
  rig_device *v = NULL;
  return rig_device_open(name, &v) == RIG_OK ? v : NULL;
}

/* ---- io pages borrowed ------------------------------------------------- */

/* A borrow of io pages onto the host is host memory: the host's copies,
 * gets and puts move its bytes through the pages, which are the file's,
 * and it has a host address. (It was a SIGSEGV: the copy took the io
 * allocation's host address, which is NULL.) */
static void io_pages_borrowed_on_the_host(void **state) {
  (void)state;
  rig_device *io = open_file(2 * 4096);
  rig_buffer *f, *on_host, *h = create_ok(rig_device_host(), 4096), *h2 = create_ok(rig_device_host(), 4096);
  ok(rig_buffer_of_io(io, 4096, 4096, &f));
  put_pattern(f, 3);
  ok(rig_buffer_borrow(rig_device_host(), f, &on_host));
  assert_non_null(rig_buffer_host_address(on_host));
  ok(rig_buffer_copy(on_host, h));                         /* out of the pages */
  assert_true(has_pattern(h, 3));
  assert_true(has_pattern(on_host, 3));                    /* a get through them */
  put_pattern(h2, 9);
  ok(rig_buffer_copy(h2, on_host));                        /* into them */
  assert_true(has_pattern(f, 9));
  put_pattern(on_host, 11);                                /* a put through them */
  assert_true(has_pattern(f, 11));
  rig_point p;
  ok(rig_buffer_submit_copy(on_host, h, &p));              /* with a host value (TL-3) */
  ok(rig_point_wait(p));
  assert_true(has_pattern(h, 11));
  rig_buffer_release(on_host);
  rig_buffer_release(f);
  rig_buffer_release(h);
  rig_buffer_release(h2);
  close_release(io);
}

/* Gets and puts through a borrow of io pages work on every device that
 * borrows them: the pages are host memory whichever device maps them
 * (it was "cannot map N bytes of staging"). */
static void io_pages_get_put_through_borrows_anywhere(void **state) {
  (void)state;
  rig_device *io = open_file(4096);
  rig_device *devs[3] = {open_ok("test:seams-pages,delay_us=20"), open_ok("memory:seams-pages"),
                         open_vulkan("vulkan:0")};
  rig_buffer *f;
  ok(rig_buffer_of_io(io, 0, 4096, &f));
  for (int i = 0; i < 3; i++) {
    if (!devs[i])
      continue;
    rig_buffer *b;
    ok(rig_buffer_borrow(devs[i], f, &b));
    put_pattern(b, 20 + i);
    assert_true(has_pattern(f, 20 + i));
    put_pattern(f, 30 + i);
    assert_true(has_pattern(b, 30 + i));
    rig_buffer_release(b);
  }
  rig_buffer_release(f);
  for (int i = 0; i < 3; i++)
    if (devs[i])
      close_release(devs[i]);
  close_release(io);
}

/* A copy between io memory and a borrow whose memory the host does not
 * address passes through that memory's staging, as a copy of the memory
 * itself does (it was refused: "copy from the borrowed buffer itself"). */
static void io_memory_to_a_borrow_the_host_does_not_address(void **state) {
  (void)state;
  rig_device *io = open_file(4096);
  rig_device *g = open_ok("test:seams-g,host=0,delay_us=20");
  rig_device *t = open_ok("test:seams-t,delay_us=20");
  rig_buffer *f, *b, *on_t;
  ok(rig_buffer_of_io(io, 0, 4096, &f));
  ok(rig_buffer_create(g, 4096, &b));
  ok(rig_buffer_borrow(t, b, &on_t));                      /* a peer's memory */
  put_pattern(f, 5);
  ok(rig_buffer_copy(f, on_t));
  assert_true(has_pattern(b, 5));
  put_pattern(b, 6);
  ok(rig_buffer_copy(on_t, f));
  assert_true(has_pattern(f, 6));
  rig_buffer_release(on_t);
  rig_buffer_release(b);
  rig_buffer_release(f);
  close_release(t);
  close_release(g);
  close_release(io);
}

/* ---- one driver's memory in another driver's work ---------------------- */

/* A copy that the memory's owner runs through a borrow on another device
 * names the owner's own record, never the borrowing driver's mapping: with
 * Vulkan owning the memory and the borrow on a test device (a SIGSEGV), and
 * with a test device owning it and the borrow on Vulkan (the test device
 * wrote into Vulkan's record). */
static void copy_through_a_borrow_names_the_runners_record(void **state) {
  (void)state;
  rig_device *v = open_vulkan("vulkan:0");
  if (!v)
    skip();
  rig_device *t = open_ok("test:seams-borrow,delay_us=20");
  rig_device *owners[2] = {v, t}, *borrowers[2] = {t, v};
  for (int i = 0; i < 2; i++) {
    rig_buffer *mem = create_ok(owners[i], 65536), *peer = create_ok(owners[i], 65536), *on;
    ok(rig_buffer_borrow(borrowers[i], mem, &on));
    put_pattern(peer, 40 + i);
    ok(rig_buffer_copy(peer, on));                         /* the owner runs it */
    assert_true(has_pattern(mem, 40 + i));
    put_pattern(mem, 50 + i);
    ok(rig_buffer_copy(on, peer));
    assert_true(has_pattern(peer, 50 + i));
    ok(rig_buffer_fill(on, 0x01010101u * (unsigned)(60 + i), 4));
    unsigned char x[8];
    ok(rig_buffer_get(mem, 100, x, sizeof x));
    assert_int_equal(x[0], 60 + i);
    rig_buffer_release(on);
    rig_buffer_release(mem);
    rig_buffer_release(peer);
  }
  close_release(t);
  close_release(v);
}

/* A borrow on a memory device, written by a copy that a peer of the
 * memory's owner runs (a test device whose memory the host does not
 * address, so the memory device cannot run it), and released at once: the
 * copy names the owner's record, not the borrow's mapping, which goes back
 * when the memory device passes its own work (it was a use after free that
 * lost the copy's bytes). */
static void a_borrow_released_under_a_peers_copy(void **state) {
  (void)state;
  rig_device *t = open_ok("test:seams-late,delay_us=50");
  rig_device *g = open_ok("test:seams-late-g,host=0,delay_us=300");
  rig_device *m = open_ok("memory:seams-late");
  for (int round = 0; round < 40; round++) {
    rig_buffer *mem = create_ok(t, 65536), *src = create_ok(g, 65536), *on;
    put_pattern(src, (unsigned)round);
    ok(rig_buffer_borrow(m, mem, &on));
    rig_point p;
    ok(rig_buffer_submit_copy(src, on, &p));
    rig_device *runner = rig_point_device(p);
    assert_ptr_equal(runner, g);                           /* the peer runs it */
    rig_device_release(runner);
    rig_buffer_release(on);
    ok(rig_device_free_cache(m));                                 /* gives back passed mappings */
    ok(rig_point_wait(p));
    assert_true(has_pattern(mem, (unsigned)round));
    rig_buffer_release(mem);
    rig_buffer_release(src);
  }
  close_release(m);
  close_release(g);
  close_release(t);
}

/* A host or memory-device buffer named in a Vulkan submission as it is,
 * not borrowed, is RIG_INVALID: Vulkan's work addresses host memory only
 * through a mapping of its own (it was a SIGSEGV in the queue thread). Its
 * borrow is admitted, and the work writes the host's bytes. */
static void a_foreign_buffer_in_another_drivers_submission(void **state) {
  (void)state;
  rig_device *v = open_vulkan("vulkan:0");
  if (!v)
    skip();
  rig_device *m = open_ok("memory:seams-foreign");
  rig_part fill = {.kind = RIG_PART_FILL, .dst = 0, .pattern = 0x5a5a5a5au, .pattern_bytes = 4};
  rig_submission *s;
  ok(rig_submission_make(v, &fill, 1, &s));
  rig_buffer *bufs[2] = {create_ok(rig_device_host(), 65536), create_ok(m, 65536)};
  for (int i = 0; i < 2; i++) {
    rig_run *r;
    rig_point p;
    ok(rig_submission_take(s, &r));
    assert_int_equal(rig_run_submit(r, &bufs[i], 1, NULL, 0, &p), RIG_INVALID);
    assert_non_null(strstr(rig_error_last()->message, "borrow it onto"));
    rig_buffer *on;
    ok(rig_buffer_borrow(v, bufs[i], &on));
    ok(rig_submission_take(s, &r));
    ok(rig_run_submit(r, &on, 1, NULL, 0, &p));
    ok(rig_point_wait(p));
    unsigned char x[4];
    ok(rig_buffer_get(bufs[i], 65532, x, 4));
    assert_int_equal(x[0], 0x5a);
    rig_buffer_release(on);
  }
  rig_submission_release(s);
  rig_buffer_release(bufs[0]);
  rig_buffer_release(bufs[1]);
  close_release(m);
  close_release(v);
}

/* ---- a free under the host's own access ------------------------------- */

typedef struct racer {
  rig_buffer *b, *other;
  int copy;                 /* 0: gets, 1: copies out, 2: copies in, 3: fills */
  unsigned char *dst;
  rig_status last;
  unsigned calls;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  size_t n = rig_buffer_length(r->b);
  do {
    switch (r->copy) {
    case 0: r->last = rig_buffer_get(r->b, 0, r->dst, n); break;
    case 1: r->last = rig_buffer_copy(r->b, r->other); break;
    case 2: r->last = rig_buffer_copy(r->other, r->b); break;
    default: r->last = rig_buffer_fill(r->b, 0x33333333u, 4); break;
    }
    r->calls++;
  } while (r->last == RIG_OK);
  return NULL;
}

/* rig_buffer_free while another thread's get, copy or fill, which the host
 * runs and which take no point, is under way: the memory returns only
 * after it, and the thread's next call is RIG_INVALID (dead). It was a use
 * after free: the free unmapped 4 MiB under the memcpy (SIGSEGV plain, a
 * heap-use-after-free under ASan). */
static void free_under_a_host_access(void **state) {
  (void)state;
  size_t n = 4u << 20;
  unsigned char *dst = malloc(n);
  for (int round = 0; round < 24; round++) {
    racer r = {.b = create_ok(rig_device_host(), n), .other = create_ok(rig_device_host(), n),
               .copy = round % 4, .dst = dst};
    ok(rig_buffer_fill(r.b, 0x01010101u, 4));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, race, &r), 0);
    sleep_ms(1 + round % 3);
    ok(rig_buffer_free(r.b));
    for (int k = 0; k < 4; k++) /* moves that would give the memory back */
      ok(rig_device_free_cache(rig_device_host()));
    pthread_join(t, NULL);
    assert_int_equal(r.last, RIG_INVALID);
    rig_buffer_release(r.b);
    rig_buffer_release(r.other);
  }
  ok(rig_device_free_cache(rig_device_host()));
  free(dst);
}

typedef struct staged_get {
  rig_buffer *b;
  unsigned char *dst;
  rig_status st;
} staged_get;

static void *get_through_staging(void *arg) {
  staged_get *g = arg;
  g->st = rig_buffer_get(g->b, 0, g->dst, rig_buffer_length(g->b));
  return NULL;
}

/* rig_buffer_free while another thread's get of memory the host does not
 * address is between its check and the stamp of its staging copy: the
 * memory returns only after that copy, which reads the bytes put. It was a
 * use after free (found by tests/random): the free saw no point of the
 * copy, gave the memory back, and the driver copied out of freed memory
 * (a heap-use-after-free under ASan; plain, the bytes of the buffer made
 * after it). The test device's submit blocks 100 ms to hold the window. */
static void free_under_a_staged_get(void **state) {
  (void)state;
  rig_device *t = open_ok("test:seams-staged,host=0,block_ms=100");
  size_t n = 4096;
  staged_get g = {create_ok(t, n), malloc(n), RIG_OK};
  put_pattern(g.b, 5);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, get_through_staging, &g), 0);
  sleep_ms(30);
  ok(rig_buffer_free(g.b));
  ok(rig_device_free_cache(t));
  rig_buffer *again = create_ok(t, n); /* the freed memory, were it back */
  ok(rig_buffer_fill(again, 0x77777777u, 4));
  pthread_join(th, NULL);
  if (g.st == RIG_OK)
    for (size_t i = 0; i < n; i++)
      assert_int_equal(g.dst[i], pat(i, 5));
  else
    assert_int_equal(g.st, RIG_INVALID);
  rig_buffer_release(again);
  rig_buffer_release(g.b);
  free(g.dst);
  close_release(t);
}

/* ---- a submission's memory ---------------------------------------------- */

/* RUN-8: a submission released at once after its submit keeps its memory
 * until that work is done: the test device reads a words part's words when
 * the work runs, 2 ms later, and must read the words given (it read freed
 * memory, which MALLOC_PERTURB_ or ASan shows). */
static void run_8_a_released_submissions_words_stay(void **state) {
  (void)state;
  rig_device *t = open_ok("test:seams-run8,delay_us=2000");
  const rig_test_trace *trace = rig_device_capability(t, "test.trace");
  assert_non_null(trace);
  uint32_t words[64];
  for (int i = 0; i < 64; i++)
    words[i] = 0xC0DE0000u + (uint32_t)i;
  rig_point last = RIG_POINT_NONE;
  for (int round = 0; round < 8; round++) {
    rig_part part = rig_part_words(words, 64);
    rig_submission *s;
    rig_run *r;
    ok(rig_submission_make(t, &part, 1, &s));
    ok(rig_submission_take(s, &r));
    ok(rig_run_submit(r, NULL, 0, NULL, 0, &last));
    rig_submission_release(s);                             /* before the work runs */
    void *junk[8];
    for (int k = 0; k < 8; k++) /* reuse what a free gave back */
      memset(junk[k] = malloc(64 * 4), 0xEE, 64 * 4);
    for (int k = 0; k < 8; k++)
      free(junk[k]);
  }
  ok(rig_point_wait(last));
  rig_test_trace_entry e[8];
  size_t n = trace->read(trace->h, e, 8);
  assert_int_equal(n, 8);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(e[i].word0, 0xC0DE0000u);
  ok(rig_device_free_cache(t));                                   /* lets the memory go */
  ok(rig_device_free_cache(t));
  close_release(t);
}

/* ---- interrupted calls assign nothing ---------------------------------- */

static int always(void *ctx) {
  (void)ctx;
  return 1;
}

/* DOM-10: a blocking copy or fill whose own work a device has taken is no
 * longer interruptible: it returns once the bytes are there, RIG_OK, never
 * RIG_INTERRUPTED with a value assigned and the destination written later
 * (it returned RIG_INTERRUPTED after assigning one). */
static void dom_10_no_interruption_after_a_value(void **state) {
  (void)state;
  rig_device *g = open_ok("test:seams-intr,host=0,delay_us=20000");
  rig_buffer *h = create_ok(rig_device_host(), 4096), *b = create_ok(g, 4096);
  put_pattern(h, 77);
  rig_runtime_set_wait_hook(always, NULL);
  uint64_t before = rig_device_submitted(g);
  rig_status copied = rig_buffer_copy(h, b);               /* staged: the device's step */
  uint64_t after_copy = rig_device_submitted(g);
  rig_status filled = rig_buffer_fill(b, 0x11223344u, 4);
  rig_runtime_set_wait_hook(NULL, NULL);
  assert_int_equal(copied, RIG_OK);
  assert_true(after_copy > before);
  assert_int_equal(filled, RIG_OK);
  unsigned char x[4];
  ok(rig_buffer_get(b, 0, x, 4));
  assert_int_equal(x[0], 0x44);
  rig_buffer_release(h);
  rig_buffer_release(b);
  close_release(g);
}

/* DOM-10 from the other side: a copy interrupted while it waits on the host
 * for another device's work, before its device takes a value, returns
 * RIG_INTERRUPTED having assigned none and written nothing. */
static void dom_10_interrupted_before_a_value(void **state) {
  (void)state;
  rig_device *slow = open_ok("test:seams-slow,delay_us=300000");
  rig_device *g = open_ok("test:seams-hostwait,waits=0,delay_us=10");
  rig_buffer *x = create_ok(slow, 4096), *y = create_ok(g, 4096);
  ok(rig_buffer_fill(y, 0, 1));
  rig_point p;
  ok(rig_buffer_submit_fill(x, 0x01010101u, 4, &p));     /* 300 ms of work */
  uint64_t before = rig_device_submitted(g);
  rig_runtime_set_wait_hook(always, NULL);
  rig_status st = rig_buffer_copy(x, y);
  rig_runtime_set_wait_hook(NULL, NULL);
  assert_int_equal(st, RIG_INTERRUPTED);
  assert_int_equal(rig_device_submitted(g), before);
  unsigned char b[4];
  ok(rig_buffer_get(y, 0, b, 4));
  assert_int_equal(b[0], 0);
  ok(rig_point_wait(p));
  rig_buffer_release(x);
  rig_buffer_release(y);
  close_release(g);
  close_release(slow);
}

/* A submit's waits name points that exist: a value its own device, or
 * another, has not been given, or a slot of no device, is RIG_INVALID and
 * assigns no value, as rig_point_wait refuses them (the work ran without
 * following them, RIG_OK). */
static void submit_waits_on_points_not_given(void **state) {
  (void)state;
  rig_device *t = open_ok("test:seams-waits,delay_us=10"), *u = open_ok("memory:seams-waits");
  rig_part fill = rig_part_fill(0, 0x5a5a5a5au, 4);
  rig_submission *s;
  ok(rig_submission_make(t, &fill, 1, &s));
  rig_buffer *b = create_ok(t, 64);
  rig_point bad[3] = {rig_point_make(slot_of(t), rig_device_submitted(t) + 1),
                      rig_point_make(slot_of(u), rig_device_submitted(u) + 5),
                      rig_point_make(UINT32_MAX >> 8, 1)};
  for (int i = 0; i < 3; i++) {
    uint64_t before = rig_device_submitted(t);
    rig_run *r;
    rig_point p;
    assert_int_equal(rig_point_wait(bad[i]), RIG_INVALID);
    ok(rig_submission_take(s, &r));
    assert_int_equal(rig_run_submit(r, &b, 1, &bad[i], 1, &p), RIG_INVALID);
    assert_int_equal(rig_device_submitted(t), before);
  }
  rig_run *r;
  rig_point p, fine = rig_point_make(slot_of(t), rig_device_submitted(t));
  ok(rig_submission_take(s, &r));
  ok(rig_run_submit(r, &b, 1, &fine, 1, &p));                  /* a point given is fine */
  ok(rig_point_wait(p));
  rig_submission_release(s);
  rig_buffer_release(b);
  close_release(u);
  close_release(t);
}

/* ---- claims and holds ---------------------------------------------------- */

static void consume(rig_claim *c, rig_buffer *b, void *ctx) {
  (void)b;
  ok(rig_claim_consume(c, (rig_buffer **)ctx));
}

/* A consume's buffer spans the allocation as create gave it: 13 bytes, not
 * 16, so no byte past the allocation's length shows (it was rounded up to
 * a word). */
static void consume_gives_the_allocations_length(void **state) {
  (void)state;
  rig_device *m = open_ok("memory:seams-consume");
  rig_buffer *b = create_ok(m, 13), *fresh = NULL;
  ok(rig_claim_with(b, consume, &fresh));
  assert_non_null(fresh);
  assert_int_equal(rig_buffer_length(fresh), 13);
  rig_buffer_release(fresh);
  rig_buffer_release(b);
  close_release(m);
}

/* RECLAIM-20 in rig_device_free_cache: the holds released since the last move go
 * first, so the memory the last one held returns in the same call (it
 * stayed counted, in this thread's magazine, until a second call). */
static void free_cache_releases_holds_first(void **state) {
  (void)state;
  rig_device *m = open_ok("memory:seams-holds");
  uint64_t before = rig_device_allocated(m);
  rig_buffer *b = create_ok(m, 1 << 20);
  rig_claim *c;
  ok(rig_claim_hold(b, &c));
  rig_buffer_release(b);
  rig_claim_release(c);                                    /* only queues */
  assert_true(rig_device_allocated(m) > before);
  ok(rig_device_free_cache(m));
  assert_int_equal(rig_device_allocated(m), before);
  close_release(m);
}

/* ---- profiles over io pages ---------------------------------------------- */

/* A fill then a copy on d over a (slot 0) and b (slot 1), waited for:
 * its point. */
static rig_point fill_then_copy(rig_device *d, rig_buffer *a, rig_buffer *b) {
  rig_part parts[2] = {rig_part_fill(0, 0x5c, 1), rig_part_copy(0, 1)};
  rig_submission *s = NULL;
  ok(rig_submission_make(d, parts, 2, &s));
  rig_run *r = take_ok(s);
  rig_buffer *bufs[2] = {a, b};
  rig_point p = 0;
  ok(rig_run_submit(r, bufs, 2, NULL, 0, &p));
  ok(rig_point_wait(p));
  rig_submission_release(s);
  return p;
}

/* Asserts prof holds one record of point p's part part: kind, named
 * name, on device dev. */
static void expect_record(const rig_profile *prof, rig_point p, uint32_t part, rig_part_kind kind,
                          const char *name, const char *dev) {
  size_t n = 0, found = 0;
  const rig_profile_record *r = rig_profile_records(prof, &n);
  for (size_t i = 0; i < n; i++)
    if (r[i].point == p && r[i].part == part) {
      assert_string_equal(rig_profile_device(prof, r[i].device), dev);
      assert_int_equal(r[i].kind, kind);
      assert_string_equal(r[i].name, name);
      assert_true(r[i].end_ns >= r[i].start_ns);
      found++;
    }
  assert_int_equal(found, 1);
}

/* Submits a launch of copy_bytes on the host from src (slot 0) into dst
 * (slot 1), n bytes, and waits for it: its status, its point in *p. */
static rig_status host_copy_bytes(rig_buffer *src, rig_buffer *dst, size_t n, rig_point *p) {
  rig_image *im = kernel_load("copy_bytes");
  rig_function *f = resolve_ok(im, "copy_bytes");
  rig_ref refs[2] = {rig_ref_read(0, offsetof(struct copy_bytes, src)),
                     rig_ref_write(1, offsetof(struct copy_bytes, dst))};
  rig_submission *s = launch_make_ok(rig_device_host(), f, refs, 2, sizeof(struct copy_bytes));
  rig_run *r = take_ok(s);
  grid_ok(r, 0, n / COPY_BYTES_THREADS + 1, COPY_BYTES_THREADS);
  ok(rig_run_int64(r, 0, offsetof(struct copy_bytes, n), (int64_t)n));
  rig_buffer *bufs[2] = {src, dst};
  rig_status st = rig_run_submit(r, bufs, 2, NULL, 0, p);
  if (st == RIG_OK)
    ok(rig_point_wait(*p));
  rig_submission_release(s);
  rig_image_release(im);
  return st;
}

/* A profile over work on a file's pages: the host's fill of a borrow of
 * them and its launch that copies out of that borrow, and vulkan:0's
 * fill and copy over its own borrow (where it opens), each give one
 * record a part, on the device that ran it; the io device, which times
 * no work, is named by none; a submission naming the io pages themselves
 * is refused and records nothing; the file holds the bytes. */
static void profile_over_io_pages(void **state) {
  (void)state;
  size_t n = 2 * 4096;
  rig_device *io = open_file(4 * 4096), *host = rig_device_host(), *v = open_vulkan("vulkan:0");
  rig_buffer *f, *on_host, *h = create_ok(host, n);
  ok(rig_buffer_of_io(io, 4096, n, &f));
  ok(rig_buffer_borrow(host, f, &on_host));
  rig_profile *prof = NULL;
  ok(rig_profile_take(&prof)); /* what earlier tests left */
  rig_profile_free(prof);
  rig_profile_start(0);
  rig_point fp = 0, lp = 0, vp = 0, none = 0;
  ok(rig_buffer_submit_fill(on_host, 0x5c, 1, &fp));
  ok(host_copy_bytes(on_host, h, n, &lp));
  rig_buffer *on_v = NULL, *vb = NULL;
  if (v) {
    ok(rig_buffer_borrow(v, f, &on_v));
    vb = create_ok(v, n);
    vp = fill_then_copy(v, on_v, vb);
  }
  /* The pages themselves, not borrowed: the host does not reach io memory. */
  assert_int_equal(host_copy_bytes(f, h, n, &none), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, rig_device_name(io)));
  rig_profile_stop();
  ok(rig_profile_take(&prof));
  size_t records = 0;
  rig_profile_records(prof, &records);
  assert_int_equal(records, v ? 4 : 2);
  for (uint32_t i = 0; i < rig_profile_devices(prof); i++)
    assert_string_not_equal(rig_profile_device(prof, i), rig_device_name(io));
  expect_record(prof, fp, 0, RIG_PART_FILL, "fill", "CPU");
  expect_record(prof, lp, 0, RIG_PART_LAUNCH, "copy_bytes", "CPU");
  if (v) {
    expect_record(prof, vp, 0, RIG_PART_FILL, "fill", rig_device_name(v));
    expect_record(prof, vp, 1, RIG_PART_COPY, "copy", rig_device_name(v));
  }
  rig_profile_free(prof);
  expect_bytes(f, 0, n, 0x5c);
  expect_bytes(h, 0, n, 0x5c);
  if (v) {
    expect_bytes(vb, 0, n, 0x5c);
    rig_buffer_release(on_v);
    rig_buffer_release(vb);
    close_release(v);
  }
  rig_buffer_release(on_host);
  rig_buffer_release(h);
  rig_buffer_release(f);
  close_release(io);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(io_pages_borrowed_on_the_host, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_pages_get_put_through_borrows_anywhere, io_setup, io_teardown),
      cmocka_unit_test_setup_teardown(io_memory_to_a_borrow_the_host_does_not_address, io_setup,
                                      io_teardown),
      cmocka_unit_test(copy_through_a_borrow_names_the_runners_record),
      cmocka_unit_test(a_borrow_released_under_a_peers_copy),
      cmocka_unit_test(a_foreign_buffer_in_another_drivers_submission),
      cmocka_unit_test(free_under_a_host_access),
      cmocka_unit_test(free_under_a_staged_get),
      cmocka_unit_test(run_8_a_released_submissions_words_stay),
      cmocka_unit_test(dom_10_no_interruption_after_a_value),
      cmocka_unit_test(dom_10_interrupted_before_a_value),
      cmocka_unit_test(submit_waits_on_points_not_given),
      cmocka_unit_test(consume_gives_the_allocations_length),
      cmocka_unit_test(free_cache_releases_holds_first),
      cmocka_unit_test_setup_teardown(profile_over_io_pages, io_setup, io_teardown),
  };
  const char *only = getenv("RIG_TEST_ONLY"); /* one test, by name pattern */
  if (only && *only)
    cmocka_set_test_filter(only);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
