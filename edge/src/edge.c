/* edge.c: the helpers every driver shares (edge.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rig/edge.h>

RIG_EDGE_API int rig_edge_fail(rig_edge_error *err, int code, const char *fmt, ...) {
  va_list ap;
  if (!err)
    return code;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return code;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins for a few microseconds, since work often lands within them, then
 * sleeps in growing steps of at most 1 ms. */
RIG_EDGE_API int rig_edge_word_wait(const volatile uint64_t *word, uint64_t value,
                                    uint32_t timeout_ms) {
  uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
  long sleep_ns = 1000;
  for (int spin = 0; spin < 2000; spin++) {
    if (rig_edge_word_load(word) >= value)
      return RIG_EDGE_OK;
    __asm__ volatile("" ::: "memory");
  }
  while (rig_edge_word_load(word) < value) {
    if (now_ns() >= deadline)
      return RIG_EDGE_TIMEOUT;
    struct timespec ts = {0, sleep_ns};
    nanosleep(&ts, NULL);
    if (sleep_ns < 1000000)
      sleep_ns *= 2;
  }
  return RIG_EDGE_OK;
}

static void fill_pattern(unsigned char *dst, uint64_t n, uint32_t pattern, uint32_t size) {
  if (size == 1) {
    memset(dst, (int)(pattern & 0xff), n);
    return;
  }
  unsigned char p[4];
  memcpy(p, &pattern, sizeof p);
  for (uint64_t i = 0; i < n; i++)
    dst[i] = p[i % size];
}

static unsigned char *host_of(const rig_edge_range *r) {
  return r->alloc && r->alloc->host ? (unsigned char *)r->alloc->host + r->offset : NULL;
}

RIG_EDGE_API int rig_edge_run_on_host(const rig_edge_part *part, rig_edge_error *err) {
  if (part->kind == RIG_EDGE_PART_COPY) {
    unsigned char *s = host_of(&part->u.copy.src), *d = host_of(&part->u.copy.dst);
    if (!s || !d)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "copy of memory the host does not address");
    memmove(d, s, part->u.copy.dst.bytes);
    return RIG_EDGE_OK;
  }
  if (part->kind == RIG_EDGE_PART_FILL) {
    unsigned char *d = host_of(&part->u.fill.dst);
    if (!d)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "fill of memory the host does not address");
    fill_pattern(d, part->u.fill.dst.bytes, part->u.fill.pattern, part->u.fill.pattern_bytes);
    return RIG_EDGE_OK;
  }
  return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "part kind %u does not run on host",
                       part->kind);
}
