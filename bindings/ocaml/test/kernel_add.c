/* The seed's example kernel (Objects, OBJ-3), as written: z = x + y over
 * first <= i < end, i < n. A host kernel's type is
 * void f(const void *params, int64_t first, int64_t end) (LAUNCH-4). */
#include <stdint.h>
struct add { const float *x, *y; float *z; int64_t n; };
void add(const struct add *p, int64_t first, int64_t end) {
for (int64_t i = first; i < end && i < p->n; i++)
p->z[i] = p->x[i] + p->y[i];
}
