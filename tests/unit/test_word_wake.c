/* test_word_wake.c: words woken (edge ABI 1.7, edge/src/edge.c): a store
 * wakes a thread asleep on its word where the word's bucket counts a
 * sleeper, and rig_edge_word_wait counts itself there while it sleeps.
 * No timing: a store that failed to wake a sleeper with no timeout leaves
 * the test hanging, and meson's timeout fails it.
 */
#define _GNU_SOURCE
#include <rig/edge.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct sleeper {
  volatile uint64_t word;
  _Atomic pid_t tid;
  uint64_t want;
  int result;
} sleeper;

/* Whether thread tid of this process is asleep in the kernel (state S). */
static int asleep(pid_t tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *end = strrchr(buf, ')'); /* the name may hold spaces */
  return end && end[1] == ' ' && end[2] == 'S';
}

static void wait_asleep(sleeper *s) {
  while (!atomic_load(&s->tid))
    sched_yield();
  while (!asleep(atomic_load(&s->tid)))
    sched_yield();
}

/* A raw futex sleep with no timeout on the word's low half: only a wake
 * ends it once it sleeps. */
static void *raw_sleep(void *p) {
  sleeper *s = p;
  uint32_t *low = (uint32_t *)(uintptr_t)&s->word + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
  atomic_store(&s->tid, (pid_t)syscall(SYS_gettid));
  while (rig_edge_word_load(&s->word) < s->want)
    syscall(SYS_futex, low, FUTEX_WAIT_PRIVATE, (uint32_t)rig_edge_word_load(&s->word), NULL,
            NULL, 0);
  return NULL;
}

/* The buckets as a driver built for ABI 1.7 or 1.8 reads them: librig-edge
 * still exports the array for it, and counts its sleepers there. */
extern uint32_t rig_edge_word_sleepers[64];
static uint32_t *old_bucket(const volatile uint64_t *word) {
  return &rig_edge_word_sleepers[((uintptr_t)word >> 3) % 64];
}

static void *edge_wait(void *p) {
  sleeper *s = p;
  atomic_store(&s->tid, (pid_t)syscall(SYS_gettid));
  s->result = rig_edge_word_wait(&s->word, s->want, 60000);
  return NULL;
}

/* A raw sleeper on s's word, counted in its bucket, woken by change. */
static void wake_counted(sleeper *s, void (*change)(sleeper *)) {
  uint32_t *count = old_bucket(&s->word);
  pthread_t t;
  __atomic_fetch_add(count, 1, __ATOMIC_SEQ_CST);
  assert_int_equal(pthread_create(&t, NULL, raw_sleep, s), 0);
  wait_asleep(s);
  change(s);
  assert_int_equal(pthread_join(t, NULL), 0);
  __atomic_fetch_sub(count, 1, __ATOMIC_SEQ_CST);
}

static void store(sleeper *s) { rig_edge_word_store(&s->word, s->want); }

/* The test driver's way: a compare-and-swap that raises the word. */
static void raise_then_changed(sleeper *s) {
  uint64_t old = 0;
  assert_true(__atomic_compare_exchange_n(&s->word, &old, s->want, false, __ATOMIC_RELEASE,
                                          __ATOMIC_ACQUIRE));
  rig_edge_word_changed(&s->word);
}

/* rig_edge_word_store wakes a sleeper its bucket counts. */
static void test_store_wakes_counted_sleeper(void **state) {
  (void)state;
  static sleeper s = {.want = 1};
  wake_counted(&s, store);
}

/* rig_edge_word_changed wakes after a change made by other means. */
static void test_changed_wakes_counted_sleeper(void **state) {
  (void)state;
  static sleeper s = {.want = 5};
  wake_counted(&s, raise_then_changed);
}

/* rig_edge_word_wait counts itself in its word's bucket while it sleeps,
 * and no longer once it returns. */
static void test_wait_counts_itself(void **state) {
  (void)state;
  static sleeper s = {.want = 3};
  uint32_t *count = old_bucket(&s.word);
  uint32_t before = __atomic_load_n(count, __ATOMIC_SEQ_CST);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, edge_wait, &s), 0);
  while (__atomic_load_n(count, __ATOMIC_SEQ_CST) == before)
    sched_yield();
  /* ABI 1.9's function reads the count the 1.8 array holds. */
  assert_int_equal(rig_edge_word_sleepers_of(&s.word), before + 1);
  rig_edge_word_store(&s.word, 3);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(s.result, RIG_EDGE_OK);
  assert_int_equal(__atomic_load_n(count, __ATOMIC_SEQ_CST), before);
}

/* A store that wakes no one, as a driver built before 1.7 makes, still
 * ends a wait: its sleeps are steps, not one sleep to the timeout. */
static void test_unwoken_store_still_ends_wait(void **state) {
  (void)state;
  static sleeper s = {.want = 2};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, edge_wait, &s), 0);
  wait_asleep(&s);
  __atomic_store_n(&s.word, 2, __ATOMIC_RELEASE);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(s.result, RIG_EDGE_OK);
}

/* A value never stored: RIG_EDGE_TIMEOUT, and the count goes back. */
static void test_timeout_uncounts(void **state) {
  (void)state;
  volatile uint64_t word = 0;
  uint32_t *count = old_bucket(&word);
  uint32_t before = __atomic_load_n(count, __ATOMIC_SEQ_CST);
  assert_int_equal(rig_edge_word_wait(&word, 1, 5), RIG_EDGE_TIMEOUT);
  assert_int_equal(__atomic_load_n(count, __ATOMIC_SEQ_CST), before);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_store_wakes_counted_sleeper),
      cmocka_unit_test(test_changed_wakes_counted_sleeper),
      cmocka_unit_test(test_wait_counts_itself),
      cmocka_unit_test(test_unwoken_store_still_ends_wait),
      cmocka_unit_test(test_timeout_uncounts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
