/* kernels.c: the forward pass's kernels for the host's cores. Built twice
 * from this one file with the same flags: by clang into a relocatable ELF
 * object that rig's host linker links (rig-llama), and into bench P12's
 * OpenMP anchor, so that the two run the same code. Each kernel is a host
 * launch's function, f(params, first, end) over the threads [first, end)
 * of its grid (LAUNCH-4); kernels.h holds the parameter blocks, which the
 * GLSL and CUDA kernels take in the same layout.
 *
 * The arithmetic is llama2.c's run.c, operation for operation (the same
 * sums in the same order), so that tests/llama/reference.c's logits are
 * matched to rounding: expf and sqrtf come from the process's libm through
 * the linker's stubs, as the reference's do. */
#include "kernels.h"

float expf(float);
float sqrtf(float);

/* x = the token's row of the embedding table: one thread per element. */
void llama_embed(const struct llama_embed *p, int64_t first, int64_t end) {
  const float *row = p->table + p->step[1] * p->dim;
  for (int64_t i = first; i < end && i < p->dim; i++)
    p->x[i] = row[i];
}

/* o = w * (x / rms(x)): each call sums the squares of all of x (n is a
 * model's dim, a few hundred) in the reference's order, then writes its
 * range, so any split of the threads gives the same bits. o is never x. */
void llama_rmsnorm(const struct llama_rmsnorm *p, int64_t first, int64_t end) {
  float ss = 0.0f;
  for (int64_t j = 0; j < p->n; j++)
    ss += p->x[j] * p->x[j];
  ss /= (float)p->n;
  ss += 1e-5f;
  ss = 1.0f / sqrtf(ss);
  for (int64_t i = first; i < end && i < p->n; i++)
    p->o[i] = p->w[i] * (ss * p->x[i]);
}

/* out[off + i] = W[i, :] . x (W is d rows of n), or out[off + i] += it
 * with acc: the residual connection; off is the position times pos_mul
 * (a key or value straight into its cache row). One thread per row; a launch of d
 * rows is split over the pool's groups. */
void llama_matvec(const struct llama_matvec *p, int64_t first, int64_t end) {
  int64_t n = p->n, off = p->step[0] * p->pos_mul;
  for (int64_t i = first; i < end && i < p->d; i++) {
    const float *row = p->w + i * n;
    float val = 0.0f;
    for (int64_t j = 0; j < n; j++)
      val += row[j] * p->x[j];
    if (p->acc)
      p->out[off + i] += val;
    else
      p->out[off + i] = val;
  }
}

/* Rotates the pairs (2i, 2i+1) of q, and of k's row pos below kv_dim, by
 * the table's cos and sin for pos. One thread per pair. */
void llama_rope(const struct llama_rope *p, int64_t first, int64_t end) {
  int64_t pos = p->step[0];
  for (int64_t t = first; t < end && 2 * t < p->dim; t++) {
    int64_t i = 2 * t;
    const float *cs = p->table + 2 * (pos * (p->head_size / 2) + (i % p->head_size) / 2);
    float fcr = cs[0], fci = cs[1];
    float *vecs[2] = {p->q, p->k + pos * p->kv_dim};
    int rotn = i < p->kv_dim ? 2 : 1;
    for (int v = 0; v < rotn; v++) {
      float *vec = vecs[v];
      float v0 = vec[i], v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}

/* Attention of head h over positions 0..pos of this layer's cache: scores,
 * softmax, the weighted sum of values into out. One thread per head. */
void llama_attention(const struct llama_attention *p, int64_t first, int64_t end) {
  int64_t hs = p->head_size, pos = p->step[0];
  for (int64_t h = first; h < end && h < p->n_heads; h++) {
    const float *q = p->q + h * hs;
    float *att = p->att + h * p->seq_len;
    int64_t kvo = (h / p->kv_mul) * hs;
    for (int64_t t = 0; t <= pos; t++) {
      const float *k = p->kc + t * p->kv_dim + kvo;
      float score = 0.0f;
      for (int64_t i = 0; i < hs; i++)
        score += q[i] * k[i];
      score /= sqrtf((float)hs);
      att[t] = score;
    }
    float max = att[0];
    for (int64_t t = 1; t <= pos; t++)
      if (att[t] > max)
        max = att[t];
    float sum = 0.0f;
    for (int64_t t = 0; t <= pos; t++) {
      att[t] = expf(att[t] - max);
      sum += att[t];
    }
    for (int64_t t = 0; t <= pos; t++)
      att[t] /= sum;
    float *o = p->out + h * hs;
    for (int64_t i = 0; i < hs; i++)
      o[i] = 0.0f;
    for (int64_t t = 0; t <= pos; t++) {
      const float *v = p->vc + t * p->kv_dim + kvo;
      float a = att[t];
      for (int64_t i = 0; i < hs; i++)
        o[i] += a * v[i];
    }
  }
}

/* SwiGLU: hb = silu(hb) * hb2, one thread per element. */
void llama_swiglu(const struct llama_swiglu *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++) {
    float val = p->hb[i];
    val *= (1.0f / (1.0f + expf(-val)));
    val *= p->hb2[i];
    p->hb[i] = val;
  }
}
