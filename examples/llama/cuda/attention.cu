// attention.cu: llama_attention of kernels.c for CUDA: one thread per head.
#include "llama.cuh"
KERNEL void llama_attention(struct llama_attention p) {
  int64_t h = thread_index();
  if (h >= p.n_heads)
    return;
  int64_t pos = p.step[0], hs = p.head_size, kvo = (h / p.kv_mul) * hs;
  const float *q = p.q + h * hs;
  float *att = p.att + h * p.seq_len;
  for (int64_t t = 0; t <= pos; t++) {
    const float *k = p.kc + t * p.kv_dim + kvo;
    float score = 0.0f;
    for (int64_t i = 0; i < hs; i++)
      score = __nvvm_add_rn_f(score, __nvvm_mul_rn_f(q[i], k[i]));
    att[t] = score / dev_sqrtf((float)hs);
  }
  float max = att[0];
  for (int64_t t = 1; t <= pos; t++)
    max = att[t] > max ? att[t] : max;
  float sum = 0.0f;
  for (int64_t t = 0; t <= pos; t++) {
    att[t] = dev_expf(att[t] - max);
    sum += att[t];
  }
  for (int64_t t = 0; t <= pos; t++)
    att[t] /= sum;
  float *o = p.out + h * hs;
  for (int64_t i = 0; i < hs; i++) {
    float acc = 0.0f;
    for (int64_t t = 0; t <= pos; t++)
      acc = __nvvm_add_rn_f(acc, __nvvm_mul_rn_f(att[t], p.vc[t * p.kv_dim + kvo + i]));
    o[i] = acc;
  }
}
