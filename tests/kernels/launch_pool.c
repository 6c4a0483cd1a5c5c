/* launch_pool.c: how many calls run at once (LAUNCH-9, LAUNCH-10), and
 * each call's thread and whether it blocks SIGSEGV (ERR-19: the pool's
 * workers block every signal; the submitting thread keeps the fault
 * signals). The C library's functions come through stubs (SYM-1).
 *
 * With caller_ran set, a call on a thread other than `caller` first waits
 * (a while, bounded) for a call on the caller: the workers then hold at
 * most one chunk each until the submitting thread took one, so whether it
 * runs calls (LAUNCH-1) does not depend on how the threads are scheduled. */
#include "../support/kernels.h" /* struct pool */
unsigned long pthread_self(void);
int pthread_sigmask(int how, const void *set, void *old);
void pool(const struct pool *p, int64_t first, int64_t end) {
  int64_t me = __atomic_fetch_add(p->calls, 1, __ATOMIC_RELAXED);
  int64_t now = __atomic_add_fetch(p->active, 1, __ATOMIC_RELAXED);
  int64_t was = __atomic_load_n(p->peak, __ATOMIC_RELAXED);
  while (now > was && !__atomic_compare_exchange_n(p->peak, &was, now, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
    ;
  if (p->caller_ran && pthread_self() == p->caller)
    __atomic_store_n(p->caller_ran, 1, __ATOMIC_RELEASE);
  else if (p->caller_ran)
    for (int64_t i = 0; i < (INT64_C(1) << 31) && !__atomic_load_n(p->caller_ran, __ATOMIC_ACQUIRE);
         i++)
      ;
  uint64_t mask[16] = {0};
  pthread_sigmask(0 /* SIG_BLOCK */, 0, mask);
  if (me < 4096) {
    p->thread[me] = pthread_self();
    p->segv_blocked[me] = (mask[0] >> (11 - 1)) & 1; /* SIGSEGV is 11 */
  }
  for (volatile int64_t i = 0; i < p->spin; i++)
    ;
  __atomic_sub_fetch(p->active, 1, __ATOMIC_RELAXED);
}
