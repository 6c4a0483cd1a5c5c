// double.cu: `rig demo`'s kernel and the stamps guide's: x[i] *= 2 for
// i < n. Parameter (16 bytes): struct { float *x; int64_t n; }. Its entry
// is "twice": C has no function named double.
#include <stdint.h>

struct twice { float *x; int64_t n; };

extern "C" __global__ void twice(struct twice p) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n)
    p.x[i] *= 2.0f;
}
