/* test_memory_guide.c: each example of docs/memory-guide.md, run as the
 * guide shows it, checking what the guide says happens. The stamps table of
 * "Stamps through one program" is tests/unit/test_stamps_guide.c, cell by
 * cell. d is the test device with host=0: a GPU whose memory the host does
 * not address and which maps host memory; its work ends on a worker
 * thread after submit returns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "../unit/util.h" /* ok, open_ok, close_release */

#define KIB 1024u

/* A buffer's life: released, it waits for its points, enters d's cache,
 * and the next create of its size takes it from there without the driver;
 * rig_device_free_cache returns it to the driver. */
static void life_release_cache_reuse(void **state) {
  rig_device *d = open_ok("test:guide-life,host=0,delay_us=20000");
  rig_buffer *b;
  rig_point p;
  ok(rig_buffer_create(d, 64 * KIB, &b));
  uint64_t held = rig_device_allocated(d);
  assert_true(held >= 64 * KIB);
  ok(rig_buffer_submit_fill(b, 7, 4, &p)); /* still running when ... */
  rig_buffer_release(b);                   /* ... the program lets b go */
  assert_int_equal(rig_device_allocated(d), held); /* waiting, then cached */
  ok(rig_point_wait(p));
  ok(rig_buffer_create(d, 64 * KIB, &b)); /* from the cache */
  assert_int_equal(rig_device_allocated(d), held);
  rig_buffer_release(b);
  ok(rig_device_free_cache(d)); /* the cache returns it to the driver */
  assert_int_equal(rig_device_allocated(d), 0);
  close_release(d);
}

/* Reclamation: 100 buffers of 256 KiB let go fit a budget of 1 MiB; four
 * kept fill it, and a fifth is RIG_OUT_OF_MEMORY for 256 KiB. */
static void reclamation_let_go_and_kept(void **state) {
  rig_device *d;
  ok(rig_device_open_memory("guide-reclaim", &d));
  ok(rig_device_set_budget(d, 1024 * KIB));
  for (int i = 0; i < 100; i++) {
    rig_buffer *b;
    ok(rig_buffer_create(d, 256 * KIB, &b));
    rig_buffer_release(b);
  }
  rig_buffer *live[4], *fifth = NULL;
  for (int i = 0; i < 4; i++)
    ok(rig_buffer_create(d, 256 * KIB, &live[i]));
  assert_int_equal(rig_buffer_create(d, 256 * KIB, &fifth), RIG_OUT_OF_MEMORY);
  assert_int_equal(rig_error_last()->bytes, 256 * KIB);
  assert_ptr_equal(rig_error_last()->device, d);
  assert_null(fifth);
  for (int i = 0; i < 4; i++)
    rig_buffer_release(live[i]);
  close_release(d);
}

static void add_one(void *bytes, size_t n, void *ctx) {
  unsigned char *p = bytes;
  for (size_t i = 0; i < n; i++)
    p[i]++;
}

/* Host access: rig_buffer_write and rig_buffer_read hand the bytes in
 * place where the host addresses the memory, and are RIG_INVALID where it
 * does not; get, put and fill reach any buffer (through staging there). */
static void host_access_in_place_or_staged(void **state) {
  rig_device *d = open_ok("test:guide-host,host=0");
  rig_buffer *h, *x;
  unsigned char bytes[16];
  ok(rig_buffer_create(rig_device_host(), sizeof bytes, &h));
  ok(rig_buffer_create(d, sizeof bytes, &x));
  ok(rig_buffer_fill(h, 0x01010101, 4));
  ok(rig_buffer_write(h, add_one, NULL)); /* in place: 2 in every byte */
  assert_int_equal(((unsigned char *)rig_buffer_host_address(h))[15], 2);
  assert_null(rig_buffer_host_address(x));
  assert_int_equal(rig_buffer_write(x, add_one, NULL), RIG_INVALID);
  ok(rig_buffer_fill(x, 0x05050505, 4)); /* d's copy engine sets the bytes */
  ok(rig_buffer_put(x, 0, "\x09", 1));   /* through staging memory */
  ok(rig_buffer_get(x, 0, bytes, sizeof bytes));
  assert_int_equal(bytes[0], 9);
  assert_int_equal(bytes[15], 5);
  rig_buffer_release(x);
  rig_buffer_release(h);
  close_release(d);
}

/* A borrow of host memory on d: copies through it run on d's copy engine
 * and give H d's points; the copy back's point is H's last write. */
static void borrow_gives_host_memory_points(void **state) {
  rig_device *d = open_ok("test:guide-borrow,host=0");
  rig_buffer *h, *hb, *x;
  rig_point p, w, u;
  ok(rig_buffer_create(rig_device_host(), 64 * KIB, &h)); /* 64 KiB: on a page */
  ok(rig_buffer_create(d, 64 * KIB, &x));
  ok(rig_buffer_borrow(d, h, &hb));
  ok(rig_buffer_submit_copy(hb, x, &p));
  rig_buffer_stamps(h, d, &w, &u);
  assert_int_equal(w, RIG_POINT_NONE); /* the copy only read H */
  assert_int_equal(u, p);
  ok(rig_buffer_submit_copy(x, hb, &p));
  rig_buffer_stamps(h, d, &w, &u);
  assert_int_equal(w, p); /* the copy back wrote H on d */
  assert_true(rig_point_device(p) == d);
  rig_device_release(d); /* rig_point_device's reference */
  ok(rig_point_wait(p));
  rig_buffer_release(hb);
  rig_buffer_release(x);
  rig_buffer_release(h);
  close_release(d);
}

/* Loss: once d is lost (closed, here), its memory X is RIG_LOST at every
 * use, while host memory H that holds no point of d keeps serving the
 * value the host wrote. */
static void loss_keeps_host_memory(void **state) {
  rig_device *d = open_ok("test:guide-loss,host=0");
  rig_buffer *h, *x;
  float v = 65535.f, got = 0;
  ok(rig_buffer_create(rig_device_host(), sizeof v, &h));
  ok(rig_buffer_create(d, sizeof v, &x));
  ok(rig_buffer_put(h, 0, &v, sizeof v));
  ok(rig_buffer_copy(h, x)); /* staged: the host moves H's bytes, H gets no point */
  ok(rig_device_close(d));   /* d is lost with "closed" */
  assert_string_equal(rig_device_lost(d), "closed");
  assert_int_equal(rig_buffer_copy(x, h), RIG_LOST);
  assert_int_equal(rig_buffer_get(x, 0, &got, sizeof got), RIG_LOST);
  ok(rig_buffer_get(h, 0, &got, sizeof got));
  assert_true(got == 65535.f);
  rig_buffer_release(x);
  rig_buffer_release(h);
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(life_release_cache_reuse),
      cmocka_unit_test(reclamation_let_go_and_kept),
      cmocka_unit_test(host_access_in_place_or_staged),
      cmocka_unit_test(borrow_gives_host_memory_points),
      cmocka_unit_test(loss_keeps_host_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
