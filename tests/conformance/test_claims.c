/* test_claims.c: claims and donation on the device under test (PRE-23..26,
 * LIFE-2, WORD-4, VALID-5, VALID-14, RECLAIM-20). */
#include <pthread.h>
#include <string.h>

#include "common.h"

#define N 256

static rig_buffer *made(rig_device *d, uint8_t byte) {
  rig_buffer *b;
  conf_ok(rig_buffer_create(d, N, &b));
  conf_ok(rig_buffer_fill(b, byte, 1));
  return b;
}

struct donation {
  bool only;
  rig_status consumed;
  rig_buffer *result;
};

/* A donor: writes its result over the argument when its claim is the only
 * one (PRE-25), after consuming the memory (PRE-26). */
static void donor(rig_claim *c, rig_buffer *b, void *ctx) {
  struct donation *d = ctx;
  d->only = rig_claim_only(c);
  d->consumed = rig_claim_consume(c, &d->result);
  if (d->consumed == RIG_OK)
    d->consumed = rig_buffer_fill(d->result, 0x99, 1); /* the consumed buffer is usable */
}

/* PRE-23..26: the only claim consumes: every buffer made over the memory
 * until then is dead, and the result lands in the same memory. */
static void pre_23_26_only_claim_consumes(void **state) {
  rig_device *d = conf_open();
  rig_buffer *b = made(d, 0x10), *view;
  conf_ok(rig_buffer_view(b, 0, 16, RIG_READ, &view));
  void *where = rig_buffer_host_address(b);
  uint64_t allocated = rig_device_allocated(d);
  struct donation don = {0};
  conf_ok(rig_claim_with(b, donor, &don));
  assert_true(don.only);
  assert_int_equal(don.consumed, RIG_OK);
  assert_true(rig_buffer_dead(b));                   /* PRE-26 */
  assert_true(rig_buffer_dead(view));
  uint8_t got[N];
  conf_status(rig_buffer_get(b, 0, got, N), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "dead"));
  conf_ok(rig_buffer_get(don.result, 0, got, N));
  for (int i = 0; i < N; i++)
    assert_int_equal(got[i], 0x99);
  assert_ptr_equal(rig_buffer_host_address(don.result), where); /* no copy */
  assert_int_equal(rig_device_allocated(d), allocated);
  rig_buffer_release(view);
  rig_buffer_release(b);
  rig_buffer_release(don.result);
  rig_device_release(d);
}

/* PRE-24, PRE-25, LIFE-2: a reader's claim, taken through a view, makes
 * the donor's claim not the only one: it may not consume, and nothing
 * changes. */
static void pre_24_25_life_2_another_reader_blocks_donation(void **state) {
  rig_device *d = conf_open();
  rig_buffer *b = made(d, 0x20), *view;
  rig_claim *reader;
  conf_ok(rig_buffer_view(b, 8, 8, RIG_READ, &view));
  conf_ok(rig_buffer_claim(view, &reader));
  struct donation don = {0};
  conf_ok(rig_claim_with(b, donor, &don));
  assert_false(don.only);
  assert_int_equal(don.consumed, RIG_INVALID);
  assert_null(don.result);
  assert_false(rig_buffer_dead(b));
  assert_false(rig_buffer_dead(view));
  uint8_t got[N];
  conf_ok(rig_buffer_get(b, 0, got, N));
  for (int i = 0; i < N; i++)
    assert_int_equal(got[i], 0x20);
  rig_claim_release(reader);
  don = (struct donation){0};
  conf_ok(rig_claim_with(b, donor, &don)); /* the reader is gone */
  assert_true(don.only);
  assert_int_equal(don.consumed, RIG_OK);
  rig_buffer_release(don.result);
  rig_buffer_release(view);
  rig_buffer_release(b);
  rig_device_release(d);
}

/* RECLAIM-20: a hold's release only queues; the claim goes at the next
 * call that moves memory, on any device. */
static void reclaim_20_holds_go_at_the_next_move(void **state) {
  rig_device *d = conf_open();
  rig_buffer *b = made(d, 0x30), *other;
  rig_claim *hold;
  conf_ok(rig_claim_hold(b, &hold));
  rig_claim_release(hold);
  struct donation don = {0};
  conf_ok(rig_claim_with(b, donor, &don));
  assert_false(don.only); /* still counted: nothing moved memory yet */
  conf_ok(rig_buffer_create(rig_device_host(), 8, &other)); /* moves memory */
  don = (struct donation){0};
  conf_ok(rig_claim_with(b, donor, &don));
  assert_true(don.only);
  rig_buffer_release(don.result);
  rig_buffer_release(other);
  rig_buffer_release(b);
  rig_device_release(d);
}

struct holder {
  rig_buffer *b;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stage; /* 1: inside with_, 2: may leave */
};

static void hold_until_told(rig_claim *c, rig_buffer *b, void *ctx) {
  struct holder *h = ctx;
  pthread_mutex_lock(&h->lock);
  h->stage = 1;
  pthread_cond_broadcast(&h->cond);
  while (h->stage != 2)
    pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
}

static void *with_thread(void *arg) {
  struct holder *h = arg;
  return (void *)(intptr_t)rig_claim_with(h->b, hold_until_told, h);
}

/* VALID-5, VALID-14: while another thread holds the memory exclusive, this
 * thread's submits, copies, host accesses and claims of it are refused,
 * and change nothing; afterwards they run. */
static void valid_5_14_exclusive_memory_is_refused(void **state) {
  rig_device *d = conf_open();
  rig_buffer *b = made(d, 0x40), *src = made(d, 0x41), *view;
  conf_ok(rig_buffer_view(b, 0, 4, RIG_READ_WRITE, &view));
  struct holder h = {b, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  pthread_t t;
  pthread_create(&t, NULL, with_thread, &h);
  pthread_mutex_lock(&h.lock);
  while (h.stage != 1)
    pthread_cond_wait(&h.cond, &h.lock);
  pthread_mutex_unlock(&h.lock);
  uint64_t submitted = rig_device_submitted(d);
  rig_point p;
  uint8_t byte = 0;
  conf_status(rig_buffer_submit_fill(b, 1, 1, &p), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "exclusive"));
  conf_status(rig_buffer_copy(src, view), RIG_INVALID); /* WORD-4: through a view too */
  conf_status(rig_buffer_get(b, 0, &byte, 1), RIG_INVALID);
  rig_part part = rig_part_fill(0, 7, 1); /* a launch on the host (HOST-4) */
  rig_submission *s;
  rig_run *run;
  conf_ok(conf_submission_make(d, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  conf_status(conf_submit(run, &part, 1, &b, 1, NULL, 0, &p), RIG_INVALID); /* VALID-14 */
  struct donation don = {0};
  conf_status(rig_claim_with(b, donor, &don), RIG_INVALID);
  assert_int_equal(rig_device_submitted(d), submitted);
  pthread_mutex_lock(&h.lock);
  h.stage = 2;
  pthread_cond_broadcast(&h.cond);
  pthread_mutex_unlock(&h.lock);
  void *ret;
  pthread_join(t, &ret);
  assert_int_equal((intptr_t)ret, RIG_OK);
  conf_ok(rig_buffer_get(b, 0, &byte, 1));
  assert_int_equal(byte, 0x40); /* nothing was written meanwhile */
  conf_ok(rig_submission_take(s, &run));
  conf_ok(conf_submit(run, &part, 1, &b, 1, NULL, 0, &p));
  conf_ok(rig_point_wait(p));
  rig_submission_release(s);
  rig_buffer_release(view);
  rig_buffer_release(src);
  rig_buffer_release(b);
  rig_device_release(d);
}

/* PRE-26: consume needs rig_claim_with's claim on its own thread; a read
 * claim never consumes. */
static void pre_26_only_an_exclusive_claim_consumes(void **state) {
  rig_device *d = conf_open();
  rig_buffer *b = made(d, 0x50), *out = NULL;
  rig_claim *reader;
  conf_ok(rig_buffer_claim(b, &reader));
  conf_status(rig_claim_consume(reader, &out), RIG_INVALID);
  assert_null(out);
  assert_false(rig_buffer_dead(b));
  rig_claim_release(reader);
  conf_status(rig_claim_consume(NULL, &out), RIG_INVALID);
  conf_status(rig_buffer_claim(NULL, &reader), RIG_INVALID);
  conf_status(rig_claim_with(b, NULL, NULL), RIG_INVALID);
  rig_buffer_release(b);
  rig_device_release(d);
}

/* LMEM-3, LMEM-5, LMEM-6, LMEM-13, LMEM-14: after a loss, a read claim
 * depends on the last writes, an exclusive claim on every point: memory the
 * lost device wrote refuses both; memory it only read serves read claims,
 * and refuses rig_claim_with until the device has stopped. */
static void lmem_3_5_6_claims_after_a_loss(void **state) {
  rig_device *f, *peer; /* f runs copies over its peer's memory */
  conf_ok(rig_device_open("test:claims-lost,delay_us=200000,fault_nth=3", &f));
  conf_ok(rig_device_open("test:claims-peer", &peer));
  rig_buffer *read = made(peer, 1), *written = made(peer, 2);
  rig_buffer *on_f, *z;
  conf_ok(rig_buffer_create(f, N, &on_f));
  conf_ok(rig_buffer_create(f, N, &z));
  rig_point p;
  conf_ok(rig_buffer_submit_copy(read, z, &p));       /* f reads `read` */
  rig_part part = rig_part_copy(0, 1);                /* f writes `written` */
  rig_submission *s;
  rig_run *run;
  conf_ok(rig_submission_make(f, &part, 1, &s));
  conf_ok(rig_submission_take(s, &run));
  rig_buffer *bufs[2] = {on_f, written};
  conf_ok(rig_run_submit(run, bufs, 2, NULL, 0, &p));
  rig_submission_release(s);
  conf_status(rig_buffer_submit_fill(z, 0, 1, &p), RIG_LOST); /* the third faults */
  rig_claim *c = NULL;
  conf_status(rig_buffer_claim(written, &c), RIG_LOST);      /* LMEM-3, LMEM-12 */
  assert_null(c);
  conf_ok(rig_buffer_claim(read, &c));                        /* LMEM-13 */
  rig_claim_release(c);
  struct donation don = {0};
  conf_status(rig_claim_with(read, donor, &don), RIG_LOST);  /* LMEM-5, LMEM-6 */
  conf_status(rig_claim_with(written, donor, &don), RIG_LOST);
  conf_ok(rig_device_close(f));                                      /* its stop: LMEM-14 */
  conf_ok(rig_claim_with(read, donor, &don));
  assert_true(don.only);
  rig_buffer_release(don.result);
  conf_status(rig_buffer_claim(written, &c), RIG_LOST);      /* for good */
  rig_buffer_release(on_f);
  rig_buffer_release(z);
  rig_buffer_release(read);
  rig_buffer_release(written);
  rig_device_release(f);
  conf_ok(rig_device_close(peer));
  rig_device_release(peer);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pre_23_26_only_claim_consumes),
      cmocka_unit_test(pre_24_25_life_2_another_reader_blocks_donation),
      cmocka_unit_test(reclaim_20_holds_go_at_the_next_move),
      cmocka_unit_test(valid_5_14_exclusive_memory_is_refused),
      cmocka_unit_test(pre_26_only_an_exclusive_claim_consumes),
      cmocka_unit_test(lmem_3_5_6_claims_after_a_loss),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
