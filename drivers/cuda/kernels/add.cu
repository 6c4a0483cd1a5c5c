// add.cu: the seed's add kernel for CUDA: z[i] = x[i] + y[i] for i < n.
// Its parameter is the C kernel's struct add { const float *x, *y; float *z;
// int64_t n; } by value (32 bytes), the pointers device addresses: the
// driver passes rig's parameter block as the kernel's argument buffer.
// One thread per element: thread g * t + i of the grid adds element g * t + i.
#include <stdint.h>

struct add { const float *x, *y; float *z; int64_t n; };

extern "C" __global__ void add(struct add p) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n)
    p.z[i] = p.x[i] + p.y[i];
}
