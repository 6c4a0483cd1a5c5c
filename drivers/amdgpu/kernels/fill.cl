// fill.cl: word i of dst becomes pattern + i * step for i < n. Parameter
// (24 bytes): struct { uint32_t *dst; uint32_t pattern, step, n; }.
#include "common.h"
struct fill { ulong dst; uint pattern, step, n; };
kernel void fill(struct fill p) {
  uint i = (uint)GLOBAL_ID();
  if (i < p.n)
    ((global uint *)p.dst)[i] = p.pattern + i * p.step;
}
