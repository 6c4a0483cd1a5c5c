// scratch.cl: a kernel that uses private (scratch) memory, an array indexed
// at run time that cannot live in registers. The driver refuses its image
// at load, naming the kernel, until it provides scratch.
struct block { ulong out; long n; long at; long v[1021]; };
kernel void sum_private(global const struct block *b, int k) {
  volatile long scratch[64];
  for (int i = 0; i < 64; i++)
    scratch[i] = b->v[i];
  ((global long *)b->out)[b->at] = scratch[k & 63];
}
