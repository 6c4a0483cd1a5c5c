/* test_host_memory.c: buffers over the program's own memory
 * (rig_buffer_of_host: Buffer.of_bigarray), buffers made from its bytes
 * (rig_buffer_of_bytes: Buffer.of_string), and the address a submission's
 * refs store (rig_submission_address: Submission.address). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

/* What a release callback saw: how often it ran. */
typedef struct released {
  int calls;
} released;

static void count_release(void *ctx) { ((released *)ctx)->calls++; }

/* Moves the host's collected memory: where an of_host release runs. */
static void move_host(void) { ok(rig_device_free_cache(rig_device_host())); }

static rig_buffer *of_host_ok(rig_device *d, void *p, size_t n, released *r) {
  rig_buffer *b = NULL;
  ok(rig_buffer_of_host(d, p, n, count_release, r, &b));
  assert_non_null(b);
  return b;
}

/* The buffer is the program's bytes, with no copy either way. */
static void of_host_is_the_programs_memory(void **state) {
  uint8_t bytes[64];
  memset(bytes, 1, sizeof bytes);
  released r = {0};
  uint64_t held = rig_device_allocated(rig_device_host());
  rig_buffer *b = of_host_ok(rig_device_host(), bytes + 8, 32, &r);
  assert_ptr_equal(rig_buffer_host_address(b), bytes + 8);
  assert_int_equal(rig_device_allocated(rig_device_host()), held); /* no budget counts it */
  assert_int_equal(rig_buffer_length(b), 32);
  assert_true(rig_device_equal(rig_buffer_device(b), rig_device_host()));
  ok(rig_buffer_fill(b, 7, 1));
  assert_int_equal(bytes[7], 1);
  assert_int_equal(bytes[8], 7);
  assert_int_equal(bytes[39], 7);
  assert_int_equal(bytes[40], 1);
  bytes[10] = 42;
  uint8_t got = 0;
  ok(rig_buffer_get(b, 2, &got, 1));
  assert_int_equal(got, 42);
  rig_buffer_release(b);
  move_host();
  assert_int_equal(r.calls, 1);
}

/* The release runs once, after the last buffer over the memory goes and a
 * move of the host's memory, never before. */
static void of_host_release_after_the_last_buffer(void **state) {
  uint32_t words[16] = {0};
  released r = {0};
  rig_buffer *b = of_host_ok(rig_device_host(), words, sizeof words, &r);
  rig_buffer *v;
  ok(rig_buffer_view(b, 4, 8, RIG_READ, &v));
  rig_buffer_release(b);
  move_host();
  assert_int_equal(r.calls, 0); /* the view holds the memory */
  rig_buffer_release(v);
  assert_int_equal(r.calls, 0); /* collected: it goes back inside a move */
  move_host();
  assert_int_equal(r.calls, 1);
  move_host();
  assert_int_equal(r.calls, 1);
}

/* rig_buffer_free gives the memory back to the program while buffers
 * remain, dead. */
static void of_host_release_after_free(void **state) {
  uint8_t bytes[40];
  released r = {0};
  rig_buffer *b = of_host_ok(rig_device_host(), bytes, sizeof bytes, &r);
  ok(rig_buffer_free(b));
  move_host();
  assert_int_equal(r.calls, 1);
  assert_true(rig_buffer_dead(b));
  assert_int_equal(rig_buffer_fill(b, 0, 1), RIG_INVALID);
  rig_buffer_release(b);
  move_host();
  assert_int_equal(r.calls, 1);
}

/* WORD-2: host memory's words count from address 0, not from the
 * buffer's first byte: bytes 3 and 4 of a word-aligned array lie in two
 * words, though they are bytes 0 and 1 of a buffer that starts at 3. */
static void word_2_host_words_count_from_address_0(void **state) {
  _Alignas(8) uint8_t bytes[16];
  released r = {0};
  rig_buffer *b = of_host_ok(rig_device_host(), bytes + 3, 10, &r);
  rig_buffer *first, *second, *third;
  ok(rig_buffer_view(b, 0, 1, RIG_READ_WRITE, &first));  /* byte 3: word 0 */
  ok(rig_buffer_view(b, 1, 1, RIG_READ_WRITE, &second)); /* byte 4: word 1 */
  ok(rig_buffer_view(b, 4, 1, RIG_READ_WRITE, &third));  /* byte 7: word 1 */
  assert_false(rig_buffer_overlaps(first, second));
  assert_true(rig_buffer_overlaps(second, third));
  assert_false(rig_buffer_share_byte(second, third));
  rig_buffer_release(first);
  rig_buffer_release(second);
  rig_buffer_release(third);
  rig_buffer_release(b);
  move_host();
  assert_int_equal(r.calls, 1);
}

/* Bad arguments are RIG_INVALID with a message, and no release runs. */
static void of_host_refuses_bad_arguments(void **state) {
  uint8_t bytes[8];
  released r = {0};
  rig_buffer *b = NULL;
  rig_device *h = rig_device_host();
  assert_int_equal(rig_buffer_of_host(h, NULL, 8, count_release, &r, &b), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "bytes is NULL"));
  assert_int_equal(rig_buffer_of_host(NULL, bytes, 8, count_release, &r, &b), RIG_INVALID);
  assert_int_equal(rig_buffer_of_host(h, bytes, 8, count_release, &r, NULL), RIG_INVALID);
  assert_int_equal(rig_buffer_of_host(h, (void *)(UINTPTR_MAX - 4), 8, count_release, &r, &b),
                   RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "address space"));
  assert_int_equal(rig_buffer_of_host(h, bytes, (size_t)INT64_MAX + 1, count_release, &r, &b),
                   RIG_INVALID);
  assert_null(b);
  move_host();
  assert_int_equal(r.calls, 0);
}

/* A memory device runs on the host: it takes memory off a page (MACH-24),
 * and its copies write the program's bytes. */
static void of_host_on_a_memory_device(void **state) {
  rig_device *m = open_ok("memory:of-host");
  uint8_t bytes[33];
  memset(bytes, 0, sizeof bytes);
  released r = {0};
  rig_buffer *b = of_host_ok(m, bytes + 1, 32, &r);
  assert_true(rig_device_equal(rig_buffer_device(b), m));
  rig_buffer *src = create_ok(m, 32);
  ok(rig_buffer_fill(src, 9, 1));
  ok(rig_buffer_copy(src, b));
  assert_int_equal(bytes[0], 0);
  assert_int_equal(bytes[1], 9);
  assert_int_equal(bytes[32], 9);
  rig_buffer_release(b);
  rig_buffer_release(src);
  move_host();
  assert_int_equal(r.calls, 1);
  close_release(m);
}

/* A device that reaches the host through mappings takes memory that
 * starts on a page (MACH-23), and refuses other memory, with no release
 * to run; the release waits for its mapping to go back. */
static void of_host_on_a_device_that_maps_host(void **state) {
  rig_device *d = open_ok("test:of-host");
  uint8_t *page = aligned_alloc(4096, 8192);
  assert_non_null(page);
  memset(page, 0, 8192);
  released r = {0};
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_of_host(d, page + 4, 64, count_release, &r, &b), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "off a page"));
  b = of_host_ok(d, page, 8192, &r);
  ok(rig_buffer_fill(b, 5, 1)); /* the device's work: it waits for it */
  assert_int_equal(page[0], 5);
  assert_int_equal(page[8191], 5);
  rig_buffer_release(b);
  move_host();
  assert_int_equal(r.calls, 0); /* d still maps the memory */
  ok(rig_device_free_cache(d)); /* the mapping goes back in d's move */
  move_host();
  assert_int_equal(r.calls, 1);
  free(page);
  close_release(d);
}

/* An io device reaches no other device's memory (MACH-19). */
static void of_host_on_a_device_that_does_not_reach_host(void **state) {
  char path[] = "/tmp/rig-of-host-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_CREATE, .size = 4096};
  rig_device *io;
  ok(rig_device_open_io(&o, &io));
  uint8_t bytes[16];
  released r = {0};
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_of_host(io, bytes, 16, count_release, &r, &b), RIG_INVALID);
  assert_null(b);
  assert_non_null(strstr(rig_error_last()->message, "does not map"));
  move_host();
  assert_int_equal(r.calls, 0);
  close_release(io);
  unlink(path);
}

/* Buffer.of_bigarray takes no lock: made inside a lock (a local value's
 * init) it succeeds, where rig_buffer_of_bytes, which may lock, is
 * RIG_INVALID (DOM-14). */
typedef struct inside {
  rig_status of_host, of_bytes;
  rig_buffer *b;
  uint8_t bytes[16];
} inside;

static void *make_inside_lock(rig_device *d, void *ctx) {
  inside *x = ctx;
  x->of_host = rig_buffer_of_host(rig_device_host(), x->bytes, sizeof x->bytes, NULL, NULL, &x->b);
  rig_buffer *c = NULL;
  x->of_bytes = rig_buffer_of_bytes(rig_device_host(), x->bytes, sizeof x->bytes, &c);
  return x;
}

static void of_host_takes_no_lock(void **state) {
  inside x = {RIG_INVALID, RIG_OK, NULL, {0}};
  rig_local_key *k;
  ok(rig_local_new_key(make_inside_lock, NULL, &x, &k));
  void *v;
  ok(rig_local_get(k, rig_device_host(), &v));
  assert_int_equal(x.of_host, RIG_OK);
  assert_int_equal(x.of_bytes, RIG_INVALID);
  rig_buffer_release(x.b);
  move_host();
}

/* of_bytes copies: the program's bytes may change after it returns. */
static void of_bytes_copies(void **state) {
  const char *devices[] = {"CPU", "memory:of-bytes", "test:of-bytes"};
  for (size_t i = 0; i < 3; i++) {
    rig_device *d = open_ok(devices[i]);
    char text[] = "the seed's Buffer.of_string";
    rig_buffer *b = NULL;
    ok(rig_buffer_of_bytes(d, text, sizeof text, &b));
    memset(text, 'x', sizeof text - 1);
    char got[sizeof text];
    ok(rig_buffer_get(b, 0, got, sizeof got));
    assert_string_equal(got, "the seed's Buffer.of_string");
    assert_true(rig_device_equal(rig_buffer_device(b), d));
    assert_int_equal(rig_buffer_length(b), sizeof text);
    rig_buffer *empty = NULL;
    ok(rig_buffer_of_bytes(d, NULL, 0, &empty));
    assert_int_equal(rig_buffer_length(empty), 0);
    rig_buffer_release(empty);
    rig_buffer_release(b);
    if (i)
      close_release(d);
  }
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_of_bytes(rig_device_host(), NULL, 4, &b), RIG_INVALID);
  assert_int_equal(rig_buffer_of_bytes(NULL, "x", 1, &b), RIG_INVALID);
  assert_null(b);
}

/* of_bytes over a device's budget is RIG_OUT_OF_MEMORY naming the bytes. */
static void of_bytes_out_of_memory(void **state) {
  rig_device *m = open_ok("memory:of-bytes-oom");
  ok(rig_device_set_budget(m, 64));
  uint8_t bytes[128] = {0};
  rig_buffer *b = NULL;
  assert_int_equal(rig_buffer_of_bytes(m, bytes, sizeof bytes, &b), RIG_OUT_OF_MEMORY);
  assert_int_equal(rig_error_last()->bytes, 128);
  assert_null(b);
  close_release(m);
}

/* Submission.address is the value a ref stores: the add kernel, its
 * parameter block written by hand from the addresses and no refs, gives
 * what it gives through refs (tests/support's add example). */
static void submission_address_is_what_a_ref_stores(void **state) {
  rig_image *im = kernel_load("add");
  rig_function *f = resolve_ok(im, "add");
  rig_submission *s = launch_make_ok(rig_device_host(), f, NULL, 0, 32);
  enum { N = 256 };
  rig_buffer *x = create_ok(rig_device_host(), N * 4), *y = create_ok(rig_device_host(), N * 4),
             *z = create_ok(rig_device_host(), N * 4);
  add_example_inputs(rig_buffer_host_address(x), rig_buffer_host_address(y),
                     rig_buffer_host_address(z), N);
  uint64_t at[3];
  rig_buffer *xyz[3] = {x, y, z};
  rig_run *run = take_ok(s);
  for (int i = 0; i < 3; i++) {
    ok(rig_submission_address(s, xyz[i], &at[i]));
    assert_int_equal(at[i], (uintptr_t)rig_buffer_host_address(xyz[i])); /* LAUNCH-5 */
    ok(rig_run_int64(run, 0, 8 * i, (int64_t)at[i]));
  }
  ok(rig_run_int64(run, 0, 24, N));
  grid_ok(run, 0, 64, N / 64);
  rig_point p;
  ok(rig_run_submit(run, NULL, 0, NULL, 0, &p));
  add_example_expect(rig_buffer_host_address(z), N, "addresses by hand");
  rig_buffer *v;
  ok(rig_buffer_view(z, 16, 32, RIG_READ, &v));
  uint64_t av;
  ok(rig_submission_address(s, v, &av));
  assert_int_equal(av, at[2] + 16);
  rig_buffer_release(v);
  for (int i = 0; i < 3; i++)
    rig_buffer_release(xyz[i]);
  rig_submission_release(s);
  rig_image_release(im);
}

/* The host reaches a memory device's memory as it is; memory the host
 * does not address, a dead buffer and NULLs are RIG_INVALID. */
static void submission_address_of_other_memory(void **state) {
  rig_image *im = kernel_load("add");
  rig_submission *s = launch_make_ok(rig_device_host(), resolve_ok(im, "add"), NULL, 0, 32);
  rig_device *m = open_ok("memory:address");
  rig_buffer *b = create_ok(m, 64);
  uint64_t a = 0;
  ok(rig_submission_address(s, b, &a));
  assert_int_equal(a, (uintptr_t)rig_buffer_host_address(b));
  rig_device *t = open_ok("test:address,host=0");
  rig_buffer *c = create_ok(t, 64);
  a = 1;
  assert_int_equal(rig_submission_address(s, c, &a), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "borrow it"));
  assert_int_equal(a, 1);
  ok(rig_buffer_free(b));
  assert_int_equal(rig_submission_address(s, b, &a), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "dead"));
  assert_int_equal(rig_submission_address(s, NULL, &a), RIG_INVALID);
  assert_int_equal(rig_submission_address(NULL, c, &a), RIG_INVALID);
  assert_int_equal(rig_submission_address(s, c, NULL), RIG_INVALID);
  rig_buffer_release(b);
  rig_buffer_release(c);
  rig_submission_release(s);
  rig_image_release(im);
  close_release(m);
  close_release(t);
}

/* On a device that does not run on the host, the address is the device's
 * own, which it gives the same for a buffer and, offset, its view. */
static void submission_address_on_a_device(void **state) {
  rig_device *t = open_ok("test:address-dev,host=0");
  rig_part fill = rig_part_fill(0, 1, 1);
  rig_submission *s;
  ok(rig_submission_make(t, &fill, 1, &s));
  rig_buffer *c = create_ok(t, 64), *v;
  ok(rig_buffer_view(c, 8, 8, RIG_READ_WRITE, &v));
  uint64_t a, av;
  ok(rig_submission_address(s, c, &a));
  ok(rig_submission_address(s, v, &av));
  assert_int_equal(av, a + 8);
  rig_buffer_release(v);
  rig_buffer_release(c);
  rig_submission_release(s);
  close_release(t);
}

/* On the first Vulkan device, where one opens: its code writes through
 * the address, which a launch with no ref gets in its parameters by hand
 * (fill.spv: { uint32_t *dst; uint32_t pattern, step, n; }). Nothing
 * orders that work with the buffer's other uses: the test waits for its
 * point itself. */
static void submission_address_on_vulkan(void **state) {
  rig_device *d = open_or_skip("vulkan:0");
  rig_function *f;
  rig_image *im = kernel_load_on(d, "kernels/vulkan/fill.spv", "fill", &f);
  rig_submission *s = launch_make_ok(d, f, NULL, 0, 24);
  rig_buffer *b = create_ok(d, 256);
  ok(rig_buffer_fill(b, 0, 1));
  uint64_t a;
  ok(rig_submission_address(s, b, &a));
  assert_true(a != 0);
  rig_run *run = take_ok(s);
  grid_ok(run, 0, 1, 32);
  ok(rig_run_int64(run, 0, 0, (int64_t)(a + 128)));
  ok(rig_run_int32(run, 0, 8, 0x01010101));
  ok(rig_run_int32(run, 0, 12, 0));
  ok(rig_run_int32(run, 0, 16, 32));
  rig_point p;
  ok(rig_run_submit(run, NULL, 0, NULL, 0, &p));
  ok(rig_point_wait(p));
  expect_bytes(b, 0, 128, 0);
  expect_bytes(b, 128, 128, 1);
  rig_buffer_release(b);
  rig_submission_release(s);
  rig_image_release(im);
  close_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(of_host_is_the_programs_memory),
      cmocka_unit_test(of_host_release_after_the_last_buffer),
      cmocka_unit_test(of_host_release_after_free),
      cmocka_unit_test(word_2_host_words_count_from_address_0),
      cmocka_unit_test(of_host_refuses_bad_arguments),
      cmocka_unit_test(of_host_on_a_memory_device),
      cmocka_unit_test(of_host_on_a_device_that_maps_host),
      cmocka_unit_test(of_host_on_a_device_that_does_not_reach_host),
      cmocka_unit_test(of_host_takes_no_lock),
      cmocka_unit_test(of_bytes_copies),
      cmocka_unit_test(of_bytes_out_of_memory),
      cmocka_unit_test(submission_address_is_what_a_ref_stores),
      cmocka_unit_test(submission_address_of_other_memory),
      cmocka_unit_test(submission_address_on_a_device),
      cmocka_unit_test(submission_address_on_vulkan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
