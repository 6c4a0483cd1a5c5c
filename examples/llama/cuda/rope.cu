// rope.cu: llama_rope of kernels.c for CUDA: one thread per pair.
#include "llama.cuh"
KERNEL void llama_rope(struct llama_rope p) {
  int64_t i = 2 * thread_index();
  if (i >= p.dim)
    return;
  int64_t pos = p.step[0];
  const float *cs = p.table + 2 * (pos * (p.head_size / 2) + (i % p.head_size) / 2);
  float fcr = cs[0], fci = cs[1];
  float *vecs[2] = {p.q, p.k + pos * p.kv_dim};
  int rotn = i < p.kv_dim ? 2 : 1;
  for (int v = 0; v < rotn; v++) {
    float *vec = vecs[v];
    float v0 = vec[i], v1 = vec[i + 1];
    vec[i] = __nvvm_add_rn_f(__nvvm_mul_rn_f(v0, fcr), -__nvvm_mul_rn_f(v1, fci));
    vec[i + 1] = __nvvm_add_rn_f(__nvvm_mul_rn_f(v0, fci), __nvvm_mul_rn_f(v1, fcr));
  }
}
