// spin.cu: work that runs long enough to test asynchrony (the stamps
// guide's): thread k iterates a linear congruential step `rounds` times
// from seed + k and writes the result to out[k]. Parameter (16 bytes):
// struct { uint32_t *out; uint32_t rounds, seed; }.
#include <stdint.h>

struct spin { uint32_t *out; uint32_t rounds, seed; };

extern "C" __global__ void spin(struct spin p) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t x = p.seed + k;
  for (uint32_t i = 0; i < p.rounds; i++)
    x = x * 1664525u + 1013904223u;
  p.out[k] = x;
}
