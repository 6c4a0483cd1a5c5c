/* SPDX-License-Identifier: MIT */
/* edge.c: the helpers every driver shares (edge.h). */
#define _GNU_SOURCE /* sched_getaffinity */
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rig/edge.h>

#include "message_fit.h"

/* The whole message, before it is fitted into err->message: its paths give
 * way so that what follows them stays (message_fit.h). */
static _Thread_local char whole[RIG__FIT_SCRATCH];

RIG_EDGE_API int(rig_edge_fail)(rig_edge_error *err, int code, const char *fmt, ...) {
  va_list ap;
  if (!err)
    return code;
  va_start(ap, fmt);
  vsnprintf(whole, sizeof whole, fmt, ap);
  va_end(ap);
  rig__message_fit(err->message, sizeof err->message, whole);
  return code;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleepers per bucket, written by rig_edge_word_wait only. Exported under
 * its 1.7 name for the drivers built for 1.7 and 1.8, whose inline store
 * loads it directly: they keep waking sleepers. Its size stays 64. */
#define WORD_BUCKETS 64u
RIG_EDGE_API extern uint32_t rig_edge_word_sleepers[WORD_BUCKETS];
uint32_t rig_edge_word_sleepers[WORD_BUCKETS];

static uint32_t *bucket_of(const volatile uint64_t *word) {
  return &rig_edge_word_sleepers[((uintptr_t)word >> 3) % WORD_BUCKETS];
}

RIG_EDGE_API uint32_t rig_edge_word_sleepers_of(const volatile uint64_t *word) {
  return __atomic_load_n(bucket_of(word), __ATOMIC_RELAXED);
}

/* The word's low 32 bits, which its futex compares: values grow by one
 * per piece of work, so the low half changes with every store. */
static uint32_t *futex_of(const volatile uint64_t *word) {
  return (uint32_t *)(uintptr_t)word + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

RIG_EDGE_API void rig_edge_word_wake(const volatile uint64_t *word) {
  syscall(SYS_futex, futex_of(word), FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Whether membarrier's expedited barrier serves this process: asked and
 * registered once. Without it a sleeper may miss a store's wake (the
 * store's load of the count may pass the store), and sleeps out its step. */
static int barrier_state; /* 0 unknown, 1 yes, -1 no */

static bool barrier_ok(void) {
  int st = __atomic_load_n(&barrier_state, __ATOMIC_ACQUIRE);
  if (st == 0) {
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    st = q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                 syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
             ? 1
             : -1;
    __atomic_store_n(&barrier_state, st, __ATOMIC_RELEASE);
  }
  return st > 0;
}

/* Every thread of the process passes a full barrier. A child of fork has
 * a new address space, not registered: it registers on its first refusal. */
static void barrier_all(void) {
  if (!barrier_ok() || syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
    return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* Whether this thread may run on more than one core: where it may not, a
 * spin only keeps the thread that would store the word from running.
 * Asked once per thread. */
static bool spin_pays(void) {
  static _Thread_local int cores;
  if (cores == 0) {
    cpu_set_t set;
    cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 2;
  }
  return cores > 1;
}

/* Sleeps until word moves past seen, a wake, or ns pass. */
static void sleep_on(const volatile uint64_t *word, uint64_t seen, long ns) {
  struct timespec ts = {0, ns};
  syscall(SYS_futex, futex_of(word), FUTEX_WAIT_PRIVATE, (uint32_t)seen, &ts, NULL, 0);
}

/* Spins for a few microseconds, since work often lands within them, then
 * sleeps on the word's futex, counted among its bucket's sleepers, in
 * steps that grow to 1 ms (a driver built before ABI 1.7 wakes no one). */
RIG_EDGE_API int rig_edge_word_wait(const volatile uint64_t *word, uint64_t value,
                                    uint32_t timeout_ms) {
  uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000u;
  long sleep_ns = 1000;
  for (int spin = 0; spin < 2000 && spin_pays(); spin++) {
    if (rig_edge_word_load(word) >= value)
      return RIG_EDGE_OK;
    __asm__ volatile("" ::: "memory");
  }
  uint32_t *count = bucket_of(word);
  __atomic_fetch_add(count, 1, __ATOMIC_SEQ_CST);
  barrier_all(); /* every store from here on sees the count, or we see it */
  int r = RIG_EDGE_OK;
  for (uint64_t seen; (seen = rig_edge_word_load(word)) < value;) {
    uint64_t now = now_ns();
    if (now >= deadline) {
      r = RIG_EDGE_TIMEOUT;
      break;
    }
    sleep_on(word, seen, deadline - now < (uint64_t)sleep_ns ? (long)(deadline - now) : sleep_ns);
    if (sleep_ns < 1000000)
      sleep_ns *= 2;
  }
  __atomic_fetch_sub(count, 1, __ATOMIC_RELEASE);
  return r;
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
