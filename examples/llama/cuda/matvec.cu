// matvec.cu: llama_matvec of kernels.c for CUDA: one thread per row.
#include "llama.cuh"
KERNEL void llama_matvec(struct llama_matvec p) {
  int64_t i = thread_index();
  if (i >= p.d)
    return;
  const float *row = p.w + i * p.n;
  float val = 0.0f;
  for (int64_t j = 0; j < p.n; j++)
    val = __nvvm_add_rn_f(val, __nvvm_mul_rn_f(row[j], p.x[j]));
  if (p.acc)
    p.out[p.step[0] * p.pos_mul + i] += val;
  else
    p.out[p.step[0] * p.pos_mul + i] = val;
}
