/* test_seams_remote.c: where another machine's memory meets this
 * machine's devices (docs/remote.md). One `rig serve` ("m1", started once
 * for the group) serves memory:a@m1 and its host CPU@m1; the tests copy
 * between them and every kind of device here, launch on the host over
 * remote memory, fork with the remote link open and busy, and free a
 * buffer while another thread copies it. Every byte is checked against a
 * plain model. Vulkan's part skips where no Vulkan device opens.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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

#include "check.h"
#include "child.h"
#include "kernels.h"
#include "server.h"

static const char *key;
static test_server server;
static rig_device *m1, *remote; /* CPU@m1, memory:a@m1 */

static int group_setup(void **state) {
  (void)state;
  test_server_start(&server, key);
  m1 = test_remote_host("m1", &server, key, 0);
  remote = test_remote_on(m1, "memory:a");
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  close_release(remote);
  close_release(m1);
  test_server_stop(&server);
  return 0;
}

/* ---- the devices ---------------------------------------------------------- */

/* One kind of memory a copy meets: a device, or io pages of a file. */
typedef struct member {
  const char *what;
  rig_device *dev;
  bool io_pages; /* buffers are rig_buffer_of_io of dev's file */
} member;

enum { MEMBERS = 7, IO_REGIONS = 4 };
static member members[MEMBERS];
static unsigned nmembers;
static char io_file[256];
static unsigned io_next;

/* The devices of the matrix: this host, a memory device, io pages, the
 * test driver's device whose memory the host does not address, vulkan:0
 * where it opens, and the two of m1. */
static void members_open(size_t region) {
  nmembers = 0;
  members[nmembers++] = (member){"host", rig_device_host(), false};
  members[nmembers++] = (member){"memory", open_ok("memory:seams"), false};
  const char *t = getenv("TMPDIR");
  snprintf(io_file, sizeof io_file, "%s/rig-seams-remote-%d", t && *t ? t : "/tmp", (int)getpid());
  rig_io_opener o = {.library = "io", .target = io_file, .flags = RIG_IO_CREATE,
                     .size = IO_REGIONS * region};
  rig_device *io = NULL;
  ok(rig_device_open_io(&o, &io));
  members[nmembers++] = (member){"io pages", io, true};
  members[nmembers++] = (member){"test", open_ok("test:seams-remote,host=0"), false};
  rig_device *v = NULL;
  if (rig_device_open("vulkan:0", &v) == RIG_OK)
    members[nmembers++] = (member){"vulkan", v, false};
  else
    printf("# no vulkan:0 (%s): its pairs are not run\n", rig_error_last()->message);
  members[nmembers++] = (member){"remote memory", rig_device_retain(remote), false};
  members[nmembers++] = (member){"remote host", rig_device_retain(m1), false};
}

static void members_close(void) {
  for (unsigned i = 1; i < nmembers; i++)
    if (members[i].dev != remote && members[i].dev != m1)
      close_release(members[i].dev);
    else
      rig_device_release(members[i].dev);
  unlink(io_file);
}

static bool is_remote(const member *m) { return m->dev == remote || m->dev == m1; }

/* A new n-byte buffer of m: io pages take the next region of the file,
 * each region page-aligned and at least n long. */
static rig_buffer *member_buffer(const member *m, size_t n, size_t region) {
  if (!m->io_pages)
    return create_ok(m->dev, n);
  rig_buffer *b = NULL;
  ok(rig_buffer_of_io(m->dev, (io_next++ % IO_REGIONS) * region, n, &b));
  return b;
}

/* Asserts b's n bytes are want's, naming the first that is not. */
static void expect_model(rig_buffer *b, const unsigned char *want, size_t n, const char *where) {
  unsigned char *got = malloc(n);
  assert_non_null(got);
  ok(rig_buffer_get(b, 0, got, n));
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("%s: byte %zu is %#x, want %#x", where, i, got[i], want[i]);
  free(got);
}

/* One pair: a whole copy of src's pattern into dst, then a copy of a view
 * of src at an odd offset into a view of dst at another, both checked
 * against a model of dst's bytes. */
static void copy_pair(const member *a, const member *b, size_t n, size_t region, unsigned seed) {
  char where[96];
  snprintf(where, sizeof where, "%s -> %s", a->what, b->what);
  unsigned char *in = malloc(n), *model = malloc(n);
  assert_non_null(in);
  assert_non_null(model);
  test_pattern(in, n, seed);
  rig_buffer *src = member_buffer(a, n, region), *dst = member_buffer(b, n, region);
  ok(rig_buffer_put(src, 0, in, n));
  ok(rig_buffer_fill(dst, 0, 1));
  ok(rig_buffer_copy(src, dst));
  expect_model(dst, in, n, where);
  size_t m = n - 4096 - 10;
  rig_buffer *sv = NULL, *dv = NULL;
  ok(rig_buffer_view(src, 7, m, RIG_READ_WRITE, &sv));
  ok(rig_buffer_view(dst, 4096 + 3, m, RIG_READ_WRITE, &dv));
  ok(rig_buffer_fill(dst, 0x5a, 1));
  memset(model, 0x5a, n);
  memcpy(model + 4096 + 3, in + 7, m);
  ok(rig_buffer_copy(sv, dv));
  strncat(where, " (views)", sizeof where - strlen(where) - 1);
  expect_model(dst, model, n, where);
  rig_buffer_release(sv);
  rig_buffer_release(dv);
  rig_buffer_release(src);
  rig_buffer_release(dst);
  free(in);
  free(model);
}

/* Copies between m1's memory and its host and every device here, each
 * way: this host, a memory device, io pages, the test driver (through
 * staging), vulkan:0 (lavapipe), byte for byte, whole and through views;
 * and each of m1's two the other way. */
static void copies_between_remote_and_every_device(void **state) {
  (void)state;
  size_t n = (1u << 20) + 4099, region = (n + 4095) & ~(size_t)4095;
  members_open(region);
  unsigned seed = 1, pairs = 0;
  for (unsigned i = 0; i < nmembers; i++)
    for (unsigned j = 0; j < nmembers; j++)
      if (i != j && (is_remote(&members[i]) || is_remote(&members[j]))) {
        copy_pair(&members[i], &members[j], n, region, seed++);
        pairs++;
      }
  printf("# %u pairs copied\n", pairs);
  members_close();
}

/* ---- a launch over remote memory ------------------------------------------ */

/* Submits copy_bytes on d over src and dst (n bytes): its status. */
static rig_status launch_copy(rig_device *d, rig_buffer *src, rig_buffer *dst, size_t n,
                              rig_point *p) {
  rig_function *f = NULL;
  rig_image *im = kernel_load_on(d, "copy_bytes.o", "copy_bytes", &f);
  rig_ref refs[2] = {rig_ref_read(0, offsetof(struct copy_bytes, src)),
                     rig_ref_write(1, offsetof(struct copy_bytes, dst))};
  rig_part part = rig_part_launch(f, refs, 2, sizeof(struct copy_bytes));
  rig_submission *s = NULL;
  rig_status st = rig_submission_make(d, &part, 1, &s);
  rig_run *r = NULL;
  if (st == RIG_OK)
    st = rig_submission_take(s, &r);
  if (st == RIG_OK) {
    grid_ok(r, 0, n / COPY_BYTES_THREADS + 1, COPY_BYTES_THREADS);
    ok(rig_run_int64(r, 0, offsetof(struct copy_bytes, n), (int64_t)n));
    rig_buffer *bufs[2] = {src, dst};
    st = rig_run_submit(r, bufs, 2, NULL, 0, p);
  }
  rig_submission_release(s);
  rig_image_release(im);
  return st;
}

/* Both ways of a launch across machines: this host's copy_bytes over m1's
 * memory, and m1's host's over this host's memory. Neither device
 * addresses the other's memory, so each must be refused with a status and
 * a message that names it, and the buffers keep their bytes; or, where
 * core stages it, copy the bytes. */
static void launch_over_another_machines_memory(void **state) {
  (void)state;
  size_t n = 3 * 4096 + 77;
  unsigned char *in = malloc(n), *zero = calloc(1, n);
  assert_non_null(in);
  assert_non_null(zero);
  test_pattern(in, n, 21);
  struct {
    rig_device *runner, *far;
  } ways[2] = {{rig_device_host(), remote}, {m1, rig_device_host()}};
  for (int w = 0; w < 2; w++) {
    for (int far_is_src = 0; far_is_src < 2; far_is_src++) {
      rig_buffer *f = create_ok(ways[w].far, n), *near = create_ok(ways[w].runner, n);
      rig_buffer *src = far_is_src ? f : near, *dst = far_is_src ? near : f;
      ok(rig_buffer_put(src, 0, in, n));
      ok(rig_buffer_fill(dst, 0, 1));
      rig_point p = 0;
      rig_status st = launch_copy(ways[w].runner, src, dst, n, &p);
      if (st == RIG_OK) {
        ok(rig_point_wait(p));
        expect_model(dst, in, n, "a launch across machines");
      } else {
        printf("# %s over %s's memory: %s\n", rig_device_name(ways[w].runner),
               rig_device_name(ways[w].far), rig_error_last()->message);
        assert_int_equal(st, RIG_INVALID);
        assert_non_null(strstr(rig_error_last()->message, rig_device_name(ways[w].far)));
        expect_model(dst, zero, n, "a refused launch's destination");
      }
      expect_model(src, in, n, "a launch's source");
      rig_buffer_release(f);
      rig_buffer_release(near);
    }
  }
  free(in);
  free(zero);
}

/* ---- fork ------------------------------------------------------------------ */

/* What a child of fork does with the parent's remote buffer: every call
 * answers a status that is not RIG_OK, with a message, and none crashes
 * or hangs (20 s); then it exits through exit(), its destructors and
 * atexit handlers run, which must leave the parent's link alone. */
static rig_buffer *child_buffer;

static void child_calls_remote(void) {
  alarm(20);
  size_t n = rig_buffer_length(child_buffer);
  unsigned char *got = malloc(n);
  rig_status st = rig_buffer_get(child_buffer, 0, got, n);
  if (st == RIG_OK || !rig_error_last()->message[0])
    _exit(2);
  fprintf(stderr, "# the child's get: %s\n", rig_error_last()->message);
  if (rig_buffer_put(child_buffer, 0, got, n) == RIG_OK)
    _exit(3);
  if (rig_buffer_fill(child_buffer, 0x11, 1) == RIG_OK)
    _exit(4);
  rig_buffer *b = NULL;
  if (rig_buffer_create(remote, 4096, &b) == RIG_OK)
    _exit(5);
  exit(0);
}

/* A child of fork with a remote device open: its calls on it give a clear
 * status, its exit leaves the parent's connection whole, and the parent
 * goes on: the bytes it put are there, and new work runs. */
static void fork_with_a_remote_device_open(void **state) {
  (void)state;
  size_t n = 64 * 1024 + 5;
  unsigned char *in = malloc(n);
  assert_non_null(in);
  test_pattern(in, n, 31);
  child_buffer = create_ok(remote, n);
  ok(rig_buffer_put(child_buffer, 0, in, n));
  for (int round = 0; round < 3; round++) {
    pid_t pid = fork_ok();
    if (pid == 0)
      child_calls_remote();
    wait_child_ok(pid);
    expect_model(child_buffer, in, n, "the parent's buffer after a child");
    rig_buffer *y = create_ok(remote, n);
    ok(rig_buffer_copy(child_buffer, y));
    expect_model(y, in, n, "the parent's copy after a child");
    rig_buffer_release(y);
  }
  rig_buffer_release(child_buffer);
  free(in);
}

/* A thread that copies m1's memory into this host's, over and over, and
 * checks each copy's bytes, until told to stop. */
typedef struct copier {
  rig_buffer *src, *dst;
  const unsigned char *want;
  atomic_bool stop, ended;
  rig_status last;
  atomic_uint copies;
  unsigned bad;
} copier;

static void *copy_loop(void *arg) {
  copier *c = arg;
  size_t n = rig_buffer_length(c->src);
  const unsigned char *got = rig_buffer_host_address(c->dst);
  while (!atomic_load(&c->stop)) {
    memset(rig_buffer_host_address(c->dst), 0, n);
    if ((c->last = rig_buffer_copy(c->src, c->dst)) != RIG_OK)
      break;
    c->bad += memcmp(got, c->want, n) != 0;
    atomic_fetch_add(&c->copies, 1);
  }
  atomic_store(&c->ended, true);
  return NULL;
}

/* fork while another thread copies from m1, so that the fork comes while
 * that thread holds the remote link's locks: the child, which does not
 * inherit the thread, must neither hang on them nor touch the link, and
 * the parent's copies go on, each byte for byte. */
static void fork_while_a_thread_copies_remote(void **state) {
  (void)state;
  size_t n = 2u << 20;
  unsigned char *in = malloc(n);
  assert_non_null(in);
  test_pattern(in, n, 41);
  copier c = {.src = create_ok(remote, n), .dst = create_ok(rig_device_host(), n), .want = in};
  ok(rig_buffer_put(c.src, 0, in, n));
  child_buffer = c.src;
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, copy_loop, &c), 0);
  for (int round = 0; round < 12; round++) {
    sleep_ms(3 + 5 * (unsigned)(round % 4));
    pid_t pid = fork_ok();
    if (pid == 0)
      child_calls_remote();
    wait_child_ok(pid);
  }
  unsigned before = atomic_load(&c.copies);
  arm_deadline(20);
  while (atomic_load(&c.copies) < before + 2 && !atomic_load(&c.ended) && !past_deadline(NULL))
    sleep_ms(5);
  atomic_store(&c.stop, true);
  pthread_join(t, NULL);
  ok(c.last);
  assert_int_equal(c.bad, 0);
  unsigned copies = atomic_load(&c.copies);
  printf("# %u copies, %u of them after the last fork's child ended\n", copies, copies - before);
  assert_true(copies >= before + 2); /* the parent's link goes on */
  rig_buffer_release(c.src);
  rig_buffer_release(c.dst);
  free(in);
}

/* ---- a buffer freed while another thread copies it ------------------------ */

typedef struct racer {
  rig_buffer *b, *other;
  int how;                  /* 0: gets, 1: copies out, 2: copies in */
  unsigned char *got;
  const unsigned char *want;
  rig_status last;
  unsigned calls, bad;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  size_t n = rig_buffer_length(r->b);
  do {
    switch (r->how) {
    case 0:
      memset(r->got, 0, n);
      r->last = rig_buffer_get(r->b, 0, r->got, n);
      break;
    case 1:
      memset(r->got, 0, n); /* the host buffer's own bytes */
      r->last = rig_buffer_copy(r->b, r->other);
      break;
    default:
      r->last = rig_buffer_copy(r->other, r->b);
      break;
    }
    if (r->last == RIG_OK && r->how < 2)
      r->bad += memcmp(r->got, r->want, n) != 0;
    r->calls++;
  } while (r->last == RIG_OK);
  return NULL;
}

/* rig_buffer_free of d's buffer while another thread gets it, copies it
 * out to this host or copies into it: no crash, every call before the
 * free moved the whole of the bytes, and the thread's next call is
 * RIG_INVALID (the buffer is dead). */
static void free_under_a_copy_on(rig_device *d, size_t n) {
  unsigned char *in = malloc(n);
  assert_non_null(in);
  test_pattern(in, n, 51);
  for (int round = 0; round < 9; round++) {
    racer r = {.b = create_ok(d, n), .other = create_ok(rig_device_host(), n),
               .how = round % 3, .want = in};
    r.got = r.how == 1 ? rig_buffer_host_address(r.other) : malloc(n);
    ok(rig_buffer_put(r.b, 0, in, n));
    ok(rig_buffer_put(r.other, 0, in, n));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, race, &r), 0);
    sleep_ms(2 + (unsigned)round % 4);
    ok(rig_buffer_free(r.b));
    ok(rig_device_free_cache(d));
    pthread_join(t, NULL);
    if (r.last != RIG_INVALID)
      fail_msg("%s, round %d: the call after the free: %s", rig_device_name(d), round,
               rig_error_last()->message);
    assert_int_equal(r.bad, 0);
    if (r.how != 1)
      free(r.got);
    rig_buffer_release(r.b);
    rig_buffer_release(r.other);
  }
  free(in);
}

static void free_under_a_copy_remote(void **state) {
  (void)state;
  free_under_a_copy_on(remote, 2u << 20);
}

/* The test driver's memory, which the host does not address: its copies
 * pass through staging (free_under_a_staged_get in test_seams.c checks a
 * get with the window held open; this one races every kind). */
static void free_under_a_copy_test_driver(void **state) {
  (void)state;
  rig_device *t = open_ok("test:seams-free,host=0");
  free_under_a_copy_on(t, 2u << 20);
  close_release(t);
}

int main(void) {
  key = test_key_file("a shared secret of the remote tests, 48 bytes long");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(copies_between_remote_and_every_device),
      cmocka_unit_test(launch_over_another_machines_memory),
      cmocka_unit_test(fork_with_a_remote_device_open),
      cmocka_unit_test(fork_while_a_thread_copies_remote),
      cmocka_unit_test(free_under_a_copy_remote),
      cmocka_unit_test(free_under_a_copy_test_driver),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
