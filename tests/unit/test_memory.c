/* test_memory.c: a buffer's life from its release to its return (RECLAIM-1,
 * 3, 5, 6, 9, 10, 13, 18, 19, 21..23, 30, 31, 37, 41, 42, 50, 66, 67, 72..75,
 * LIFE-4, 6..8, GRECL-1, 2, 8), budgets, staging, host access to memory the
 * host does not address (HACC-4, 6..8), and what librig leaves alone
 * (RECLAIM-39).
 *
 * Work is held back without timing where core allows: a test device opened
 * with commit_k=8 runs a value only once rig commits it, and free_cache,
 * set_budget and the moves of collected memory read the device's reported
 * value under a lock, where nothing commits. A create that looks into its
 * thread's magazine may commit (outside any lock), so the tests of creates
 * also make the work slow, and check "reused => reported", which holds
 * whatever the timing. Waits are bounded; nothing asserts a duration.
 *
 * Left out on purpose: io memory (no io driver here), the kept values of
 * collected submissions (C keeps none), Pinned memory (test_reclaim.c), and
 * queue growth in submit (no driver here grows its queues in memory). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)

static rig_device *open_dev(const char *name) {
  rig_device *d;
  ok(rig_device_open(name, &d));
  return d;
}

static rig_device *memory(const char *name, uint64_t budget) {
  rig_device *d;
  ok(rig_device_open_memory(name, &d));
  if (budget)
    ok(rig_device_set_budget(d, budget));
  return d;
}

static void done(rig_device *d) {
  ok(rig_device_close(d));
  rig_device_release(d);
}

static rig_buffer *mk(rig_device *d, size_t n) {
  rig_buffer *b = NULL;
  ok(rig_buffer_create(d, n, &b));
  assert_non_null(b);
  return b;
}

static const void *at(const rig_buffer *b) { return rig_buffer_host_address(b); }

/* A call that moves d's collected memory (RECLAIM-16): a create that
 * nothing kept can serve, of no bytes, which is charged nothing; freed, so
 * that no later create takes it back without moving. */
static void move_on(rig_device *d) {
  rig_buffer *b = mk(d, 0);
  ok(rig_buffer_free(b));
  rig_buffer_release(b);
}

/* A test device whose work runs only once rig commits it. Its first value
 * may commit itself (values go on past a reused slot's earlier devices,
 * and it commits once k values wait), so one piece of work runs first:
 * after it, one submit at a time is held. */
static rig_device *held_device(const char *name) {
  rig_device *d = open_dev(name);
  rig_buffer *b = mk(d, 64);
  rig_point p;
  ok(rig_buffer_submit_fill(b, 0, 4, &p));
  ok(rig_point_wait(p));
  rig_buffer_release(b);
  ok(rig_device_free_cache(d));
  return d;
}

/* A fill of b through a prepared submission: the point of its work. */
static rig_point submit_fill(rig_buffer *b, bool unordered) {
  rig_part part = rig_part_fill(0, 0xab, 1);
  if (unordered)
    part = rig_part_unordered(part);
  rig_submission *s;
  rig_run *run;
  rig_point p;
  ok(rig_submission_make(rig_buffer_device(b), &part, 1, &s));
  ok(rig_submission_take(s, &run));
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  rig_submission_release(s);
  return p;
}

/* The value d has reported, which commits nothing. */
static uint64_t reported(rig_device *d) {
  uint64_t v;
  ok(rig_device_signaled(d, &v));
  return v;
}

/* ---- stages 1 to 3: collection, waiting, the cache ------------------------- */

/* RECLAIM-1, RECLAIM-6, RECLAIM-31, RECLAIM-37, RECLAIM-41, LIFE-7: memory
 * comes back by itself: a released buffer enters stage 2 at its last
 * release (a view still holds it before), then the cache, and the next
 * create of its size takes it (same address, nothing allocated). Early via
 * rig_buffer_free: it skips the cache and goes back to its driver. On a
 * memory device (non-host, RECLAIM-41) and on the host (RECLAIM-31). */
static void reclaim_1_6_31_37_41_life_7_memory_comes_back_by_itself(void **state) {
  rig_device *m = memory("mem-1", 0);
  rig_buffer *b = mk(m, 4096), *v, *c, *again;
  const void *b_at = at(b);
  ok(rig_buffer_view(b, 0, 64, RIG_READ, &v));
  uint64_t base = rig_device_allocated(m);
  rig_buffer_release(b);                      /* not the last release: v holds it */
  c = mk(m, 4096);
  assert_ptr_not_equal(at(c), b_at);          /* RECLAIM-31, 41: still live */
  assert_int_equal(rig_device_allocated(m), base + 4096);
  rig_buffer_release(v);                      /* the last: stage 2, then the cache */
  again = mk(m, 4096);                        /* RECLAIM-1, 6, 37, LIFE-7 */
  assert_ptr_equal(at(again), b_at);
  assert_int_equal(rig_device_allocated(m), base + 4096);
  ok(rig_buffer_free(c));                     /* early: dead at once, and its memory */
  assert_true(rig_buffer_dead(c));            /* goes past the cache to the driver */
  move_on(m);                                 /* while c is still held (RECLAIM-4) */
  assert_int_equal(rig_device_allocated(m), base);
  rig_buffer_release(c);
  move_on(m);
  assert_int_equal(rig_device_allocated(m), base);
  rig_buffer_release(again);
  done(m);

  /* The host keeps buffers of 64 KiB or more in its cache (RECLAIM-47). */
  ok(rig_device_free_cache(rig_device_host()));
  rig_buffer *h = mk(rig_device_host(), MiB), *h2;
  const void *h_at = at(h);
  uint64_t host = rig_device_allocated(rig_device_host());
  rig_buffer_retain(h);
  rig_buffer_release(h);                      /* one reference of two */
  h2 = mk(rig_device_host(), MiB);
  assert_ptr_not_equal(at(h2), h_at);         /* RECLAIM-31 */
  rig_buffer_release(h2);
  rig_buffer_release(h);                      /* the last release */
  ok(rig_device_free_cache(rig_device_host()));
  assert_true(rig_device_allocated(rig_device_host()) < host);
  h = mk(rig_device_host(), MiB);
  h_at = at(h);
  rig_buffer_release(h);
  h2 = mk(rig_device_host(), MiB);                   /* RECLAIM-1, 6: from the host's cache */
  assert_ptr_equal(at(h2), h_at);
  rig_buffer_release(h2);
  ok(rig_device_free_cache(rig_device_host()));
}

/* RECLAIM-3, RECLAIM-5, RECLAIM-23, LIFE-4: a buffer released right after a
 * prepared submission's submit keeps its memory until that work's point is
 * reached: core holds no reference for work in flight, the allocation
 * waits in stage 2 on its stamps. Until d reports the point, the memory
 * is not reused: a create of its size allocates anew. Once reported, it
 * enters the cache and is reused. The same holds for a use through
 * Submission.unordered, tracked beside the stamps (RECLAIM-5).
 *
 * The work is held (commit_k) and slow (200 ms), so that a create that
 * commits it while looking still finds it undone. Whatever the timing, a
 * reuse implies that d had reported the point: the check is exact, and
 * only its strength depends on timing. */
static bool reused_early(const void *was, const rig_buffer *now, rig_device *d, rig_point p) {
  if (rig_buffer_host_address(now) != was)
    return false;
  assert_true(reported(d) >= rig_point_value(p)); /* RECLAIM-23 */
  print_message("the work was done before the create: the early case went unchecked\n");
  return true;
}

static void reclaim_3_5_23_life_4_released_memory_waits_for_its_work(void **state) {
  rig_device *d = held_device("test:mem-3,commit_k=8,delay_us=200000");
  const size_t n = 64 * KiB;
  uint64_t base = rig_device_allocated(d);
  rig_buffer *b = mk(d, n), *c, *e, *f;
  const void *b_at = at(b), *c_at;
  rig_point p = submit_fill(b, false);        /* held: d runs it once committed */
  rig_buffer_release(b);                      /* at once after the submit */
  c = mk(d, n);                               /* moves d's memory: b's waits */
  if (!reused_early(b_at, c, d, p))
    assert_int_equal(rig_device_allocated(d), base + 2 * n);
  ok(rig_point_wait(p));                      /* commits; d reports p */
  assert_true(reported(d) >= rig_point_value(p));
  c_at = at(c);
  rig_buffer_release(c);
  e = mk(d, n);                               /* LIFE-4: b's or c's memory, reused */
  assert_true(at(e) == b_at || at(e) == c_at);
  ok(rig_device_free_cache(d));                      /* gives any other back */
  assert_int_equal(rig_device_allocated(d), base + n);

  const void *e_at = at(e);                   /* RECLAIM-5: an unordered use */
  rig_point q = submit_fill(e, true);
  rig_buffer_release(e);
  f = mk(d, n);
  if (!reused_early(e_at, f, d, q))
    assert_int_equal(rig_device_allocated(d), base + 2 * n);
  ok(rig_point_wait(q));
  rig_buffer_release(f);
  ok(rig_device_free_cache(d));
  assert_int_equal(rig_device_allocated(d), base);
  done(d);
}

/* RECLAIM-73, RECLAIM-74: free_cache moves d's collected memory and gives
 * what is cached back to the driver, but memory whose work is not done
 * waits for it; a later free_cache gives it back. */
static void reclaim_73_74_free_cache_moves_then_gives_back_after_the_work(void **state) {
  rig_device *d = held_device("test:mem-74,commit_k=8,delay_us=100000");
  uint64_t base = rig_device_allocated(d);
  rig_buffer_release(mk(d, 4096));            /* collected, with no work */
  assert_int_equal(rig_device_allocated(d), base + 4096);
  ok(rig_device_free_cache(d));                      /* RECLAIM-73: moved, then back */
  assert_int_equal(rig_device_allocated(d), base);
  rig_buffer *b = mk(d, 4096);
  rig_point p = submit_fill(b, false);        /* held */
  rig_buffer_release(b);
  ok(rig_device_free_cache(d));                      /* RECLAIM-74: its work is not done */
  if (rig_device_allocated(d) != base + 4096)        /* given back only once reported */
    assert_true(reported(d) >= rig_point_value(p));
  ok(rig_point_wait(p));
  ok(rig_device_free_cache(d));
  assert_int_equal(rig_device_allocated(d), base);
  done(d);
}

/* ---- stage 4: the cache back to the driver ----------------------------------- */

/* RECLAIM-9, LIFE-6: cached memory goes back to the driver on free_cache,
 * on a lower budget (down to it), and when an allocation needs the room. */
static void reclaim_9_life_6_cache_goes_back_to_the_driver(void **state) {
  rig_device *m = memory("mem-9", MiB);
  rig_buffer_release(mk(m, 256 * KiB));
  rig_buffer *small = mk(m, 64);              /* moves: the 256 KiB is cached */
  assert_int_equal(rig_device_allocated(m), 256 * KiB + 64);
  ok(rig_device_free_cache(m));                      /* free_cache */
  assert_int_equal(rig_device_allocated(m), 64);

  rig_buffer *x = mk(m, 256 * KiB), *y = mk(m, 256 * KiB);
  rig_buffer_release(x);
  rig_buffer_release(y);
  ok(rig_device_set_budget(m, 300 * KiB));           /* a lower budget: one goes */
  assert_int_equal(rig_device_allocated(m), 64 + 256 * KiB);
  assert_true(rig_device_allocated(m) <= 300 * KiB);

  ok(rig_device_set_budget(m, MiB));
  rig_buffer *big = mk(m, 768 * KiB);         /* needs the cached 256 KiB's room */
  assert_int_equal(rig_device_allocated(m), 64 + 768 * KiB);
  rig_buffer_release(big);
  rig_buffer_release(small);
  ok(rig_device_free_cache(m));
  assert_int_equal(rig_device_allocated(m), 0);
  done(m);
}

/* LIFE-7, LIFE-8, RECLAIM-11: once its wait is over, collected memory goes
 * to the cache while its device is within budget, and back to the driver
 * while it is over. */
static void life_7_8_cache_within_budget_driver_over_it(void **state) {
  rig_device *m = memory("mem-life-8", MiB);
  rig_buffer *a = mk(m, 512 * KiB), *b = mk(m, 512 * KiB);
  const void *b_at = at(b);
  ok(rig_device_set_budget(m, 768 * KiB));           /* over: live buffers stay (RECLAIM-70) */
  assert_int_equal(rig_device_allocated(m), MiB);
  rig_buffer_release(a);
  rig_buffer *s1 = mk(m, 64);                 /* moves: over budget, a to the driver */
  assert_int_equal(rig_device_allocated(m), 512 * KiB + 64);
  rig_buffer_release(b);
  rig_buffer *s2 = mk(m, 128);                /* moves: within budget, b to the cache */
  assert_int_equal(rig_device_allocated(m), 512 * KiB + 64 + 128);
  rig_buffer *c = mk(m, 512 * KiB);           /* takes b's memory */
  assert_ptr_equal(at(c), b_at);
  assert_int_equal(rig_device_allocated(m), 512 * KiB + 64 + 128);
  rig_buffer_release(c);
  rig_buffer_release(s1);
  rig_buffer_release(s2);
  done(m);
}

/* RECLAIM-10, RECLAIM-72: staging that no copy holds goes back to the host
 * at free_cache and at set_budget; staging a copy holds waits until that
 * copy's work is done. Staging counts in the host's budget. */
static void reclaim_10_72_staging_returns_to_the_host(void **state) {
  rig_device *g = held_device("test:mem-10,host=0,commit_k=8,delay_us=100000");
  ok(rig_device_free_cache(rig_device_host()));
  rig_buffer *h = mk(rig_device_host(), 8192), *x = mk(g, 8192);
  unsigned char bytes[8192], back[8192];
  for (size_t i = 0; i < sizeof bytes; i++)
    bytes[i] = (unsigned char)(i * 7 + 3);
  ok(rig_buffer_put(h, 0, bytes, sizeof bytes));
  ok(rig_device_free_cache(g));
  uint64_t host = rig_device_allocated(rig_device_host());
  ok(rig_buffer_copy(h, x));                  /* through 8 KiB of staging */
  assert_int_equal(rig_device_allocated(rig_device_host()), host + 8192);
  ok(rig_device_free_cache(g));                      /* RECLAIM-72 */
  assert_int_equal(rig_device_allocated(rig_device_host()), host);
  ok(rig_buffer_copy(h, x));
  assert_int_equal(rig_device_allocated(rig_device_host()), host + 8192);
  ok(rig_device_set_budget(g, rig_device_budget(g)));       /* RECLAIM-10 */
  assert_int_equal(rig_device_allocated(rig_device_host()), host);

  rig_point p;
  ok(rig_buffer_submit_copy(h, x, &p));       /* its staging is held until p */
  ok(rig_device_free_cache(g));
  if (rig_device_allocated(rig_device_host()) != host + 8192) /* back only once g reported p */
    assert_true(reported(g) >= rig_point_value(p));
  ok(rig_point_wait(p));
  ok(rig_device_free_cache(g));
  assert_int_equal(rig_device_allocated(rig_device_host()), host);
  ok(rig_buffer_copy(x, h));                  /* back out, through staging */
  ok(rig_buffer_get(h, 0, back, sizeof back));
  assert_memory_equal(back, bytes, sizeof bytes);
  rig_buffer_release(x);
  rig_buffer_release(h);
  done(g);
}

/* ---- devices that stop --------------------------------------------------- */

/* RECLAIM-13, RECLAIM-75, RECLAIM-21, RECLAIM-19: a closed device's memory
 * comes back: its stop returns its cache and staging; what was live then
 * returns once released, at free_cache on it (RECLAIM-75) or at any call
 * that moves memory (RECLAIM-21). Scopes (RECLAIM-19): free_cache moves
 * its own device only, and a stop that device only. (The third scope,
 * reclamation rounds moving every device, core does not do: rounds move
 * the refused device's memory and stopped devices'.) */
static void reclaim_13_19_21_75_a_closed_devices_memory_returns(void **state) {
  rig_device *d = open_dev("test:mem-13,host=0");
  rig_device *e = memory("mem-13", 0);
  rig_buffer *live = mk(d, 4096), *h = mk(rig_device_host(), 4096);
  rig_buffer_release(mk(d, 8192));
  rig_buffer_release(mk(e, 8192));
  move_on(d);
  move_on(e);
  assert_int_equal(rig_device_allocated(d), 4096 + 8192);
  assert_int_equal(rig_device_allocated(e), 8192);
  ok(rig_device_free_cache(d));                      /* RECLAIM-19: d's cache only */
  assert_int_equal(rig_device_allocated(d), 4096);
  assert_int_equal(rig_device_allocated(e), 8192);

  rig_buffer_release(mk(d, 8192));            /* cached again */
  move_on(d);
  assert_int_equal(rig_device_allocated(d), 4096 + 8192);
  ok(rig_buffer_copy(h, live));               /* d stages through host memory */
  uint64_t host = rig_device_allocated(rig_device_host());
  ok(rig_device_close(d));                           /* RECLAIM-13: its stop returns ... */
  assert_int_equal(rig_device_allocated(d), 4096);   /* ... the cache, not what is live */
  assert_int_equal(rig_device_allocated(rig_device_host()), host - 4096); /* ... and the staging */
  assert_int_equal(rig_device_allocated(e), 8192);   /* RECLAIM-19: that device only */
  rig_buffer_release(live);
  ok(rig_device_free_cache(d));                      /* RECLAIM-75 */
  assert_int_equal(rig_device_allocated(d), 0);
  rig_device_release(d);

  rig_device *d2 = open_dev("test:mem-21");
  live = mk(d2, 4096);
  ok(rig_device_close(d2));
  assert_int_equal(rig_device_allocated(d2), 4096);
  rig_buffer_release(live);
  move_on(e);                                 /* RECLAIM-21: a move of e moves d2's */
  assert_int_equal(rig_device_allocated(d2), 0);
  rig_device_release(d2);
  rig_buffer_release(h);
  done(e);
}

/* RECLAIM-18 (with RECLAIM-16, STOP-2): a create and a copy move collected
 * memory on the devices they involve even when they then raise Lost. d is
 * lost (its first submit faults), so what it collected waits for its stop
 * (STOP-2); the host, which the copy also involves, gives back a small
 * buffer. */
static void reclaim_18_moves_happen_before_lost(void **state) {
  rig_device *d = open_dev("test:mem-18,fault_nth=1");
  rig_buffer *b = mk(d, 64 * KiB), *c = mk(d, 4096), *x = NULL;
  ok(rig_device_set_budget(d, 0));
  rig_point p;
  assert_int_equal(rig_buffer_submit_fill(c, 0, 1, &p), RIG_LOST);
  assert_non_null(rig_device_lost(d));
  rig_buffer_release(b);                      /* collected, not moved */
  assert_int_equal(rig_device_allocated(d), 64 * KiB + 4096);
  assert_int_equal(rig_buffer_create(d, 64, &x), RIG_LOST);
  assert_null(x);
  assert_int_equal(rig_device_allocated(d), 64 * KiB + 4096); /* held until d stops (STOP-2) */

  ok(rig_device_free_cache(rig_device_host()));
  uint64_t before = rig_device_allocated(rig_device_host());
  rig_buffer *small = mk(rig_device_host(), 1000);   /* under 64 KiB: the host keeps none */
  uint64_t charge = rig_device_allocated(rig_device_host()) - before;
  rig_buffer *h = mk(rig_device_host(), 4096);
  rig_buffer_release(small);                  /* collected, not moved */
  uint64_t held = rig_device_allocated(rig_device_host());
  assert_int_equal(rig_buffer_copy(h, c), RIG_LOST);
  assert_int_equal(rig_device_allocated(rig_device_host()), held - charge); /* the copy moved it */
  rig_buffer_release(h);
  rig_buffer_release(c);
  done(d);
}

/* ---- threads ---------------------------------------------------------------- */

static _Thread_local bool is_waiter;
static struct {
  atomic_int blocked, stop, finished;
  rig_buffer *mine;
  rig_point p;
  rig_status status;
} waiter;

static int waiter_hook(void *ctx) {
  if (!is_waiter)
    return 0;
  atomic_store(&waiter.blocked, 1);
  return atomic_load(&waiter.stop);
}

static void *waiter_main(void *arg) {
  is_waiter = true;
  rig_buffer_release(waiter.mine);            /* released here, then blocked */
  waiter.status = rig_point_wait(waiter.p);
  atomic_store(&waiter.finished, 1);
  return NULL;
}

/* RECLAIM-22: memory released by one thread, which then blocks in a wait,
 * and memory released by another while it blocks, come back through the
 * other thread's calls. m's budget holds one buffer, so each create below
 * needs the released one's memory, from the cache or through reclamation,
 * whatever the releasing thread keeps for itself; free_cache then gives it
 * all back. The wait hook tells when the waiter blocks, and ends its wait
 * once the checks are done. */
static void reclaim_22_memory_returns_while_a_thread_blocks(void **state) {
  rig_device *slow = open_dev("test:mem-22,delay_us=1000000");
  rig_device *m = memory("mem-22", 4096);
  rig_buffer *work = mk(slow, 64);
  memset(&waiter, 0, sizeof waiter);
  ok(rig_buffer_submit_fill(work, 0, 1, &waiter.p));
  waiter.mine = mk(m, 4096);
  rig_runtime_set_wait_hook(waiter_hook, NULL);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, waiter_main, NULL), 0);
  for (int i = 0; i < 10000 && !atomic_load(&waiter.blocked) && !atomic_load(&waiter.finished);
       i++)
    usleep(1000);
  bool blocked = atomic_load(&waiter.blocked) && !atomic_load(&waiter.finished);
  rig_buffer *c = mk(m, 4096);                /* the waiter's release comes back here */
  assert_int_equal(rig_device_allocated(m), 4096);
  rig_buffer_release(c);                      /* released while the waiter blocks */
  c = mk(m, 4096);
  assert_int_equal(rig_device_allocated(m), 4096);
  rig_buffer_release(c);
  ok(rig_device_free_cache(m));
  assert_int_equal(rig_device_allocated(m), 0);
  if (!blocked || atomic_load(&waiter.finished))
    print_message("the waiter did not stay blocked: checked without it\n");
  atomic_store(&waiter.stop, 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_true(waiter.status == RIG_OK || waiter.status == RIG_INTERRUPTED);
  rig_runtime_set_wait_hook(NULL, NULL);
  rig_buffer_release(work);
  done(slow);
  done(m);
}

/* ---- budgets ---------------------------------------------------------------- */

static int collector_calls;
static void count_collector(void *ctx) { collector_calls++; }

/* RECLAIM-30, GRECL-1, GRECL-2, GRECL-8: live buffers are never freed: a
 * program that keeps every buffer runs out of memory whatever the budget,
 * after the reclamation rounds (the collector runs in round 2), and
 * neither free_cache nor set_budget frees them; rig_buffer_free does. */
static void reclaim_30_grecl_1_2_8_live_buffers_are_never_freed(void **state) {
  static const uint64_t budgets[] = {256 * KiB, MiB};
  for (int k = 0; k < 2; k++) {
    char name[32];
    snprintf(name, sizeof name, "mem-30-%d", k);
    rig_device *m = memory(name, budgets[k]);
    rig_buffer *live[64] = {0}, *b = NULL;
    int n = 0;
    rig_status st = RIG_OK;
    collector_calls = 0;
    rig_runtime_set_collector(count_collector, NULL);
    while (n < 64 && (st = rig_buffer_create(m, 64 * KiB, &live[n])) == RIG_OK)
      n++;
    rig_runtime_set_collector(NULL, NULL);
    assert_int_equal(st, RIG_OUT_OF_MEMORY);                  /* GRECL-2 */
    assert_int_equal(n, budgets[k] / (64 * KiB));
    assert_int_equal(rig_error_last()->bytes, 64 * KiB);
    assert_ptr_equal(rig_error_last()->device, m);
    assert_true(collector_calls >= 1);                        /* GRECL-8: rounds ran */
    ok(rig_device_free_cache(m));                                    /* GRECL-1, RECLAIM-30 */
    ok(rig_device_set_budget(m, budgets[k] / 2));
    ok(rig_device_set_budget(m, budgets[k]));
    assert_int_equal(rig_device_allocated(m), budgets[k]);
    for (int i = 0; i < n; i++)
      assert_false(rig_buffer_dead(live[i]));
    assert_int_equal(rig_buffer_create(m, 64 * KiB, &b), RIG_OUT_OF_MEMORY);
    ok(rig_buffer_free(live[0]));                             /* only free frees */
    rig_buffer_release(live[0]);
    live[0] = mk(m, 64 * KiB);
    for (int i = 0; i < n; i++)
      rig_buffer_release(live[i]);
    done(m);
  }
}

/* RECLAIM-42: room = budget - allocated; a create of exactly the room
 * succeeds, one of a byte more is refused for its bytes. */
static void reclaim_42_room_is_budget_minus_allocated(void **state) {
  rig_device *m = memory("mem-42", MiB);
  rig_buffer *a = mk(m, 1000), *b = NULL;
  size_t room = (size_t)(rig_device_budget(m) - rig_device_allocated(m));
  assert_int_equal(room, MiB - 1000);
  assert_int_equal(rig_buffer_create(m, room + 1, &b), RIG_OUT_OF_MEMORY);
  assert_int_equal(rig_error_last()->bytes, room + 1);
  assert_null(b);
  b = mk(m, room);
  assert_int_equal(rig_device_allocated(m), rig_device_budget(m));
  rig_buffer_release(b);
  rig_buffer_release(a);
  done(m);
}

/* RECLAIM-66, RECLAIM-67: a driver's device starts with the budget of its
 * facts (the test device: budget=N, 1 GiB by default); a memory device
 * with the host's physical memory (docs/decisions.md). */
static void reclaim_66_67_start_budgets(void **state) {
  rig_device *t = open_dev("test:mem-66,budget=12345678");
  assert_int_equal(rig_device_budget(t), 12345678);
  done(t);
  t = open_dev("test:mem-66-default");
  assert_int_equal(rig_device_budget(t), UINT64_C(1) << 30);
  done(t);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  assert_true(pages > 0 && page > 0);
  rig_device *m = memory("mem-67", 0);
  assert_int_equal(rig_device_budget(m), (uint64_t)pages * (uint64_t)page);
  done(m);
}

/* ---- the host's pages ------------------------------------------------------ */

static long resident_pages(void) {
  long size = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f)
    return -1;
  if (fscanf(f, "%ld %ld", &size, &rss) != 2)
    rss = -1;
  fclose(f);
  return rss;
}

/* RECLAIM-50: a host buffer not from the reuse cache is not pre-touched:
 * creating 64 MiB barely moves the resident set; writing it (a fill, in
 * the call) faults its pages in. Slack: a quarter and three quarters.
 * Returns 0 when it holds, 1 when not, 77 when it cannot tell. */
static int untouched_check(void) {
  long page = sysconf(_SC_PAGESIZE), before, created, written;
  if (resident_pages() < 0)
    return 77;
  if (rig_device_free_cache(rig_device_host()) != RIG_OK) /* so that it does not come from the cache */
    return 1;
  const size_t n = 64 * MiB;
  rig_buffer *b = NULL;
  before = resident_pages();
  if (rig_buffer_create(rig_device_host(), n, &b) != RIG_OK)
    return 1;
  created = resident_pages();
  rig_status st = rig_buffer_fill(b, 0x11, 1);
  written = resident_pages();
  rig_buffer_release(b);
  if (rig_device_free_cache(rig_device_host()) != RIG_OK) {
    fprintf(stderr, "free_cache: %s\n", rig_error_last()->message);
    return 1;
  }
  if ((size_t)(created - before) * (size_t)page >= n / 4) {
    fprintf(stderr, "creating %zu bytes made %ld pages resident\n", n, created - before);
    return 1;
  }
  if (st != RIG_OK || (size_t)(written - created) * (size_t)page <= n / 4 * 3) {
    fprintf(stderr, "writing %zu bytes made %ld pages resident\n", n, written - created);
    return 1;
  }
  return 0;
}

/* The C library fills new memory itself under MALLOC_PERTURB_ (which
 * meson test sets): the check runs in a copy of this program without it. */
static void reclaim_50_new_host_buffers_are_not_touched(void **state) {
  const char *perturb = getenv("MALLOC_PERTURB_");
  char *argv[] = {"test-memory", "--untouched", NULL};
  int r = !perturb || atoi(perturb) == 0 ? untouched_check() : run_self(argv, "MALLOC_PERTURB_");
  if (r == 77)
    skip();
  assert_int_equal(r, 0);
}

/* ---- host access to memory the host does not address ---------------------- */

static void never(void *bytes, size_t n, void *ctx) { ++*(int *)ctx; }

/* HACC-4, HACC-6, HACC-7, HACC-8: on memory the host does not address,
 * read, write and export are RIG_INVALID; get and put move the bytes
 * through staging with the device's copy engine (one value of the device
 * each, none of the host's); a fill is the device's own, with no staging;
 * a copy from a memory device's memory, which neither device copies
 * directly, goes through staging too. */
static void hacc_4_6_7_8_memory_the_host_does_not_address(void **state) {
  rig_device *g = open_dev("test:mem-hacc,host=0");
  rig_device *m = memory("mem-hacc", 0);
  rig_buffer *x = mk(g, 4096), *mb = mk(m, 4096);
  unsigned char src[1000], back[4096];
  int calls = 0;
  void *bytes = NULL;
  assert_null(at(x));
  assert_int_equal(rig_buffer_read(x, never, &calls), RIG_INVALID);   /* HACC-4 */
  assert_int_equal(rig_buffer_write(x, never, &calls), RIG_INVALID);
  assert_int_equal(rig_buffer_export(x, &bytes), RIG_INVALID);
  assert_int_equal(calls, 0);
  assert_null(bytes);

  uint64_t s = rig_device_submitted(g), hs = rig_device_submitted(rig_device_host());
  ok(rig_buffer_fill(x, 0x5a, 1));                           /* HACC-8 */
  assert_int_equal(rig_device_submitted(g), s + 1);
  ok(rig_device_free_cache(g));
  uint64_t host = rig_device_allocated(rig_device_host());
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (unsigned char)(i * 13 + 1);
  ok(rig_buffer_put(x, 100, src, sizeof src));               /* HACC-6 */
  assert_int_equal(rig_device_submitted(g), s + 2);
  assert_int_equal(rig_device_allocated(rig_device_host()), host + 4096);  /* a page of staging */
  ok(rig_buffer_get(x, 0, back, sizeof back));
  assert_int_equal(rig_device_submitted(g), s + 3);
  assert_int_equal(rig_device_submitted(rig_device_host()), hs);
  for (size_t i = 0; i < sizeof back; i++)
    assert_int_equal(back[i], i >= 100 && i < 1100 ? src[i - 100] : 0x5a);
  ok(rig_buffer_get(x, 150, back, 10));                      /* a range of it */
  assert_memory_equal(back, src + 50, 10);
  ok(rig_device_free_cache(g));
  assert_int_equal(rig_device_allocated(rig_device_host()), host);
  ok(rig_buffer_fill(x, 0x77, 1));                           /* no staging */
  assert_int_equal(rig_device_allocated(rig_device_host()), host);

  ok(rig_buffer_fill(mb, 0x3c, 1));
  uint64_t ms = rig_device_submitted(m);
  ok(rig_buffer_copy(mb, x));                                /* HACC-7 */
  assert_int_equal(rig_device_allocated(rig_device_host()), host + 4096);
  assert_int_equal(rig_device_submitted(m), ms);     /* the memory device ran no copy */
  expect_bytes(x, 0, sizeof back, 0x3c);
  ok(rig_buffer_fill(x, 0x99, 1));
  ok(rig_buffer_copy(x, mb));
  expect_bytes(mb, 0, sizeof back, 0x99);
  rig_buffer_release(x);
  rig_buffer_release(mb);
  done(g);
  done(m);
}

/* ---- what librig leaves alone ---------------------------------------------- */

/* Every call of mallopt in the process comes here: the program's own
 * definition interposes the C library's for librig too, since the link
 * exports it as soon as a library it links (librig-core) refers to it. */
static atomic_int mallopt_calls;
int mallopt(int param, int value);
int mallopt(int param, int value) {
  (void)param, (void)value;
  atomic_fetch_add(&mallopt_calls, 1);
  return 1;
}

/* RECLAIM-39: librig changes no process-wide allocator setting: through
 * every test above (this one runs last) and a round of opens, creates,
 * reclamation and frees here, nothing called mallopt. (Other process-wide
 * settings, such as environment tunables, no call can change once the
 * process runs.) */
static void reclaim_39_no_allocator_setting_changes(void **state) {
  rig_device *m = memory("mem-39", 256 * KiB);
  rig_buffer *b[4];
  for (int i = 0; i < 4; i++)
    b[i] = mk(m, 64 * KiB);
  rig_buffer *c = NULL;
  assert_int_equal(rig_buffer_create(m, 64 * KiB, &c), RIG_OUT_OF_MEMORY);
  for (int i = 0; i < 4; i++)
    rig_buffer_release(b[i]);
  rig_buffer_release(mk(rig_device_host(), 8 * MiB));
  ok(rig_device_free_cache(rig_device_host()));
  ok(rig_device_free_cache(m));
  done(m);
  assert_int_equal(atomic_load(&mallopt_calls), 0);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--untouched") == 0)
    return untouched_check(); /* RECLAIM-50's copy of the program */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reclaim_1_6_31_37_41_life_7_memory_comes_back_by_itself),
      cmocka_unit_test(reclaim_3_5_23_life_4_released_memory_waits_for_its_work),
      cmocka_unit_test(reclaim_73_74_free_cache_moves_then_gives_back_after_the_work),
      cmocka_unit_test(reclaim_9_life_6_cache_goes_back_to_the_driver),
      cmocka_unit_test(life_7_8_cache_within_budget_driver_over_it),
      cmocka_unit_test(reclaim_10_72_staging_returns_to_the_host),
      cmocka_unit_test(reclaim_13_19_21_75_a_closed_devices_memory_returns),
      cmocka_unit_test(reclaim_18_moves_happen_before_lost),
      cmocka_unit_test(reclaim_22_memory_returns_while_a_thread_blocks),
      cmocka_unit_test(reclaim_30_grecl_1_2_8_live_buffers_are_never_freed),
      cmocka_unit_test(reclaim_42_room_is_budget_minus_allocated),
      cmocka_unit_test(reclaim_66_67_start_budgets),
      cmocka_unit_test(reclaim_50_new_host_buffers_are_not_touched),
      cmocka_unit_test(hacc_4_6_7_8_memory_the_host_does_not_address),
      cmocka_unit_test(reclaim_39_no_allocator_setting_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
