/* Kernels written the way llama2.c writes its forward pass (rmsnorm,
 * softmax, matmul, RoPE, SwiGLU, the residual copy): plain C loops over
 * float arrays with <math.h> and <string.h>, unchanged, each behind the
 * smallest wrapper a host launch needs (docs/kernels.md): a parameter block
 * and f(params, first, end) over rows. Built with the documented command
 * (docs/linker.md) and, in test-link-thirdparty, natively from the same
 * source, which the test compares bit for bit. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- as llama2.c writes them -------------------------------------------- */

static void rmsnorm(float *o, const float *x, const float *weight, int size) {
  float ss = 0.0f;
  for (int j = 0; j < size; j++)
    ss += x[j] * x[j];
  ss /= size;
  ss += 1e-5f;
  ss = 1.0f / sqrtf(ss);
  for (int j = 0; j < size; j++)
    o[j] = weight[j] * (ss * x[j]);
}

static void softmax(float *x, int size) {
  float max_val = x[0];
  for (int i = 1; i < size; i++)
    if (x[i] > max_val)
      max_val = x[i];
  float sum = 0.0f;
  for (int i = 0; i < size; i++) {
    x[i] = expf(x[i] - max_val);
    sum += x[i];
  }
  for (int i = 0; i < size; i++)
    x[i] /= sum;
}

/* W (d,n) @ x (n,) -> xout (d,), for rows [first, end). */
static void matmul_rows(float *xout, const float *x, const float *w, int n, int64_t first,
                        int64_t end) {
  for (int64_t i = first; i < end; i++) {
    float val = 0.0f;
    for (int j = 0; j < n; j++)
      val += w[i * n + j] * x[j];
    xout[i] = val;
  }
}

static void rope(float *q, int dim, int head_size, int pos) {
  for (int i = 0; i < dim; i += 2) {
    int head_dim = i % head_size;
    float freq = 1.0f / powf(10000.0f, head_dim / (float)head_size);
    float val = pos * freq;
    float fcr = cosf(val);
    float fci = sinf(val);
    float v0 = q[i];
    float v1 = q[i + 1];
    q[i] = v0 * fcr - v1 * fci;
    q[i + 1] = v0 * fci + v1 * fcr;
  }
}

static void swiglu(float *hb, const float *hb2, int hidden_dim) {
  for (int i = 0; i < hidden_dim; i++) {
    float val = hb[i];
    val *= (1.0f / (1.0f + expf(-val)));
    val *= hb2[i];
    hb[i] = val;
  }
}

/* ---- the wrappers: one launch thread a row -------------------------------- */

/* Rows of a (rows, dim) batch: out = rmsnorm(x) * weight. */
struct llama_rmsnorm {
  float *out;
  const float *x, *weight;
  int64_t dim;
};
void llama_rmsnorm(const struct llama_rmsnorm *p, int64_t first, int64_t end) {
  for (int64_t r = first; r < end; r++)
    rmsnorm(p->out + r * p->dim, p->x + r * p->dim, p->weight, (int)p->dim);
}

/* Rows of attention scores, each softmaxed in place. */
struct llama_softmax {
  float *att;
  int64_t len;
};
void llama_softmax(const struct llama_softmax *p, int64_t first, int64_t end) {
  for (int64_t r = first; r < end; r++)
    softmax(p->att + r * p->len, (int)p->len);
}

/* xout = W @ x, a thread a row of W. */
struct llama_matmul {
  float *xout;
  const float *x, *w;
  int64_t n;
};
void llama_matmul(const struct llama_matmul *p, int64_t first, int64_t end) {
  matmul_rows(p->xout, p->x, p->w, (int)p->n, first, end);
}

/* Rows of q: copied from the residual stream (memcpy), rotated at
 * position pos + row, then the SwiGLU of the row with gate. */
struct llama_block {
  float *q;
  const float *x, *gate;
  int64_t dim, head_size, pos;
};
void llama_block(const struct llama_block *p, int64_t first, int64_t end) {
  for (int64_t r = first; r < end; r++) {
    float *q = p->q + r * p->dim;
    memcpy(q, p->x + r * p->dim, (size_t)p->dim * sizeof *q);
    rope(q, (int)p->dim, (int)p->head_size, (int)(p->pos + r));
    swiglu(q, p->gate + r * p->dim, (int)p->dim);
  }
}
