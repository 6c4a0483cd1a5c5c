/* bad_ifunc: `add` as a GNU indirect function (STT_GNU_IFUNC). The symbol's
 * value is its resolver, which returns the function rather than being it:
 * called as a kernel, the resolver would compute nothing. rig runs no
 * resolver, so the linker refuses the object (LINK-7). */
#include <stdint.h>

struct add_params {
  const float *x, *y;
  float *z;
  int64_t n;
};

static void add_impl(const void *params, int64_t first, int64_t end) {
  const struct add_params *p = params;
  for (int64_t i = first; i < end && i < p->n; i++)
    p->z[i] = p->x[i] + p->y[i];
}

static void *add_resolver(void) { return (void *)add_impl; }

void add(const void *params, int64_t first, int64_t end) __attribute__((ifunc("add_resolver")));
