/* launch_entry.c: a function of one image called through an address an
 * entry ref stores (SYM-2), and the function it calls, in another. */
#include <stdint.h>
struct call { void (*seven)(float *z, int64_t i); float *z; };
void caller(const struct call *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++)
    p->seven(p->z, i);
}
void seven(float *z, int64_t i) { z[i] = 7.0f + (float)i; }
