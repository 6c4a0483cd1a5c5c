/* test_held.c: rules that only show while a device still holds work, or
 * after work that will never run: a test device holds it back (hang_nth:
 * its queue stands still until its stop; a slow device's point waited for
 * in the queue) or refuses it (fault_nth), and a wait hook that answers
 * "stop" at once turns a call that would wait into RIG_INTERRUPTED. Each
 * check then tells a call that waits from one that does not, with no clock.
 *
 * Rules: ORDER-2 ORDER-12 ORDER-13 ORDER-14 ORDER-34 RECLAIM-8
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

static int setup(void **state) {
  (void)state;
  arm_deadline(60);
  rig_runtime_set_wait_hook(past_deadline, NULL);
  return 0;
}

typedef struct calls {
  int n;
  unsigned char first;
} calls;

static void note(void *bytes, size_t n, void *ctx) {
  calls *c = ctx;
  c->n++;
  c->first = n ? ((unsigned char *)bytes)[0] : 0;
}

static rig_buffer *filled(rig_device *d, size_t n, unsigned char v) {
  rig_buffer *b = create_ok(d, n);
  unsigned char t[4096];
  assert_true(n <= sizeof t);
  memset(t, v, n);
  ok(rig_buffer_put(b, 0, t, n));
  return b;
}

/* Ends a device whose queue stands still (hang_nth): a wait for its held
 * point finds the hang once hang_ms passed and loses it; the close then
 * only runs its stop. */
static void end_held(rig_device *d, rig_point held) {
  rig_runtime_set_wait_hook(past_deadline, NULL);
  assert_int_equal(rig_point_wait(held), RIG_LOST);
  ok(rig_device_close(d));
  rig_device_release(d);
}

/* ORDER-13, ORDER-12, ORDER-34, ORDER-14: b's only pending use is a read
 * (the held copy of b into c). Buffer.write's callback follows every use,
 * so it waits for that read: with a hook that stops every wait, write
 * returns RIG_INTERRUPTED and its callback never runs, nor does a wait for
 * Read_write return. Buffer.read's callback and a wait for Read follow
 * only last writes, none pending: they run at once. */
static void order_13_write_waits_for_a_pending_read(void **state) {
  (void)state;
  rig_device *d = open_ok("test:order13,hang_ms=100,hang_nth=1");
  rig_buffer *b = filled(d, 64, 0x5b), *c = filled(d, 64, 0);
  rig_point held;
  ok(rig_buffer_submit_copy(b, c, &held)); /* reads b; never runs */
  assert_false(rig_point_reached(held));

  rig_runtime_set_wait_hook(stop_now, NULL);
  calls r = {0}, w = {0};
  ok(rig_buffer_read(b, note, &r));                                  /* ORDER-12 */
  assert_int_equal(r.n, 1);
  assert_int_equal(r.first, 0x5b);
  ok(rig_buffer_wait(b, RIG_READ));                                  /* ORDER-14 */
  assert_true(rig_buffer_reached(b, RIG_READ));

  assert_int_equal(rig_buffer_write(b, note, &w), RIG_INTERRUPTED);  /* ORDER-13 */
  assert_int_equal(w.n, 0);
  assert_int_equal(rig_buffer_wait(b, RIG_READ_WRITE), RIG_INTERRUPTED); /* ORDER-34 */
  assert_false(rig_buffer_reached(b, RIG_READ_WRITE));
  assert_false(rig_point_reached(held));

  end_held(d, held);
  rig_buffer_release(b);
  rig_buffer_release(c);
}

/* ORDER-2: a device's value v + 1 follows value v across its queues, even
 * where nothing else orders them. On a device with two queues (fills on
 * one, copies on the other), value v fills x after its queue waited for a
 * slow device's point; value v + 1 copies x into z through an unordered
 * use, which follows nothing on x but device order (ORDER-23). The copy
 * must see the fill's bytes. */
static void order_2_device_order_across_queues(void **state) {
  (void)state;
  rig_device *slow = open_ok("test:order2-slow,delay_us=300000");
  rig_device *d = open_ok("test:order2,queues=2");
  rig_buffer *s = filled(slow, 64, 0), *x = filled(d, 64, 0x11), *z = filled(d, 64, 0);
  rig_point ps, pv, pw;
  ok(rig_buffer_submit_fill(s, 0x33, 1, &ps));

  rig_part fill = rig_part_fill(0, 0x22, 1);
  rig_part copy = rig_part_unordered(rig_part_copy(0, 1));
  rig_submission *sf, *sc;
  rig_run *rf, *rc;
  ok(rig_submission_make(d, &fill, 1, &sf));
  ok(rig_submission_make(d, &copy, 1, &sc));
  ok(rig_submission_take(sf, &rf));
  ok(rig_run_submit(rf, &x, 1, &ps, 1, &pv));      /* v: waits for ps in the queue */
  ok(rig_submission_take(sc, &rc));
  rig_buffer *xz[2] = {x, z};
  ok(rig_run_submit(rc, xz, 2, NULL, 0, &pw));     /* v + 1: device order only */
  assert_int_equal(rig_point_value(pw), rig_point_value(pv) + 1);
  ok(rig_point_wait(pw));
  assert_true(rig_point_reached(pv));
  expect_bytes(z, 0, 64, 0x22);                   /* ORDER-2 */

  rig_submission_release(sf);
  rig_submission_release(sc);
  rig_buffer_release(s);
  rig_buffer_release(x);
  rig_buffer_release(z);
  close_release(d);
  close_release(slow);
}

/* RECLAIM-8 (and RECLAIM-7): host memory whose last write is a point its
 * lost device never reached raises Lost on every use (LMEM-12). Released,
 * it goes to the host's cache once that point is dropped, and a create of
 * the same size takes it back: that buffer has nothing to do with the
 * memory's earlier work, so it never waits for it, nor raises its Lost. */
static void reclaim_8_reused_memory_owes_nothing_to_its_past(void **state) {
  (void)state;
  enum { N = 65536 }; /* the host keeps buffers of 64 KiB and more (RECLAIM-47) */
  rig_device *e = open_ok("test:reclaim8,fault_nth=1");
  rig_buffer *h = create_ok(rig_device_host(), N), *hb = NULL;
  void *at = rig_buffer_host_address(h);
  ok(rig_buffer_borrow(e, h, &hb));
  rig_point p = 1;
  assert_int_equal(rig_buffer_submit_fill(hb, 0x7e, 1, &p), RIG_LOST); /* e:1, refused */
  unsigned char t[16];
  assert_int_equal(rig_buffer_get(h, 0, t, sizeof t), RIG_LOST);     /* LMEM-12 */
  rig_buffer_release(hb);
  ok(rig_device_close(e));                      /* its stop: e's points are dropped */
  rig_buffer_release(h);

  h = create_ok(rig_device_host(), N);          /* the cached memory, back */
  assert_ptr_equal(rig_buffer_host_address(h), at);
  assert_true(rig_buffer_reached(h, RIG_READ_WRITE));                 /* RECLAIM-8 */
  rig_runtime_set_wait_hook(stop_now, NULL);
  ok(rig_buffer_wait(h, RIG_READ_WRITE));
  rig_runtime_set_wait_hook(past_deadline, NULL);
  rig_point w = 1, u = 1;
  rig_buffer_stamps(h, e, &w, &u);                                    /* RECLAIM-7 */
  assert_int_equal(w, RIG_POINT_NONE);
  assert_int_equal(u, RIG_POINT_NONE);
  memset(t, 0x42, sizeof t);
  ok(rig_buffer_put(h, 0, t, sizeof t));
  memset(t, 0, sizeof t);
  ok(rig_buffer_get(h, 0, t, sizeof t));
  assert_int_equal(t[15], 0x42);
  rig_buffer_release(h);
  rig_device_release(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(order_13_write_waits_for_a_pending_read, setup),
      cmocka_unit_test_setup(order_2_device_order_across_queues, setup),
      cmocka_unit_test_setup(reclaim_8_reused_memory_owes_nothing_to_its_past, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
