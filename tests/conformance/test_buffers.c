/* test_buffers.c: buffers, views, host access, copies, fills, budgets and
 * submissions on the device under test (RIG_CONF_DEVICE, common.h).
 *
 * Written once against <rig/rig.h>. What a device may do its own way (how
 * much a buffer is charged beyond its words, whether the host addresses its
 * memory) is checked to the degree the rules fix it; the rules that apply
 * only to some devices (the host's cache, the budget of a driver's device)
 * skip elsewhere, saying why.
 *
 * Every refused call is checked to leave the state as it was: the bytes of
 * the buffers involved, the out-parameter, the timelines and rig_device_allocated.
 *
 * Rules: PRE-14 PRE-15 PRE-22 PRE-28 PRE-33 WORD-2 WORD-3 WORD-5 WORD-6 WORD-10
 * ORDER-14 ORDER-15 ORDER-34 TL-3 ERR-1 BUF-1 BUF-3
 * RECLAIM-2 RECLAIM-4 RECLAIM-7 RECLAIM-11 RECLAIM-15 RECLAIM-16
 * RECLAIM-24 RECLAIM-25 RECLAIM-27 RECLAIM-47 RECLAIM-48 RECLAIM-51
 * RECLAIM-65 RECLAIM-68 RECLAIM-69 RECLAIM-70 RECLAIM-71 RECLAIM-77
 * LIFE-1 LIFE-2 LIFE-3 LIFE-5 GRECL-3 GRECL-4 GRECL-5 GRECL-6 GRECL-7
 * HACC-1 HACC-2 HACC-3 HACC-4 HACC-5 PROP-28 PROP-29 PROP-30 STAMP-11
 * SUBS-1 VALID-2 VALID-8 VALID-11 VALID-12 VALID-13 VALID-16 VALID-17
 * VALID-18 VALID-22 SUBMIT-6 SUBMIT-7 SUBMIT-9 SUBMIT-12 SUBMIT-14
 * SUBMIT-25 SUBMIT-27
 */
#include "common.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rig_device *dev;         /* the device under test */
static uint64_t dev_budget;     /* its budget at open, put back after budget tests */

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)

/* A value no call writes: out-parameters start as it, and refusals must
 * leave it there (ERR-1). */
#define UNTOUCHED ((void *)(uintptr_t)0x5eed)
#define NO_POINT ((rig_point)0x5eedu)

/* A function a refused host access must not run. */
static void count_call(void *bytes, size_t n, void *ctx) {
  (void)bytes, (void)n;
  ++*(int *)ctx;
}

static bool is_memory(void) { return strcmp(rig_device_arch(dev), "memory") == 0; }
static size_t words_of(size_t n) { return (n + RIG_WORD - 1) / RIG_WORD * RIG_WORD; }

/* A refusal: the status, and a message in the thread's last error. */
#define conf_refused(expr, want)                                                  \
  do {                                                                            \
    conf_status((expr), (want));                                                  \
    assert_int_equal(rig_error_last()->status, (want));                           \
    assert_true(rig_error_last()->message[0] != '\0');                            \
  } while (0)

static rig_buffer *mk_on(rig_device *d, size_t n) {
  rig_buffer *b = NULL;
  conf_ok(rig_buffer_create(d, n, &b));
  assert_non_null(b);
  return b;
}
static rig_buffer *mk(size_t n) { return mk_on(dev, n); }

static rig_buffer *view(rig_buffer *b, size_t off, size_t len, rig_access a) {
  rig_buffer *v = NULL;
  conf_ok(rig_buffer_view(b, off, len, a, &v));
  assert_non_null(v);
  return v;
}

static unsigned char seq(unsigned seed, size_t i) { return (unsigned char)(seed + 7 * i + i / 251); }

/* Writes byte i of b as seq(seed, i). */
static void put_seq(rig_buffer *b, unsigned seed) {
  size_t n = rig_buffer_length(b);
  unsigned char *t = malloc(n ? n : 1);
  assert_non_null(t);
  for (size_t i = 0; i < n; i++)
    t[i] = seq(seed, i);
  conf_ok(rig_buffer_put(b, 0, t, n));
  free(t);
}

/* b's bytes in a fresh array, which the caller frees. */
static unsigned char *bytes_of(rig_buffer *b) {
  size_t n = rig_buffer_length(b);
  unsigned char *t = malloc(n ? n : 1);
  assert_non_null(t);
  conf_ok(rig_buffer_get(b, 0, t, n));
  return t;
}

/* Asserts that bytes [from, from + n) of b are seq(seed, from + i). */
static void expect_seq_range(rig_buffer *b, unsigned seed, size_t from, size_t n) {
  unsigned char *t = bytes_of(b);
  for (size_t i = from; i < from + n; i++)
    if (t[i] != seq(seed, i)) {
      print_error("byte %zu is 0x%02x, want 0x%02x\n", i, t[i], seq(seed, i));
      free(t);
      fail();
    }
  free(t);
}
static void expect_seq(rig_buffer *b, unsigned seed) {
  expect_seq_range(b, seed, 0, rig_buffer_length(b));
}

/* Moves collected memory on the device (RECLAIM-16): a create does, and one
 * of no bytes is charged nothing. */
static void move_on(rig_device *d) { rig_buffer_release(mk_on(d, 0)); }

/* What a refusal must leave as it was. */
typedef struct state {
  uint64_t dev_submitted, host_submitted, dev_allocated, host_allocated;
} state;
static state snapshot(void) {
  state s = {rig_device_submitted(dev), rig_device_submitted(rig_device_host()), rig_device_allocated(dev),
             rig_device_allocated(rig_device_host())};
  return s;
}
static void expect_state(state s) {
  assert_int_equal(rig_device_submitted(dev), s.dev_submitted);
  assert_int_equal(rig_device_submitted(rig_device_host()), s.host_submitted);
  assert_int_equal(rig_device_allocated(dev), s.dev_allocated);
  assert_int_equal(rig_device_allocated(rig_device_host()), s.host_allocated);
}

/* Asserts that p is a point of runs, at its last value. */
static void expect_point_of(rig_device *runs, rig_point p) {
  rig_device *pd = rig_point_device(p);
  assert_non_null(pd);
  assert_true(rig_device_equal(pd, runs));
  assert_int_equal(rig_point_value(p), rig_device_submitted(runs));
  rig_device_release(pd);
}

/* Asserts that p is a point of the device under test, at its last value. */
static void expect_point_of_dev(rig_point p) { expect_point_of(dev, p); }

/* Asserts that p is the point of a copy between x, a buffer of the device
 * under test, and the host: the device's own where it runs on the host (a
 * memory device); the host's where the host addresses x (STAMP-18: on
 * Metal the host runs the copies); else the device's, whose copy engine
 * moves the bytes through staging (STAMP-5, STAMP-7). */
static void expect_point_of_host_copy(rig_buffer *x, rig_point p) {
  bool staged = !rig_buffer_host_address(x) && rig_buffer_length(x) > 0;
  expect_point_of(rig_device_runs_on_host(dev) || staged ? dev : rig_device_host(), p);
}

static int group_setup(void **st) {
  dev = conf_open();
  dev_budget = rig_device_budget(dev);
  return 0;
}
static int group_teardown(void **st) {
  rig_device_release(dev);
  return 0;
}
/* Puts the budgets back, whatever a budget test left (RECLAIM-69). */
static int restore_budgets(void **st) {
  int bad = rig_device_set_budget(dev, dev_budget) != RIG_OK;
  bad |= rig_device_set_budget(rig_device_host(), INT64_MAX) != RIG_OK;
  bad |= rig_device_free_cache(dev) != RIG_OK;
  return bad ? -1 : 0;
}

/* ---- creation --------------------------------------------------------------- */

/* PRE-33 ORDER-15 HACC-5: "hello" put into a 5-byte buffer and read back into
 * 5 fresh bytes, with no explicit wait. */
static void pre_33_hello_put_then_get(void **st) {
  rig_buffer *b = mk(5);
  conf_ok(rig_buffer_put(b, 0, "hello", 5));
  char out[5];
  memset(out, 0, sizeof out);
  conf_ok(rig_buffer_get(b, 0, out, 5));
  assert_memory_equal(out, "hello", 5);
  rig_buffer_release(b);
}

/* PRE-14 PRE-15 WORD-6 RECLAIM-24 RECLAIM-25 RECLAIM-68 PROP-28 PROP-29
 * PROP-30 HACC-1 HACC-5: buffers of every size class, their properties,
 * their charge in whole words, where they start, and their bytes. */
static void pre_14_word_6_prop_28_create_sizes(void **st) {
  static const size_t sizes[] = {0, 1, 5, 127, 128, 4096, 65536, MiB};
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t n = sizes[k];
    conf_ok(rig_device_free_cache(dev));
    uint64_t before = rig_device_allocated(dev);
    rig_buffer *b = mk(n);
    assert_int_equal(rig_buffer_length(b), n);
    assert_true(rig_device_equal(rig_buffer_device(b), dev));
    assert_int_equal(rig_buffer_access(b), RIG_READ_WRITE);
    assert_int_equal(rig_buffer_kind(b), RIG_KIND_DEVICE);
    assert_false(rig_buffer_dead(b));
    uint64_t charge = rig_device_allocated(dev) - before;
    assert_true(rig_device_allocated(dev) >= before);
    assert_int_equal(charge % RIG_WORD, 0);                     /* RECLAIM-25 */
    assert_true(charge >= words_of(n));                         /* WORD-6 */
    if (is_memory())
      assert_int_equal(charge, words_of(n));                    /* GRECL-7 */
    if (conf_is_host())                                         /* RECLAIM-27 */
      assert_true(charge <= words_of(n) + 112);
    assert_true(rig_device_allocated(dev) <= rig_device_budget(dev));         /* RECLAIM-24 */
    uintptr_t at = (uintptr_t)rig_buffer_host_address(b);
    if ((is_memory() && !rig_device_machine(dev)) || conf_is_host())
      assert_true(at != 0);                                     /* HACC-1 */
    if (rig_device_machine(dev))  /* another machine's host addresses it, not this one */
      assert_true(at == 0);
    if (at && n > 0) {
      assert_int_equal(at % rig_device_alignment(dev), 0);             /* PROP-28 */
      if (conf_is_host() && n >= 128)
        assert_int_equal(at % 128, 0);                          /* PROP-30 */
      if (conf_is_host() && n >= 65536)
        assert_int_equal(at % 4096, 0);
    }
    put_seq(b, (unsigned)k);                                    /* HACC-5 */
    expect_seq(b, (unsigned)k);
    rig_buffer_release(b);
  }
  if (conf_is_host())
    assert_int_equal(rig_device_alignment(dev), 16);                   /* PROP-29 */
  if (is_memory())
    assert_int_equal(rig_device_alignment(dev), 64);
}

/* WORD-6 RECLAIM-25 RECLAIM-27 RECLAIM-68: 5 bytes are charged as 2 words,
 * and the charge goes once the memory goes back. */
static void word_6_reclaim_25_68_allocated_whole_words(void **st) {
  conf_ok(rig_device_free_cache(dev));
  uint64_t before = rig_device_allocated(dev);
  rig_buffer *b = mk(5);
  if (is_memory() || conf_is_host())
    assert_int_equal(rig_device_allocated(dev) - before, 8);
  else
    assert_true(rig_device_allocated(dev) - before >= 8);
  conf_ok(rig_buffer_put(b, 0, "12345", 5));
  char out[5];
  conf_ok(rig_buffer_get(b, 0, out, 5));
  assert_memory_equal(out, "12345", 5);
  rig_buffer_release(b);
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), before);                 /* RECLAIM-68 */

  if (conf_is_host()) {
    /* RECLAIM-27: a buffer that starts on 128 bytes is charged its words and
     * up to 112 bytes more. */
    b = mk(128);
    uint64_t charge = rig_device_allocated(dev) - before;
    assert_true(charge >= 128 && charge <= 128 + 112);
    rig_buffer_release(b);
    conf_ok(rig_device_free_cache(dev));
    assert_int_equal(rig_device_allocated(dev), before);
  }
}

/* PRE-14 ERR-1: create_kind of the device's own kind is a create;
 * a kind the device has none of is RIG_INVALID and charges nothing. The
 * host and a memory device have only their own memory. */
static void pre_14_create_kind(void **st) {
  conf_ok(rig_device_free_cache(dev));
  uint64_t allocated = rig_device_allocated(dev);
  rig_buffer *b = NULL;
  conf_ok(rig_buffer_create_kind(dev, 24, RIG_KIND_DEVICE, &b));
  assert_int_equal(rig_buffer_kind(b), RIG_KIND_DEVICE);
  assert_int_equal(rig_buffer_length(b), 24);
  put_seq(b, 33);
  expect_seq(b, 33);
  rig_buffer_release(b);
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), allocated);
  /* After the put and get: where the host does not address the memory,
   * they were the device's staged copies, which took values (STAMP-5). */
  state s = snapshot();
  if (is_memory() || conf_is_host()) {
    rig_kind kinds[] = {RIG_KIND_PINNED, RIG_KIND_MAPPED};
    for (int i = 0; i < 2; i++) {
      rig_buffer *out = UNTOUCHED;
      conf_refused(rig_buffer_create_kind(dev, 24, kinds[i], &out), RIG_INVALID);
      assert_ptr_equal(out, UNTOUCHED);
      expect_state(s);
    }
  }
}

/* ---- views ------------------------------------------------------------------ */

/* LIFE-2 PRE-15 WORD-2 ERR-1: views are ranges of the allocation, checked
 * against their parent, and refused ranges write no out-parameter. */
static void life_2_view_ranges(void **st) {
  rig_buffer *b = mk(16);
  put_seq(b, 1);
  rig_buffer *v = view(b, 4, 8, RIG_READ_WRITE);
  assert_int_equal(rig_buffer_length(v), 8);
  assert_true(rig_device_equal(rig_buffer_device(v), dev));
  assert_int_equal(rig_buffer_access(v), RIG_READ_WRITE);
  if (rig_buffer_host_address(b))
    assert_ptr_equal(rig_buffer_host_address(v), (char *)rig_buffer_host_address(b) + 4);
  unsigned char got[8];
  conf_ok(rig_buffer_get(v, 0, got, 8));
  for (size_t i = 0; i < 8; i++)
    assert_int_equal(got[i], seq(1, 4 + i));

  /* A write through the view lands in the parent, and nowhere else. */
  conf_ok(rig_buffer_put(v, 1, "ABC", 3));
  unsigned char *all = bytes_of(b);
  for (size_t i = 0; i < 16; i++)
    assert_int_equal(all[i], i >= 5 && i < 8 ? "ABC"[i - 5] : seq(1, i));
  free(all);

  /* A view of a view counts from its parent's range. */
  rig_buffer *vv = view(v, 2, 4, RIG_READ);
  assert_int_equal(rig_buffer_length(vv), 4);
  assert_int_equal(rig_buffer_access(vv), RIG_READ);
  conf_ok(rig_buffer_get(vv, 0, got, 4));
  assert_memory_equal(got, ((unsigned char[]){'B', 'C', seq(1, 8), seq(1, 9)}), 4);

  /* Empty views, at the start and at the end. */
  rig_buffer *e0 = view(b, 0, 0, RIG_READ_WRITE), *e16 = view(b, 16, 0, RIG_READ);
  assert_int_equal(rig_buffer_length(e0), 0);
  assert_int_equal(rig_buffer_length(e16), 0);

  /* Ranges out of the parent, and access that is not one. */
  state s = snapshot();
  struct {
    rig_buffer *of;
    size_t off, len;
    rig_access a;
  } bad[] = {
      {b, 17, 0, RIG_READ_WRITE},       {b, 16, 1, RIG_READ_WRITE},
      {b, 8, 9, RIG_READ_WRITE},        {b, 1, SIZE_MAX, RIG_READ_WRITE},
      {b, SIZE_MAX, 1, RIG_READ_WRITE}, {b, SIZE_MAX, SIZE_MAX, RIG_READ},
      {v, 0, 9, RIG_READ_WRITE},        {v, 8, 1, RIG_READ},
      {vv, 4, 1, RIG_READ},             {b, 0, 4, (rig_access)0},
      {b, 0, 4, (rig_access)2},         {b, 0, 4, (rig_access)7},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_buffer *out = UNTOUCHED;
    conf_refused(rig_buffer_view(bad[i].of, bad[i].off, bad[i].len, bad[i].a, &out),
                 RIG_INVALID);
    assert_ptr_equal(out, UNTOUCHED);
  }
  expect_state(s); /* before the get, a staged copy where the host does not address b */
  all = bytes_of(b);
  for (size_t i = 0; i < 16; i++)
    assert_int_equal(all[i], i >= 5 && i < 8 ? "ABC"[i - 5] : seq(1, i));
  free(all);

  rig_buffer_release(e16);
  rig_buffer_release(e0);
  rig_buffer_release(vv);
  rig_buffer_release(v);
  rig_buffer_release(b);
}

/* BUF-1 BUF-3 ERR-1: a RIG_READ view admits reads only: it refuses put,
 * write, fill and being a copy's destination, changing nothing, and it
 * cannot give a view wider than itself. */
static void buf_3_read_view_refuses_writes(void **st) {
  rig_buffer *b = mk(16), *other = mk(16);
  put_seq(b, 3);
  put_seq(other, 9);
  rig_buffer *r = view(b, 0, 16, RIG_READ);
  assert_int_equal(rig_buffer_access(r), RIG_READ);
  int calls = 0;
  state s = snapshot();

  conf_refused(rig_buffer_put(r, 0, "xx", 2), RIG_INVALID);
  conf_refused(rig_buffer_write(r, count_call, &calls), RIG_INVALID);
  assert_int_equal(calls, 0);
  conf_refused(rig_buffer_fill(r, 0, 1), RIG_INVALID);
  rig_point p = NO_POINT;
  conf_refused(rig_buffer_submit_fill(r, 0, 4, &p), RIG_INVALID);
  assert_int_equal(p, NO_POINT);
  conf_refused(rig_buffer_copy(other, r), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(other, r, &p), RIG_INVALID);
  assert_int_equal(p, NO_POINT);
  rig_buffer *w = UNTOUCHED;
  conf_refused(rig_buffer_view(r, 0, 4, RIG_READ_WRITE, &w), RIG_INVALID);
  assert_ptr_equal(w, UNTOUCHED);

  expect_state(s);
  expect_seq(b, 3);
  expect_seq(other, 9);

  /* Reads go through it. */
  expect_seq(r, 3);
  conf_ok(rig_buffer_wait(r, RIG_READ));
  conf_ok(rig_buffer_copy(r, other));
  expect_seq(other, 3);

  rig_buffer_release(r);
  rig_buffer_release(other);
  rig_buffer_release(b);
}

/* LIFE-2 LIFE-3 RECLAIM-2 PRE-22: retain gives the same buffer, and a view
 * keeps the allocation after its parent's last release. */
static void life_2_3_retain_release_views_keep_allocation(void **st) {
  rig_buffer *b = mk(64);
  assert_ptr_equal(rig_buffer_retain(b), b);
  rig_buffer_release(b);
  put_seq(b, 4);                                    /* still one reference */
  expect_seq(b, 4);

  rig_buffer *v = view(b, 32, 32, RIG_READ_WRITE);
  conf_ok(rig_device_free_cache(dev));
  uint64_t held = rig_device_allocated(dev);
  rig_buffer_release(b);
  move_on(dev);
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), held);       /* the view holds it */
  assert_false(rig_buffer_dead(v));
  unsigned char got[32];
  conf_ok(rig_buffer_get(v, 0, got, 32));
  for (size_t i = 0; i < 32; i++)
    assert_int_equal(got[i], seq(4, 32 + i));

  rig_buffer_release(v);                            /* the last one: collected */
  conf_ok(rig_device_free_cache(dev));
  assert_true(rig_device_allocated(dev) + 64 <= held);
}

/* LIFE-1 RECLAIM-4 PRE-28 ERR-1: rig_buffer_free kills the buffer and every
 * view of its allocation; each later use is RIG_INVALID with a message, a
 * second free too; properties stay; the memory goes back. */
static void life_1_reclaim_4_pre_28_free_kills_buffer_and_views(void **st) {
  rig_buffer *other = mk(16);
  put_seq(other, 8);
  conf_ok(rig_device_free_cache(dev));
  uint64_t before = rig_device_allocated(dev);
  rig_buffer *b = mk(64);
  put_seq(b, 5);
  rig_buffer *v = view(b, 8, 16, RIG_READ), *w = view(b, 16, 16, RIG_READ_WRITE);

  conf_ok(rig_buffer_free(w)); /* through a view: the whole allocation */

  rig_buffer *all[3] = {b, v, w};
  size_t lengths[3] = {64, 16, 16};
  rig_access access[3] = {RIG_READ_WRITE, RIG_READ, RIG_READ_WRITE};
  state s = snapshot();
  for (int i = 0; i < 3; i++) {
    rig_buffer *x = all[i];
    assert_true(rig_buffer_dead(x));
    assert_null(rig_buffer_host_address(x));
    assert_int_equal(rig_buffer_length(x), lengths[i]);  /* properties stay */
    assert_true(rig_device_equal(rig_buffer_device(x), dev));
    assert_int_equal(rig_buffer_access(x), access[i]);
    assert_false(rig_buffer_reached(x, RIG_READ));

    unsigned char got[16];
    memset(got, 0xEE, sizeof got);
    conf_refused(rig_buffer_get(x, 0, got, 16), RIG_INVALID);
    for (size_t k = 0; k < sizeof got; k++)
      assert_int_equal(got[k], 0xEE);
    conf_refused(rig_buffer_put(x, 0, "dead", 4), RIG_INVALID);
    conf_refused(rig_buffer_fill(x, 0, 1), RIG_INVALID);
    rig_point p = NO_POINT;
    conf_refused(rig_buffer_submit_fill(x, 0, 1, &p), RIG_INVALID);
    assert_int_equal(p, NO_POINT);
    int calls = 0;
    conf_refused(rig_buffer_read(x, count_call, &calls), RIG_INVALID);
    conf_refused(rig_buffer_write(x, count_call, &calls), RIG_INVALID);
    assert_int_equal(calls, 0);
    conf_refused(rig_buffer_wait(x, RIG_READ), RIG_INVALID);
    conf_refused(rig_buffer_wait(x, RIG_READ_WRITE), RIG_INVALID);
    void *bytes = UNTOUCHED;
    conf_refused(rig_buffer_export(x, &bytes), RIG_INVALID);
    assert_ptr_equal(bytes, UNTOUCHED);
    rig_buffer *vx = UNTOUCHED;
    conf_refused(rig_buffer_view(x, 0, 1, RIG_READ, &vx), RIG_INVALID);
    assert_ptr_equal(vx, UNTOUCHED);
    if (lengths[i] == 16) {
      conf_refused(rig_buffer_copy(x, other), RIG_INVALID);
      conf_refused(rig_buffer_copy(other, x), RIG_INVALID);
      conf_refused(rig_buffer_submit_copy(other, x, &p), RIG_INVALID);
      assert_int_equal(p, NO_POINT);
    }
    conf_refused(rig_buffer_free(x), RIG_INVALID);       /* a second free */
  }
  expect_state(s);
  expect_seq(other, 8);

  rig_buffer_release(w);
  rig_buffer_release(v);
  rig_buffer_release(b);
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), before);
  rig_buffer_release(other);
}

/* ---- host access ------------------------------------------------------------ */

typedef struct seen {
  void *bytes;
  size_t n;
  int calls;
  unsigned char copy[64];
} seen;

static void note_bytes(void *bytes, size_t n, void *ctx) {
  seen *s = ctx;
  s->bytes = bytes;
  s->n = n;
  s->calls++;
  memcpy(s->copy, bytes, n < sizeof s->copy ? n : sizeof s->copy);
}

static void scribble(void *bytes, size_t n, void *ctx) {
  seen *s = ctx;
  s->bytes = bytes;
  s->n = n;
  s->calls++;
  for (size_t i = 0; i < n; i++)
    ((unsigned char *)bytes)[i] = (unsigned char)(0xA0 + i);
}

/* HACC-1 HACC-2 HACC-4: read and write hand the bytes in place to the
 * function, once. (What write waits for: tests/unit/test_held.c.) */
static void hacc_2_read_write_callbacks_see_bytes_in_place(void **st) {
  rig_buffer *b = mk(32);
  put_seq(b, 2);
  seen s = {0};
  if (!rig_buffer_host_address(b)) {
    conf_refused(rig_buffer_read(b, note_bytes, &s), RIG_INVALID);  /* HACC-4 */
    assert_int_equal(s.calls, 0);
    rig_buffer_release(b);
    return;
  }
  conf_ok(rig_buffer_read(b, note_bytes, &s));
  assert_int_equal(s.calls, 1);
  assert_ptr_equal(s.bytes, rig_buffer_host_address(b));
  assert_int_equal(s.n, 32);
  for (size_t i = 0; i < 32; i++)
    assert_int_equal(s.copy[i], seq(2, i));

  memset(&s, 0, sizeof s);
  conf_ok(rig_buffer_write(b, scribble, &s));
  assert_int_equal(s.calls, 1);
  assert_ptr_equal(s.bytes, rig_buffer_host_address(b));
  unsigned char *all = bytes_of(b);
  for (size_t i = 0; i < 32; i++)
    assert_int_equal(all[i], 0xA0 + i);
  free(all);

  /* Through a view: its own bytes, in the allocation. */
  put_seq(b, 2);
  rig_buffer *v = view(b, 8, 8, RIG_READ_WRITE);
  memset(&s, 0, sizeof s);
  conf_ok(rig_buffer_write(v, scribble, &s));
  assert_ptr_equal(s.bytes, (char *)rig_buffer_host_address(b) + 8);
  assert_int_equal(s.n, 8);
  all = bytes_of(b);
  for (size_t i = 0; i < 32; i++)
    assert_int_equal(all[i], i >= 8 && i < 16 ? 0xA0 + (i - 8) : seq(2, i));
  free(all);
  memset(&s, 0, sizeof s);
  conf_ok(rig_buffer_read(v, note_bytes, &s));
  assert_int_equal(s.n, 8);
  assert_int_equal(s.copy[7], 0xA7);

  state before = snapshot();
  conf_refused(rig_buffer_read(b, NULL, &s), RIG_INVALID);
  conf_refused(rig_buffer_write(b, NULL, &s), RIG_INVALID);
  expect_state(before);
  rig_buffer_release(v);
  rig_buffer_release(b);
}

/* ORDER-14 ORDER-34 STAMP-11: after a submitted copy, waits for reads and
 * for writes return with the copy done; waits of no access are refused. */
static void order_14_34_wait_read_and_read_write(void **st) {
  rig_buffer *a = mk(64), *c = mk(64);
  put_seq(a, 7);
  conf_ok(rig_buffer_fill(c, 0, 1));
  rig_point p = 0;
  conf_ok(rig_buffer_submit_copy(a, c, &p));
  conf_ok(rig_buffer_wait(c, RIG_READ));
  assert_true(rig_point_reached(p));
  assert_true(rig_buffer_reached(c, RIG_READ));
  expect_seq(c, 7);
  conf_ok(rig_buffer_wait(c, RIG_READ_WRITE));
  conf_ok(rig_buffer_wait(a, RIG_READ_WRITE));
  assert_true(rig_buffer_reached(c, RIG_READ_WRITE));
  assert_true(rig_buffer_reached(a, RIG_READ_WRITE));

  conf_refused(rig_buffer_wait(c, (rig_access)0), RIG_INVALID);
  conf_refused(rig_buffer_wait(c, (rig_access)2), RIG_INVALID);
  rig_buffer_release(c);
  rig_buffer_release(a);
}

/* HACC-3: export gives the bytes out for good and holds a reference, which
 * the caller releases. */
static void hacc_3_export_holds_a_reference(void **st) {
  conf_ok(rig_device_free_cache(dev));
  uint64_t before = rig_device_allocated(dev);
  rig_buffer *b = mk(256);
  put_seq(b, 10);
  unsigned char *p = NULL;
  if (!rig_buffer_host_address(b)) {
    conf_refused(rig_buffer_export(b, (void **)&p), RIG_INVALID); /* HACC-4 */
    rig_buffer_release(b);
    return;
  }
  conf_ok(rig_buffer_export(b, (void **)&p));
  assert_ptr_equal(p, rig_buffer_host_address(b));
  for (size_t i = 0; i < 256; i++)
    assert_int_equal(p[i], seq(10, i));
  p[3] = 0x5A;                                   /* in place, both ways */
  unsigned char got;
  conf_ok(rig_buffer_get(b, 3, &got, 1));
  assert_int_equal(got, 0x5A);
  uint64_t with = rig_device_allocated(dev);
  assert_true(with >= before + 256);

  rig_buffer_release(b);                         /* the creator's reference */
  move_on(dev);
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), with);    /* the export's keeps it */
  assert_int_equal(p[3], 0x5A);
  p[4] = 0x6B;
  assert_int_equal(p[4], 0x6B);

  rig_buffer_release(b);                         /* the export's */
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), before);
}

/* HACC-5 ERR-1: get and put of ranges out of the buffer are RIG_INVALID and
 * change nothing, on either side. */
static void hacc_5_get_put_range_errors(void **st) {
  rig_buffer *b = mk(16);
  put_seq(b, 4);
  unsigned char dst[32];
  memset(dst, 0xEE, sizeof dst);
  state s = snapshot();
  struct {
    size_t off, n;
  } bad[] = {{17, 0}, {16, 1}, {8, 9}, {0, 17}, {1, SIZE_MAX}, {SIZE_MAX, 1},
             {SIZE_MAX, SIZE_MAX}, {SIZE_MAX - 3, 4}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    conf_refused(rig_buffer_get(b, bad[i].off, dst, bad[i].n), RIG_INVALID);
    conf_refused(rig_buffer_put(b, bad[i].off, dst, bad[i].n), RIG_INVALID);
  }
  for (size_t i = 0; i < sizeof dst; i++)
    assert_int_equal(dst[i], 0xEE);
  expect_state(s); /* before the get, a staged copy where the host does not address b */
  expect_seq(b, 4);

  /* Empty ranges, at the end too, and without bytes to copy. */
  conf_ok(rig_buffer_get(b, 16, dst, 0));
  conf_ok(rig_buffer_put(b, 16, dst, 0));
  conf_ok(rig_buffer_get(b, 4, NULL, 0));
  conf_ok(rig_buffer_put(b, 4, NULL, 0));
  for (size_t i = 0; i < sizeof dst; i++)
    assert_int_equal(dst[i], 0xEE);
  expect_seq(b, 4);

  /* A range inside. */
  conf_ok(rig_buffer_put(b, 13, "xyz", 3));
  conf_ok(rig_buffer_get(b, 12, dst, 4));
  assert_memory_equal(dst, ((unsigned char[]){seq(4, 12), 'x', 'y', 'z'}), 4);
  rig_buffer_release(b);
}

/* ---- fills -------------------------------------------------------------------- */

static void expect_all(rig_buffer *b, uint32_t pattern, uint32_t size) {
  unsigned char *t = bytes_of(b);
  size_t n = rig_buffer_length(b);
  for (size_t i = 0; i < n; i += size) {
    uint32_t got = 0;
    if (size == 1)
      got = t[i];
    else if (size == 2) {
      uint16_t h;
      memcpy(&h, t + i, 2);
      got = h;
    } else
      memcpy(&got, t + i, 4);
    if (got != pattern) {
      print_error("element at byte %zu is 0x%x, want 0x%x\n", i, got, pattern);
      free(t);
      fail();
    }
  }
  free(t);
}

/* HACC-5 ORDER-15 TL-3 ERR-1: fills of 1, 2 and 4 bytes; other sizes, and
 * lengths they do not tile, are refused and change nothing; a fill of a view
 * writes its range only; submit_fill's point is the runner's. */
static void hacc_5_fill_patterns(void **st) {
  rig_buffer *b = mk(64);
  conf_ok(rig_buffer_fill(b, 0xAB, 1));
  expect_all(b, 0xAB, 1);
  conf_ok(rig_buffer_fill(b, 0xBEEF, 2));
  expect_all(b, 0xBEEF, 2);
  conf_ok(rig_buffer_fill(b, 0xDEADBEEF, 4));
  expect_all(b, 0xDEADBEEF, 4);

  rig_buffer *b5 = mk(5), *b6 = mk(6);
  put_seq(b5, 1);
  put_seq(b6, 2);
  put_seq(b, 3);
  state s = snapshot();
  rig_point p = NO_POINT;
  conf_refused(rig_buffer_fill(b, 0, 3), RIG_INVALID);
  conf_refused(rig_buffer_fill(b, 0, 0), RIG_INVALID);
  conf_refused(rig_buffer_fill(b, 0, 8), RIG_INVALID);
  conf_refused(rig_buffer_submit_fill(b, 0, 3, &p), RIG_INVALID);
  conf_refused(rig_buffer_fill(b5, 0x1122, 2), RIG_INVALID);
  conf_refused(rig_buffer_fill(b5, 0x11223344, 4), RIG_INVALID);
  conf_refused(rig_buffer_fill(b6, 0x11223344, 4), RIG_INVALID);
  conf_refused(rig_buffer_submit_fill(b6, 0, 4, &p), RIG_INVALID);
  assert_int_equal(p, NO_POINT);
  expect_state(s);
  expect_seq(b, 3);
  expect_seq(b5, 1);
  expect_seq(b6, 2);

  conf_ok(rig_buffer_fill(b5, 0x11, 1));
  expect_all(b5, 0x11, 1);
  conf_ok(rig_buffer_fill(b6, 0x1122, 2));
  expect_all(b6, 0x1122, 2);

  /* Views: their bytes only, whatever words they share (WORD-7, WORD-8). */
  rig_buffer *v = view(b, 1, 2, RIG_READ_WRITE), *w = view(b, 6, 4, RIG_READ_WRITE);
  conf_ok(rig_buffer_fill(v, 0x55, 1));
  conf_ok(rig_buffer_fill(w, 0x7788, 2));
  unsigned char *t = bytes_of(b);
  uint16_t h;
  for (size_t i = 0; i < 64; i++)
    if (i == 1 || i == 2)
      assert_int_equal(t[i], 0x55);
    else if (i >= 6 && i < 10) {
      memcpy(&h, t + (i & ~(size_t)1), 2);
      assert_int_equal(h, 0x7788);
    } else
      assert_int_equal(t[i], seq(3, i));
  free(t);

  /* submit_fill: the point of the device that ran it (TL-3 on the host). */
  conf_ok(rig_buffer_submit_fill(b, 0x0F0F0F0F, 4, &p));
  expect_point_of_dev(p);
  conf_ok(rig_point_wait(p));
  expect_all(b, 0x0F0F0F0F, 4);

  /* An empty buffer takes every pattern. */
  rig_buffer *e = mk(0);
  conf_ok(rig_buffer_fill(e, 0x1, 4));
  rig_buffer_release(e);

  rig_buffer_release(w);
  rig_buffer_release(v);
  rig_buffer_release(b6);
  rig_buffer_release(b5);
  rig_buffer_release(b);
}

/* ---- copies ------------------------------------------------------------------- */

/* ORDER-15 STAMP-11 TL-3: copy and submit_copy between two buffers of the
 * device; the copy's point is the device's, at its last value. */
static void order_15_stamp_11_copy_within_device(void **st) {
  rig_buffer *a = mk(4096), *c = mk(4096);
  put_seq(a, 6);
  conf_ok(rig_buffer_fill(c, 0, 1));
  conf_ok(rig_buffer_copy(a, c));                 /* returns with bytes in c */
  expect_seq(c, 6);
  expect_seq(a, 6);

  put_seq(a, 8);
  rig_point p = 0;
  uint64_t before = rig_device_submitted(dev);
  conf_ok(rig_buffer_submit_copy(a, c, &p));
  expect_point_of_dev(p);
  assert_true(rig_point_value(p) > before);
  conf_ok(rig_point_wait(p));
  expect_seq(c, 8);

  /* Between views of two allocations. */
  rig_buffer *va = view(a, 0, 16, RIG_READ), *vc = view(c, 100, 16, RIG_READ_WRITE);
  put_seq(c, 1);
  conf_ok(rig_buffer_copy(va, vc));
  unsigned char *t = bytes_of(c);
  for (size_t i = 0; i < 4096; i++)
    assert_int_equal(t[i], i >= 100 && i < 116 ? seq(8, i - 100) : seq(1, i));
  free(t);

  /* Empty buffers copy nothing, successfully. */
  rig_buffer *e1 = mk(0), *e2 = mk(0);
  conf_ok(rig_buffer_copy(e1, e2));
  rig_buffer_release(e2);
  rig_buffer_release(e1);
  rig_buffer_release(vc);
  rig_buffer_release(va);
  rig_buffer_release(c);
  rig_buffer_release(a);
}

/* TL-3 ORDER-15 HACC-5: copies between the device and the host, both ways.
 * The device's own engine runs them: on a memory device the point is the
 * memory device's, on the host the host's. */
static void tl_3_order_15_copy_device_and_host_both_ways(void **st) {
  rig_buffer *h = mk_on(rig_device_host(), 1000), *x = mk(1000);
  put_seq(h, 11);
  conf_ok(rig_buffer_copy(h, x));
  expect_seq(x, 11);

  put_seq(x, 12);
  rig_point p = 0;
  conf_ok(rig_buffer_submit_copy(x, h, &p));
  expect_point_of_host_copy(x, p);
  conf_ok(rig_point_wait(p));
  expect_seq(h, 12);

  put_seq(h, 13);
  conf_ok(rig_buffer_submit_copy(h, x, &p));
  expect_point_of_host_copy(x, p);
  conf_ok(rig_point_wait(p));
  expect_seq(x, 13);

  conf_ok(rig_buffer_fill(h, 0, 1));
  conf_ok(rig_buffer_copy(x, h));
  expect_seq(h, 13);
  rig_buffer_release(x);
  rig_buffer_release(h);
}

/* VALID-17 VALID-18 WORD-5 ERR-1: copies of unequal lengths, and between
 * buffers sharing a byte, are refused, by copy and submit_copy alike, and
 * change nothing. */
static void valid_17_18_word_5_copy_refusals(void **st) {
  rig_buffer *a = mk(64), *c = mk(32), *h = mk_on(rig_device_host(), 32);
  put_seq(a, 14);
  put_seq(c, 15);
  put_seq(h, 16);
  rig_buffer *v1 = view(a, 0, 8, RIG_READ_WRITE), *v2 = view(a, 4, 8, RIG_READ_WRITE);
  rig_buffer *v3 = view(a, 7, 8, RIG_READ_WRITE);
  assert_true(rig_buffer_share_byte(v1, v2));
  assert_true(rig_buffer_share_byte(v1, v3));
  state s = snapshot();
  rig_point p = NO_POINT;

  conf_refused(rig_buffer_copy(a, c), RIG_INVALID);             /* VALID-17 */
  conf_refused(rig_buffer_copy(c, a), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(a, c, &p), RIG_INVALID);
  conf_refused(rig_buffer_copy(a, h), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(h, a, &p), RIG_INVALID);
  conf_refused(rig_buffer_copy(v1, v2), RIG_INVALID);           /* VALID-18 */
  conf_refused(rig_buffer_copy(v2, v1), RIG_INVALID);
  conf_refused(rig_buffer_copy(v3, v1), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(v1, v2, &p), RIG_INVALID);
  conf_refused(rig_buffer_copy(a, a), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(c, c, &p), RIG_INVALID);
  assert_int_equal(p, NO_POINT);

  expect_state(s);
  expect_seq(a, 14);
  expect_seq(c, 15);
  expect_seq(h, 16);
  rig_buffer_release(v3);
  rig_buffer_release(v2);
  rig_buffer_release(v1);
  rig_buffer_release(h);
  rig_buffer_release(c);
  rig_buffer_release(a);
}

/* WORD-2 WORD-3 WORD-5 WORD-10: views that share a word but no byte
 * overlap, and a copy between them is allowed; views of adjacent words do
 * not overlap; views of different allocations never do. */
static void word_3_5_overlap_vs_share_byte(void **st) {
  rig_buffer *b = mk(16), *other = mk(16);
  put_seq(b, 13);
  rig_buffer *l = view(b, 0, 2, RIG_READ_WRITE), *r = view(b, 2, 2, RIG_READ_WRITE);
  assert_true(rig_buffer_overlaps(l, r));                       /* one word */
  assert_true(rig_buffer_overlaps(r, l));
  assert_false(rig_buffer_share_byte(l, r));                    /* no byte */
  assert_false(rig_buffer_share_byte(r, l));
  conf_ok(rig_buffer_copy(l, r));                               /* WORD-5 */
  unsigned char *t = bytes_of(b);
  for (size_t i = 0; i < 16; i++)
    assert_int_equal(t[i], i == 2 || i == 3 ? seq(13, i - 2) : seq(13, i));
  free(t);

  rig_buffer *w0 = view(b, 0, 4, RIG_READ_WRITE), *w1 = view(b, 4, 4, RIG_READ_WRITE);
  assert_false(rig_buffer_overlaps(w0, w1));
  assert_false(rig_buffer_share_byte(w0, w1));
  assert_true(rig_buffer_overlaps(w0, l));                      /* a byte: a word too */
  assert_true(rig_buffer_share_byte(w0, l));

  /* Across a word boundary: [3,5) and [5,7) share word 1 only. */
  rig_buffer *o1 = view(b, 3, 2, RIG_READ_WRITE), *o2 = view(b, 5, 2, RIG_READ_WRITE);
  assert_true(rig_buffer_overlaps(o1, o2));
  assert_false(rig_buffer_share_byte(o1, o2));
  put_seq(b, 20);
  conf_ok(rig_buffer_copy(o2, o1));
  t = bytes_of(b);
  for (size_t i = 0; i < 16; i++)
    assert_int_equal(t[i], i == 3 || i == 4 ? seq(20, i + 2) : seq(20, i));
  free(t);

  /* [0,3) and [2,5) share byte 2. */
  rig_buffer *s1 = view(b, 0, 3, RIG_READ_WRITE), *s2 = view(b, 2, 3, RIG_READ_WRITE);
  assert_true(rig_buffer_overlaps(s1, s2));
  assert_true(rig_buffer_share_byte(s1, s2));

  /* A buffer shares all with itself, nothing with another allocation, and
   * an empty view holds no word. */
  rig_buffer *e = view(b, 2, 0, RIG_READ_WRITE);
  assert_true(rig_buffer_overlaps(b, b));
  assert_true(rig_buffer_share_byte(b, b));
  assert_false(rig_buffer_overlaps(b, other));
  assert_false(rig_buffer_share_byte(b, other));
  assert_false(rig_buffer_overlaps(e, l));
  assert_false(rig_buffer_overlaps(e, b));

  rig_buffer *vs[] = {e, s2, s1, o2, o1, w1, w0, r, l, other, b};
  for (size_t i = 0; i < sizeof vs / sizeof *vs; i++)
    rig_buffer_release(vs[i]);
}

/* ---- NULL ----------------------------------------------------------------------- */

static void noop_bytes(void *bytes, size_t n, void *ctx) { (void)bytes, (void)n, (void)ctx; }

/* PRE-28 ERR-1: every function that takes a pointer refuses NULL with
 * RIG_INVALID and a message, or answers a neutral value, and crashes not. */
static void pre_28_null_pointers_are_refused(void **st) {
  rig_buffer *b = mk(16), *c = mk(16);
  put_seq(b, 17);
  put_seq(c, 18);
  rig_buffer *out = UNTOUCHED;
  void *bytes = UNTOUCHED;
  rig_point p = NO_POINT;
  unsigned char tmp[4];
  state s = snapshot();

  conf_refused(rig_buffer_create(NULL, 4, &out), RIG_INVALID);
  conf_refused(rig_buffer_create(dev, 4, NULL), RIG_INVALID);
  conf_refused(rig_buffer_create_kind(NULL, 4, RIG_KIND_DEVICE, &out), RIG_INVALID);
  conf_refused(rig_buffer_create_kind(dev, 4, RIG_KIND_DEVICE, NULL), RIG_INVALID);
  conf_refused(rig_buffer_create_kind(dev, 4, (rig_kind)9, &out), RIG_INVALID);
  conf_refused(rig_buffer_view(NULL, 0, 0, RIG_READ, &out), RIG_INVALID);
  conf_refused(rig_buffer_view(b, 0, 0, RIG_READ, NULL), RIG_INVALID);
  assert_ptr_equal(out, UNTOUCHED);
  assert_null(rig_buffer_retain(NULL));
  rig_buffer_release(NULL);
  conf_refused(rig_buffer_free(NULL), RIG_INVALID);
  assert_int_equal(rig_buffer_length(NULL), 0);
  assert_null(rig_buffer_device(NULL));
  assert_true(rig_buffer_dead(NULL));
  assert_null(rig_buffer_host_address(NULL));
  (void)rig_buffer_access(NULL);
  (void)rig_buffer_kind(NULL);
  assert_false(rig_buffer_overlaps(NULL, b));
  assert_false(rig_buffer_overlaps(b, NULL));
  assert_false(rig_buffer_overlaps(NULL, NULL));
  assert_false(rig_buffer_share_byte(NULL, b));
  assert_false(rig_buffer_share_byte(b, NULL));

  conf_refused(rig_buffer_read(NULL, noop_bytes, NULL), RIG_INVALID);
  conf_refused(rig_buffer_read(b, NULL, NULL), RIG_INVALID);
  conf_refused(rig_buffer_write(NULL, noop_bytes, NULL), RIG_INVALID);
  conf_refused(rig_buffer_write(b, NULL, NULL), RIG_INVALID);
  conf_refused(rig_buffer_wait(NULL, RIG_READ), RIG_INVALID);
  assert_false(rig_buffer_reached(NULL, RIG_READ));
  conf_refused(rig_buffer_export(NULL, &bytes), RIG_INVALID);
  conf_refused(rig_buffer_export(b, NULL), RIG_INVALID);
  assert_ptr_equal(bytes, UNTOUCHED);
  conf_refused(rig_buffer_get(NULL, 0, tmp, 4), RIG_INVALID);
  conf_refused(rig_buffer_get(b, 0, NULL, 4), RIG_INVALID);
  conf_refused(rig_buffer_put(NULL, 0, tmp, 4), RIG_INVALID);
  conf_refused(rig_buffer_put(b, 0, NULL, 4), RIG_INVALID);
  conf_refused(rig_buffer_fill(NULL, 0, 1), RIG_INVALID);
  conf_refused(rig_buffer_copy(NULL, c), RIG_INVALID);
  conf_refused(rig_buffer_copy(b, NULL), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(NULL, c, &p), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(b, NULL, &p), RIG_INVALID);
  conf_refused(rig_buffer_submit_copy(b, c, NULL), RIG_INVALID);
  conf_refused(rig_buffer_submit_fill(NULL, 0, 1, &p), RIG_INVALID);
  conf_refused(rig_buffer_submit_fill(b, 0, 1, NULL), RIG_INVALID);
  assert_int_equal(p, NO_POINT);

  assert_int_equal(rig_device_budget(NULL), 0);
  assert_int_equal(rig_device_allocated(NULL), 0);
  conf_refused(rig_device_set_budget(NULL, 0), RIG_INVALID);
  conf_refused(rig_device_free_cache(NULL), RIG_INVALID);

  rig_part parts[2] = {rig_part_copy(0, 1), rig_part_fill(0, 0, 1)};
  rig_submission *sub = UNTOUCHED;
  conf_refused(rig_submission_make(NULL, parts, 1, &sub), RIG_INVALID);
  conf_refused(rig_submission_make(dev, NULL, 1, &sub), RIG_INVALID);
  conf_refused(rig_submission_make(dev, parts, 1, NULL), RIG_INVALID);
  assert_ptr_equal(sub, UNTOUCHED);
  assert_null(rig_submission_retain(NULL));
  rig_submission_release(NULL);
  assert_int_equal(rig_submission_slots(NULL), 0);
  assert_null(rig_run_submission(NULL));
  rig_run *run = UNTOUCHED;
  conf_refused(rig_submission_take(NULL, &run), RIG_INVALID);
  assert_ptr_equal(run, UNTOUCHED);

  conf_ok(conf_submission_make(dev, parts, 1, &sub)); /* a launch on the host (HOST-4) */
  conf_refused(rig_submission_take(sub, NULL), RIG_INVALID);
  conf_refused(rig_run_submit(NULL, (rig_buffer *const[]){b, c}, 2, NULL, 0, &p), RIG_INVALID);
  conf_ok(rig_submission_take(sub, &run));
  conf_run_set(run, parts, 1, (rig_buffer *const[]){b, c}, 2);
  conf_refused(rig_run_submit(run, NULL, 2, NULL, 0, &p), RIG_INVALID);
  conf_refused(rig_run_submit(run, (rig_buffer *const[]){b, NULL}, 2, NULL, 0, &p), RIG_INVALID);
  conf_refused(rig_run_submit(run, (rig_buffer *const[]){NULL, c}, 2, NULL, 0, &p), RIG_INVALID);
  conf_refused(rig_run_submit(run, (rig_buffer *const[]){b, c}, 2, NULL, 1, &p), RIG_INVALID);
  conf_refused(rig_run_submit(run, (rig_buffer *const[]){b, c}, 2, NULL, 0, NULL), RIG_INVALID);
  assert_int_equal(p, NO_POINT);
  rig_submission_release(sub);
  /* On the host the submission held its kernels' code (its parts are
   * launches, HOST-4), which the next move of the host's memory lets go
   * (RUN-8, RECLAIM-17). */
  if (conf_is_host())
    move_on(rig_device_host());

  expect_state(s);
  expect_seq(b, 17);
  expect_seq(c, 18);
  rig_buffer_release(c);
  rig_buffer_release(b);
}

/* ---- budgets -------------------------------------------------------------------- */

/* RECLAIM-65 RECLAIM-24 RECLAIM-68: the host's budget starts at INT64_MAX,
 * and a device holds no more than its budget. */
static void reclaim_65_24_68_budget_values(void **st) {
  assert_int_equal(rig_device_budget(rig_device_host()), (uint64_t)INT64_MAX);
  assert_true(rig_device_budget(dev) > 0);
  assert_true(rig_device_allocated(dev) <= rig_device_budget(dev));
  rig_buffer *b = mk(4096);
  assert_true(rig_device_allocated(dev) >= 4096);
  assert_true(rig_device_allocated(dev) <= rig_device_budget(dev));
  rig_buffer_release(b);
}

/* RECLAIM-69 RECLAIM-70 RECLAIM-71: set_budget refuses budgets negative as
 * an int64, changing nothing; a lower budget gives back cached memory until
 * the device holds at most it, and never live buffers. */
static void reclaim_69_70_71_set_budget(void **st) {
  uint64_t orig = rig_device_budget(dev);
  conf_refused(rig_device_set_budget(dev, (uint64_t)INT64_MAX + 1), RIG_INVALID);
  conf_refused(rig_device_set_budget(dev, UINT64_MAX), RIG_INVALID);
  assert_int_equal(rig_device_budget(dev), orig);

  conf_ok(rig_device_free_cache(dev));
  uint64_t base = rig_device_allocated(dev);
  rig_buffer *c = mk(65536);              /* kept by the host's cache too */
  uint64_t charge = rig_device_allocated(dev) - base;
  assert_true(charge >= 65536);
  rig_buffer_release(c);
  move_on(dev);
  assert_int_equal(rig_device_allocated(dev), base + charge);   /* cached */
  conf_ok(rig_device_set_budget(dev, base));                    /* RECLAIM-69 */
  assert_int_equal(rig_device_budget(dev), base);
  assert_int_equal(rig_device_allocated(dev), base);

  conf_ok(rig_device_set_budget(dev, orig));
  rig_buffer *live = mk(4096);
  put_seq(live, 19);
  uint64_t with = rig_device_allocated(dev);
  conf_ok(rig_device_set_budget(dev, 0));                       /* RECLAIM-70 */
  assert_int_equal(rig_device_budget(dev), 0);
  assert_int_equal(rig_device_allocated(dev), with);
  expect_seq(live, 19);
  conf_ok(rig_device_set_budget(dev, orig));
  assert_int_equal(rig_device_budget(dev), orig);
  rig_buffer_release(live);
}

/* RECLAIM-51 RECLAIM-77 ERR-1: on a driver's device, a create bigger than
 * the whole budget is RIG_OUT_OF_MEMORY at once, naming the device and the
 * bytes asked for, and leaves the cache alone. */
static void reclaim_51_77_create_bigger_than_budget(void **st) {
  if (conf_is_host())
    skip(); /* the host's budget is INT64_MAX: RECLAIM-51 names drivers' devices */
  conf_ok(rig_device_set_budget(dev, MiB));
  conf_ok(rig_device_free_cache(dev));
  rig_buffer *c = mk(256 * KiB);
  void *at = rig_buffer_host_address(c);
  rig_buffer_release(c);
  move_on(dev);
  uint64_t before = rig_device_allocated(dev);
  assert_true(before >= 256 * KiB);

  size_t asks[] = {MiB + 1, MiB + 4, 2 * MiB, (size_t)INT64_MAX, SIZE_MAX};
  for (size_t i = 0; i < sizeof asks / sizeof *asks; i++) {
    rig_buffer *big = UNTOUCHED;
    conf_refused(rig_buffer_create(dev, asks[i], &big), RIG_OUT_OF_MEMORY);
    assert_ptr_equal(big, UNTOUCHED);
    assert_int_equal(rig_error_last()->bytes, asks[i]);
    assert_true(rig_device_equal(rig_error_last()->device, dev));
    assert_int_equal(rig_device_allocated(dev), before);        /* the cache stays */
  }
  c = mk(256 * KiB);
  assert_int_equal(rig_device_allocated(dev), before);
  if (at)
    assert_ptr_equal(rig_buffer_host_address(c), at);
  rig_buffer_release(c);
}

/* RECLAIM-7 LIFE-5: a create after a release of the same size takes the
 * cached memory: nothing more is charged, the address is the same, and
 * its stamps are empty. (That it never waits for the memory's earlier
 * work, whose points here are all reached: tests/unit/test_held.c.) */
static void reclaim_7_create_reuses_cache(void **st) {
  size_t n = 65536; /* the host keeps buffers of 64 KiB and more (RECLAIM-47) */
  conf_ok(rig_device_free_cache(dev));
  rig_buffer *b = mk(n), *other = mk(n);
  void *at = rig_buffer_host_address(b);
  put_seq(other, 21);
  conf_ok(rig_buffer_copy(other, b));     /* b's memory has a point now */
  rig_buffer_release(b);
  uint64_t before = rig_device_allocated(dev);

  b = mk(n);
  assert_int_equal(rig_device_allocated(dev), before);
  if (at)
    assert_ptr_equal(rig_buffer_host_address(b), at);
  assert_true(rig_buffer_reached(b, RIG_READ_WRITE));
  rig_point sw = 1, su = 1;
  rig_buffer_stamps(b, dev, &sw, &su);
  assert_int_equal(sw, RIG_POINT_NONE);
  assert_int_equal(su, RIG_POINT_NONE);
  assert_int_equal(rig_buffer_length(b), n);
  assert_false(rig_buffer_dead(b));
  put_seq(b, 22);
  expect_seq(b, 22);
  expect_seq(other, 21);
  rig_buffer_release(other);
  rig_buffer_release(b);
}

/* RECLAIM-15 RECLAIM-16 RECLAIM-11 RECLAIM-47 RECLAIM-48 RECLAIM-70: a release
 * moves nothing; the next create or copy moves the collected memory, to the
 * driver where it is not kept: the host's small buffers, or any memory of a
 * device over its budget. The host keeps up to 32 MiB of large ones. */
static void reclaim_15_16_release_moves_nothing_create_and_copy_move(void **st) {
  rig_buffer *a = mk(16), *c = mk(16);
  put_seq(a, 23);
  conf_ok(rig_device_free_cache(dev));
  uint64_t base = rig_device_allocated(dev);
  rig_buffer *x = mk(1024);
  uint64_t charge = rig_device_allocated(dev) - base;
  assert_true(charge >= 1024);
  if (!conf_is_host())
    conf_ok(rig_device_set_budget(dev, base)); /* over budget from now on (RECLAIM-70) */
  assert_int_equal(rig_device_allocated(dev), base + charge);

  rig_buffer_release(x);
  assert_int_equal(rig_device_allocated(dev), base + charge);     /* RECLAIM-15 */
  conf_ok(rig_buffer_copy(a, c));                          /* RECLAIM-16 */
  assert_int_equal(rig_device_allocated(dev), base);              /* RECLAIM-47, 11 */
  expect_seq(c, 23);

  if (!conf_is_host())
    conf_ok(rig_device_set_budget(dev, dev_budget));
  x = mk(2048);
  charge = rig_device_allocated(dev) - base;
  if (!conf_is_host())
    conf_ok(rig_device_set_budget(dev, base));
  rig_buffer_release(x);
  assert_int_equal(rig_device_allocated(dev), base + charge);
  move_on(dev);                                            /* a create moves */
  assert_int_equal(rig_device_allocated(dev), base);

  if (conf_is_host()) {
    /* RECLAIM-47, RECLAIM-48: 8 buffers of 4 MiB, 32 MiB, are all kept. */
    rig_buffer *big[8];
    for (int i = 0; i < 8; i++)
      big[i] = mk(4 * MiB);
    uint64_t with = rig_device_allocated(dev);
    assert_true(with >= base + 32 * MiB);
    for (int i = 0; i < 8; i++)
      rig_buffer_release(big[i]);
    move_on(dev);
    assert_int_equal(rig_device_allocated(dev), with);
    for (int i = 0; i < 8; i++)
      big[i] = mk(4 * MiB);                                 /* all from the cache */
    assert_int_equal(rig_device_allocated(dev), with);
    for (int i = 0; i < 8; i++)
      rig_buffer_release(big[i]);
    conf_ok(rig_device_free_cache(dev));
    assert_int_equal(rig_device_allocated(dev), base);
  }
  rig_buffer_release(c);
  rig_buffer_release(a);
}

/* GRECL-3 GRECL-4 GRECL-5 GRECL-6 GRECL-7 RECLAIM-77: the guide's example: a
 * budget of 1 MiB; 100 buffers of 256 KiB, none kept, all succeed; 4 live
 * fill the budget, and a fifth is Out_of_memory (d, 262144). */
static void grecl_4_7_budget_example(void **st) {
  if (conf_is_host())
    skip(); /* the example's device is a memory device; the host's budget is INT64_MAX */
  conf_ok(rig_device_set_budget(dev, MiB));
  conf_ok(rig_device_free_cache(dev));
  assert_int_equal(rig_device_allocated(dev), 0); /* nothing of earlier tests lives */
  for (int i = 0; i < 100; i++) {
    rig_buffer *b = NULL;
    conf_ok(rig_buffer_create(dev, 256 * KiB, &b));         /* GRECL-4 */
    assert_true(rig_device_allocated(dev) <= MiB);
    rig_buffer_release(b);
  }
  rig_buffer *keep[4];
  for (int i = 0; i < 4; i++)
    keep[i] = mk(256 * KiB);
  if (is_memory())
    assert_int_equal(rig_device_allocated(dev), MiB);              /* GRECL-7 */
  rig_buffer *fifth = UNTOUCHED;
  conf_refused(rig_buffer_create(dev, 256 * KiB, &fifth), RIG_OUT_OF_MEMORY); /* GRECL-5 */
  assert_ptr_equal(fifth, UNTOUCHED);
  assert_int_equal(rig_error_last()->bytes, 262144);
  assert_true(rig_device_equal(rig_error_last()->device, dev));
  if (is_memory())
    assert_int_equal(rig_device_allocated(dev), MiB);
  for (int i = 0; i < 4; i++)
    rig_buffer_release(keep[i]);
  conf_ok(rig_buffer_create(dev, 256 * KiB, &fifth));       /* dropped: room again */
  rig_buffer_release(fifth);
}

/* ---- submissions ---------------------------------------------------------------- */

/* SUBS-1 SUBMIT-6 SUBMIT-7: a submission of a copy and a fill, made once,
 * submitted twice with other buffers; each submit's point is (d,
 * submitted d + 1), and slot i is buffers[i]. On the host, whose queue
 * runs only launches (HOST-4), the copy and the fill are launches. */
static void subs_1_submit_6_7_copy_and_fill(void **st) {
  rig_part parts[2] = {rig_part_copy(0, 1), rig_part_fill(2, 0xC0FFEE11, 4)};
  rig_submission *s = NULL;
  conf_ok(conf_submission_make(dev, parts, 2, &s));
  assert_non_null(s);
  assert_int_equal(rig_submission_slots(s), 3);
  assert_ptr_equal(rig_submission_retain(s), s);
  rig_submission_release(s);

  rig_buffer *a = mk(64), *b = mk(64), *c = mk(32);
  put_seq(a, 24);
  conf_ok(rig_buffer_fill(b, 0, 1));
  conf_ok(rig_buffer_fill(c, 0, 1));
  rig_run *r = NULL;
  conf_ok(rig_submission_take(s, &r));
  assert_non_null(r);
  assert_ptr_equal(rig_run_submission(r), s);
  uint64_t before = rig_device_submitted(dev);
  rig_point p = 0;
  conf_ok(conf_submit(r, parts, 2, (rig_buffer *const[]){a, b, c}, 3, NULL, 0, &p));
  assert_int_equal(rig_point_value(p), before + 1);               /* SUBMIT-6 */
  assert_int_equal(rig_device_submitted(dev), before + 1);
  expect_point_of_dev(p);
  conf_ok(rig_point_wait(p));
  expect_seq(b, 24);
  expect_all(c, 0xC0FFEE11, 4);
  expect_seq(a, 24);

  /* Slots follow the array (SUBMIT-7): b is now the source, a the copy. */
  put_seq(b, 25);
  rig_buffer *c2 = mk(32);
  conf_ok(rig_submission_take(s, &r));
  before = rig_device_submitted(dev); /* after the gets and put: staged copies take values */
  conf_ok(conf_submit(r, parts, 2, (rig_buffer *const[]){b, a, c2}, 3, NULL, 0, &p));
  assert_int_equal(rig_point_value(p), before + 1);
  conf_ok(rig_buffer_wait(a, RIG_READ));
  expect_seq(a, 25);
  expect_all(c2, 0xC0FFEE11, 4);

  rig_submission_release(s);
  rig_buffer_release(c2);
  rig_buffer_release(c);
  rig_buffer_release(b);
  rig_buffer_release(a);
}

/* VALID-8 VALID-2 VALID-11 ERR-1 HOST-4: make refuses sparse slots, no parts,
 * a fill of another pattern size and a part the device has no queue for.
 * On the host, whose queue runs only launches, every copy and fill part is
 * such a part (HOST-4); the slots and the count are checked there with the
 * same parts as launches (conf_submission_make). */
static void valid_8_2_11_make_refusals(void **st) {
  struct {
    rig_part parts[3];
    size_t n;
    bool slots; /* refused for its slots or count, whatever its parts are */
  } bad[] = {
      {{rig_part_copy(0, 2)}, 1, true},                           /* slot 1 unnamed */
      {{rig_part_fill(1, 0, 1)}, 1, true},                        /* slot 0 unnamed */
      {{rig_part_copy(0, 1), rig_part_fill(3, 0, 4)}, 2, true},   /* slot 2 unnamed */
      {{rig_part_copy(2, 0)}, 1, true},                           /* slot 1 unnamed */
      {{rig_part_fill(0, 0, 3)}, 1, false},                       /* pattern of 3 */
      {{rig_part_fill(0, 0, 0)}, 1, false},
      {{rig_part_copy(0, 1), rig_part_fill(0, 0, 8)}, 2, false},
      {{rig_part_copy(0, 0)}, 1, false},                          /* onto itself */
      {{rig_part_copy(0, 1)}, 0, true},                           /* no parts */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_submission *s = UNTOUCHED;
    conf_refused(rig_submission_make(dev, bad[i].parts, bad[i].n, &s), RIG_INVALID);
    assert_ptr_equal(s, UNTOUCHED);
    if (conf_is_host() && bad[i].n > 0) /* HOST-4: part 0 lacks a queue first */
      assert_non_null(strstr(rig_error_last()->message, "only launches"));
    if (conf_is_host() && bad[i].slots) { /* as launches: still refused (VALID-8) */
      conf_refused(conf_submission_make(dev, bad[i].parts, bad[i].n, &s), RIG_INVALID);
      assert_ptr_equal(s, UNTOUCHED);
    }
  }
  if (is_memory()) {
    /* A memory device has no queue for launches (OPEN-42, VALID-2). */
    rig_part launch = rig_part_launch(NULL, NULL, 0, 0);
    rig_submission *s = UNTOUCHED;
    conf_refused(rig_submission_make(dev, &launch, 1, &s), RIG_INVALID);
    assert_ptr_equal(s, UNTOUCHED);
  }
  /* Dense slots in any order are fine: on the host as launches, since the
   * copy and fills themselves lack a queue there (HOST-4). */
  rig_part ok[3] = {rig_part_fill(2, 0, 1), rig_part_copy(1, 0), rig_part_fill(1, 0, 2)};
  rig_submission *s = UNTOUCHED;
  if (conf_is_host()) {
    conf_refused(rig_submission_make(dev, ok, 3, &s), RIG_INVALID);
    assert_ptr_equal(s, UNTOUCHED);
  }
  s = NULL;
  conf_ok(conf_submission_make(dev, ok, 3, &s));
  assert_int_equal(rig_submission_slots(s), 3);
  rig_submission_release(s);
}

/* VALID-12 VALID-13 VALID-16 VALID-17 VALID-18 VALID-22 SUBMIT-27 SUBMIT-12
 * ERR-1: submits that break a rule are RIG_INVALID and run nothing; the run
 * is free again after each, and a copy between views that share a word but
 * no byte, or from a Read buffer, is fine. On the host the copy part has no
 * queue (HOST-4): the copy is a launch there, which the rules of a submit
 * bind as they bind any part, but not those of copies (VALID-17, 18). */
static void valid_12_13_16_17_18_submit_refusals(void **st) {
  rig_part copy = rig_part_copy(0, 1);
  rig_submission *s = UNTOUCHED;
  if (conf_is_host()) {
    conf_refused(rig_submission_make(dev, &copy, 1, &s), RIG_INVALID);
    assert_ptr_equal(s, UNTOUCHED);
  }
  s = NULL;
  conf_ok(conf_submission_make(dev, &copy, 1, &s));
  rig_buffer *a = mk(64), *b = mk(64), *shorter = mk(32), *dead = mk(64);
  put_seq(a, 26);
  put_seq(b, 27);
  put_seq(shorter, 28);
  rig_buffer *ro = view(b, 0, 64, RIG_READ);
  rig_buffer *ov1 = view(a, 0, 8, RIG_READ_WRITE), *ov2 = view(a, 4, 8, RIG_READ_WRITE);
  rig_buffer *w1 = view(a, 0, 2, RIG_READ_WRITE), *w2 = view(a, 2, 2, RIG_READ_WRITE);
  conf_ok(rig_buffer_free(dead));
  state st0 = snapshot();

  rig_run *r = NULL;
  conf_ok(rig_submission_take(s, &r));
  struct {
    rig_buffer *bufs[3];
    size_t n;
    bool copies; /* a rule of copies only */
  } bad[] = {
      {{a}, 1, 0},            {{a, b, a}, 3, 0},  {{0}, 0, 0},       /* VALID-12 */
      {{dead, b}, 2, 0},      {{a, dead}, 2, 0},                     /* VALID-13 */
      {{a, ro}, 2, 0},                                               /* VALID-16 */
      {{a, shorter}, 2, 1},   {{shorter, a}, 2, 1},                  /* VALID-17 */
      {{ov1, ov2}, 2, 1},     {{ov2, ov1}, 2, 1}, {{a, a}, 2, 1},    /* VALID-18 */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_point p = NO_POINT;
    if (conf_is_host() && bad[i].copies)
      continue;
    /* The same run each time: the failed submit freed it (SUBMIT-12), and
     * submit takes a free run on its own (SUBMIT-14). */
    conf_run_set(r, &copy, 1, bad[i].bufs, bad[i].n);
    conf_refused(rig_run_submit(r, bad[i].bufs, bad[i].n, NULL, 0, &p), RIG_INVALID);
    assert_int_equal(p, NO_POINT);
  }
  expect_state(st0);
  expect_seq(a, 26);
  expect_seq(b, 27);
  expect_seq(shorter, 28);

  /* A run taken after the refusals, and the refused run itself, submit. */
  rig_point p = 0;
  uint64_t before = rig_device_submitted(dev); /* after the gets: staged copies take values */
  conf_ok(rig_submission_take(s, &r));
  conf_ok(conf_submit(r, &copy, 1, (rig_buffer *const[]){w1, w2}, 2, NULL, 0, &p)); /* WORD-5 */
  assert_int_equal(rig_point_value(p), before + 1);
  conf_ok(conf_submit(r, &copy, 1, (rig_buffer *const[]){ro, a}, 2, NULL, 0, &p)); /* Read source */
  assert_int_equal(rig_point_value(p), before + 2);
  conf_ok(rig_buffer_wait(a, RIG_READ));
  expect_seq(a, 27);
  expect_seq(b, 27);

  rig_buffer *vs[] = {w2, w1, ov2, ov1, ro, dead, shorter, b, a};
  for (size_t i = 0; i < sizeof vs / sizeof *vs; i++)
    rig_buffer_release(vs[i]);
  rig_submission_release(s);
}

/* SUBMIT-12 SUBMIT-14: a run is free once submit returns, with or without
 * success; submit takes a free run on its own; and a run is never handed
 * out twice: two takes give two runs. */
static void submit_12_14_run_reusable_after_submit(void **st) {
  rig_part copy = rig_part_copy(0, 1);                      /* a launch on the host */
  rig_submission *s = NULL;
  conf_ok(conf_submission_make(dev, &copy, 1, &s));
  rig_buffer *a = mk(16), *b = mk(16);
  put_seq(a, 29);
  rig_buffer *const bufs[2] = {a, b};
  rig_run *r = NULL;
  rig_point p = 0;
  uint64_t before = rig_device_submitted(dev);

  conf_ok(rig_submission_take(s, &r));
  conf_ok(conf_submit(r, &copy, 1, bufs, 2, NULL, 0, &p));
  assert_int_equal(rig_point_value(p), before + 1);
  conf_ok(conf_submit(r, &copy, 1, bufs, 2, NULL, 0, &p)); /* free: taken again */
  assert_int_equal(rig_point_value(p), before + 2);
  conf_refused(conf_submit(r, &copy, 1, bufs, 1, NULL, 0, &p), RIG_INVALID);
  conf_ok(conf_submit(r, &copy, 1, bufs, 2, NULL, 0, &p)); /* after a failure */
  assert_int_equal(rig_point_value(p), before + 3);

  rig_run *x = NULL, *y = NULL;
  conf_ok(rig_submission_take(s, &x));
  conf_ok(rig_submission_take(s, &y));
  assert_ptr_not_equal(x, y);
  conf_ok(conf_submit(x, &copy, 1, bufs, 2, NULL, 0, &p));
  assert_int_equal(rig_point_value(p), before + 4);
  conf_ok(conf_submit(y, &copy, 1, bufs, 2, NULL, 0, &p));
  assert_int_equal(rig_point_value(p), before + 5);
  conf_ok(rig_buffer_wait(b, RIG_READ));
  expect_seq(b, 29);

  rig_buffer_release(b);
  rig_buffer_release(a);
  rig_submission_release(s);
}

typedef struct taker {
  rig_part copy;
  rig_submission *s;
  rig_run *r;
  rig_buffer *bufs[2];
  sem_t taken, go;
  rig_status took, submitted;
  rig_point p;
} taker;

static void *take_then_submit(void *arg) {
  taker *t = arg;
  t->took = rig_submission_take(t->s, &t->r);
  if (t->took == RIG_OK) /* a launch's blocks on the host (HOST-4) */
    conf_run_set(t->r, &t->copy, 1, t->bufs, 2);
  sem_post(&t->taken);
  sem_wait(&t->go);
  t->submitted = rig_run_submit(t->r, t->bufs, 2, NULL, 0, &t->p);
  return NULL;
}

/* SUBMIT-25 ERR-1: a run another thread took is RIG_INVALID from this
 * thread, runs nothing, and stays that thread's, which then submits it. */
static void submit_25_run_taken_by_another_thread(void **st) {
  taker t;
  memset(&t, 0, sizeof t);
  t.copy = rig_part_copy(0, 1);                                /* a launch on the host */
  conf_ok(conf_submission_make(dev, &t.copy, 1, &t.s));
  t.bufs[0] = mk(16);
  t.bufs[1] = mk(16);
  put_seq(t.bufs[0], 30);
  put_seq(t.bufs[1], 31);
  assert_int_equal(sem_init(&t.taken, 0, 0), 0);
  assert_int_equal(sem_init(&t.go, 0, 0), 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, take_then_submit, &t), 0);
  sem_wait(&t.taken);
  rig_status took = t.took;
  state s = snapshot();
  rig_point p = NO_POINT;
  rig_status mine = took == RIG_OK ? rig_run_submit(t.r, t.bufs, 2, NULL, 0, &p) : RIG_OK;
  state after = snapshot();
  unsigned char *bytes = bytes_of(t.bufs[1]);
  uint64_t before = rig_device_submitted(dev); /* after the get: a staged copy takes a value */
  sem_post(&t.go);
  pthread_join(th, NULL);

  conf_ok(took);
  conf_refused(mine, RIG_INVALID);
  assert_int_equal(p, NO_POINT);
  assert_memory_equal(&after, &s, sizeof s);
  for (size_t i = 0; i < 16; i++)
    assert_int_equal(bytes[i], seq(31, i));
  free(bytes);
  conf_ok(t.submitted);                                   /* still the thread's */
  assert_int_equal(rig_point_value(t.p), before + 1);
  conf_ok(rig_buffer_wait(t.bufs[1], RIG_READ));
  expect_seq(t.bufs[1], 30);

  sem_destroy(&t.go);
  sem_destroy(&t.taken);
  rig_buffer_release(t.bufs[1]);
  rig_buffer_release(t.bufs[0]);
  rig_submission_release(t.s);
}

/* SUBMIT-9 ORDER-10: a submit's waits may name points of other devices: a
 * second memory device's and the host's. */
static void submit_9_waits_on_other_devices(void **st) {
  rig_device *other = NULL;
  conf_ok(rig_device_open_memory("conformance-waits", &other));
  assert_false(rig_device_equal(other, dev));
  rig_buffer *o = mk_on(other, 16), *h1 = mk_on(rig_device_host(), 16), *h2 = mk_on(rig_device_host(), 16);
  rig_point waits[2] = {0, 0};
  conf_ok(rig_buffer_submit_fill(o, 0x42, 1, &waits[0]));
  rig_device *pd = rig_point_device(waits[0]);
  assert_true(rig_device_equal(pd, other));
  rig_device_release(pd);
  put_seq(h1, 32);
  conf_ok(rig_buffer_submit_copy(h1, h2, &waits[1]));    /* the host's work */
  pd = rig_point_device(waits[1]);
  assert_true(rig_device_equal(pd, rig_device_host()));
  rig_device_release(pd);

  rig_part fill = rig_part_fill(0, 0x77, 1);                  /* a launch on the host */
  rig_submission *s = NULL;
  conf_ok(conf_submission_make(dev, &fill, 1, &s));
  rig_buffer *b = mk(16);
  rig_run *r = NULL;
  conf_ok(rig_submission_take(s, &r));
  uint64_t before = rig_device_submitted(dev);
  rig_point p = 0;
  conf_ok(conf_submit(r, &fill, 1, (rig_buffer *const[]){b}, 1, waits, 2, &p));
  assert_int_equal(rig_point_value(p), before + 1);
  expect_point_of_dev(p);
  assert_true(rig_point_reached(waits[0]));
  assert_true(rig_point_reached(waits[1]));
  conf_ok(rig_point_wait(p));
  expect_all(b, 0x77, 1);
  expect_all(o, 0x42, 1);
  expect_seq(h2, 32);

  rig_submission_release(s);
  rig_buffer_release(b);
  rig_buffer_release(h2);
  rig_buffer_release(h1);
  rig_buffer_release(o);
  rig_device_release(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pre_33_hello_put_then_get),
      cmocka_unit_test(pre_14_word_6_prop_28_create_sizes),
      cmocka_unit_test(word_6_reclaim_25_68_allocated_whole_words),
      cmocka_unit_test(pre_14_create_kind),
      cmocka_unit_test(life_2_view_ranges),
      cmocka_unit_test(buf_3_read_view_refuses_writes),
      cmocka_unit_test(life_2_3_retain_release_views_keep_allocation),
      cmocka_unit_test(life_1_reclaim_4_pre_28_free_kills_buffer_and_views),
      cmocka_unit_test(hacc_2_read_write_callbacks_see_bytes_in_place),
      cmocka_unit_test(order_14_34_wait_read_and_read_write),
      cmocka_unit_test(hacc_3_export_holds_a_reference),
      cmocka_unit_test(hacc_5_get_put_range_errors),
      cmocka_unit_test(hacc_5_fill_patterns),
      cmocka_unit_test(order_15_stamp_11_copy_within_device),
      cmocka_unit_test(tl_3_order_15_copy_device_and_host_both_ways),
      cmocka_unit_test(valid_17_18_word_5_copy_refusals),
      cmocka_unit_test(word_3_5_overlap_vs_share_byte),
      cmocka_unit_test(pre_28_null_pointers_are_refused),
      cmocka_unit_test(reclaim_65_24_68_budget_values),
      cmocka_unit_test_teardown(reclaim_69_70_71_set_budget, restore_budgets),
      cmocka_unit_test_teardown(reclaim_51_77_create_bigger_than_budget, restore_budgets),
      cmocka_unit_test_teardown(reclaim_7_create_reuses_cache, restore_budgets),
      cmocka_unit_test_teardown(reclaim_15_16_release_moves_nothing_create_and_copy_move,
                                restore_budgets),
      cmocka_unit_test_teardown(grecl_4_7_budget_example, restore_budgets),
      cmocka_unit_test(subs_1_submit_6_7_copy_and_fill),
      cmocka_unit_test(valid_8_2_11_make_refusals),
      cmocka_unit_test(valid_12_13_16_17_18_submit_refusals),
      cmocka_unit_test(submit_12_14_run_reusable_after_submit),
      cmocka_unit_test(submit_25_run_taken_by_another_thread),
      cmocka_unit_test(submit_9_waits_on_other_devices),
  };
  return cmocka_run_group_tests_name(conf_name(), tests, group_setup, group_teardown);
}
