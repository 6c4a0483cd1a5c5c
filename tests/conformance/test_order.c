/* test_order.c: Order across devices, through the stamps (ORDER, SUBMIT-2,
 * SUBMIT-3, OPEN-20..23). Part of the conformance suite: D is the device
 * under test (RIG_CONF_DEVICE); B is a slow asynchronous test device whose
 * work lands long after its submit returns, so that a missing order shows
 * as stale bytes.
 *
 * On the host, whose queue runs only launches (HOST-4), the submissions of
 * copies and fills are launches of host kernels that do the same work
 * (conf_submission_make, common.h): the order they test holds there too. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "child.h"
#include "common.h"
#include "../driver/testdev.h"

#define N 4096

/* Tests that read memory on purpose while a device writes it, to show what
 * an access without order sees, are data races by design: ThreadSanitizer
 * rightly reports them, so they skip under it. */
#if defined(__SANITIZE_THREAD__)
#define RACES_ON_PURPOSE() skip()
#else
#define RACES_ON_PURPOSE() (void)0
#endif
/* The slow device's work lasts longer than the few calls a test makes
 * meanwhile, which assert that it has not ended yet: 30 ms natively, 10
 * times that under an emulator (qemu-aarch64 runs those calls 10 to 50
 * times slower, and 30 ms let submit_2_3_9 see the point reached in 2 of
 * 3 runs). */
#define SLOW                                                                                       \
  (child_emulator() ? "test:order-slow,delay_us=300000" : "test:order-slow,delay_us=30000")

static rig_device *open_name(const char *name) {
  rig_device *d = NULL;
  conf_ok(rig_device_open(name, &d));
  return d;
}

static rig_buffer *filled(rig_device *d, uint8_t byte) {
  rig_buffer *b;
  conf_ok(rig_buffer_create(d, N, &b));
  conf_ok(rig_buffer_fill(b, byte, 1));
  return b;
}

static void assert_bytes(rig_buffer *b, uint8_t byte) {
  static uint8_t got[N];
  conf_ok(rig_buffer_get(b, 0, got, N));
  for (int i = 0; i < N; i++)
    if (got[i] != byte)
      fail_msg("byte %d is 0x%02x, want 0x%02x", i, got[i], byte);
}

static void done(rig_device *d) {
  conf_ok(rig_device_close(d));
  rig_device_release(d);
}

/* ORDER-22, ORDER-8: the slow device's fill lands after its submit
 * returns. Read without the stamps, as the raw address does, the bytes are
 * stale; read through rig, which follows the fill's point, never. */
static void order_8_22_without_stamps_a_read_is_stale(void **state) {
  RACES_ON_PURPOSE();
  rig_device *b = open_name(SLOW);
  rig_buffer *x = filled(b, 0x00);
  rig_point p;
  conf_ok(rig_buffer_submit_fill(x, 0xab, 1, &p));
  const volatile uint8_t *raw = rig_buffer_host_address(x);
  assert_non_null(raw);
  assert_int_equal(raw[0], 0x00); /* no order: the fill has not run */
  assert_false(rig_point_reached(p));
  assert_bytes(x, 0xab);          /* follows the fill's point */
  assert_true(rig_point_reached(p));
  rig_buffer_release(x);
  done(b);
}

/* TL-20 on the device under test, where work may land after its submit
 * returns (the test and sample drivers, Vulkan): whenever signaled has
 * reached a fill's value, the point of signaled is reached and the fill's
 * bytes are visible to the host, read at the buffer's address with no wait
 * of rig's. Skipped where the host addresses none of D's memory. */
static void tl_20_signaled_is_reached_and_its_writes_visible(void **state) {
  rig_device *d = conf_open();
  rig_buffer *x;
  conf_ok(rig_buffer_create(d, N, &x));
  const volatile uint32_t *raw = rig_buffer_host_address(x);
  if (!raw) {
    rig_buffer_release(x);
    rig_device_release(d);
    skip();
  }
  for (uint32_t i = 1; i <= 64; i++) {
    rig_point p;
    uint32_t pat = 0x9e3779b9u * i;
    conf_ok(rig_buffer_submit_fill(x, pat, 4, &p));
    uint64_t sig = 0;
    double t0 = now_s();
    for (;;) {
      conf_ok(rig_device_signaled(d, &sig));
      assert_true(rig_point_reached(rig_device_point(d, sig)));
      if (sig >= rig_point_value(p))
        break;
      (void)rig_point_reached(p); /* commits the fill where the driver batches */
      if (now_s() - t0 > 30)
        fail_msg("the fill's value %llu never signaled", (unsigned long long)rig_point_value(p));
      sched_yield();
    }
    for (size_t w = 0; w < N / 4; w++)
      if (raw[w] != pat)
        fail_msg("fill %u: signaled %llu >= %llu, word %zu is 0x%08x, want 0x%08x", i,
                 (unsigned long long)sig, (unsigned long long)rig_point_value(p), w, raw[w], pat);
  }
  rig_buffer_release(x);
  rig_device_release(d);
}

/* ORDER-8: D's work that reads X follows the slow device's last write of X. */
static void order_8_read_follows_other_devices_write(void **state) {
  rig_device *d = conf_open(), *b = open_name(SLOW);
  rig_buffer *x = filled(b, 0x00), *y = filled(d, 0x11);
  rig_point fill, copy;
  conf_ok(rig_buffer_submit_fill(x, 0x5a, 1, &fill));
  conf_ok(rig_buffer_submit_copy(x, y, &copy));
  conf_ok(rig_point_wait(copy));
  assert_true(rig_point_reached(fill)); /* ORDER-1: follows is transitive */
  assert_bytes(y, 0x5a);
  rig_buffer_release(x);
  rig_buffer_release(y);
  done(b);
  rig_device_release(d);
}

/* ORDER-9: D's write of X follows every use of X, here the slow device's
 * read: the slow copy out of X sees X's old bytes. */
static void order_9_write_follows_other_devices_read(void **state) {
  rig_device *d = conf_open(), *b = open_name(SLOW);
  rig_buffer *x = filled(d, 0x33), *z = filled(b, 0x00);
  rig_point read, write;
  conf_ok(rig_buffer_submit_copy(x, z, &read)); /* runs on b, slowly */
  conf_ok(rig_buffer_submit_fill(x, 0x44, 1, &write));
  conf_ok(rig_point_wait(write));
  assert_true(rig_point_reached(read));
  assert_bytes(z, 0x33);
  assert_bytes(x, 0x44);
  rig_buffer_release(x);
  rig_buffer_release(z);
  done(b);
  rig_device_release(d);
}

/* Fills of one device in turn: once the last point is reached, every
 * earlier one is, and each buffer holds its last fill. (Device order itself,
 * where nothing else orders two values: tests/unit/test_held.c.) */
static void fills_in_turn(void **state) {
  rig_device *d = conf_open();
  rig_buffer *x = filled(d, 0), *y = filled(d, 0);
  rig_point p[8];
  for (int i = 0; i < 8; i++)
    conf_ok(rig_buffer_submit_fill(i % 2 ? y : x, (uint32_t)i, 1, &p[i]));
  conf_ok(rig_point_wait(p[7]));
  for (int i = 0; i < 8; i++)
    assert_true(rig_point_reached(p[i]));
  assert_bytes(x, 6);
  assert_bytes(y, 7);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_device_release(d);
}

/* ORDER-11: host code after Point.wait sees the work's writes. */
static void order_11_host_after_wait_sees_writes(void **state) {
  rig_device *d = conf_open();
  rig_buffer *x = filled(d, 0);
  rig_point p;
  conf_ok(rig_buffer_submit_fill(x, 0x77, 1, &p));
  conf_ok(rig_point_wait(p));
  const uint8_t *raw = rig_buffer_host_address(x);
  if (raw)
    for (int i = 0; i < N; i++)
      assert_int_equal(raw[i], 0x77);
  rig_buffer_release(x);
  rig_device_release(d);
}

/* SUBMIT-2, SUBMIT-3: a device whose driver waits on other words waits in
 * its queue; any other device waits on the host. Here through the stamps:
 * D's copy of X follows the slow device's fill of X. */
static void submit_2_3_queue_or_host_wait(void **state) {
  rig_device *d = conf_open(), *b = open_name(SLOW);
  rig_buffer *x = filled(b, 0), *y = filled(d, 0);
  rig_stats before, after;
  rig_point fill, copy;
  rig_device_stats(d, &before);
  conf_ok(rig_buffer_submit_fill(x, 0x21, 1, &fill));
  conf_ok(rig_buffer_submit_copy(x, y, &copy));
  rig_device_stats(d, &after);
  rig_device *runner = rig_point_device(copy);
  /* Where the host addresses X but not Y, the host moves X's bytes into
   * D's staging, and D's copy engine moves them into Y (docs/copying.md):
   * the host's move waits for the fill, as any host read of X does, and
   * D's step uses only Y, so D's submit waits on no other device. */
  bool staged = rig_buffer_host_address(x) && !rig_buffer_host_address(y);
  if (strncmp(conf_name(), "test:", 5) == 0)
    assert_ptr_equal(runner, d); /* test devices reach each other (MACH-17) */
  if (runner == d && staged) {
    assert_true(rig_point_reached(fill));
    assert_int_equal(after.host_waits, before.host_waits);
    assert_int_equal(after.queue_waits, before.queue_waits);
  } else if (runner == d && conf_queue_waits()) {
    assert_int_equal(after.queue_waits, before.queue_waits + 1);  /* SUBMIT-2 */
    assert_int_equal(after.host_waits, before.host_waits);
    assert_false(rig_point_reached(fill)); /* the submit returned before it */
  } else if (runner == d) {
    assert_int_equal(after.host_waits, before.host_waits + 1);    /* SUBMIT-3 */
    assert_int_equal(after.queue_waits, before.queue_waits);
    assert_true(rig_point_reached(fill));
  }
  rig_device_release(runner);
  conf_ok(rig_point_wait(copy));
  assert_bytes(y, 0x21);
  rig_buffer_release(x);
  rig_buffer_release(y);
  done(b);
  rig_device_release(d);
}

/* ORDER-10, SUBMIT-1, SUBMIT-2, SUBMIT-3, SUBMIT-9, SUBMIT-17: the same
 * through a submit's waits, on memory the work does not share with them, which
 * every device takes, whoever addresses its memory: D's submission waits
 * for the slow device's point in D's queue where D's driver waits on other
 * words, else on the host before the submit returns. */
static void submit_2_3_9_waits_in_queue_or_on_host(void **state) {
  rig_device *d = conf_open(), *b = open_name(SLOW);
  rig_buffer *far = filled(b, 0), *q = filled(d, 7), *r = filled(d, 0);
  rig_part part = rig_part_copy(0, 1);
  rig_submission *s;
  rig_run *run;
  rig_point slow, p;
  rig_stats before, after;
  conf_ok(rig_buffer_submit_fill(far, 9, 1, &slow));
  conf_ok(conf_submission_make(d, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  rig_buffer *bufs[2] = {q, r};
  rig_device_stats(d, &before);
  conf_ok(conf_submit(run, &part, 1, bufs, 2, &slow, 1, &p));
  rig_device_stats(d, &after);
  if (conf_queue_waits()) {
    assert_int_equal(after.queue_waits, before.queue_waits + 1);  /* SUBMIT-2 */
    assert_int_equal(after.host_waits, before.host_waits);
  } else {
    assert_int_equal(after.host_waits, before.host_waits + 1);    /* SUBMIT-3 */
    assert_int_equal(after.queue_waits, before.queue_waits);
    assert_true(rig_point_reached(slow)); /* SUBMIT-17: the submit blocked for it */
  }
  conf_ok(rig_point_wait(p));
  assert_true(rig_point_reached(slow));
  assert_bytes(r, 7);
  rig_submission_release(s);
  rig_buffer_release(far);
  rig_buffer_release(q);
  rig_buffer_release(r);
  done(b);
  rig_device_release(d);
}

/* OPEN-20, OPEN-21, OPEN-23, PROP-7: one mapping per slot waited on, of
 * its latest device; an earlier device's goes back once passed; all go
 * back at the stop. Needs a device whose queue waits. */
static void open_20_21_23_one_word_mapping_per_slot(void **state) {
  if (strncmp(conf_name(), "test:", 5) != 0 || strstr(conf_name(), "waits=0"))
    skip();
  rig_device *d = open_name("test:order-mapper,delay_us=100");
  rig_stats st;
  for (int round = 0; round < 3; round++) {
    rig_device *b = open_name(SLOW);
    rig_buffer *x = filled(b, 0), *y = filled(d, 0);
    rig_point fill, copy;
    conf_ok(rig_buffer_submit_fill(x, (uint32_t)round + 1, 1, &fill));
    conf_ok(rig_buffer_submit_copy(x, y, &copy));
    conf_ok(rig_point_wait(copy));
    rig_device_stats(d, &st);
    assert_int_equal(st.word_mappings, 1); /* the slot's latest device only */
    assert_bytes(y, (uint8_t)(round + 1));
    rig_buffer_release(x);
    rig_buffer_release(y);
    done(b); /* the next round's device takes b's slot */
    conf_ok(rig_device_free_cache(d));
  }
  done(d);
  rig_device_stats(d, &st);
  assert_int_equal(st.word_mappings, 0);   /* OPEN-23 */
}

/* ORDER-28, ORDER-33: work that starts after both of two threads' submits
 * returned follows both. */
struct racer {
  rig_device *d;
  rig_buffer *x;
  uint32_t byte;
};
static void *race(void *arg) {
  struct racer *r = arg;
  for (int i = 0; i < 20; i++)
    if (rig_buffer_fill(r->x, r->byte, 1) != RIG_OK)
      return "fill failed";
  return NULL;
}
static void order_28_33_after_both_submits_follows_both(void **state) {
  rig_device *d = conf_open(), *b = open_name("test:order-racer,delay_us=200");
  rig_buffer *whole = filled(d, 0), *lo, *hi;
  conf_ok(rig_buffer_view(whole, 0, N / 2, RIG_READ_WRITE, &lo));
  conf_ok(rig_buffer_view(whole, N / 2, N / 2, RIG_READ_WRITE, &hi));
  struct racer r1 = {d, lo, 0x61}, r2 = {b, hi, 0x62};
  pthread_t t1, t2;
  void *e1, *e2;
  pthread_create(&t1, NULL, race, &r1);
  pthread_create(&t2, NULL, race, &r2);
  pthread_join(t1, &e1);
  pthread_join(t2, &e2);
  assert_null(e1);
  assert_null(e2);
  uint8_t got[N];
  conf_ok(rig_buffer_get(whole, 0, got, N)); /* ORDER-29: disjoint words */
  for (int i = 0; i < N; i++)
    assert_int_equal(got[i], i < N / 2 ? 0x61 : 0x62);
  rig_buffer_release(lo);
  rig_buffer_release(hi);
  rig_buffer_release(whole);
  done(b);
  rig_device_release(d);
}

/* Runs parts on d with bufs and waits for the point. */
static void run_parts(rig_device *d, const rig_part *parts, size_t n, rig_buffer **bufs,
                      size_t nbufs) {
  rig_submission *s;
  rig_run *run;
  rig_point p;
  conf_ok(conf_submission_make(d, parts, n, &s));
  conf_ok(rig_submission_take(s, &run));
  conf_ok(conf_submit(run, parts, n, bufs, nbufs, NULL, 0, &p));
  conf_ok(rig_point_wait(p));
  rig_submission_release(s);
}

/* ORDER-3, ORDER-4: within a submission, a part follows each earlier part
 * that may share memory with it where one writes: a chain of copies
 * through slot 1, and a fill its copy reads. */
static void order_3_4_parts_sharing_memory_follow(void **state) {
  rig_device *d = conf_open();
  rig_buffer *a = filled(d, 0x3c), *b = filled(d, 0), *c = filled(d, 0);
  rig_part chain[3] = {rig_part_fill(0, 0x3d, 1), rig_part_copy(0, 1), rig_part_copy(1, 2)};
  rig_buffer *bufs[3] = {a, b, c};
  run_parts(d, chain, 3, bufs, 3);
  assert_bytes(b, 0x3d);
  assert_bytes(c, 0x3d);
  /* ORDER-4, VALID-2, HOST-4: only the test device's queue and Vulkan's
   * take words. */
  rig_part words = rig_part_words(&(uint32_t){0}, 1);
  rig_submission *s = NULL;
  bool test = strncmp(conf_name(), "test:", 5) == 0 || strncmp(conf_name(), "vulkan:", 7) == 0;
  conf_status(rig_submission_make(d, &words, 1, &s), test ? RIG_OK : RIG_INVALID);
  assert_true(test == (s != NULL));
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_buffer_release(c);
  rig_device_release(d);
}

/* VALID-9: a slot used unordered by one part and ordered by another. */
static void valid_9_slot_unordered_and_ordered(void **state) {
  rig_device *d = conf_open();
  rig_part parts[2] = {rig_part_unordered(rig_part_fill(0, 1, 1)), rig_part_copy(0, 1)};
  rig_submission *s = NULL;
  conf_status(conf_submission_make(d, parts, 2, &s), RIG_INVALID);
  assert_null(s);
  parts[1] = rig_part_unordered(rig_part_copy(0, 1));
  conf_ok(conf_submission_make(d, parts, 2, &s));
  rig_submission_release(s);
  rig_device_release(d);
}

/* ORDER-23, LMEM-4: unordered work follows nothing on its memory beyond
 * device order: its submit waits for no point of the slow device's write,
 * in the queue or on the host. */
static void order_23_unordered_follows_no_other_work(void **state) {
  RACES_ON_PURPOSE();
  rig_device *d = conf_open(), *b = open_name(SLOW);
  rig_buffer *x = filled(b, 0), *y = filled(d, 0);
  rig_point fill, p;
  rig_stats before, after;
  conf_ok(rig_buffer_submit_fill(x, 0x66, 1, &fill));
  rig_part part = rig_part_unordered(rig_part_copy(0, 1));
  rig_submission *s;
  rig_run *run;
  conf_ok(conf_submission_make(d, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  rig_buffer *bufs[2] = {x, y};
  conf_run_set(run, &part, 1, bufs, 2);
  rig_device_stats(d, &before);
  rig_status st = rig_run_submit(run, bufs, 2, NULL, 0, &p);
  rig_device_stats(d, &after);
  if (st == RIG_INVALID) { /* d does not reach the slow device's memory */
    assert_false(rig_device_reaches(d, b));
  } else {
    conf_ok(st);
    assert_int_equal(after.queue_waits, before.queue_waits);
    assert_int_equal(after.host_waits, before.host_waits);
    conf_ok(rig_point_wait(p));
  }
  conf_ok(rig_point_wait(fill));
  rig_submission_release(s);
  rig_buffer_release(x);
  rig_buffer_release(y);
  done(b);
  rig_device_release(d);
}

/* ORDER-24, RECLAIM-5: nothing later follows unordered work: a read of its
 * memory does not wait for it; but its memory returns only after it. */
static void order_24_reclaim_5_nothing_follows_unordered_work(void **state) {
  RACES_ON_PURPOSE();
  rig_device *b = open_name(SLOW);
  rig_buffer *y = filled(b, 0x01);
  rig_part part = rig_part_unordered(rig_part_fill(0, 0x02, 1));
  rig_submission *s;
  rig_run *run;
  rig_point p;
  conf_ok(rig_submission_make(b, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  conf_ok(rig_run_submit(run, &y, 1, NULL, 0, &p));
  uint8_t byte = 0;
  conf_ok(rig_buffer_get(y, 0, &byte, 1)); /* follows nothing unordered */
  assert_false(rig_point_reached(p));
  assert_int_equal(byte, 0x01);
  void *where = rig_buffer_host_address(y);
  uint64_t allocated = rig_device_allocated(b);
  rig_buffer_release(y);
  rig_buffer *again;
  conf_ok(rig_buffer_create(b, N, &again)); /* y waits for p: not reused */
  assert_ptr_not_equal(rig_buffer_host_address(again), where);
  assert_int_equal(rig_device_allocated(b), allocated + N);
  conf_ok(rig_point_wait(p));
  rig_submission_release(s);
  rig_buffer_release(again);
  done(b);
}

/* WORD-1, WORD-4: memory is ordered in words: a read of a view that shares
 * a word, but no byte, with a view the slow device writes follows that
 * write. */
static void word_1_4_views_sharing_a_word_order_as_one(void **state) {
  rig_device *b = open_name(SLOW);
  rig_buffer *whole = filled(b, 0x00), *lo, *hi;
  conf_ok(rig_buffer_view(whole, 0, 2, RIG_READ_WRITE, &lo));
  conf_ok(rig_buffer_view(whole, 2, 2, RIG_READ_WRITE, &hi));
  assert_true(rig_buffer_overlaps(lo, hi));
  assert_false(rig_buffer_share_byte(lo, hi));
  rig_point p;
  conf_ok(rig_buffer_submit_fill(lo, 0x7e, 1, &p));
  uint8_t got[2];
  conf_ok(rig_buffer_get(hi, 0, got, 2)); /* follows the write of lo's word */
  assert_true(rig_point_reached(p));
  assert_int_equal(got[0], 0x00);
  assert_int_equal(got[1], 0x00);
  rig_buffer_release(lo);
  rig_buffer_release(hi);
  rig_buffer_release(whole);
  done(b);
}

/* WORD-9: every device's alignment is a word or more, so its allocations
 * start on a word. */
static void word_9_allocations_start_on_a_word(void **state) {
  rig_device *d = conf_open();
  assert_true(rig_device_alignment(d) >= RIG_WORD);
  for (size_t n = 1; n < 300; n += 7) {
    rig_buffer *b;
    conf_ok(rig_buffer_create(d, n, &b));
    void *where = rig_buffer_host_address(b);
    if (where)
      assert_int_equal((uintptr_t)where % RIG_WORD, 0);
    rig_buffer_release(b);
  }
  rig_device_release(d);
}

/* ORDER-16: a host write to memory the device addresses is visible to
 * work submitted after it. */
static void order_16_host_write_visible_to_later_work(void **state) {
  rig_device *d = conf_open();
  rig_buffer *x = filled(d, 0), *y = filled(d, 0);
  uint8_t *raw = rig_buffer_host_address(x);
  if (!raw) { /* the host addresses none of d's memory: nothing to write raw */
    rig_buffer_release(x);
    rig_buffer_release(y);
    rig_device_release(d);
    skip();
  }
  conf_ok(rig_buffer_wait(x, RIG_READ_WRITE));
  memset(raw, 0x5f, N); /* host code, through no call of rig's */
  conf_ok(rig_buffer_copy(x, y));
  assert_bytes(y, 0x5f);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_device_release(d);
}

/* ORDER-18, ORDER-20, ORDER-21: a device's copy adds its point to the
 * stamps of the memory it reads (a use) and writes (a write and a use);
 * host work adds none. */
static void order_18_20_21_work_stamps_its_point(void **state) {
  rig_device *d = conf_open();
  rig_buffer *x = filled(d, 1), *y = filled(d, 2);
  rig_point p, w, u;
  conf_ok(rig_buffer_submit_copy(x, y, &p));
  rig_device *runner = rig_point_device(p);
  assert_non_null(runner);
  rig_buffer_stamps(x, runner, &w, &u);
  if (runner == rig_device_host()) {                /* ORDER-21 */
    assert_int_equal(w, RIG_POINT_NONE);
    assert_int_equal(u, RIG_POINT_NONE);
  } else {                                    /* ORDER-18, ORDER-20 */
    assert_int_equal(u, p);
    assert_int_not_equal(w, p);
    rig_buffer_stamps(y, runner, &w, &u);
    assert_int_equal(w, p);
    assert_int_equal(u, p);
  }
  conf_ok(rig_point_wait(p));
  rig_device_release(runner);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_device_release(d);
}

/* ORDER-19, LMEM-12: the stamps take the point also when the driver
 * refuses the work and its device is lost: the other device's memory the
 * refused copy would have written now raises Lost at every use. */
static void order_19_refused_work_still_stamps(void **state) {
  rig_device *f = open_name("test:order-faulty,fault_nth=1");
  rig_device *peer = open_name("test:order-faulty-peer"); /* f copies into it */
  rig_buffer *src, *dst;
  conf_ok(rig_buffer_create(f, N, &src));
  conf_ok(rig_buffer_create(peer, N, &dst));
  rig_point p = RIG_POINT_NONE, w;
  rig_part part = rig_part_copy(0, 1);
  rig_submission *s;
  rig_run *run;
  conf_ok(rig_submission_make(f, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  rig_buffer *bufs[2] = {src, dst};
  conf_status(rig_run_submit(run, bufs, 2, NULL, 0, &p), RIG_LOST); /* f refuses it */
  rig_submission_release(s);
  assert_int_equal(p, RIG_POINT_NONE);
  assert_non_null(strstr(rig_error_last()->message, "injected fault at"));
  rig_buffer_stamps(dst, f, &w, NULL);
  assert_int_equal(rig_point_slot(w), rig_point_slot(rig_device_point(f, 0)));
  assert_int_equal(rig_point_value(w), rig_device_submitted(f)); /* the refused value */
  uint8_t byte;
  conf_status(rig_buffer_get(dst, 0, &byte, 1), RIG_LOST);
  assert_non_null(strstr(rig_error_last()->message, "test:order-faulty,fault_nth=1 lost: injected"));
  rig_buffer_release(src);
  rig_buffer_release(dst);
  done(f);
  done(peer);
}

/* The parts the test device ran, from its "test.trace" capability. */
static size_t trace_of(rig_device *d, rig_test_trace_entry *out, size_t max) {
  const rig_test_trace *t = rig_device_capability(d, "test.trace");
  assert_non_null(t);
  return t->read(t->h, out, max);
}

/* ORDER-3, ORDER-5, ORDER-6, ORDER-7, PROP-39: on a device with a queue for
 * copies and one for fills and words, core orders exactly the parts that
 * need it: a copy that reads what a fill on the other queue wrote follows
 * it; a words part follows every earlier part; unrelated parts get no
 * order; and the results are right. */
static void order_3_5_6_7_parts_across_queues(void **state) {
  rig_device *d = open_name("test:order-parts,queues=2,delay_us=2000");
  rig_buffer *a = filled(d, 0), *b = filled(d, 0x0b), *c = filled(d, 0), *e = filled(d, 0);
  const uint32_t words[2] = {0xfeed, 1};
  rig_part parts[5] = {
      rig_part_fill(0, 0xa1, 1), /* 0: queue 0 */
      rig_part_copy(1, 2),       /* 1: queue 1, shares nothing with 0: no order */
      rig_part_copy(0, 3),       /* 2: queue 1, reads what 0 wrote: follows 0 */
      rig_part_words(words, 2),  /* 3: queue 0, follows every earlier part */
      rig_part_fill(2, 0xc2, 1), /* 4: queue 0, after the words on its queue */
  };
  rig_buffer *bufs[4] = {a, b, c, e};
  run_parts(d, parts, 5, bufs, 4);
  rig_test_trace_entry t[8];
  size_t n = trace_of(d, t, 8);
  assert_true(n >= 5);
  rig_test_trace_entry *p = &t[n - 5], by[5];
  for (int i = 0; i < 5; i++)
    by[p[i].index] = p[i];
  assert_int_equal(by[0].queue, 0);
  assert_int_equal(by[1].queue, 1);
  assert_int_equal(by[1].follows[0], 0);  /* ORDER-7: may run concurrently */
  assert_int_equal(by[2].follows[0], 1);  /* ORDER-3: follows part 0 */
  assert_int_equal(by[3].kind, RIG_EDGE_PART_WORDS);
  assert_int_equal(by[3].word0, 0xfeed);
  assert_int_equal(by[3].follows[1], 3);  /* ORDER-5: after parts 1 and 2 */
  assert_int_equal(by[4].queue, 0);       /* ORDER-6: after the words, on its queue */
  for (int i = 0; i < 5; i++)             /* the trace is in order of running */
    if (p[i].index == 4)
      for (int k = i + 1; k < 5; k++)
        assert_int_not_equal(p[k].index, 3);
  assert_bytes(e, 0xa1);
  assert_bytes(c, 0xc2);                  /* part 4 follows part 1's write */
  rig_buffer_release(a);
  rig_buffer_release(b);
  rig_buffer_release(c);
  rig_buffer_release(e);
  done(d);
}

struct blocker {
  rig_buffer *x;
  rig_point p;
  rig_status st;
  int done;
};

static void *fill_in_thread(void *arg) {
  struct blocker *b = arg;
  b->st = rig_buffer_submit_fill(b->x, 1, 1, &b->p);
  __atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* DOM-5: while a may_block driver's submit blocks, other submits on the
 * device wait for it: the second submit returns after the first, with the
 * next value. */
static void dom_5_submits_wait_for_a_blocking_submit(void **state) {
  rig_device *d = open_name("test:order-blocking,block_ms=300");
  struct blocker first = {filled(d, 0), 0, RIG_INVALID, 0};
  rig_buffer *y = filled(d, 0);
  pthread_t t;
  uint64_t before = rig_device_submitted(d);
  pthread_create(&t, NULL, fill_in_thread, &first);
  while (rig_device_submitted(d) == before) /* the first is inside the driver's submit */
    sched_yield();
  rig_point p;
  conf_ok(rig_buffer_submit_fill(y, 2, 1, &p));
  assert_int_equal(__atomic_load_n(&first.done, __ATOMIC_ACQUIRE), 1);
  pthread_join(t, NULL);
  conf_ok(first.st);
  assert_int_equal(rig_point_value(p), rig_point_value(first.p) + 1);
  conf_ok(rig_point_wait(p));
  rig_buffer_release(first.x);
  rig_buffer_release(y);
  done(d);
}

struct waiter {
  rig_point p;
  rig_status st;
};

static void *wait_in_thread(void *arg) {
  struct waiter *w = arg;
  w->st = rig_point_wait(w->p);
  return NULL;
}

/* ORDER-32, TL-9: a host wait orders the host after the work submitted
 * before it, never after work submitted later: on a device that runs only
 * committed work, the wait commits and returns while later work, which
 * nothing commits, never runs. */
static void order_32_a_wait_follows_no_later_work(void **state) {
  rig_device *d = open_name("test:order-32,commit_k=1000");
  rig_buffer *x = filled(d, 0), *y = filled(d, 0);
  struct waiter w = {0, RIG_INVALID};
  conf_ok(rig_buffer_submit_fill(x, 3, 1, &w.p));
  pthread_t t;
  pthread_create(&t, NULL, wait_in_thread, &w);
  uint64_t seen = 0;
  while (seen < rig_point_value(w.p)) /* its wait committed it, and it ran */
    conf_ok(rig_device_signaled(d, &seen));
  rig_point later;
  conf_ok(rig_buffer_submit_fill(y, 4, 1, &later)); /* committed by nothing */
  pthread_join(t, NULL);
  conf_ok(w.st);
  conf_ok(rig_device_signaled(d, &seen));
  assert_true(seen < rig_point_value(later));
  conf_ok(rig_point_wait(later));                   /* this wait commits it */
  rig_buffer_release(x);
  rig_buffer_release(y);
  done(d);
}

/* SUBMIT-31, LMEM-11: a submit whose waits hold a point its lost device
 * never reached is Lost, with that device's reason, and takes no value. */
static void submit_31_waits_on_a_point_never_reached(void **state) {
  rig_device *d = conf_open(), *f = open_name("test:order-31,delay_us=200000,fault_nth=2");
  rig_buffer *x = filled(d, 0), *y = filled(d, 0), *on_f;
  conf_ok(rig_buffer_create(f, N, &on_f));
  rig_point never, p = RIG_POINT_NONE;
  conf_ok(rig_buffer_submit_fill(on_f, 1, 1, &never));
  conf_status(rig_buffer_submit_fill(on_f, 2, 1, &p), RIG_LOST); /* the loss */
  rig_part part = rig_part_copy(0, 1);
  rig_submission *s;
  rig_run *run;
  conf_ok(conf_submission_make(d, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  rig_buffer *bufs[2] = {x, y};
  uint64_t submitted = rig_device_submitted(d);
  conf_status(conf_submit(run, &part, 1, bufs, 2, &never, 1, &p), RIG_LOST);
  assert_non_null(strstr(rig_error_last()->message, "lost: injected fault"));
  assert_int_equal(p, RIG_POINT_NONE);
  assert_int_equal(rig_device_submitted(d), submitted);
  assert_false(rig_point_reached(never));
  conf_ok(rig_submission_take(s, &run)); /* the run was freed (SUBMIT-12) */
  conf_ok(conf_submit(run, &part, 1, bufs, 2, NULL, 0, &p));
  conf_ok(rig_point_wait(p));
  rig_submission_release(s);
  rig_buffer_release(on_f);
  rig_buffer_release(x);
  rig_buffer_release(y);
  done(f);
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(order_8_22_without_stamps_a_read_is_stale),
      cmocka_unit_test(order_8_read_follows_other_devices_write),
      cmocka_unit_test(tl_20_signaled_is_reached_and_its_writes_visible),
      cmocka_unit_test(order_9_write_follows_other_devices_read),
      cmocka_unit_test(fills_in_turn),
      cmocka_unit_test(order_11_host_after_wait_sees_writes),
      cmocka_unit_test(submit_2_3_queue_or_host_wait),
      cmocka_unit_test(submit_2_3_9_waits_in_queue_or_on_host),
      cmocka_unit_test(open_20_21_23_one_word_mapping_per_slot),
      cmocka_unit_test(order_28_33_after_both_submits_follows_both),
      cmocka_unit_test(order_3_4_parts_sharing_memory_follow),
      cmocka_unit_test(valid_9_slot_unordered_and_ordered),
      cmocka_unit_test(order_23_unordered_follows_no_other_work),
      cmocka_unit_test(order_24_reclaim_5_nothing_follows_unordered_work),
      cmocka_unit_test(word_1_4_views_sharing_a_word_order_as_one),
      cmocka_unit_test(word_9_allocations_start_on_a_word),
      cmocka_unit_test(order_16_host_write_visible_to_later_work),
      cmocka_unit_test(order_18_20_21_work_stamps_its_point),
      cmocka_unit_test(order_19_refused_work_still_stamps),
      cmocka_unit_test(order_3_5_6_7_parts_across_queues),
      cmocka_unit_test(dom_5_submits_wait_for_a_blocking_submit),
      cmocka_unit_test(order_32_a_wait_follows_no_later_work),
      cmocka_unit_test(submit_31_waits_on_a_point_never_reached),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
