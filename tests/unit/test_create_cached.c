/* test_create_cached.c: rig_buffer_create_cached, the cache hit of
 * rig_buffer_create alone, which a binding calls holding its runtime lock.
 * It must give what rig_buffer_create gives where the calling thread's
 * share of the cache holds a fit, and otherwise NULL with no error and
 * nothing allocated, so that the caller's rig_buffer_create_kind that
 * follows is the only call that can allocate, lock or block.
 *
 * Rules: RECLAIM-7
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "util.h"

#define SIZE 65536u

/* RECLAIM-7: a released buffer's memory comes back from the cache with
 * empty stamps, as rig_buffer_create makes it: the same bytes, a new
 * length (of the same whole words), read-write, alive, and no point of
 * its earlier use, a fill of the device's. */
static void reclaim_7_hit_is_a_create_from_the_cache(void **state) {
  rig_device *h = open_ok("memory:cached-hit");
  rig_buffer *b = create_ok(h, SIZE);
  void *bytes = rig_buffer_host_address(b);
  rig_point p;
  ok(rig_buffer_submit_fill(b, 7, 1, &p)); /* a point in its stamps */
  ok(rig_point_wait(p));
  rig_point w, u;
  rig_buffer_stamps(b, h, &w, &u);
  assert_true(w == p && u == p);
  rig_buffer_release(b);
  rig_buffer *c = rig_buffer_create_cached(h, SIZE - 3, RIG_KIND_DEVICE);
  assert_non_null(c);
  assert_ptr_equal(rig_buffer_host_address(c), bytes);
  assert_int_equal(rig_buffer_length(c), SIZE - 3);
  assert_int_equal(rig_buffer_access(c), RIG_READ_WRITE);
  assert_int_equal(rig_buffer_kind(c), RIG_KIND_DEVICE);
  assert_false(rig_buffer_dead(c));
  assert_true(rig_buffer_reached(c, RIG_READ_WRITE));
  rig_buffer_stamps(c, h, &w, &u);
  assert_true(w == RIG_POINT_NONE && u == RIG_POINT_NONE);
  rig_buffer_release(c);
  close_release(h);
}

/* No fit: NULL, the last error untouched, and nothing allocated. */
static void a_miss_is_null_and_sets_no_error(void **state) {
  rig_device *m = open_ok("memory:cached-miss");
  ok(rig_device_free_cache(m));
  rig_buffer *b;
  assert_int_equal(rig_buffer_create(NULL, 8, &b), RIG_INVALID); /* a known last error */
  char before[RIG_MESSAGE_BYTES];
  memcpy(before, rig_error_last()->message, sizeof before);
  uint64_t held = rig_device_allocated(m);
  assert_null(rig_buffer_create_cached(m, 4096, RIG_KIND_DEVICE));  /* empty cache */
  assert_null(rig_buffer_create_cached(NULL, 4096, RIG_KIND_DEVICE));
  assert_null(rig_buffer_create_cached(m, 4096, (rig_kind)7));
  b = create_ok(m, 4096);
  rig_buffer_release(b);
  assert_null(rig_buffer_create_cached(m, 8192, RIG_KIND_DEVICE)); /* another size */
  assert_null(rig_buffer_create_cached(m, 4096, RIG_KIND_PINNED)); /* another kind */
  assert_string_equal(rig_error_last()->message, before);
  rig_buffer *c = rig_buffer_create_cached(m, 4096, RIG_KIND_DEVICE);
  assert_non_null(c);
  assert_int_equal(rig_device_allocated(m), held + 4096);
  rig_buffer_release(c);
  close_release(m);
}

/* LMEM-8: a lost device's memory is never handed out again, not even the
 * memory its own thread released just before the loss. */
static void a_lost_device_hits_nothing(void **state) {
  rig_device *m = open_ok("memory:cached-lost");
  rig_buffer *b = create_ok(m, 4096);
  rig_buffer_release(b);
  ok(rig_device_close(m));
  assert_null(rig_buffer_create_cached(m, 4096, RIG_KIND_DEVICE));
  rig_device_release(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reclaim_7_hit_is_a_create_from_the_cache),
      cmocka_unit_test(a_miss_is_null_and_sets_no_error),
      cmocka_unit_test(a_lost_device_hits_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
