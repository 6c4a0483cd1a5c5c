/* pingpong.c: an ordered ping-pong of 64-byte copies between two devices
 * vs two threads handing a memcpy back and forth through a condition
 * variable. Each rig copy follows the one before through the stamps alone
 * (ORDER-8, ORDER-9): nothing waits between them, and the round's last
 * point is waited for once. One round trip: A -> B on one device, B -> A
 * on the other.
 *
 * test <-> test: A on one test device, B on another; each copy runs on its
 * destination's device, whose queue waits for the other's point (SUBMIT-2).
 * memory <-> test: A and B on a memory device; A -> B runs there and waits
 * on the host for the test device's last copy (SUBMIT-3), B -> A is a
 * prepared copy on the test device over borrows of A and B onto it: a
 * device's work addresses another's memory only through a borrow
 * (VALID-6, VALID-15). */
#include <pthread.h>
#include <string.h>

#include <rig/rig.h>

#include "bench.h"

#define BYTES 64
#define ROUNDS 5000

struct ctx {
  rig_buffer *a, *b;
  rig_submission *back; /* B -> A as a prepared copy, or NULL */
  rig_buffer *back_a, *back_b; /* A and B borrowed onto back's device */
  rig_buffer *whole_a, *whole_b; /* what A and B view where borrowed */
  int failed;
  /* the anchor's two threads */
  pthread_mutex_t lock;
  pthread_cond_t turned;
  int turn, stop;
  unsigned char x[BYTES], y[BYTES];
};

static rig_status copy_back(struct ctx *c, rig_point *p) {
  if (!c->back)
    return rig_buffer_submit_copy(c->b, c->a, p);
  rig_run *r;
  rig_buffer *bufs[2] = {c->back_b, c->back_a};
  rig_status st = rig_submission_take(c->back, &r);
  return st ? st : rig_run_submit(r, bufs, 2, NULL, 0, p);
}

static void with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  rig_point last = RIG_POINT_NONE;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    c->failed = rig_buffer_submit_copy(c->a, c->b, &last) || copy_back(c, &last);
  if (last && rig_point_wait(last) != RIG_OK)
    c->failed = 1;
}

/* The anchor's second thread: y -> x on each hand-off. */
static void *partner(void *p) {
  struct ctx *c = p;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    while (c->turn != 1)
      pthread_cond_wait(&c->turned, &c->lock);
    if (c->stop)
      break;
    memcpy(c->x, c->y, BYTES);
    c->turn = 0;
    pthread_cond_signal(&c->turned);
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

static void with_condvar(void *p, uint64_t iters) {
  struct ctx *c = p;
  pthread_t t;
  c->turn = c->stop = 0;
  if (pthread_create(&t, NULL, partner, c) != 0) {
    c->failed = 1;
    return;
  }
  pthread_mutex_lock(&c->lock);
  for (uint64_t i = 0; i < iters; i++) {
    memcpy(c->y, c->x, BYTES);
    c->turn = 1;
    pthread_cond_signal(&c->turned);
    while (c->turn != 0)
      pthread_cond_wait(&c->turned, &c->lock);
  }
  c->stop = c->turn = 1;
  pthread_cond_signal(&c->turned);
  pthread_mutex_unlock(&c->lock);
  pthread_join(t, NULL);
}

/* Times one pair of devices; A starts as 0x5a, and B must end as A. */
static int run(FILE *out, const char *name, struct ctx *c) {
  unsigned char got[BYTES];
  c->failed = rig_buffer_fill(c->a, 0x5a, 1) || rig_buffer_fill(c->b, 0, 1);
  if (!c->failed)
    rig_bench_compare(out, name, with_rig, with_condvar, c, ROUNDS, 7);
  if (c->failed || rig_buffer_get(c->b, 0, got, BYTES) || got[0] != 0x5a ||
      memcmp(got, got + 1, BYTES - 1)) {
    fprintf(out, "bench %s: %s\n", name, c->failed ? rig_error_last()->message : "wrong bytes");
    return 1;
  }
  return 0;
}

static rig_device *open_name(FILE *out, const char *name, int *failed) {
  rig_device *d = NULL;
  if (!*failed && rig_device_open(name, &d) != RIG_OK) {
    fprintf(out, "bench ping-pong: %s: %s\n", name, rig_error_last()->message);
    *failed = 1;
  }
  return d;
}

/* A 64-byte buffer on d; one that is to be borrowed must start on a page,
 * which the memory driver gives allocations of 64 KiB and more, so it is
 * a view of such a buffer (*whole). */
static rig_status make(rig_device *d, bool paged, rig_buffer **whole, rig_buffer **out) {
  if (!paged)
    return rig_buffer_create(d, BYTES, out);
  rig_status st = rig_buffer_create(d, 65536, whole);
  return st ? st : rig_buffer_view(*whole, 0, BYTES, RIG_READ_WRITE, out);
}

/* Runs the ping-pong between x's and y's 64-byte buffers, B -> A as a
 * prepared copy on back's device where back is not NULL. */
static int pair(FILE *out, const char *name, rig_device *x, rig_device *y, rig_device *back) {
  struct ctx c = {.lock = PTHREAD_MUTEX_INITIALIZER, .turned = PTHREAD_COND_INITIALIZER};
  rig_part part = rig_part_copy(0, 1);
  int failed = 0;
  if (make(x, back != NULL, &c.whole_a, &c.a) || make(y, back != NULL, &c.whole_b, &c.b) ||
      (back && (rig_submission_make(back, &part, 1, &c.back) ||
                rig_buffer_borrow(back, c.a, &c.back_a) || rig_buffer_borrow(back, c.b, &c.back_b)))) {
    fprintf(out, "bench %s: %s\n", name, rig_error_last()->message);
    failed = 1;
  } else
    failed = run(out, name, &c);
  rig_submission_release(c.back);
  rig_buffer_release(c.back_a);
  rig_buffer_release(c.back_b);
  rig_buffer_release(c.a);
  rig_buffer_release(c.b);
  rig_buffer_release(c.whole_a);
  rig_buffer_release(c.whole_b);
  return failed;
}

static void done(rig_device *d) {
  if (d) {
    rig_bench_status(rig_device_close(d), "rig_device_close(d)");
    rig_device_release(d);
  }
}

int rig_bench_pingpong(FILE *out) {
  int failed = 0;
  rig_device *t1 = open_name(out, "test:bench-ping,delay_us=0", &failed);
  rig_device *t2 = open_name(out, "test:bench-pong,delay_us=0", &failed);
  rig_device *m = open_name(out, "memory:bench-ping", &failed);
  if (!failed) {
    failed |= pair(out, "ping-pong 64 B test <-> test (round trip)", t1, t2, NULL);
    failed |= pair(out, "ping-pong 64 B memory <-> test (round trip)", m, m, t1);
  }
  done(t1);
  done(t2);
  done(m);
  return failed;
}
