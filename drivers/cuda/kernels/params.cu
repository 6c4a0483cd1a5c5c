// params.cu: a kernel whose parameter block is over the 4 KiB CUDA takes
// by value, for the test of blocks passed through the driver's buffer: its
// one argument is the device address of the block (8 KiB here).
//   sum: out[at] = v[0] + ... + v[n - 1], by one thread.
#include <stdint.h>

struct block { int64_t *out; int64_t n; int64_t at; int64_t v[1021]; };

extern "C" __global__ void sum(const struct block *b) {
  if (blockIdx.x != 0 || threadIdx.x != 0)
    return;
  int64_t s = 0;
  for (int64_t i = 0; i < b->n; i++)
    s += b->v[i];
  b->out[b->at] = s;
}
