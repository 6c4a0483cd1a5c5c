// embed.cu: llama_embed of kernels.c for CUDA. One thread per element.
#include "llama.cuh"
KERNEL void llama_embed(struct llama_embed p) {
  int64_t i = thread_index();
  if (i < p.dim)
    p.x[i] = p.table[p.step[1] * p.dim + i];
}
