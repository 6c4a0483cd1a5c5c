/* test_stamps_guide.c: the memory guide's "Stamps through one program",
 * cell by cell (STAMP-1..18), and borrows (MACH-22..25, RECLAIM-60..63,
 * RECLAIM-79).
 *
 * d stands for a GPU whose memory the host does not address and which maps
 * host memory, as a CUDA GPU does: the test device opened with host=0. H is
 * the host buffer's allocation, X that of x on d. The launch `double` comes
 * with the host-code issue; a submission that reads and writes X, as the
 * launch does, stands for it here, so every stamp of the table is the
 * guide's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "util.h"

#define N 16384 /* floats: H is 64 KiB, so it starts on a page (MACH-23) */
#define BYTES (4 * N)

static rig_device *open_gpu(const char *name) {
  rig_device *d;
  ok(rig_open(name, &d));
  return d;
}

/* Asserts the stamps of b's allocation for d: "last write; use by d". */
static void cell(rig_buffer *b, rig_device *d, uint64_t write, uint64_t use) {
  rig_point w, u;
  rig_buffer_stamps(b, d, &w, &u);
  assert_int_equal(w ? rig_point_value(w) : 0, write);
  assert_int_equal(u ? rig_point_value(u) : 0, use);
}

static rig_submission *launch_double(rig_device *d) {
  rig_part part = rig_part_copy(0, 1); /* reads and writes X, as `double` does */
  rig_submission *s;
  ok(rig_submission_make(d, &part, 1, &s));
  return s;
}

/* The stand-in launch of `double` on x: a copy of its first half onto its
 * second, through views, so that it reads and writes X as the launch does. */
typedef struct launched {
  rig_submission *dbl;
  rig_buffer *lo, *hi;
  rig_point point;
} launched;

static launched launch_on(rig_device *d, rig_buffer *x) {
  launched l = {launch_double(d), NULL, NULL, RIG_POINT_NONE};
  rig_run *run;
  ok(rig_buffer_view(x, 0, BYTES / 2, RIG_READ_WRITE, &l.lo));
  ok(rig_buffer_view(x, BYTES / 2, BYTES / 2, RIG_READ_WRITE, &l.hi));
  ok(rig_submission_take(l.dbl, &run));
  rig_buffer *bufs[2] = {l.lo, l.hi};
  ok(rig_submit(run, bufs, 2, NULL, 0, &l.point));
  return l;
}

static void launched_release(launched *l) {
  rig_submission_release(l->dbl);
  rig_buffer_release(l->lo);
  rig_buffer_release(l->hi);
}

/* STAMP-1..14: the quick start on d, both copies through staging. */
static void stamp_1_14_the_table_through_staging(void **state) {
  rig_device *d = open_gpu("test:stamps-gpu,host=0,delay_us=2000");
  uint64_t s = rig_submitted(d), hs = rig_submitted(rig_host());
  rig_stats before, after;
  static float a[N];
  for (int i = 0; i < N; i++)
    a[i] = i == 0 ? 65535.f : (float)i;
  rig_buffer *host, *x;
  ok(rig_buffer_create(rig_host(), BYTES, &host));            /* STAMP-3 */
  ok(rig_buffer_put(host, 0, a, BYTES));                      /* STAMP-2: no value */
  assert_int_equal(rig_submitted(d), s);
  assert_int_equal(rig_submitted(rig_host()), hs);
  cell(host, d, 0, 0);
  ok(rig_buffer_create(d, BYTES, &x));                        /* STAMP-4 */
  assert_null(rig_buffer_host_address(x)); /* the host does not address X */
  cell(host, d, 0, 0);
  cell(x, d, 0, 0);
  rig_device_stats(d, &before);
  ok(rig_buffer_copy(host, x));                               /* STAMP-5, STAMP-1 */
  rig_device_stats(d, &after);
  assert_int_equal(rig_submitted(d), s + 1);
  assert_int_equal(rig_submitted(rig_host()), hs);            /* STAMP-2 */
  assert_true(rig_point_reached(rig_device_point(d, s + 1))); /* STAMP-11 */
  assert_int_equal(after.queue_waits + after.host_waits,
                   before.queue_waits + before.host_waits);   /* STAMP-8 */
  cell(host, d, 0, 0);
  cell(x, d, s + 1, s + 1);
  launched l = launch_on(d, x);                               /* STAMP-6, STAMP-9 */
  rig_point launch = l.point;
  assert_int_equal(rig_point_value(launch), s + 2);
  cell(host, d, 0, 0);
  cell(x, d, s + 2, s + 2);
  ok(rig_point_wait(launch));                                 /* STAMP-12 */
  assert_true(rig_point_reached(launch));
  static float back[N];
  ok(rig_buffer_copy(x, host));                               /* STAMP-7, STAMP-10 */
  assert_int_equal(rig_submitted(d), s + 3);
  assert_true(rig_point_reached(rig_device_point(d, s + 3)));
  cell(host, d, 0, 0);
  cell(x, d, s + 2, s + 3);
  ok(rig_buffer_get(host, 0, back, BYTES));
  assert_true(back[0] == 65535.f);
  assert_true(back[N / 2] == a[0]); /* the stand-in copied the first half */
  launched_release(&l);
  uint64_t allocated = rig_allocated(d);
  rig_buffer_release(x);                                      /* STAMP-13 */
  rig_buffer *again;
  ok(rig_buffer_create(d, BYTES, &again)); /* moves X into the cache, then reuses it */
  assert_int_equal(rig_allocated(d), allocated);
  rig_buffer_release(again);
  /* STAMP-14: no device maps H, so once released it returns at once: to
   * the host's reuse cache (64 KiB or more, RECLAIM-47), which frees it. */
  uint64_t host_allocated = rig_allocated(rig_host());
  rig_buffer_release(host);
  ok(rig_free_cache(rig_host()));
  assert_int_equal(rig_allocated(rig_host()), host_allocated - BYTES);
  ok(rig_close(d));
  rig_device_release(d);
}

/* STAMP-15, STAMP-16, STAMP-17: the same program through a borrow of H on
 * d: d's copy engine reads and writes H in place, H takes d's points, and
 * d gives its mapping back once the borrow is gone and d ran the work. */
static void stamp_15_17_the_table_through_a_borrow(void **state) {
  rig_device *d = open_gpu("test:stamps-borrow,host=0,delay_us=2000");
  uint64_t s = rig_submitted(d);
  rig_buffer *host, *hb, *x;
  ok(rig_buffer_create(rig_host(), BYTES, &host));
  ok(rig_buffer_fill(host, 0x3f800000, 4)); /* 1.0f */
  ok(rig_buffer_create(d, BYTES, &x));
  ok(rig_buffer_borrow(d, host, &hb));                        /* STAMP-15 */
  assert_ptr_equal(rig_buffer_device(hb), d);
  rig_stats st;
  rig_device_stats(d, &st);
  assert_int_equal(st.borrow_mappings, 1);
  ok(rig_buffer_copy(hb, x));
  cell(host, d, 0, s + 1);                                    /* H: none; d:1 */
  cell(x, d, s + 1, s + 1);
  ok(rig_buffer_fill(x, 0x40000000, 4));                      /* 2.0f: the "launch" */
  cell(x, d, s + 2, s + 2);
  ok(rig_buffer_copy(x, hb));
  cell(host, d, s + 3, s + 3);                                /* STAMP-16 */
  cell(x, d, s + 2, s + 3);
  float f;
  ok(rig_buffer_get(host, 0, &f, 4));
  assert_true(f == 2.0f);
  rig_point p;
  ok(rig_buffer_submit_fill(x, 0, 4, &p)); /* work after the borrow's last use */
  rig_buffer_release(hb);
  ok(rig_free_cache(d));                                      /* STAMP-17: moves d's memory */
  rig_device_stats(d, &st);
  assert_int_equal(st.borrow_mappings, rig_point_reached(p) ? 0 : 1);
  ok(rig_point_wait(p));
  ok(rig_free_cache(d));
  rig_device_stats(d, &st);
  assert_int_equal(st.borrow_mappings, 0);
  rig_buffer_release(x);
  rig_buffer_release(host);
  ok(rig_close(d));
  rig_device_release(d);
}

/* STAMP-18: where the host addresses d's memory (as on Metal), the host
 * runs both copies, which take no value; the launch is d:1, X's only write
 * and use; H gets no point. */
static void stamp_18_host_addressed_device(void **state) {
  rig_device *d = open_gpu("test:stamps-metal,host=1,delay_us=2000");
  uint64_t s = rig_submitted(d), hs = rig_submitted(rig_host());
  rig_buffer *host, *x;
  ok(rig_buffer_create(rig_host(), BYTES, &host));
  ok(rig_buffer_create(d, BYTES, &x));
  ok(rig_buffer_copy(host, x));
  assert_int_equal(rig_submitted(d), s);
  assert_int_equal(rig_submitted(rig_host()), hs);
  launched l = launch_on(d, x);
  assert_int_equal(rig_point_value(l.point), s + 1);
  ok(rig_buffer_copy(x, host)); /* follows the launch, takes no value */
  assert_int_equal(rig_submitted(d), s + 1);
  assert_int_equal(rig_submitted(rig_host()), hs);
  cell(x, d, s + 1, s + 1);
  cell(host, d, 0, 0);
  launched_release(&l);
  rig_buffer_release(x);
  rig_buffer_release(host);
  ok(rig_close(d));
  rig_device_release(d);
}

/* MACH-22..25: what a borrow may map. */
static void mach_22_25_what_a_borrow_maps(void **state) {
  rig_device *gpu = open_gpu("test:borrow-rules,host=0"), *m;
  ok(rig_memory_device("borrow-rules", &m));
  rig_buffer *small, *paged, *on_m, *b = NULL;
  rig_buffer *spare[8] = {0}; /* the C library may hand out a page: take another */
  ok(rig_buffer_create(rig_host(), 1000, &small));   /* starts on 128 bytes, not a page */
  for (int i = 0; i < 8 && (uintptr_t)rig_buffer_host_address(small) % 4096 == 0; i++) {
    spare[i] = small;
    ok(rig_buffer_create(rig_host(), 1000, &small));
  }
  assert_int_not_equal((uintptr_t)rig_buffer_host_address(small) % 4096, 0);
  ok(rig_buffer_create(rig_host(), 65536, &paged));
  ok(rig_buffer_create(m, 65536, &on_m)); /* on a page */
  assert_int_equal(rig_buffer_borrow(gpu, small, &b), RIG_INVALID); /* MACH-25 */
  assert_non_null(strstr(rig_last_error()->message, "off a page"));
  assert_null(b);
  ok(rig_buffer_borrow(gpu, paged, &b));                             /* MACH-23 */
  rig_buffer_release(b);
  ok(rig_buffer_borrow(m, small, &b));                               /* MACH-24 */
  rig_buffer_release(b);
  ok(rig_buffer_borrow(rig_host(), small, &b));                      /* MACH-24 */
  rig_buffer_release(b);
  ok(rig_buffer_borrow(gpu, on_m, &b)); /* MACH-22: gpu reaches memory devices (MACH-15) */
  rig_buffer_release(b);
  rig_buffer *on_gpu;
  ok(rig_buffer_create(gpu, 64, &on_gpu));
  assert_int_equal(rig_buffer_borrow(m, on_gpu, &b), RIG_INVALID);  /* MACH-20 */
  rig_buffer_release(on_gpu);
  rig_buffer_release(small);
  for (int i = 0; i < 8; i++)
    rig_buffer_release(spare[i]);
  rig_buffer_release(paged);
  rig_buffer_release(on_m);
  ok(rig_close(gpu));
  rig_device_release(gpu);
  ok(rig_close(m));
  rig_device_release(m);
}

/* RECLAIM-60..63, RECLAIM-79: a mapping the driver has no room for returns
 * mappings once and asks again, then is Out_of_memory for the bytes. */
static void reclaim_60_63_79_mapping_refused(void **state) {
  rig_device *d = open_gpu("test:borrow-room,host=0,map_limit=65536");
  rig_buffer *h1, *h2, *b1, *b2 = NULL;
  ok(rig_buffer_create(rig_host(), 65536, &h1));
  ok(rig_buffer_create(rig_host(), 65536, &h2));
  ok(rig_buffer_borrow(d, h1, &b1));
  assert_int_equal(rig_buffer_borrow(d, h2, &b2), RIG_OUT_OF_MEMORY);   /* RECLAIM-63 */
  assert_int_equal(rig_last_error()->bytes, 65536);                     /* RECLAIM-79 */
  assert_ptr_equal(rig_last_error()->device, d);
  assert_null(b2);
  rig_buffer_release(b1); /* gone, its work done: the round gives it back */
  ok(rig_buffer_borrow(d, h2, &b2));                                    /* RECLAIM-60, 61 */
  rig_buffer_release(b2);
  rig_buffer_release(h1);
  rig_buffer_release(h2);
  ok(rig_close(d));
  rig_device_release(d);
}

/* The guide's program up to its launch on a slow d whose third submit
 * faults: H written by the host, X copied to d (d:1, reached), the launch
 * (d:2, not reached when d is lost). */
struct lossy {
  rig_device *d;
  rig_buffer *host, *x;
  launched l;
  rig_point launch;
};

static void run_until_loss(struct lossy *t, const char *name, bool borrow) {
  static float a[N];
  for (int i = 0; i < N; i++)
    a[i] = 65535.f;
  t->d = open_gpu(name);
  ok(rig_buffer_create(rig_host(), BYTES, &t->host));
  ok(rig_buffer_put(t->host, 0, a, BYTES));
  ok(rig_buffer_create(t->d, BYTES, &t->x));
  rig_buffer *hb = NULL;
  if (borrow)
    ok(rig_buffer_borrow(t->d, t->host, &hb));
  ok(rig_buffer_copy(borrow ? hb : t->host, t->x));          /* d:1, reached */
  if (hb)
    rig_buffer_release(hb);
  t->l = launch_on(t->d, t->x);                               /* d:2, slow */
  t->launch = t->l.point;
}

static void lossy_done(struct lossy *t) {
  launched_release(&t->l);
  rig_buffer_release(t->x);
  rig_buffer_release(t->host);
  ok(rig_close(t->d));
  rig_device_release(t->d);
}

struct readback {
  float first;
};
static void read_first(void *bytes, size_t n, void *ctx) {
  ((struct readback *)ctx)->first = ((float *)bytes)[0];
}

static void keep_nothing(rig_claim *c, rig_buffer *b, void *ctx) { *(bool *)ctx = true; }

/* STAMP-19..24: d lost after the launch was submitted, with d:1 reached and
 * d:2 not. */
static void stamp_19_24_lost_after_the_launch(void **state) {
  struct lossy t;
  run_until_loss(&t, "test:stamps-lost-a,host=0,delay_us=300000,fault_nth=3", false);
  rig_buffer *extra;
  ok(rig_buffer_create(t.d, 64, &extra));
  rig_point p;
  assert_int_equal(rig_buffer_submit_fill(extra, 0, 1, &p), RIG_LOST); /* the loss */
  rig_buffer_release(extra);
  assert_int_equal(rig_point_wait(t.launch), RIG_LOST);                /* STAMP-19 */
  assert_non_null(strstr(rig_last_error()->message, "lost: injected fault"));
  assert_int_equal(rig_buffer_copy(t.x, t.host), RIG_LOST);            /* STAMP-20 */
  float f = 0;
  ok(rig_buffer_get(t.host, 0, &f, 4));                                /* STAMP-21 */
  assert_true(f == 65535.f);
  struct readback r = {0};
  ok(rig_buffer_read(t.host, read_first, &r));                         /* STAMP-22 */
  assert_true(r.first == 65535.f);
  ok(rig_buffer_put(t.host, 0, &f, 4));                                /* STAMP-23 */
  bool ran = false;
  ok(rig_claim_with(t.host, keep_nothing, &ran));
  assert_true(ran);
  assert_int_equal(rig_buffer_get(t.x, 0, &f, 4), RIG_LOST);           /* STAMP-24 */
  assert_int_equal(rig_buffer_fill(t.x, 0, 1), RIG_LOST);
  rig_device *d = rig_device_retain(t.d);
  lossy_done(&t);
  ok(rig_free_cache(d));
  assert_int_equal(rig_allocated(d), 0); /* X returned once d stopped */
  rig_device_release(d);
}

/* STAMP-25: lost during the copy back: the copy raises Lost before the
 * host moves any byte into H, which keeps the values the host wrote. */
static void stamp_25_lost_during_the_copy_back(void **state) {
  struct lossy t;
  run_until_loss(&t, "test:stamps-lost-b,host=0,delay_us=100000,fault_nth=3", false);
  assert_int_equal(rig_buffer_copy(t.x, t.host), RIG_LOST); /* its d:3 faults */
  float f = 0;
  ok(rig_buffer_get(t.host, 0, &f, 4));
  assert_true(f == 65535.f);
  lossy_done(&t);
}

/* STAMP-26, STAMP-27: had the copy back named a borrow of H, H's last
 * write would be d:3, never reached: every read and write of H raises Lost
 * for good; an export made before reads whatever is there, unchecked. */
static void stamp_26_27_lost_copy_back_through_a_borrow(void **state) {
  struct lossy t;
  run_until_loss(&t, "test:stamps-lost-c,host=0,delay_us=100000,fault_nth=3", true);
  void *exported;
  ok(rig_buffer_export(t.host, &exported));
  rig_buffer *hb;
  ok(rig_buffer_borrow(t.d, t.host, &hb));
  assert_int_equal(rig_buffer_copy(t.x, hb), RIG_LOST); /* d:3 refused: H's write */
  rig_buffer_release(hb);
  float f = 0;
  assert_int_equal(rig_buffer_get(t.host, 0, &f, 4), RIG_LOST);
  assert_int_equal(rig_buffer_put(t.host, 0, &f, 4), RIG_LOST);
  float seen = ((volatile float *)exported)[0];                       /* STAMP-27 */
  /* Old, the lost work's, or a mix: here the refused copy wrote nothing,
   * so the bytes are the host's, read with no check of the loss. */
  assert_true(seen == 65535.f);
  rig_buffer_release(t.host); /* the export's reference */
  rig_buffer_retain(t.host);
  ok(rig_close(t.d));
  assert_int_equal(rig_buffer_get(t.host, 0, &f, 4), RIG_LOST); /* for good */
  lossy_done(&t);
}

/* STAMP-28, LMEM-13, LMEM-14: memory the lost device only read, with that
 * read unreached, still serves reads, and raises Lost for the uses that
 * depend on every point until the device has stopped. */
static void stamp_28_memory_only_read_by_the_lost_device(void **state) {
  rig_device *d = open_gpu("test:stamps-lost-d,host=0,delay_us=300000,fault_nth=2");
  rig_buffer *host, *hb, *x;
  ok(rig_buffer_create(rig_host(), BYTES, &host));
  ok(rig_buffer_fill(host, 7, 1));
  ok(rig_buffer_create(d, BYTES, &x));
  ok(rig_buffer_borrow(d, host, &hb));
  rig_point p;
  ok(rig_buffer_submit_copy(hb, x, &p));         /* d reads H, slowly */
  assert_int_equal(rig_buffer_fill(x, 0, 1), RIG_LOST); /* the second submit faults */
  uint8_t byte = 0;
  ok(rig_buffer_get(host, 0, &byte, 1));         /* a read: still served */
  assert_int_equal(byte, 7);
  assert_int_equal(rig_buffer_put(host, 0, &byte, 1), RIG_LOST); /* depends on every point */
  rig_buffer_release(hb);
  ok(rig_close(d));                              /* stopped: the read counts as done */
  ok(rig_buffer_put(host, 0, &byte, 1));
  rig_buffer_release(x);
  rig_buffer_release(host);
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stamp_1_14_the_table_through_staging),
      cmocka_unit_test(stamp_15_17_the_table_through_a_borrow),
      cmocka_unit_test(stamp_18_host_addressed_device),
      cmocka_unit_test(mach_22_25_what_a_borrow_maps),
      cmocka_unit_test(reclaim_60_63_79_mapping_refused),
      cmocka_unit_test(stamp_19_24_lost_after_the_launch),
      cmocka_unit_test(stamp_25_lost_during_the_copy_back),
      cmocka_unit_test(stamp_26_27_lost_copy_back_through_a_borrow),
      cmocka_unit_test(stamp_28_memory_only_read_by_the_lost_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
