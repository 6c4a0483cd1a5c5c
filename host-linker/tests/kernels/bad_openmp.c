/* A bad object of real compiler output: a loop under #pragma omp parallel
 * for, built with -fopenmp, which calls the OpenMP runtime
 * (__kmpc_fork_call) and holds its descriptors in .data.rel.ro: refused,
 * with the advice to build without -fopenmp. */
#include <stdint.h>
struct scale {
  float *x;
};
void scale(const struct scale *p, int64_t first, int64_t end) {
#pragma omp parallel for
  for (int64_t i = first; i < end; i++)
    p->x[i] *= 2.0f;
}
