/* copy.c: a host <-> memory-device copy of 256 MiB vs memcpy. */
#include <stdlib.h>
#include <string.h>

#include <rig/rig.h>

#include "bench.h"

#define BYTES ((size_t)256 << 20)

struct ctx {
  rig_buffer *host, *dev;
  void *a, *b;
  int to_device, failed;
};

static void with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++)
    if ((c->to_device ? rig_buffer_copy(c->host, c->dev) : rig_buffer_copy(c->dev, c->host)))
      c->failed = 1;
}

static void with_memcpy(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters; i++)
    memcpy(c->b, c->a, BYTES);
}

int rig_bench_copy(FILE *out) {
  rig_device *m;
  struct ctx c = {0};
  if (rig_device_open_memory("bench", &m) || rig_buffer_create(rig_device_host(), BYTES, &c.host) ||
      rig_buffer_create(m, BYTES, &c.dev)) {
    fprintf(out, "bench copy: %s\n", rig_error_last()->message);
    return 1;
  }
  c.a = malloc(BYTES);
  c.b = malloc(BYTES);
  if (!c.a || !c.b)
    return 1;
  memset(c.a, 1, BYTES); /* fault every page in before timing */
  memset(c.b, 2, BYTES);
  rig_bench_status(rig_buffer_fill(c.host, 3, 1), "rig_buffer_fill(c.host, 3, 1)");
  rig_bench_status(rig_buffer_fill(c.dev, 4, 1), "rig_buffer_fill(c.dev, 4, 1)");
  c.to_device = 1;
  rig_bench_compare(out, "copy host -> memory 256 MiB", with_rig, with_memcpy, &c, 4, 5);
  c.to_device = 0;
  rig_bench_compare(out, "copy memory -> host 256 MiB", with_rig, with_memcpy, &c, 4, 5);
  free(c.a);
  free(c.b);
  rig_buffer_release(c.host);
  rig_buffer_release(c.dev);
  rig_bench_status(rig_device_close(m), "rig_device_close(m)");
  rig_device_release(m);
  return c.failed;
}
