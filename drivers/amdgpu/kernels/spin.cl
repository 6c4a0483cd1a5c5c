// spin.cl: work that runs long enough to test asynchrony and the hang
// bound: thread k iterates a linear congruential step `rounds` times from
// seed + k and writes the result to out[k]. Parameter (16 bytes):
// struct { uint32_t *out; uint32_t rounds, seed; }.
#include "common.h"
struct spin { ulong out; uint rounds, seed; };
kernel void spin(struct spin p) {
  uint k = (uint)GLOBAL_ID();
  uint x = p.seed + k;
  for (uint i = 0; i < p.rounds; i++)
    x = x * 1664525u + 1013904223u;
  ((global uint *)p.out)[k] = x;
}
