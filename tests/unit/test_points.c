/* test_points.c: points and the process's device slots (core/src/slot.c).
 *
 * Rules: OPEN-7 OPEN-9 OPEN-10 OPEN-11 OPEN-16 OPEN-17 OPEN-18 OPEN-24 OPEN-49
 *        PROP-4 PROP-5 TL-16 TL-17 RECLAIM-21, and Point.pp
 *        (rig_point_format).
 *
 * The tests run in the order of main's list and share the process's slot
 * table: each records the slots it sees (used[]) so that the later ones
 * know which slots are still fresh, and each closes and releases every
 * device it opens, so that the slot test at the end starts with only the
 * host's slot held, and ASan's leak check passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdatomic.h>

#include <rig/rig.h>

#include "util.h"

/* Slots any test of this process has seen taken (host's included). */

/* rig_device_signaled's value, asserting it answered (TL-19). */
static uint64_t signaled_of(rig_device *d) {
  uint64_t v = UINT64_MAX;
  assert_int_equal(rig_device_signaled(d, &v), RIG_OK);
  return v;
}

static bool used[RIG_SLOTS + 1];

/* Opens name, which must not be open yet, and records its slot. *fresh
 * says whether the slot was never used before in this process. */
static rig_device *open_new(const char *name, bool *fresh) {
  rig_device *d = NULL;
  check_ok(rig_device_open(name, &d), name);
  assert_non_null(d);
  uint32_t s = slot_of(d);
  assert_true(s >= 1 && s <= RIG_SLOTS);
  if (fresh)
    *fresh = !used[s];
  used[s] = true;
  return d;
}

/* Fills a fresh 64-byte buffer of d `times` times; returns the last point. */
static rig_point fill_n(rig_device *d, int times) {
  rig_buffer *b = NULL;
  rig_point p = RIG_POINT_NONE;
  check_ok(rig_buffer_create(d, 64, &b), "rig_buffer_create");
  for (int i = 0; i < times; i++)
    check_ok(rig_buffer_submit_fill(b, (uint32_t)i, 4, &p), "rig_buffer_submit_fill");
  rig_buffer_release(b);
  return p;
}

/* ---- OPEN-9: 16 bits of slot, 47 of value ------------------------------ */

/* OPEN-9: a point is slot << 47 | value, with 65,535 slots and values up
 * to 2^47 - 1, so every point fits in 63 bits (an OCaml int). */
static void open_9_point_packing(void **state) {
  (void)state;
  assert_int_equal(RIG_POINT_VALUE_BITS, 47);
  assert_true(RIG_POINT_VALUE_MAX == (UINT64_C(1) << 47) - 1);
  assert_true(RIG_POINT_VALUE_MAX == UINT64_C(140737488355327));
  assert_int_equal(RIG_SLOTS, 65535);
  assert_true(RIG_POINT_NONE == 0);

  const uint32_t slots[] = {1, 2, 3, 255, 256, 4097, 32768, 65534, 65535};
  const uint64_t values[] = {0, 1, 2, 1000, UINT64_C(1) << 32, UINT64_C(1) << 46,
                             RIG_POINT_VALUE_MAX - 1, RIG_POINT_VALUE_MAX};
  for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
    for (size_t j = 0; j < sizeof values / sizeof values[0]; j++) {
      rig_point p = rig_point_make(slots[i], values[j]);
      assert_true(p == ((uint64_t)slots[i] << 47 | values[j]));
      assert_int_equal(rig_point_slot(p), slots[i]);
      assert_true(rig_point_value(p) == values[j]);
      assert_true(p >> 63 == 0); /* 16 + 47 bits: the top bit is never set */
      assert_true(p != RIG_POINT_NONE);
    }
  /* The extreme point: every one of the 63 bits set. */
  assert_true(rig_point_make(RIG_SLOTS, RIG_POINT_VALUE_MAX) == (UINT64_C(1) << 63) - 1);
  /* rig_point_make does no check: a value past 47 bits is cut to them and
   * never spills into the slot. */
  rig_point over = rig_point_make(7, RIG_POINT_VALUE_MAX + 1);
  assert_int_equal(rig_point_slot(over), 7);
  assert_true(rig_point_value(over) == 0);
  over = rig_point_make(7, UINT64_MAX);
  assert_int_equal(rig_point_slot(over), 7);
  assert_true(rig_point_value(over) == RIG_POINT_VALUE_MAX);
  /* Slot and value of no point. */
  assert_int_equal(rig_point_slot(RIG_POINT_NONE), 0);
  assert_true(rig_point_value(RIG_POINT_NONE) == 0);
  /* A device's points carry its slot. */
  rig_device *h = rig_device_host();
  used[slot_of(h)] = true;
  rig_point hp = rig_device_point(h, 5);
  assert_int_equal(rig_point_slot(hp), slot_of(h));
  assert_true(rig_point_value(hp) == 5);
  assert_true(rig_device_point(NULL, 5) == RIG_POINT_NONE);
}

/* ---- TL-16, TL-17: a fresh slot starts at 0 ------------------------------ */

/* TL-16, TL-17, OPEN-16: a device that takes a never-used slot starts its
 * timeline at 0; submitted then follows every value it assigns. */
static void tl_16_17_fresh_slot_starts_at_zero(void **state) {
  (void)state;
  bool fresh = false;
  rig_device *d = open_new("memory:tl17-fresh", &fresh);
  assert_true(fresh);
  assert_int_not_equal(slot_of(d), slot_of(rig_device_host())); /* OPEN-16: a slot of its own */
  assert_true(rig_device_submitted(d) == 0);                    /* TL-17 */
  assert_true(signaled_of(d) == 0);
  rig_point p = fill_n(d, 1);
  assert_true(rig_point_value(p) == 1);
  assert_int_equal(rig_point_slot(p), slot_of(d));
  assert_true(rig_device_submitted(d) == 1);                    /* TL-16 */
  p = fill_n(d, 4);
  assert_true(rig_point_value(p) == 5);
  assert_true(rig_device_submitted(d) == 5);
  close_release(d);
}

/* ---- PROP-4: Point.device --------------------------------------------- */

/* PROP-4: rig_point_device gives the device of a point, with a reference,
 * while no later device holds its slot; NULL once one does, for a value the
 * new device was never given, and for a point of no device. */
static void prop_4_point_device_until_slot_reused(void **state) {
  (void)state;
  rig_device *a = open_new("memory:prop4-a", NULL);
  uint32_t s = slot_of(a);
  uint64_t start = rig_device_submitted(a);
  rig_point p = fill_n(a, 3);
  assert_int_equal(rig_point_slot(p), s);

  rig_device *got = rig_point_device(p);
  assert_ptr_equal(got, a);
  rig_device_release(got);
  /* Each of a's values names a, and each call gives a reference of its
   * own: releasing them leaves a open. */
  for (int i = 0; i < 6; i++) {
    got = rig_point_device(rig_device_point(a, rig_point_value(p) - (uint64_t)i % 3));
    assert_ptr_equal(got, a);
    rig_device_release(got);
  }
  assert_null(rig_device_lost(a));
  /* A value of the slot's earlier occupants is not a's. */
  if (start > 0)
    assert_null(rig_point_device(rig_point_make(s, start)));

  /* The host's points name the host. */
  got = rig_point_device(rig_device_point(rig_device_host(), 1));
  assert_ptr_equal(got, rig_device_host());
  rig_device_release(got);

  /* No point, value 0, and a slot no device has taken name no device. */
  assert_null(rig_point_device(RIG_POINT_NONE));
  assert_null(rig_point_device(rig_point_make(s, 0)));
  uint32_t unused = RIG_SLOTS;
  while (used[unused])
    unused--;
  assert_null(rig_point_device(rig_point_make(unused, 1)));

  /* Closed, and its slot not yet taken by another: still its device. */
  uint64_t last = rig_device_submitted(a);
  check_ok(rig_device_close(a), "rig_device_close");
  got = rig_point_device(p);
  assert_ptr_equal(got, a);
  assert_string_equal(rig_device_lost(got), "closed");
  rig_device_release(got);
  rig_device_release(a);

  /* A later device takes the slot: the old points name no device. The free
   * slot that was left last is taken first, so b takes a's slot. */
  rig_device *b = open_new("memory:prop4-b", NULL);
  assert_int_equal(slot_of(b), s);
  assert_true(rig_device_submitted(b) == last);
  assert_null(rig_point_device(p));
  for (uint64_t v = 1; v <= last; v++)
    assert_null(rig_point_device(rig_point_make(s, v)));
  /* b's own values name b. */
  rig_point q = fill_n(b, 1);
  assert_true(rig_point_value(q) == last + 1);
  got = rig_point_device(q);
  assert_ptr_equal(got, b);
  rig_device_release(got);
  close_release(b);
}

/* ---- OPEN-24: a left device's driver handle --------------------------------- */

/* The test driver's count of the handles core destroyed, from a device
 * of it that is open (its capability "test.destroys"). */
static _Atomic int *test_destroys_of(rig_device *d) {
  _Atomic int *n = (_Atomic int *)rig_device_capability(d, "test.destroys");
  assert_non_null(n);
  return n;
}

/* OPEN-24: a closed device that left its slot, and that nothing holds but
 * its slot, gives up its driver handle at the next call that moves memory,
 * not when a later device takes the slot; its record stays and still
 * names it to its points (PROP-4), which answer as before; one the
 * program still holds gives it up at the first move after its release.
 * (Its handle lived until the slot's reuse.) */
static void open_24_left_handle_goes_at_the_next_move(void **state) {
  (void)state;
  rig_device *d = open_new("test:open24", NULL);
  rig_point p = fill_n(d, 2);
  ok(rig_point_wait(p));
  _Atomic int *destroys = test_destroys_of(d);
  int before = atomic_load(destroys);
  close_release(d);
  ok(rig_device_free_cache(rig_device_host())); /* a move */
  assert_int_equal(atomic_load(destroys), before + 1);
  assert_true(rig_point_reached(p));
  ok(rig_point_wait(p));
  rig_device *got = rig_point_device(p);
  assert_ptr_equal(got, d);
  uint64_t v = 0;
  ok(rig_device_signaled(got, &v));                /* answered without the driver */
  assert_true(v >= rig_point_value(p));
  rig_device_release(got);
  rig_device *e = open_new("test:open24-next", NULL);     /* takes d's slot */
  assert_int_equal(slot_of(e), rig_point_slot(p));
  assert_int_equal(atomic_load(destroys), before + 1);   /* d's handle went once */
  /* Closed but still held by the program: its handle waits for the
   * program's release, then goes at the next move. */
  ok(rig_device_close(e));
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(atomic_load(destroys), before + 1);
  rig_device_release(e);
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(atomic_load(destroys), before + 2);
}

/* ---- PROP-5: Point.reached and Point.wait after reuse ------------------- */

static void assert_reached(rig_point p) {
  assert_true(rig_point_reached(p));
  check_ok(rig_point_wait(p), "rig_point_wait");
}

/* PROP-5: rig_point_reached and rig_point_wait keep answering for a
 * device's points after it closed and after a later device took its slot;
 * the new device's values answer for themselves. */
static void prop_5_points_answer_after_slot_reuse(void **state) {
  (void)state;
  rig_device *a = open_new("memory:prop5-a", NULL);
  uint32_t s = slot_of(a);
  uint64_t start = rig_device_submitted(a);
  rig_point p = fill_n(a, 3);
  uint64_t last = rig_point_value(p);
  assert_true(last == start + 3);
  for (uint64_t v = start + 1; v <= last; v++)
    assert_reached(rig_point_make(s, v));
  /* A value not given yet: not reached, and no wait for it. */
  rig_point ahead = rig_point_make(s, last + 1);
  assert_false(rig_point_reached(ahead));
  assert_int_equal(rig_point_wait(ahead), RIG_INVALID);

  /* Closed: its values stay reached. */
  check_ok(rig_device_close(a), "rig_device_close");
  for (uint64_t v = start + 1; v <= last; v++)
    assert_reached(rig_point_make(s, v));
  assert_false(rig_point_reached(ahead));
  assert_int_not_equal(rig_point_wait(ahead), RIG_OK);
  rig_device_release(a);

  /* Reused: a's values stay reached; b starts after them. */
  rig_device *b = open_new("memory:prop5-b", NULL);
  assert_int_equal(slot_of(b), s);
  for (uint64_t v = start + 1; v <= last; v++)
    assert_reached(rig_point_make(s, v));
  /* last + 1 is b's to give, and it has not given it yet. */
  assert_false(rig_point_reached(ahead));
  assert_int_equal(rig_point_wait(ahead), RIG_INVALID);
  rig_point q = fill_n(b, 2);
  assert_true(rig_point_value(q) == last + 2);
  assert_reached(ahead);
  assert_reached(q);
  assert_false(rig_point_reached(rig_point_make(s, last + 3)));

  /* And again once b has closed and c took the slot. */
  close_release(b);
  rig_device *c = open_new("memory:prop5-c", NULL);
  assert_int_equal(slot_of(c), s);
  for (uint64_t v = start + 1; v <= last + 2; v++)
    assert_reached(rig_point_make(s, v));
  assert_false(rig_point_reached(rig_point_make(s, last + 3)));
  assert_int_equal(rig_point_wait(rig_point_make(s, last + 3)), RIG_INVALID);
  close_release(c);

  /* A point of no device at all is never reached, and is no wait. */
  assert_false(rig_point_reached(RIG_POINT_NONE));
  assert_int_equal(rig_point_wait(RIG_POINT_NONE), RIG_INVALID);
}

/* ---- Point.pp ------------------------------------------------------------ */

/* rig_point_format (Point.pp): "NAME:VALUE" while the slot is the device's,
 * "#SLOT:VALUE" for a point of a slot since reused or of no device; it
 * returns the full length as snprintf does. */
static void point_format_name_value(void **state) {
  (void)state;
  char buf[64];
  rig_device *d = open_new("memory:fmt", NULL);
  uint32_t s = slot_of(d);
  rig_point p = fill_n(d, 3);
  char want[64];
  snprintf(want, sizeof want, "memory:fmt:%" PRIu64, rig_point_value(p));
  size_t n = rig_point_format(p, buf, sizeof buf);
  assert_string_equal(buf, want);
  assert_int_equal(n, strlen(want));

  /* Truncated like snprintf: the full length back, NUL-terminated. */
  memset(buf, 'x', sizeof buf);
  n = rig_point_format(p, buf, 5);
  assert_int_equal(n, strlen(want));
  assert_string_equal(buf, "memo");
  assert_int_equal(rig_point_format(p, NULL, 0), strlen(want));

  /* The host's points. */
  rig_point_format(rig_device_point(rig_device_host(), 7), buf, sizeof buf);
  assert_string_equal(buf, "CPU:7");
  rig_point_format(rig_device_point(rig_device_host(), RIG_POINT_VALUE_MAX), buf, sizeof buf);
  assert_string_equal(buf, "CPU:140737488355327");

  /* A slot no device holds. */
  uint32_t unused = RIG_SLOTS;
  while (used[unused])
    unused--;
  rig_point_format(rig_point_make(unused, 9), buf, sizeof buf);
  snprintf(want, sizeof want, "#%u:9", unused);
  assert_string_equal(buf, want);

  /* The slot reused by another device: the old point prints by slot. */
  uint64_t v = rig_point_value(p);
  close_release(d);
  rig_device *e = open_new("memory:fmt-e", NULL);
  assert_int_equal(slot_of(e), s);
  rig_point_format(p, buf, sizeof buf);
  snprintf(want, sizeof want, "#%u:%" PRIu64, s, v);
  assert_string_equal(buf, want);
  rig_point q = fill_n(e, 1);
  rig_point_format(q, buf, sizeof buf);
  snprintf(want, sizeof want, "memory:fmt-e:%" PRIu64, v + 1);
  assert_string_equal(buf, want);
  close_release(e);
}

/* ---- OPEN-11: closed devices with memory out -------------------------- */

#define MANY_CLOSED 150

/* OPEN-11, RECLAIM-21, OPEN-49: devices closed while their buffers are out
 * keep that memory, and their slots, until the buffers are released; then
 * one call that moves memory returns the memory of every one of them, not
 * of some first few. The slot test after this one counts the free slots,
 * so a slot kept here would fail it too. */
static void open_11_closed_devices_give_back_memory_and_slots(void **state) {
  (void)state;
  rig_device *d[MANY_CLOSED];
  rig_buffer *b[MANY_CLOSED];
  char name[64];
  for (int i = 0; i < MANY_CLOSED; i++) {
    snprintf(name, sizeof name, "memory:closed-%d", i);
    d[i] = open_new(name, NULL);
    check_ok(rig_buffer_create(d[i], 128, &b[i]), "rig_buffer_create");
    check_ok(rig_buffer_fill(b[i], (uint32_t)i, 4), "rig_buffer_fill");
    check_ok(rig_device_close(d[i]), "rig_device_close");
  }
  check_ok(rig_device_free_cache(rig_device_host()), "rig_device_free_cache");
  for (int i = 0; i < MANY_CLOSED; i++) {
    assert_string_equal(rig_device_lost(d[i]), "closed");
    assert_true(rig_device_allocated(d[i]) == 128); /* the buffer is still out */
  }
  for (int i = 0; i < MANY_CLOSED; i++)
    rig_buffer_release(b[i]);
  check_ok(rig_device_free_cache(rig_device_host()), "rig_device_free_cache"); /* one move */
  int kept = 0;
  for (int i = 0; i < MANY_CLOSED; i++)
    kept += rig_device_allocated(d[i]) != 0;
  assert_int_equal(kept, 0);
  for (int i = 0; i < MANY_CLOSED; i++)
    rig_device_release(d[i]);
}

/* ---- OPEN-7, 10, 11, 16, 18: every slot taken, then recycled ---------- */

/* OPEN-7, OPEN-9, OPEN-10, OPEN-16, OPEN-18, TL-17; OPEN-11 and
 * RECLAIM-21 for a closed device's memory. Opens memory devices until the
 * open fails: exactly 65,535 slots less the host's and those held here,
 * each device on a slot of its own. Then a device that closes with no
 * memory out gives its slot to the next open, whose values continue past
 * its own; one that closes with a buffer out keeps its slot until that
 * buffer is collected and a call moves collected memory. */
static void open_7_16_18_slots_exhaust_and_recycle(void **state) {
  (void)state;
  const uint32_t held = 2;
  rig_device *keep[2];
  keep[0] = open_new("memory:held-0", NULL);
  keep[1] = open_new("memory:held-1", NULL);
  const uint32_t want = RIG_SLOTS - 1 - held; /* the host holds one */

  rig_device **devs = calloc(RIG_SLOTS + 1, sizeof *devs);
  bool *seen = calloc(RIG_SLOTS + 1, sizeof *seen);
  assert_non_null(devs);
  assert_non_null(seen);
  seen[slot_of(rig_device_host())] = true;
  seen[slot_of(keep[0])] = true;
  seen[slot_of(keep[1])] = true;

  double t0 = now_s();
  uint32_t n = 0;
  rig_status st = RIG_OK;
  char name[64];
  for (;;) {
    snprintf(name, sizeof name, "memory:s%u", n);
    rig_device *d = NULL;
    st = rig_device_open(name, &d);
    if (st != RIG_OK) {
      assert_null(d); /* ERR-1: no out-parameter written */
      break;
    }
    assert_true(n < want); /* no more than the free slots */
    uint32_t s = slot_of(d);
    assert_true(s >= 1 && s <= RIG_SLOTS);
    assert_false(seen[s]); /* OPEN-9, OPEN-16: one slot per device */
    seen[s] = true;
    if (!used[s])
      assert_true(rig_device_submitted(d) == 0); /* TL-17: a never-used slot */
    used[s] = true;
    devs[n++] = d;
  }
  double t_open = now_s() - t0;

  /* OPEN-7: the open that found every slot held. */
  assert_int_equal(n, want);
  assert_int_equal(st, RIG_UNAVAILABLE);
  assert_int_equal(rig_error_last()->status, RIG_UNAVAILABLE);
  assert_string_equal(rig_error_last()->message, "all 65535 device slots are held");
  /* Every new open is refused alike, and the refused name stays free
   * (ERR-4): asking again answers the same. */
  rig_device *x = NULL;
  assert_int_equal(rig_device_open("memory:one-more", &x), RIG_UNAVAILABLE);
  assert_string_equal(rig_error_last()->message, "all 65535 device slots are held");
  assert_int_equal(rig_device_open("memory:one-more", &x), RIG_UNAVAILABLE);
  assert_int_equal(rig_device_open_memory("another", &x), RIG_UNAVAILABLE);
  assert_null(x);
  /* OPEN-10: devices already open are untouched by the refusals. */
  assert_null(rig_device_lost(devs[0]));
  assert_null(rig_device_lost(devs[n - 1]));

  /* OPEN-17, OPEN-18: one closes with no memory out; its slot goes to the
   * next open, which starts after its values. */
  uint32_t victim = 100;
  rig_device *v = devs[victim];
  uint32_t vs = slot_of(v);
  rig_point vp = fill_n(v, 3);
  uint64_t vlast = rig_device_submitted(v);
  assert_true(vlast == rig_point_value(vp) && vlast >= 3);
  close_release(v);
  devs[victim] = NULL;
  rig_device *r = open_new("memory:reuse", NULL);
  assert_int_equal(slot_of(r), vs);
  assert_true(rig_device_submitted(r) == vlast);                 /* TL-17 */
  rig_point rp = fill_n(r, 1);
  assert_true(rig_point_value(rp) == vlast + 1);          /* OPEN-17 */
  assert_true(rig_point_reached(vp));                     /* PROP-5 */
  assert_null(rig_point_device(vp));                      /* PROP-4 */
  devs[victim] = r;
  assert_int_equal(rig_device_open("memory:one-more", &x), RIG_UNAVAILABLE);

  /* OPEN-11, RECLAIM-21: one closes with a buffer still out; its slot is
   * held until the buffer is collected and a call moves memory. */
  uint32_t holder = 200;
  rig_device *h = devs[holder];
  uint32_t hs = slot_of(h);
  rig_buffer *b = NULL;
  check_ok(rig_buffer_create(h, 256, &b), "rig_buffer_create");
  rig_point hp = RIG_POINT_NONE;
  check_ok(rig_buffer_submit_fill(b, 0xabcd, 2, &hp), "rig_buffer_submit_fill");
  check_ok(rig_device_close(h), "rig_device_close");
  assert_string_equal(rig_device_lost(h), "closed");
  assert_int_equal(rig_device_open("memory:blocked", &x), RIG_UNAVAILABLE); /* OPEN-11 */
  assert_string_equal(rig_error_last()->message, "all 65535 device slots are held");
  rig_buffer_release(b);
  check_ok(rig_device_free_cache(rig_device_host()), "rig_device_free_cache"); /* a move: RECLAIM-21 */
  rig_device *u = open_new("memory:unblocked", NULL);
  assert_int_equal(slot_of(u), hs);
  assert_true(rig_device_submitted(u) == rig_point_value(hp));
  rig_device_release(h);
  devs[holder] = u;
  double t_all = now_s() - t0;
  print_message("slots: %u opens in %.2f s; whole test %.2f s\n", n, t_open, t_all);

  /* Everything back: newest first, which is where the name table keeps
   * them. */
  for (uint32_t i = n; i-- > 0;)
    close_release(devs[i]);
  close_release(keep[1]);
  close_release(keep[0]);
  free(devs);
  free(seen);
  /* The slots are free again. */
  rig_device *again = open_new("memory:after", NULL);
  close_release(again);
  print_message("slots: with the closes %.2f s\n", now_s() - t0);
}

/* A wait of a point already reached is RIG_OK even where the wait hook
 * has something pending whenever asked (OCaml 5.3's did): the hook is
 * asked only once a slice of the wait has not reached the point. The
 * test device reaches its point 1 ms after the submit, and nothing reads
 * it before the wait, so the wait's first look does not know it reached. */
static int always_pending(void *ctx) {
  (void)ctx;
  return 1;
}

static void reached_wait_needs_no_hook(void **state) {
  (void)state;
  rig_device *d = open_ok("test:hookwait,delay_us=1000");
  rig_buffer *b = NULL;
  rig_point p = 0;
  check_ok(rig_buffer_create(d, 64, &b), "rig_buffer_create");
  check_ok(rig_buffer_submit_fill(b, 7, 4, &p), "rig_buffer_submit_fill");
  struct timespec t = {0, 50 * 1000 * 1000};
  nanosleep(&t, NULL);
  rig_runtime_set_wait_hook(always_pending, NULL);
  rig_status st = rig_point_wait(p);
  rig_runtime_set_wait_hook(NULL, NULL);
  assert_int_equal(st, RIG_OK);
  rig_buffer_release(b);
  close_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(open_9_point_packing),
      cmocka_unit_test(tl_16_17_fresh_slot_starts_at_zero),
      cmocka_unit_test(prop_4_point_device_until_slot_reused),
      cmocka_unit_test(open_24_left_handle_goes_at_the_next_move),
      cmocka_unit_test(prop_5_points_answer_after_slot_reuse),
      cmocka_unit_test(point_format_name_value),
      cmocka_unit_test(reached_wait_needs_no_hook),
      cmocka_unit_test(open_11_closed_devices_give_back_memory_and_slots),
      cmocka_unit_test(open_7_16_18_slots_exhaust_and_recycle),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
