// fill.cu: word i of dst becomes pattern + i * step for i < n, so that a
// test sees which words a launch wrote and in what order it ran against
// copies and fills. Parameter (24 bytes): struct { uint32_t *dst;
// uint32_t pattern, step, n; }.
#include <stdint.h>

struct fill { uint32_t *dst; uint32_t pattern, step, n; };

extern "C" __global__ void fill(struct fill p) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n)
    p.dst[i] = p.pattern + i * p.step;
}
