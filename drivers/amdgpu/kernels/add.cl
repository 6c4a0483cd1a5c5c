// add.cl: the seed's add kernel: z[i] = x[i] + y[i] for i < n. Its
// parameter (32 bytes) is struct add { const float *x, *y; float *z;
// int64_t n; } by value, the pointers device addresses.
#include "common.h"
struct add { ulong x, y, z; long n; };
kernel void add(struct add p) {
  long i = (long)GLOBAL_ID();
  if (i < p.n)
    ((global float *)p.z)[i] = ((global const float *)p.x)[i] + ((global const float *)p.y)[i];
}
