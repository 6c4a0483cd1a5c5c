// rmsnorm.cu: llama_rmsnorm of kernels.c for CUDA: each thread sums all of
// x in the reference's order, then writes its element.
#include "llama.cuh"
KERNEL void llama_rmsnorm(struct llama_rmsnorm p) {
  int64_t i = thread_index();
  if (i >= p.n)
    return;
  float ss = 0.0f;
  for (int64_t j = 0; j < p.n; j++)
    ss = __nvvm_add_rn_f(ss, __nvvm_mul_rn_f(p.x[j], p.x[j]));
  ss /= (float)p.n;
  ss += 1e-5f;
  ss = 1.0f / dev_sqrtf(ss);
  p.o[i] = p.w[i] * (ss * p.x[i]);
}
