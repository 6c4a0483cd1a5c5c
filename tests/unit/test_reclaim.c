/* test_reclaim.c: the rounds of reclamation and the collector hook
 * (RECLAIM-52..59), and the host's reuse cache (RECLAIM-47..49, 76). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

/* What a garbage-collected binding's collector sees: buffers its program
 * no longer reaches, released only when the collector runs. */
static struct {
  rig_buffer *garbage[8];
  int n, calls;
  rig_status inside; /* a may-lock call made from the hook */
} gc;

static void collector(void *ctx) {
  gc.calls++;
  rig_buffer *b = NULL;
  gc.inside = rig_buffer_create(rig_device_host(), 16, &b); /* DOM-12: inside a lock */
  rig_buffer_release(b);
  for (int i = 0; i < gc.n; i++)
    rig_buffer_release(gc.garbage[i]);
  gc.n = 0;
}

static rig_device *budgeted(const char *name) {
  rig_device *d;
  ok(rig_device_open_memory(name, &d));
  ok(rig_device_set_budget(d, MiB));
  return d;
}

static void done(rig_device *d) {
  ok(rig_device_close(d));
  rig_device_release(d);
}

/* RECLAIM-52, RECLAIM-56, RECLAIM-57, GRECL-6: a budget refusal reclaims;
 * the second round runs the collector, which finds the buffers the program
 * let go, and the allocation then succeeds. */
static void reclaim_52_57_round_2_runs_the_collector(void **state) {
  rig_device *d = budgeted("rc-57");
  memset(&gc, 0, sizeof gc);
  for (int i = 0; i < 4; i++)
    ok(rig_buffer_create(d, 256 * KiB, &gc.garbage[gc.n++]));
  rig_runtime_set_collector(collector, NULL);
  rig_buffer *b;
  ok(rig_buffer_create(d, 256 * KiB, &b));
  assert_int_equal(gc.calls, 1);
  assert_int_equal(gc.inside, RIG_INVALID);
  rig_runtime_set_collector(NULL, NULL);
  rig_buffer_release(b);
  done(d);
}

static void collector_of_one(void *ctx) {
  gc.calls++;
  if (gc.n > 0) /* a small unrelated buffer: something collected, not enough */
    rig_buffer_release(gc.garbage[--gc.n]);
}

/* RECLAIM-58, RECLAIM-59, RECLAIM-77: the third round runs the collector
 * again only if something was collected since the second ran it; after
 * three rounds the allocation is Out_of_memory for its bytes. */
static void reclaim_58_59_round_3_only_after_a_collection(void **state) {
  rig_device *d = budgeted("rc-58");
  rig_buffer *live[4], *b = NULL;
  for (int i = 0; i < 4; i++)
    ok(rig_buffer_create(d, 256 * KiB, &live[i]));
  memset(&gc, 0, sizeof gc);
  rig_runtime_set_collector(collector_of_one, NULL);
  assert_int_equal(rig_buffer_create(d, 256 * KiB, &b), RIG_OUT_OF_MEMORY);
  assert_int_equal(gc.calls, 1); /* nothing was collected: no third run */
  assert_int_equal(rig_error_last()->bytes, 256 * KiB);
  assert_ptr_equal(rig_error_last()->device, d);
  memset(&gc, 0, sizeof gc);
  ok(rig_buffer_create(rig_device_host(), 64, &gc.garbage[gc.n++]));
  assert_int_equal(rig_buffer_create(d, 256 * KiB, &b), RIG_OUT_OF_MEMORY);
  assert_int_equal(gc.calls, 2); /* the second run collected: a third */
  assert_null(b);
  rig_runtime_set_collector(NULL, NULL);
  for (int i = 0; i < 4; i++)
    rig_buffer_release(live[i]);
  done(d);
}

/* RECLAIM-53, RECLAIM-54: each round gives back the cache and waits for
 * the work that holds collected memory back. */
static void reclaim_53_54_rounds_free_cache_and_wait(void **state) {
  rig_device *d, *slow;
  ok(rig_device_open("test:rc-54,delay_us=100000,budget=1048576", &slow));
  d = slow;
  rig_buffer *a, *b;
  ok(rig_buffer_create(d, 512 * KiB, &a));
  rig_point p;
  ok(rig_buffer_submit_fill(a, 1, 1, &p)); /* holds a back after its release */
  rig_buffer_release(a);
  ok(rig_buffer_create(d, 768 * KiB, &b)); /* needs a's room: waits for p */
  assert_true(rig_point_reached(p));
  rig_buffer_release(b);
  done(d);
}

/* RECLAIM-47, RECLAIM-48, RECLAIM-76: the host keeps collected buffers of
 * 64 KiB or more, 32 MiB of them when its live buffers never peaked above
 * that; smaller ones go back; free_cache gives them all back. */
static void reclaim_47_48_76_host_keeps_32_mib(void **state) {
  ok(rig_device_free_cache(rig_device_host()));
  uint64_t base = rig_device_allocated(rig_device_host());
  for (int i = 0; i < 48; i++) { /* one live at a time: the peak stays low */
    rig_buffer *b;
    ok(rig_buffer_create(rig_device_host(), MiB + (size_t)i * 4096, &b));
    rig_buffer_release(b);
  }
  rig_buffer *small;
  ok(rig_buffer_create(rig_device_host(), 1000, &small)); /* moves the host's memory */
  uint64_t kept = rig_device_allocated(rig_device_host()) - base - 1000 - 112;
  assert_true(kept <= 32 * MiB);
  assert_true(kept >= 30 * MiB);
  rig_buffer_release(small);
  ok(rig_device_free_cache(rig_device_host()));                       /* RECLAIM-76 */
  assert_int_equal(rig_device_allocated(rig_device_host()), base);
}

/* RECLAIM-49: beyond 32 MiB the host keeps collected buffers while its kept
 * and live buffers stay within the recent peak of its live ones. */
static void reclaim_49_host_keeps_within_its_peak(void **state) {
  ok(rig_device_free_cache(rig_device_host()));
  uint64_t base = rig_device_allocated(rig_device_host());
  rig_buffer *b[48];
  for (int i = 0; i < 48; i++)
    ok(rig_buffer_create(rig_device_host(), MiB, &b[i]));
  uint64_t peak = rig_device_allocated(rig_device_host()) - base;
  for (int i = 0; i < 48; i++)
    rig_buffer_release(b[i]);
  ok(rig_buffer_create(rig_device_host(), MiB, &b[0])); /* moves, and reuses one */
  assert_int_equal(rig_device_allocated(rig_device_host()) - base, peak); /* all 48 MiB kept */
  rig_buffer_release(b[0]);
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(rig_device_allocated(rig_device_host()), base);
}

/* RECLAIM-49, its other clause: retention beyond 32 MiB stops where kept
 * and live buffers would pass the peak. With 48 MiB kept, 48 buffers of
 * 2 MiB (which reuse none of the kept 1 MiB ones) make 144 MiB held with
 * 96 live; released, each is kept only while what the host holds stays
 * within the peak of its live bytes (96 MiB at most, whatever earlier
 * tests left in the last epoch's), so about half of them go back. */
static void reclaim_49_host_gives_back_past_its_peak(void **state) {
  ok(rig_device_free_cache(rig_device_host()));
  uint64_t base = rig_device_allocated(rig_device_host());
  rig_buffer *b[48];
  for (int i = 0; i < 48; i++)
    ok(rig_buffer_create(rig_device_host(), MiB, &b[i]));
  for (int i = 0; i < 48; i++)
    rig_buffer_release(b[i]);
  ok(rig_buffer_create(rig_device_host(), 1000, &b[0])); /* moves: the 1 MiB ones kept */
  rig_buffer_release(b[0]);
  for (int i = 0; i < 48; i++)
    ok(rig_buffer_create(rig_device_host(), 2 * MiB, &b[i]));
  for (int i = 0; i < 48; i++)
    rig_buffer_release(b[i]);
  ok(rig_buffer_create(rig_device_host(), 1000, &b[0]));
  uint64_t held = rig_device_allocated(rig_device_host()) - base;
  rig_buffer_release(b[0]);
  if (held > 100 * MiB) /* keeping all would hold 144 MiB */
    fail_msg("the host holds %llu MiB past a peak of at most 96", (unsigned long long)(held / MiB));
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(rig_device_allocated(rig_device_host()), base);
}

/* RECLAIM-49, over time: memory kept for a past peak goes back once the
 * epochs that saw the peak are over. 48 MiB kept after a peak of 48 MiB
 * live; 2.5 s (two epochs and more) later, the next call that moves host
 * memory gives back all the cache holds past 32 MiB (RECLAIM-48). The
 * sleep orders no thread: it lets the epochs pass. */
static void reclaim_49_kept_memory_goes_back_after_its_epochs(void **state) {
  ok(rig_device_free_cache(rig_device_host()));
  uint64_t base = rig_device_allocated(rig_device_host());
  rig_buffer *b[48], *small;
  for (int i = 0; i < 48; i++)
    ok(rig_buffer_create(rig_device_host(), MiB, &b[i]));
  for (int i = 0; i < 48; i++)
    rig_buffer_release(b[i]);
  ok(rig_buffer_create(rig_device_host(), 1000, &small)); /* moves: kept within the peak */
  rig_buffer_release(small);
  assert_true(rig_device_allocated(rig_device_host()) - base > 32 * MiB);
  sleep_ms(2500);
  ok(rig_buffer_create(rig_device_host(), 1000, &small)); /* moves */
  uint64_t held = rig_device_allocated(rig_device_host()) - base;
  rig_buffer_release(small);
  if (held > 32 * MiB + 4096)
    fail_msg("the host still keeps %llu KiB for a peak two epochs old",
             (unsigned long long)(held >> 10));
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(rig_device_allocated(rig_device_host()), base);
}

/* RECLAIM-26, RECLAIM-78: Pinned memory counts in the host's budget; when
 * that budget refuses it, Out_of_memory names the device it was for. */
static void reclaim_26_78_pinned_counts_in_the_hosts_budget(void **state) {
  rig_device *d;
  ok(rig_device_open("test:rc-pinned", &d));
  ok(rig_device_free_cache(rig_device_host()));
  uint64_t host = rig_device_allocated(rig_device_host()), mine = rig_device_allocated(d);
  rig_buffer *p, *q = NULL;
  ok(rig_buffer_create_kind(d, 64 * KiB, RIG_KIND_PINNED, &p));
  assert_int_equal(rig_buffer_kind(p), RIG_KIND_PINNED);
  assert_non_null(rig_buffer_host_address(p));
  assert_int_equal(rig_device_allocated(rig_device_host()), host + 64 * KiB);
  assert_int_equal(rig_device_allocated(d), mine);
  ok(rig_device_set_budget(rig_device_host(), host + 96 * KiB));
  assert_int_equal(rig_buffer_create_kind(d, 64 * KiB, RIG_KIND_PINNED, &q), RIG_OUT_OF_MEMORY);
  assert_ptr_equal(rig_error_last()->device, d);
  assert_int_equal(rig_error_last()->bytes, 64 * KiB);
  assert_null(q);
  ok(rig_device_set_budget(rig_device_host(), INT64_MAX));
  rig_buffer_release(p);
  ok(rig_device_free_cache(d));
  assert_int_equal(rig_device_allocated(rig_device_host()), host);
  done(d);
}

static void expect_message(const char *needle) {
  if (!strstr(rig_error_last()->message, needle))
    fail_msg("'%s' lacks '%s'", rig_error_last()->message, needle);
}

/* Out_of_memory that a budget refused says so, with the budget and what is
 * in use, whether the request is larger than the budget (RECLAIM-51), the
 * budget is full (RECLAIM-59) or the host's budget refused Pinned memory
 * for another device (RECLAIM-78): else it reads as a real exhaustion. */
static void out_of_memory_names_the_budget_that_refused(void **state) {
  rig_device *d = budgeted("rc-names-budget");
  rig_buffer *b = NULL, *live;
  assert_int_equal(rig_buffer_create(d, 2 * MiB, &b), RIG_OUT_OF_MEMORY);
  assert_string_equal(rig_error_last()->message,
                      "memory:rc-names-budget: out of memory for "
                      "2097152 bytes: over its budget of 1048576 bytes (0 in use)");
  ok(rig_buffer_create(d, 768 * KiB, &live));
  assert_int_equal(rig_buffer_create(d, 512 * KiB, &b), RIG_OUT_OF_MEMORY);
  expect_message(
      "out of memory for 524288 bytes: over its budget of 1048576 bytes (786432 in use)");
  assert_null(b);
  rig_buffer_release(live);
  done(d);
  ok(rig_device_open("test:rc-names-pinned", &d));
  ok(rig_device_free_cache(rig_device_host()));
  ok(rig_device_set_budget(rig_device_host(), rig_device_allocated(rig_device_host()) + 32 * KiB));
  assert_int_equal(rig_buffer_create_kind(d, 64 * KiB, RIG_KIND_PINNED, &b), RIG_OUT_OF_MEMORY);
  ok(rig_device_set_budget(rig_device_host(), INT64_MAX));
  expect_message("test:rc-names-pinned: out of memory for 65536 bytes: over the host's budget of ");
  done(d);
}

/* RECLAIM-4, LIFE-1, RECLAIM-30: only rig_buffer_free frees a live buffer:
 * its memory returns once its work is done, though its buffers, dead, are
 * still held; their release later frees only their records. */
static void reclaim_4_life_1_free_returns_memory_early(void **state) {
  rig_device *d;
  ok(rig_device_open("test:rc-free,delay_us=100000", &d));
  uint64_t base = rig_device_allocated(d);
  rig_buffer *b, *v;
  ok(rig_buffer_create(d, MiB, &b));
  ok(rig_buffer_view(b, 0, 64, RIG_READ, &v));
  rig_point p;
  ok(rig_buffer_submit_fill(b, 1, 1, &p));
  ok(rig_buffer_free(b));
  assert_true(rig_buffer_dead(b) && rig_buffer_dead(v));
  assert_int_equal(rig_device_allocated(d), base + MiB); /* its work still runs */
  ok(rig_point_wait(p));
  ok(rig_device_free_cache(d));                          /* a call that moves memory */
  assert_int_equal(rig_device_allocated(d), base);       /* back, buffers still held */
  rig_buffer_release(v);
  rig_buffer_release(b);
  assert_int_equal(rig_device_allocated(d), base);
  done(d);
}

static int kept_released;
static void release_kept(void *value) { kept_released += *(int *)value; }

/* RECLAIM-17: a device that never took work keeps a value for no work: a
 * host that only loads and releases images gives each back at its next
 * move. First in the file, while the host's timeline is still at 0. */
static void reclaim_17_no_work_keeps_nothing(void **state) {
  assert_int_equal(rig_device_submitted(rig_device_host()), 0);
  uint64_t before = rig_device_allocated(rig_device_host());
  rig_image *im = kernel_load("add");
  assert_true(rig_device_allocated(rig_device_host()) > before);
  rig_image_release(im);
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(rig_device_allocated(rig_device_host()), before);
}

/* RECLAIM-17, RECLAIM-18, RUN-8, STOP-2: a released submission's kept value
 * goes once the work on its device until the first memory move after the
 * release is done, in a later move; on a lost device, at its stop. */
static void reclaim_17_kept_values_go_after_the_work(void **state) {
  rig_device *d;
  ok(rig_device_open("test:rc-keep,delay_us=150000", &d));
  rig_buffer *b, *c;
  ok(rig_buffer_create(d, 64, &b));
  rig_part part = rig_part_fill(0, 1, 1);
  rig_submission *s;
  rig_run *run;
  rig_point p;
  static int one = 1;
  ok(rig_submission_make(d, &part, 1, &s));
  ok(rig_submission_keep(s, &one, release_kept));
  ok(rig_submission_take(s, &run));
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  kept_released = 0;
  rig_submission_release(s);
  ok(rig_buffer_create(d, 32, &c)); /* the first move: notes p's value */
  assert_int_equal(kept_released, 0); /* p's work still runs */
  ok(rig_point_wait(p));
  ok(rig_device_free_cache(d));            /* a later move: the value goes */
  assert_int_equal(kept_released, 1);
  rig_buffer_release(c);
  rig_buffer_release(b);
  done(d);

  /* A lost device keeps it until its stop. */
  ok(rig_device_open("test:rc-keep-lost,delay_us=150000,fault_nth=2", &d));
  ok(rig_buffer_create(d, 64, &b));
  ok(rig_submission_make(d, &part, 1, &s));
  ok(rig_submission_keep(s, &one, release_kept));
  ok(rig_submission_take(s, &run));
  ok(rig_run_submit(run, &b, 1, NULL, 0, &p));
  rig_submission_release(s);
  kept_released = 0;
  assert_int_equal(rig_buffer_fill(b, 2, 1), RIG_LOST); /* the loss */
  ok(rig_device_free_cache(d));
  assert_int_equal(kept_released, 0);
  rig_buffer_release(b);
  ok(rig_device_close(d));                                     /* its stop */
  assert_int_equal(kept_released, 1);
  rig_device_release(d);
}

/* RECLAIM-21: a value kept by a submission released after its device's
 * close, once the device has stopped, goes at the next move of memory on
 * any device: it was queued on the closed device, whose list no move read
 * again, and never went. */
static void reclaim_21_kept_values_of_a_closed_device(void **state) {
  rig_device *d = open_ok("memory:rc-keep-closed");
  rig_part part = rig_part_fill(0, 1, 1);
  rig_submission *s;
  static int one = 1;
  ok(rig_submission_make(d, &part, 1, &s));
  ok(rig_submission_keep(s, &one, release_kept));
  ok(rig_device_close(d));
  kept_released = 0;
  rig_submission_release(s);
  assert_int_equal(kept_released, 0);   /* only inside a move (RECLAIM-17) */
  ok(rig_device_free_cache(rig_device_host()));       /* a move on another device */
  assert_int_equal(kept_released, 1);
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(kept_released, 1);   /* once */
  rig_device_release(d);
}

/* SUBMIT-4, SUBMIT-16: a submit that finds no room on the queues waits for
 * the device to reach one more value and asks again. */
static void submit_4_16_waits_for_room(void **state) {
  rig_device *d;
  ok(rig_device_open("test:rc-room,parts=2,delay_us=50000", &d));
  rig_buffer *b[3];
  rig_point p[3];
  for (int i = 0; i < 3; i++)
    ok(rig_buffer_create(d, 64, &b[i]));
  ok(rig_buffer_submit_fill(b[0], 1, 1, &p[0]));
  ok(rig_buffer_submit_fill(b[1], 2, 1, &p[1]));
  ok(rig_buffer_submit_fill(b[2], 3, 1, &p[2])); /* two parts in flight: it waited */
  assert_true(rig_point_reached(p[0]));
  ok(rig_point_wait(p[2]));
  for (int i = 0; i < 3; i++)
    rig_buffer_release(b[i]);
  done(d);
}

static rig_status submit_fills(rig_device *d, rig_buffer *b, rig_point *p) {
  rig_part parts[4];
  for (int i = 0; i < 4; i++)
    parts[i] = rig_part_fill(0, (uint32_t)i + 1, 1);
  rig_submission *s;
  rig_run *run;
  ok(rig_submission_make(d, parts, 4, &s));
  ok(rig_submission_take(s, &run));
  rig_status st = rig_run_submit(run, &b, 1, NULL, 0, p);
  rig_submission_release(s);
  return st;
}

/* SUBMIT-19: work larger than the queues grows them first. */
static void submit_19_work_larger_than_the_queues_grows_them(void **state) {
  rig_device *d;
  ok(rig_device_open("test:rc-grow,parts=2,grow_limit=8", &d));
  rig_buffer *b;
  rig_point p;
  ok(rig_buffer_create(d, 64, &b));
  ok(submit_fills(d, b, &p));
  ok(rig_point_wait(p));
  uint8_t byte;
  ok(rig_buffer_get(b, 0, &byte, 1));
  assert_int_equal(byte, 4); /* the last part ran last */
  rig_buffer_release(b);
  done(d);
}

/* SUBMIT-28, RECLAIM-64: a growth the driver has no memory for reclaims,
 * then is Out_of_memory; the device is not lost and takes no value. */
static void submit_28_reclaim_64_growth_without_memory(void **state) {
  rig_device *d;
  ok(rig_device_open("test:rc-nogrow,parts=2,grow_limit=2", &d));
  rig_buffer *b;
  rig_point p = RIG_POINT_NONE;
  ok(rig_buffer_create(d, 64, &b));
  uint64_t submitted = rig_device_submitted(d);
  assert_int_equal(submit_fills(d, b, &p), RIG_OUT_OF_MEMORY);
  assert_ptr_equal(rig_error_last()->device, d);
  assert_int_equal(p, RIG_POINT_NONE);
  assert_int_equal(rig_device_submitted(d), submitted);
  assert_null(rig_device_lost(d));
  ok(rig_buffer_fill(b, 9, 1)); /* one part fits: the device serves on */
  rig_buffer_release(b);
  done(d);
}

/* OPEN-48, LMEM-7: rig_device_set_budget on a closed device, or on one a fault
 * lost, is RIG_LOST with the device's reason, and leaves its budget as it
 * was; rig_device_free_cache still runs on it (RECLAIM-75). */
static void set_budget_on_a_closed_or_lost_device(void **state) {
  rig_device *m = open_ok("memory:rc-budget-closed");
  uint64_t budget = rig_device_budget(m);
  ok(rig_device_close(m));
  assert_int_equal(rig_device_set_budget(m, 4096), RIG_LOST);
  assert_string_equal(rig_error_last()->message, "memory:rc-budget-closed lost: closed");
  assert_int_equal(rig_device_budget(m), budget);
  ok(rig_device_free_cache(m));
  rig_device_release(m);

  rig_device *t = open_ok("test:rc-budget-lost,fault_nth=1");
  rig_buffer *b = create_ok(t, 64);
  rig_point p;
  assert_int_equal(rig_buffer_submit_fill(b, 1, 1, &p), RIG_LOST);
  budget = rig_device_budget(t);
  assert_int_equal(rig_device_set_budget(t, 4096), RIG_LOST);
  if (!strstr(rig_error_last()->message, "rc-budget-lost,fault_nth=1 lost: injected fault"))
    fail_msg("%s", rig_error_last()->message);
  assert_int_equal(rig_device_budget(t), budget);
  rig_buffer_release(b);
  close_release(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reclaim_17_no_work_keeps_nothing),
      cmocka_unit_test(reclaim_52_57_round_2_runs_the_collector),
      cmocka_unit_test(reclaim_58_59_round_3_only_after_a_collection),
      cmocka_unit_test(reclaim_53_54_rounds_free_cache_and_wait),
      cmocka_unit_test(reclaim_47_48_76_host_keeps_32_mib),
      cmocka_unit_test(reclaim_49_host_keeps_within_its_peak),
      cmocka_unit_test(reclaim_49_host_gives_back_past_its_peak),
      cmocka_unit_test(reclaim_49_kept_memory_goes_back_after_its_epochs),
      cmocka_unit_test(reclaim_26_78_pinned_counts_in_the_hosts_budget),
      cmocka_unit_test(out_of_memory_names_the_budget_that_refused),
      cmocka_unit_test(reclaim_4_life_1_free_returns_memory_early),
      cmocka_unit_test(reclaim_17_kept_values_go_after_the_work),
      cmocka_unit_test(submit_4_16_waits_for_room),
      cmocka_unit_test(submit_19_work_larger_than_the_queues_grows_them),
      cmocka_unit_test(submit_28_reclaim_64_growth_without_memory),
      cmocka_unit_test(set_budget_on_a_closed_or_lost_device),
      cmocka_unit_test(reclaim_21_kept_values_of_a_closed_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
