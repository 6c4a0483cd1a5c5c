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

int rig_bench_create(FILE *out) {
  rig_device *m;
  if (rig_memory_device("bench", &m) != RIG_OK) {
    fprintf(out, "bench create: %s\n", rig_last_error()->message);
    return 1;
  }
  struct {
    const char *name;
    rig_device *d;
    size_t n;
  } cases[] = {
      {"create+release host 1 MiB (cache hit)", rig_host(), 1 << 20},
      {"create+release memory 256 B (cache hit)", m, 256},
      {"create+release memory 1 MiB (cache hit)", m, 1 << 20},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct ctx c = {cases[i].d, cases[i].n, 0};
    rig_bench_compare(out, cases[i].name, with_rig, with_malloc, &c, 200000, 7);
    failed |= c.failed;
  }
  rig_close(m);
  rig_device_release(m);
  return failed;
}
