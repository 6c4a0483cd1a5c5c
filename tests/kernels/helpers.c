/* Symbols (SYM-1, SYM-3): the object's own definition of expf comes before
 * the process's, and memcpy, which the compiler calls for a copy, comes from
 * the process. */
#include <stddef.h>
#include <stdint.h>
float expf(float x) { return x + 42.0f; } /* not the math library's */
float own_exp(float x) { return expf(x); }

void *memcpy(void *, const void *, size_t);
struct copy {
  const char *src;
  char *dst;
  int64_t n;
};
void copy(const struct copy *p, int64_t first, int64_t end) {
  (void)first;
  (void)end;
  __builtin_memcpy(p->dst, p->src, (size_t)p->n);
}
static int local_twice(int x) { return 2 * x; }
int (*keep_local(void))(int) { return local_twice; }
