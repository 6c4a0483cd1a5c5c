/* test_signals.c: signals across calls into drivers (ERR-9..15), seen from
 * inside a driver linked into the test: what its calls find blocked. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rig/edge.h>
#include <rig/rig.h>

#include "util.h"

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { handled++; }

static bool blocked(int sig) {
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, NULL, &cur);
  return sigismember(&cur, sig);
}

/* What the driver saw. */
static struct {
  bool submit_int, submit_segv, alloc_int, open_int, wait_int, signaled_int;
  int handled_in_submit, releases, handled_at_2, handled_at_64, handled_at_70;
  bool raise_in_submit, raise_in_release;
  volatile uint64_t *word;
} seen;

static int s_open(const char *args, void **out, rig_edge_error *err) {
  seen.open_int = blocked(SIGINT);
  *out = &seen;
  return RIG_EDGE_OK;
}
static int s_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  strcpy(f->arch, "sig");
  f->alignment = 16;
  f->budget = UINT64_C(1) << 30;
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_HOST_ADDRESSES;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
  return RIG_EDGE_OK;
}
static int s_bind(void *h, volatile uint64_t *word, rig_edge_error *err) {
  seen.word = word;
  return RIG_EDGE_OK;
}
static int s_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  seen.submit_int = blocked(SIGINT);
  seen.submit_segv = blocked(SIGSEGV);
  if (seen.raise_in_submit) {
    pthread_kill(pthread_self(), SIGUSR1);
    seen.handled_in_submit = handled; /* not yet: blocked (ERR-12) */
  }
  for (uint32_t i = 0; i < w->nparts; i++)
    rig_edge_run_on_host(&w->parts[i], err);
  rig_edge_word_store(seen.word, w->value);
  return RIG_EDGE_OK;
}
static int s_wait(void *h, uint64_t v, uint32_t ms, rig_edge_error *err) {
  seen.wait_int = blocked(SIGINT);
  return rig_edge_word_wait(seen.word, v, ms);
}
static int s_alloc(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                   rig_edge_error *err) {
  seen.alloc_int = blocked(SIGINT);
  void *p = calloc(1, bytes ? bytes : 1);
  *out = (rig_edge_alloc){p, p, (uint64_t)(uintptr_t)p, bytes};
  return p ? RIG_EDGE_OK : RIG_EDGE_NO_ROOM;
}
static int s_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  int n = ++seen.releases;
  if (seen.raise_in_release && n == 1)
    pthread_kill(pthread_self(), SIGUSR1);
  if (n == 2)
    seen.handled_at_2 = handled;
  if (n == 64)
    seen.handled_at_64 = handled;
  if (n == 70)
    seen.handled_at_70 = handled;
  free(a->handle);
  return RIG_EDGE_OK;
}

static const rig_edge_driver sig_driver = {
    .abi_major = RIG_EDGE_ABI_MAJOR,
    .size = sizeof(rig_edge_driver),
    .name = "sig",
    .open = s_open,
    .facts = s_facts,
    .bind_word = s_bind,
    .submit = s_submit,
    .wait = s_wait,
    .allocate = s_alloc,
    .release = s_release,
};

static int setup(void **state) {
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  return 0;
}

/* ERR-9, ERR-11, ERR-12, ERR-13: across open, allocate and submit, every
 * signal but the fault ones is blocked; a signal raised inside the driver's
 * call runs its handler once the call has returned; the driver's wait runs
 * with the caller's mask. */
static void err_9_11_12_13_driver_calls_block_signals(void **state) {
  rig_device *d;
  check_ok(rig_open_driver("sig:a", &sig_driver, "", &d), "open");
  assert_true(seen.open_int);
  rig_buffer *b = create_ok(d, 64);
  assert_true(seen.alloc_int);
  handled = 0;
  seen.raise_in_submit = true;
  rig_point p;
  check_ok(rig_buffer_submit_fill(b, 1, 1, &p), "fill");
  seen.raise_in_submit = false;
  assert_true(seen.submit_int);                 /* ERR-9 */
  assert_false(seen.submit_segv);               /* the fault signals stay open */
  assert_int_equal(seen.handled_in_submit, 0);  /* ERR-12 */
  assert_int_equal(handled, 1);                 /* delivered after the call */
  assert_false(blocked(SIGINT));                /* the caller's mask is back */
  rig_buffer_release(b);
  close_release(d);
}

/* ERR-14, ERR-15: reclamation that gives memory back region by region
 * blocks signals from its first region on, and gives the thread its mask
 * back every 64 regions: a signal raised at the first region waits for at
 * most 64. */
static void err_14_15_reclamation_blocks_per_64_regions(void **state) {
  rig_device *d;
  check_ok(rig_open_driver("sig:b", &sig_driver, "", &d), "open");
  rig_buffer *b[70];
  for (int i = 0; i < 70; i++)
    b[i] = create_ok(d, 64 + (size_t)i * 4);
  for (int i = 0; i < 70; i++)
    rig_buffer_release(b[i]);
  rig_buffer *mover = create_ok(d, 4096); /* moves them into the cache */
  rig_buffer_release(mover);
  handled = 0;
  seen.releases = 0;
  seen.raise_in_release = true;
  check_ok(rig_set_budget(d, 0), "set_budget"); /* gives all 70 back */
  seen.raise_in_release = false;
  assert_true(seen.releases >= 70);
  assert_int_equal(seen.handled_at_2, 0);    /* ERR-14 */
  assert_int_equal(seen.handled_at_64, 0);
  assert_int_equal(seen.handled_at_70, 1);   /* ERR-15: after 64 regions */
  check_ok(rig_set_budget(d, UINT64_C(1) << 30), "set_budget");
  close_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(err_9_11_12_13_driver_calls_block_signals),
      cmocka_unit_test(err_14_15_reclamation_blocks_per_64_regions),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
