// double.cl: rig demo's kernel: x[i] *= 2 for i < n. Parameter (16 bytes):
// struct { float *x; int64_t n; }. Its entry is "twice".
#include "common.h"
struct twice { ulong x; long n; };
kernel void twice(struct twice p) {
  long i = (long)GLOBAL_ID();
  if (i < p.n)
    ((global float *)p.x)[i] *= 2.0f;
}
