/* launch_ids.c: records which threads each call ran (LAUNCH-6..8): count[i]
 * counts the runs of thread i, and bad counts calls that did not cover
 * whole groups. */
#include "../support/kernels.h" /* struct ids */
void ids(const struct ids *p, int64_t first, int64_t end) {
  __atomic_fetch_add(p->calls, 1, __ATOMIC_RELAXED);
  if (first % p->per_group || end % p->per_group || end <= first)
    __atomic_fetch_add(p->bad, 1, __ATOMIC_RELAXED);
  for (int64_t i = first; i < end; i++)
    __atomic_fetch_add(&p->count[i], 1, __ATOMIC_RELAXED);
}
