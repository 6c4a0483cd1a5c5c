/* kernels.h: the parameter blocks of the forward pass's kernels, shared by
 * the host kernels (kernels.c), the program that launches them (stage.c)
 * and bench P12's anchor. Every field is 8 bytes, pointers first, so that
 * a ref's byte (a multiple of 8) and each int64 setter's offset are the
 * field's offsetof; the GLSL (vulkan/NAME.comp) and CUDA (cuda/NAME.cu) kernels
 * declare the same layouts. */
#ifndef RIG_LLAMA_KERNELS_H
#define RIG_LLAMA_KERNELS_H

#include <stdint.h>

/* The step: step[0] is the position, step[1] the token, in device memory
 * that the program rewrites before each token, so that every parameter
 * block stays the same from token to token (docs/real-work.md says why). */
struct llama_embed {
  const float *table;
  float *x;
  const int64_t *step;
  int64_t dim;
};
struct llama_rmsnorm {
  const float *x, *w;
  float *o;
  int64_t n;
};
struct llama_matvec {
  const float *w, *x;
  float *out;
  const int64_t *step;
  int64_t n, d, pos_mul, acc; /* out's first row: step[0] * pos_mul */
};
struct llama_rope {
  float *q, *k; /* k: the cache, whose row step[0] is rotated */
  const float *table;
  const int64_t *step;
  int64_t dim, kv_dim, head_size;
};
struct llama_attention {
  const float *q, *kc, *vc;
  float *att, *out;
  const int64_t *step;
  int64_t n_heads, kv_mul, head_size, kv_dim, seq_len;
};
struct llama_swiglu {
  float *hb;
  const float *hb2;
  int64_t n;
};

typedef void (*llama_kernel_fn)(const void *params, int64_t first, int64_t end);
void llama_embed(const struct llama_embed *p, int64_t first, int64_t end);
void llama_rmsnorm(const struct llama_rmsnorm *p, int64_t first, int64_t end);
void llama_matvec(const struct llama_matvec *p, int64_t first, int64_t end);
void llama_rope(const struct llama_rope *p, int64_t first, int64_t end);
void llama_attention(const struct llama_attention *p, int64_t first, int64_t end);
void llama_swiglu(const struct llama_swiglu *p, int64_t first, int64_t end);

#endif
