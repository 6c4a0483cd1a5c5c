// swiglu.cu: llama_swiglu of kernels.c for CUDA: one thread per element.
#include "llama.cuh"
KERNEL void llama_swiglu(struct llama_swiglu p) {
  int64_t i = thread_index();
  if (i >= p.n)
    return;
  float val = p.hb[i];
  val *= (1.0f / (1.0f + dev_expf(-val)));
  p.hb[i] = val * p.hb2[i];
}
