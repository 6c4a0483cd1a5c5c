/* small.c: the constant cost of rig's smallest operations on a memory
 * device, whose work is a few bytes of the host's own memory: a 64-byte
 * rig_buffer_copy (checks, the stamps, one driver submit, the point) vs
 * memcpy of 64 bytes, and the submit of a prepared 4-byte fill (take,
 * submit, no wait: what a queue of small work pays per item) vs a 4-byte
 * store. Target for the copy: under 200 ns (issue 20). */
#include <string.h>

#include <rig/rig.h>

#include "bench.h"

struct ctx {
  rig_buffer *a, *b;
  rig_submission *fill;
  unsigned char x[64], y[64];
  int failed;
};

/* Through a volatile pointer: a real call of the C library's memcpy, as
 * the driver makes, not two inlined moves. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static void copy_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++)
    if (rig_buffer_copy(c->a, c->b) != RIG_OK)
      c->failed = 1;
}

static void copy_memcpy(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    copy_fn(c->y, c->x, sizeof c->x);
    __asm__ volatile("" : : "r"(c->y) : "memory");
  }
}

static void submit_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->fill, &r) || rig_run_submit(r, &c->b, 1, NULL, 0, &pt))
      c->failed = 1;
  }
}

static void submit_store(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    uint32_t v = (uint32_t)i;
    memcpy(c->y, &v, sizeof v);
    __asm__ volatile("" : : "r"(c->y) : "memory");
  }
}

int rig_bench_small(FILE *out) {
  rig_device *m = NULL;
  struct ctx c = {0};
  rig_part fill = rig_part_fill(0, 7, 4);
  if (rig_device_open_memory("bench-small", &m) || rig_buffer_create(m, 64, &c.a) ||
      rig_buffer_create(m, 64, &c.b) || rig_buffer_fill(c.a, 1, 1) || rig_buffer_fill(c.b, 2, 1) ||
      rig_submission_make(m, &fill, 1, &c.fill)) {
    fprintf(out, "bench small: %s\n", rig_error_last()->message);
    c.failed = 1;
  } else {
    rig_bench_compare(out, "copy 64 B on a memory device vs memcpy", copy_rig, copy_memcpy, &c,
                      100000, 11);
    rig_bench_compare(out, "submit 4-byte fill on a memory device vs store", submit_rig,
                      submit_store, &c, 100000, 11);
  }
  rig_submission_release(c.fill);
  rig_buffer_release(c.a);
  rig_buffer_release(c.b);
  if (m) {
    rig_bench_status(rig_device_close(m), "rig_device_close(m)");
    rig_device_release(m);
  }
  return c.failed;
}
