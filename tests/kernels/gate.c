/* gate.c: a launch that holds its submit until the test opens the gate:
 * it marks entered, then yields until open is set. On the host the submit
 * lock is held meanwhile, so a test can show what another submit does
 * while that lock is taken, with no clock (test_submit_try.c). The C
 * library's sched_yield comes through a stub. */
#include "../support/kernels.h" /* struct gate */
int sched_yield(void);
void gate(const struct gate *g, int64_t first, int64_t end) {
  __atomic_store_n(g->entered, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(g->open, __ATOMIC_ACQUIRE))
    sched_yield();
}
