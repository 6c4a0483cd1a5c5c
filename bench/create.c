/* create.c: buffer create+release on a cache hit vs malloc+free. */
#include <stdlib.h>

#include <rig/rig.h>

#include "bench.h"

struct ctx {
  rig_device *d;
  size_t n;
  int failed;
};

static void with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    rig_buffer *b;
    if (rig_buffer_create(c->d, c->n, &b) != RIG_OK) {
      c->failed = 1;
      return;
    }
    rig_buffer_release(b);
  }
}

static void with_malloc(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++) {
    void *volatile m = malloc(c->n);
    free(m);
  }
}

/* Allocation under pressure: a rolling window of live buffers that holds
 * 90% of a 64 MiB budget, each step releasing the oldest and creating one of
 * a size that varies, so that the budget's reclamation and the cache serve
 * it; the anchor runs the same window with malloc and free. */
#define WINDOW 36
struct pressure {
  rig_device *d;
  rig_buffer *live[WINDOW];
  void *plain[WINDOW];
  uint64_t step;
  int failed;
};

static size_t window_size(uint64_t step) { return (1u << 20) + (step % 8) * 65536; }

static void pressure_rig(void *p, uint64_t iters) {
  struct pressure *c = p;
  for (uint64_t i = 0; i < iters; i++, c->step++) {
    rig_buffer **slot = &c->live[c->step % WINDOW];
    rig_buffer_release(*slot);
    *slot = NULL;
    if (rig_buffer_create(c->d, window_size(c->step), slot) != RIG_OK)
      c->failed = 1;
  }
}

static void pressure_malloc(void *p, uint64_t iters) {
  struct pressure *c = p;
  for (uint64_t i = 0; i < iters; i++, c->step++) {
    void **slot = &c->plain[c->step % WINDOW];
    free(*slot);
    *slot = malloc(window_size(c->step));
    ((volatile char *)*slot)[0] = 1;
  }
}

static int bench_pressure(FILE *out, rig_device *m) {
  struct pressure c = {m, {0}, {0}, 0, 0};
  rig_bench_status(rig_device_set_budget(m, 64u << 20), "rig_device_set_budget(m, 64u << 20)"); /* 36 live of at most 1.4 MiB: about 90% */
  rig_bench_compare(out, "allocation under pressure (90% of budget)", pressure_rig,
                    pressure_malloc, &c, 20000, 5);
  for (int i = 0; i < WINDOW; i++) {
    rig_buffer_release(c.live[i]);
    free(c.plain[i]);
  }
  rig_bench_status(rig_device_set_budget(m, INT64_MAX), "rig_device_set_budget(m, INT64_MAX)");
  return c.failed;
}

int rig_bench_create(FILE *out) {
  rig_device *m;
  if (rig_device_open_memory("bench", &m) != RIG_OK) {
    fprintf(out, "bench create: %s\n", rig_error_last()->message);
    return 1;
  }
  struct {
    const char *name;
    rig_device *d;
    size_t n;
  } cases[] = {
      {"create+release host 1 MiB (cache hit)", rig_device_host(), 1 << 20},
      {"create+release memory 256 B (cache hit)", m, 256},
      {"create+release memory 64 KiB (cache hit)", m, 64 << 10},
      {"create+release memory 1 MiB (cache hit)", m, 1 << 20},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct ctx c = {cases[i].d, cases[i].n, 0};
    rig_bench_compare(out, cases[i].name, with_rig, with_malloc, &c, 200000, 7);
    failed |= c.failed;
  }
  failed |= bench_pressure(out, m);
  rig_bench_status(rig_device_close(m), "rig_device_close(m)");
  rig_device_release(m);
  return failed;
}
