/* copy_bytes.c: a copy as a host launch (HOST-4: the host's queue runs
 * only launches, so the tests that copy within a host submission launch
 * this). Thread i copies byte i of src into dst, for i < n. */
#include "../support/kernels.h" /* struct copy_bytes */
void copy_bytes(const struct copy_bytes *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++)
    p->dst[i] = p->src[i];
}
