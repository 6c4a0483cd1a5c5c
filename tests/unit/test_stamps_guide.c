/* test_stamps_guide.c: the memory guide's "Stamps through one program",
 * cell by cell (STAMP-1..18), and borrows (MACH-22..25, RECLAIM-60..63,
 * RECLAIM-79).
 *
 * d stands for a GPU whose memory the host does not address and which maps
 * host memory, as a CUDA GPU does: the test device opened with host=0, or
 * the device RIG_STAMPS_DEVICE names, such as "vulkan:0,host=0" (the suite
 * runs it as stamps-guide-vulkan), which then skips (77) where it does not
 * open. H is the host buffer's allocation, X that of x on d. On a Vulkan
 * device the launch is `double` itself (tests/kernels/vulkan/double.comp,
 * from $RIG_KERNELS); the test device loads no code, so a submission that
 * reads and writes X, as the launch does, stands for it there. Either way
 * every stamp of the table is the guide's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "child.h"
#include "util.h"

#define N 16384 /* floats: H is 64 KiB, so it starts on a page (MACH-23) */
#define BYTES (4 * N)
#define GROUP 64 /* threads of a group of `double` */

/* The device under test: NULL for the test device, else its name. */
static const char *under_test;

/* The name to open d by: the test device "test:LABEL,host=0" with
 * test_options (its delays), or RIG_STAMPS_DEVICE; either with options
 * (fault_nth=N, which both take) appended. */
static const char *gpu_name(const char *label, const char *test_options, const char *options) {
  static char name[256];
  if (under_test)
    snprintf(name, sizeof name, "%s%s", under_test, options);
  else
    snprintf(name, sizeof name, "test:%s,host=0%s%s", label, test_options, options);
  return name;
}

static rig_device *open_gpu(const char *label, const char *test_options, const char *options) {
  rig_device *d;
  ok(rig_device_open(gpu_name(label, test_options, options), &d));
  return d;
}

/* Whether d runs `double` itself: a Vulkan device. */
static bool on_cuda(void) { return under_test && strncmp(under_test, "cuda:", 5) == 0; }
static bool on_amdgpu(void) {
  return under_test && strncmp(under_test, "amdgpu:", 7) == 0;
}
static bool runs_double(void) {
  return under_test && (strncmp(under_test, "vulkan:", 7) == 0 || on_cuda() || on_amdgpu());
}

/* Asserts the stamps of b's allocation for d: "last write; use by d". */
static void cell(rig_buffer *b, rig_device *d, uint64_t write, uint64_t use) {
  rig_point w, u;
  rig_buffer_stamps(b, d, &w, &u);
  assert_int_equal(w ? rig_point_value(w) : 0, write);
  assert_int_equal(u ? rig_point_value(u) : 0, use);
}

/* Work of the guide on d: the launch of `double` on x, or its stand-in (a
 * copy of x's first half onto its second, through views, so that it reads
 * and writes X as the launch does), or a copy. */
typedef struct launched {
  rig_image *image, *spin;
  rig_submission *sub;
  rig_buffer *lo, *hi, *scratch;
  rig_point point;
} launched;

#define SPIN_GROUPS 256u  /* of 64 threads: about 0.5 s on lavapipe */
#define SPIN_ROUNDS 60000 /* below lavapipe's 65535 iterations a loop */
/* Under an emulator (the arm64 run under qemu-aarch64, docs/arm64.md)
 * lavapipe's code runs emulated, 60000 rounds in about 40 s: a tenth of
 * them still makes the parts run late. */
#define SPIN_ROUNDS_RUN (child_emulator() ? SPIN_ROUNDS / 10 : SPIN_ROUNDS)

/* On an amdgpu device: the code object NAME-ARCH.co for d's arch. */
static rig_image *amdgpu_kernel(rig_device *d, const char *name, rig_function **f) {
  char file[512];
  const char *dir = getenv("RIG_AMDGPU_KERNELS");
  snprintf(file, sizeof file, "%s/%s-%s.co", dir ? dir : "drivers/amdgpu/kernels", name,
           rig_device_arch(d));
  FILE *in = fopen(file, "rb");
  static unsigned char bytes[1 << 16];
  size_t n = in ? fread(bytes, 1, sizeof bytes, in) : 0;
  if (in)
    fclose(in);
  if (!n)
    fail_msg("no code object %s", file);
  rig_image *im;
  ok(rig_image_load(d, bytes, n, &im));
  *f = resolve_ok(im, strcmp(name, "double") == 0 ? "twice" : name);
  return im;
}

/* NAME.spv, built into $RIG_KERNELS/kernels/vulkan, and its entry NAME.
 * On a cuda device: NAME.ptx of $RIG_CUDA_KERNELS (drivers/cuda/kernels),
 * whose double's entry is "twice" (C has no function named double). */
static rig_image *load_kernel(rig_device *d, const char *name, rig_function **f) {
  char file[512];
  if (on_amdgpu()) /* NAME-ARCH.co of $RIG_AMDGPU_KERNELS (drivers/amdgpu/kernels) */
    return amdgpu_kernel(d, name, f);
  if (!on_cuda()) {
    snprintf(file, sizeof file, "kernels/vulkan/%s.spv", name);
    return kernel_load_on(d, file, name, f);
  }
  size_t n;
  const char *text = ptx_text(name, &n); /* the JIT reads up to its NUL */
  rig_image *im;
  ok(rig_image_load(d, text, n + 1, &im));
  *f = resolve_ok(im, strcmp(name, "double") == 0 ? "twice" : name);
  return im;
}

/* Sets each launch's block of run: spin.comp's (its scratch at slot 0 of
 * its refs), and double's over all of x: N / GROUP groups, n at byte 8. */
static void set_blocks(rig_run *run, const launched *l, const rig_part *parts, size_t n) {
  uint32_t k;
  for (uint32_t i = 0; i < n; i++) {
    if (parts[i].kind != RIG_PART_LAUNCH)
      continue;
    ok(rig_submission_block(l->sub, i, &k));
    bool spin = rig_function_image(parts[i].function) == l->spin;
    ok(rig_run_groups(run, k, spin ? SPIN_GROUPS : N / GROUP, 1, 1));
    ok(rig_run_threads(run, k, spin ? 64 : GROUP, 1, 1));
    if (spin) {
      ok(rig_run_int32(run, k, 8, SPIN_ROUNDS_RUN));
      ok(rig_run_int32(run, k, 12, 1));
    } else
      ok(rig_run_int64(run, k, 8, N));
  }
}

/* Submits parts over bufs as one submission of d. slow: on a Vulkan
 * device, spin.comp comes first in it, writing a scratch buffer, so that
 * the parts run about 0.5 s late whatever commits them; the test device is
 * slow by its delay_us. */
static void submit_parts(rig_device *d, const rig_part *parts, uint32_t n, rig_buffer **bufs,
                         uint32_t nbufs, bool slow, launched *l) {
  rig_part all[4];
  rig_buffer *with[4];
  rig_ref scratch_ref = rig_ref_write(nbufs, 0);
  rig_function *spin;
  rig_run *run;
  uint32_t first = slow && runs_double();
  assert_true(n + first <= 4 && nbufs + first <= 4);
  if (first) {
    l->spin = load_kernel(d, "spin", &spin);
    ok(rig_buffer_create(d, SPIN_GROUPS * 64 * 4, &l->scratch));
    all[0] = rig_part_launch(spin, &scratch_ref, 1, 16);
    with[nbufs] = l->scratch;
  }
  memcpy(all + first, parts, n * sizeof *parts);
  memcpy(with, bufs, nbufs * sizeof *bufs);
  ok(rig_submission_make(d, all, n + first, &l->sub));
  ok(rig_submission_take(l->sub, &run));
  set_blocks(run, l, all, n + first);
  ok(rig_run_submit(run, with, nbufs + first, NULL, 0, &l->point));
}

/* The launch of `double` on x (a Vulkan device) or its stand-in (the test
 * device, which loads no code); slow as submit_parts says. */
static launched launch_on_slowly(rig_device *d, rig_buffer *x, bool slow) {
  launched l = {NULL, NULL, NULL, NULL, NULL, NULL, RIG_POINT_NONE};
  if (runs_double()) {
    rig_function *f;
    rig_ref ref = rig_ref_read_write(0, 0);
    l.image = load_kernel(d, "double", &f);
    rig_part part = rig_part_launch(f, &ref, 1, 16);
    submit_parts(d, &part, 1, &x, 1, slow, &l);
  } else {
    rig_part part = rig_part_copy(0, 1);
    ok(rig_buffer_view(x, 0, BYTES / 2, RIG_READ_WRITE, &l.lo));
    ok(rig_buffer_view(x, BYTES / 2, BYTES / 2, RIG_READ_WRITE, &l.hi));
    rig_buffer *halves[2] = {l.lo, l.hi};
    submit_parts(d, &part, 1, halves, 2, slow, &l);
  }
  return l;
}

static launched launch_on(rig_device *d, rig_buffer *x) { return launch_on_slowly(d, x, false); }

/* Whether back holds what the launch made of a: each float doubled, or,
 * for the stand-in, the first half copied onto the second. */
static void check_launched(const float *a, const float *back) {
  for (int i = 0; i < N; i++) {
    float want = runs_double() ? 2 * a[i] : i < N / 2 ? a[i] : a[i - N / 2];
    if (back[i] != want)
      fail_msg("x[%d] is %g, not %g", i, back[i], want);
  }
}

static void launched_release(launched *l) {
  rig_submission_release(l->sub);
  rig_image *images[2] = {l->image, l->spin};
  rig_buffer *bufs[3] = {l->lo, l->hi, l->scratch};
  for (int i = 0; i < 2; i++)
    if (images[i])
      rig_image_release(images[i]);
  for (int i = 0; i < 3; i++)
    if (bufs[i])
      rig_buffer_release(bufs[i]);
}

/* STAMP-1..14: the quick start on d, both copies through staging. */
static void stamp_1_14_the_table_through_staging(void **state) {
  rig_device *d = open_gpu("stamps-gpu", ",delay_us=2000", "");
  uint64_t s = rig_device_submitted(d), hs = rig_device_submitted(rig_device_host());
  rig_stats before, after;
  static float a[N];
  for (int i = 0; i < N; i++)
    a[i] = i == 0 ? 65535.f : (float)i;
  rig_buffer *host, *x;
  ok(rig_buffer_create(rig_device_host(), BYTES, &host));            /* STAMP-3 */
  ok(rig_buffer_put(host, 0, a, BYTES));                      /* STAMP-2: no value */
  assert_int_equal(rig_device_submitted(d), s);
  assert_int_equal(rig_device_submitted(rig_device_host()), hs);
  cell(host, d, 0, 0);
  ok(rig_buffer_create(d, BYTES, &x));                        /* STAMP-4 */
  assert_null(rig_buffer_host_address(x)); /* the host does not address X */
  cell(host, d, 0, 0);
  cell(x, d, 0, 0);
  rig_device_stats(d, &before);
  ok(rig_buffer_copy(host, x));                               /* STAMP-5, STAMP-1 */
  rig_device_stats(d, &after);
  assert_int_equal(rig_device_submitted(d), s + 1);
  assert_int_equal(rig_device_submitted(rig_device_host()), hs);            /* STAMP-2 */
  assert_true(rig_point_reached(rig_device_point(d, s + 1))); /* STAMP-11 */
  assert_int_equal(after.queue_waits + after.host_waits,
                   before.queue_waits + before.host_waits);   /* STAMP-8 */
  cell(host, d, 0, 0);
  cell(x, d, s + 1, s + 1);
  rig_device_stats(d, &before);
  launched l = launch_on(d, x);                               /* STAMP-6, STAMP-9 */
  rig_device_stats(d, &after);
  assert_int_equal(after.queue_waits + after.host_waits,    /* device order covers d:1 */
                   before.queue_waits + before.host_waits);
  rig_point launch = l.point;
  assert_int_equal(rig_point_value(launch), s + 2);
  cell(host, d, 0, 0);
  cell(x, d, s + 2, s + 2);
  ok(rig_point_wait(launch));                                 /* STAMP-12 */
  assert_true(rig_point_reached(launch));
  static float back[N];
  ok(rig_buffer_copy(x, host));                               /* STAMP-7, STAMP-10 */
  assert_int_equal(rig_device_submitted(d), s + 3);
  assert_true(rig_point_reached(rig_device_point(d, s + 3)));
  cell(host, d, 0, 0);
  cell(x, d, s + 2, s + 3);
  ok(rig_buffer_get(host, 0, back, BYTES));
  check_launched(a, back);
  launched_release(&l);
  uint64_t allocated = rig_device_allocated(d);
  rig_buffer_release(x);                                      /* STAMP-13 */
  rig_buffer *again;
  ok(rig_buffer_create(d, BYTES, &again)); /* moves X into the cache, then reuses it */
  assert_int_equal(rig_device_allocated(d), allocated);
  rig_buffer_release(again);
  /* STAMP-14: no device maps H, so once released it returns at once: to
   * the host's reuse cache (64 KiB or more, RECLAIM-47), which frees it. */
  uint64_t host_allocated = rig_device_allocated(rig_device_host());
  rig_buffer_release(host);
  ok(rig_device_free_cache(rig_device_host()));
  assert_int_equal(rig_device_allocated(rig_device_host()), host_allocated - BYTES);
  ok(rig_device_close(d));
  rig_device_release(d);
}

/* STAMP-15, STAMP-16, STAMP-17: the same program through a borrow of H on
 * d: d's copy engine reads and writes H in place, H takes d's points, and
 * d gives its mapping back once the borrow is gone and d ran the work. */
static void stamp_15_17_the_table_through_a_borrow(void **state) {
  rig_device *d = open_gpu("stamps-borrow", ",delay_us=2000", "");
  uint64_t s = rig_device_submitted(d);
  rig_buffer *host, *hb, *x;
  ok(rig_buffer_create(rig_device_host(), BYTES, &host));
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
  bool ran = rig_point_reached(p);
  ok(rig_device_free_cache(d));                                      /* STAMP-17: moves d's memory */
  rig_device_stats(d, &st);
  /* Read before and after the stats, since d runs p meanwhile: the mapping
   * went only if p was reached, and went if p was reached before. */
  assert_true(st.borrow_mappings <= 1);
  if (ran)
    assert_int_equal(st.borrow_mappings, 0);
  if (!st.borrow_mappings)
    assert_true(rig_point_reached(p));
  ok(rig_point_wait(p));
  ok(rig_device_free_cache(d));
  rig_device_stats(d, &st);
  assert_int_equal(st.borrow_mappings, 0);
  rig_buffer_release(x);
  rig_buffer_release(host);
  ok(rig_device_close(d));
  rig_device_release(d);
}

/* d opened so that the host addresses its memory: the test device with
 * host=1, or the device under test without its host=0. */
static const char *metal_name(void) {
  static char name[256];
  if (!under_test)
    return "test:stamps-metal,host=1,delay_us=2000";
  snprintf(name, sizeof name, "%s", under_test);
  char *h = strstr(name, ",host=0");
  if (h)
    memmove(h, h + 7, strlen(h + 7) + 1);
  return name;
}

/* STAMP-18: where the host addresses d's memory (as on Metal), the host
 * runs both copies, which take no value; the launch is d:1, X's only write
 * and use; H gets no point. */
static void stamp_18_host_addressed_device(void **state) {
  rig_device *d = open_ok(metal_name());
  uint64_t s = rig_device_submitted(d), hs = rig_device_submitted(rig_device_host());
  rig_buffer *host, *x;
  ok(rig_buffer_create(rig_device_host(), BYTES, &host));
  ok(rig_buffer_fill(host, 0, 1));
  ok(rig_buffer_create(d, BYTES, &x));
  if (!rig_buffer_host_address(x)) { /* a discrete GPU: the host addresses none of it */
    rig_buffer_release(x);
    rig_buffer_release(host);
    close_release(d);
    skip();
  }
  ok(rig_buffer_copy(host, x));
  assert_int_equal(rig_device_submitted(d), s);
  assert_int_equal(rig_device_submitted(rig_device_host()), hs);
  launched l = launch_on(d, x);
  assert_int_equal(rig_point_value(l.point), s + 1);
  ok(rig_buffer_copy(x, host)); /* follows the launch, takes no value */
  assert_int_equal(rig_device_submitted(d), s + 1);
  assert_int_equal(rig_device_submitted(rig_device_host()), hs);
  cell(x, d, s + 1, s + 1);
  cell(host, d, 0, 0);
  launched_release(&l);
  rig_buffer_release(x);
  rig_buffer_release(host);
  ok(rig_device_close(d));
  rig_device_release(d);
}

/* MACH-22..25: what a borrow may map. */
static void mach_22_25_what_a_borrow_maps(void **state) {
  rig_device *gpu = open_gpu("borrow-rules", "", ""), *m;
  ok(rig_device_open_memory("borrow-rules", &m));
  rig_buffer *small, *paged, *on_m, *b = NULL;
  rig_buffer *spare[8] = {0}; /* the C library may hand out a page: take another */
  ok(rig_buffer_create(rig_device_host(), 1000, &small));   /* starts on 128 bytes, not a page */
  for (int i = 0; i < 8 && (uintptr_t)rig_buffer_host_address(small) % 4096 == 0; i++) {
    spare[i] = small;
    ok(rig_buffer_create(rig_device_host(), 1000, &small));
  }
  assert_int_not_equal((uintptr_t)rig_buffer_host_address(small) % 4096, 0);
  ok(rig_buffer_create(rig_device_host(), 65536, &paged));
  ok(rig_buffer_create(m, 65536, &on_m)); /* on a page */
  assert_int_equal(rig_buffer_borrow(gpu, small, &b), RIG_INVALID); /* MACH-25 */
  assert_non_null(strstr(rig_error_last()->message, "off a page"));
  assert_null(b);
  ok(rig_buffer_borrow(gpu, paged, &b));                             /* MACH-23 */
  rig_buffer_release(b);
  ok(rig_buffer_borrow(m, small, &b));                               /* MACH-24 */
  rig_buffer_release(b);
  ok(rig_buffer_borrow(rig_device_host(), small, &b));                      /* MACH-24 */
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
  ok(rig_device_close(gpu));
  rig_device_release(gpu);
  ok(rig_device_close(m));
  rig_device_release(m);
}

/* RECLAIM-60..63, RECLAIM-79: a mapping the driver has no room for returns
 * mappings once and asks again, then is Out_of_memory for the bytes. */
static void reclaim_60_63_79_mapping_refused(void **state) {
  if (under_test)
    skip(); /* map_limit is the test device's */
  rig_device *d = open_gpu("borrow-room", ",map_limit=65536", "");
  rig_buffer *h1, *h2, *b1, *b2 = NULL;
  ok(rig_buffer_create(rig_device_host(), 65536, &h1));
  ok(rig_buffer_create(rig_device_host(), 65536, &h2));
  ok(rig_buffer_borrow(d, h1, &b1));
  assert_int_equal(rig_buffer_borrow(d, h2, &b2), RIG_OUT_OF_MEMORY);   /* RECLAIM-63 */
  assert_int_equal(rig_error_last()->bytes, 65536);                     /* RECLAIM-79 */
  assert_ptr_equal(rig_error_last()->device, d);
  assert_null(b2);
  rig_buffer_release(b1); /* gone, its work done: the round gives it back */
  ok(rig_buffer_borrow(d, h2, &b2));                                    /* RECLAIM-60, 61 */
  rig_buffer_release(b2);
  rig_buffer_release(h1);
  rig_buffer_release(h2);
  ok(rig_device_close(d));
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

static void run_until_loss(struct lossy *t, const char *label, const char *test_options,
                           const char *options, bool borrow) {
  static float a[N];
  for (int i = 0; i < N; i++)
    a[i] = 65535.f;
  t->d = open_gpu(label, test_options, options);
  ok(rig_buffer_create(rig_device_host(), BYTES, &t->host));
  ok(rig_buffer_put(t->host, 0, a, BYTES));
  ok(rig_buffer_create(t->d, BYTES, &t->x));
  rig_buffer *hb = NULL;
  if (borrow)
    ok(rig_buffer_borrow(t->d, t->host, &hb));
  ok(rig_buffer_copy(borrow ? hb : t->host, t->x));          /* d:1, reached */
  if (hb)
    rig_buffer_release(hb);
  t->l = launch_on_slowly(t->d, t->x, true);                  /* d:2, slow */
  t->launch = t->l.point;
}

static void lossy_done(struct lossy *t) {
  launched_release(&t->l);
  rig_buffer_release(t->x);
  rig_buffer_release(t->host);
  ok(rig_device_close(t->d));
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
  run_until_loss(&t, "stamps-lost-a", ",delay_us=300000", ",fault_nth=3", false);
  rig_buffer *extra;
  ok(rig_buffer_create(t.d, 64, &extra));
  rig_point p;
  assert_int_equal(rig_buffer_submit_fill(extra, 0, 1, &p), RIG_LOST); /* the loss */
  rig_buffer_release(extra);
  assert_int_equal(rig_point_wait(t.launch), RIG_LOST);                /* STAMP-19 */
  assert_non_null(strstr(rig_error_last()->message, "lost: injected fault"));
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
  ok(rig_device_free_cache(d));
  assert_int_equal(rig_device_allocated(d), 0); /* X returned once d stopped */
  rig_device_release(d);
}

/* STAMP-25: lost during the copy back: the copy raises Lost before the
 * host moves any byte into H, which keeps the values the host wrote. The
 * host writes H anew after the first copy, so that H's values are neither
 * X's nor those staging last held: a copy of any of them into H shows. */
static void stamp_25_lost_during_the_copy_back(void **state) {
  struct lossy t;
  run_until_loss(&t, "stamps-lost-b", ",delay_us=100000", ",fault_nth=3", false);
  static float h[N], got[N];
  for (int i = 0; i < N; i++)
    h[i] = (float)(i % 1000) + 0.25f;
  ok(rig_buffer_put(t.host, 0, h, BYTES));
  assert_int_equal(rig_buffer_copy(t.x, t.host), RIG_LOST); /* its d:3 faults */
  ok(rig_buffer_get(t.host, 0, got, BYTES));
  assert_memory_equal(got, h, BYTES);
  lossy_done(&t);
}

/* STAMP-26, STAMP-27: had the copy back named a borrow of H, H's last
 * write would be d:3, never reached: every read and write of H raises Lost
 * for good; an export made before reads whatever is there, unchecked. */
static void stamp_26_27_lost_copy_back_through_a_borrow(void **state) {
  struct lossy t;
  run_until_loss(&t, "stamps-lost-c", ",delay_us=100000", ",fault_nth=3", true);
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
  ok(rig_device_close(t.d));
  assert_int_equal(rig_buffer_get(t.host, 0, &f, 4), RIG_LOST); /* for good */
  lossy_done(&t);
}

/* STAMP-28, LMEM-13, LMEM-14: memory the lost device only read, with that
 * read unreached, still serves reads, and raises Lost for the uses that
 * depend on every point until the device has stopped. */
static void stamp_28_memory_only_read_by_the_lost_device(void **state) {
  rig_device *d = open_gpu("stamps-lost-d", ",delay_us=300000", ",fault_nth=2");
  rig_buffer *host, *hb, *x;
  ok(rig_buffer_create(rig_device_host(), BYTES, &host));
  ok(rig_buffer_fill(host, 7, 1));
  ok(rig_buffer_create(d, BYTES, &x));
  ok(rig_buffer_borrow(d, host, &hb));
  launched l = {NULL, NULL, NULL, NULL, NULL, NULL, RIG_POINT_NONE};
  rig_part copy = rig_part_copy(0, 1);
  rig_buffer *bufs[2] = {hb, x};
  submit_parts(d, &copy, 1, bufs, 2, true, &l);  /* d reads H, slowly */
  assert_int_equal(rig_buffer_fill(x, 0, 1), RIG_LOST); /* the second submit faults */
  uint8_t byte = 0;
  ok(rig_buffer_get(host, 0, &byte, 1));         /* a read: still served */
  assert_int_equal(byte, 7);
  assert_int_equal(rig_buffer_put(host, 0, &byte, 1), RIG_LOST); /* depends on every point */
  rig_buffer_release(hb);
  ok(rig_device_close(d));                              /* stopped: the read counts as done */
  ok(rig_buffer_put(host, 0, &byte, 1));
  launched_release(&l);
  rig_buffer_release(x);
  rig_buffer_release(host);
  rig_device_release(d);
}

/* RIG_STAMPS_DEVICE, where set, must open, else the file skips (77) and
 * says why. */
static void pick_device(void) {
  rig_device *d;
  under_test = getenv("RIG_STAMPS_DEVICE");
  if (under_test && !*under_test)
    under_test = NULL;
  if (!under_test)
    return;
  if (rig_device_open(under_test, &d) != RIG_OK) {
    rig_status st = rig_error_last()->status;
    printf("%s %s does not open here: %s\n", st == RIG_UNAVAILABLE ? "skip:" : "error:",
           under_test, rig_error_last()->message);
    exit(st == RIG_UNAVAILABLE ? 77 : 1);
  }
  close_release(d);
}

int main(void) {
  pick_device();
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
