/* reference.c: rig-llama's reference, the forward pass of a Llama-2 model
 * in plain single-threaded C with no rig: the checkpoint read whole with
 * stdio, every step written out as the architecture states it. The tests
 * (test_llama.py) compare rig-llama's tokens and logits with its own.
 *
 *   llama-reference CHECKPOINT STEPS [PROMPT_IDS] [LOGITS_FILE]
 *
 * Generates greedily from BOS, or from the comma-separated prompt ids
 * (forced as the llama2.c project's run program forces them), and prints
 * each next token's id followed by a space, then a newline, as rig-llama
 * does without a tokenizer; LOGITS_FILE gets every step's logits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct model {
  int dim, hidden, layers, heads, kv_heads, vocab, seq;
  float *emb, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *cls;
} model;

static float *take(float **at, size_t n) {
  float *p = *at;
  *at += n;
  return p;
}

static int load(const char *path, model *m, float **data) {
  FILE *f = fopen(path, "rb");
  int h[7];
  if (!f || fread(h, sizeof h, 1, f) != 1)
    return -1;
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f) - (long)sizeof h;
  fseek(f, sizeof h, SEEK_SET);
  *data = malloc((size_t)bytes);
  if (!*data || fread(*data, 1, (size_t)bytes, f) != (size_t)bytes)
    return -1;
  fclose(f);
  *m = (model){.dim = h[0],
               .hidden = h[1],
               .layers = h[2],
               .heads = h[3],
               .kv_heads = h[4],
               .vocab = abs(h[5]),
               .seq = h[6]};
  size_t dim = (size_t)m->dim, L = (size_t)m->layers, hid = (size_t)m->hidden;
  size_t kv = dim * (size_t)m->kv_heads / (size_t)m->heads, hs = dim / (size_t)m->heads;
  float *at = *data;
  m->emb = take(&at, (size_t)m->vocab * dim);
  m->rms_att = take(&at, L * dim);
  m->wq = take(&at, L * dim * dim);
  m->wk = take(&at, L * dim * kv);
  m->wv = take(&at, L * dim * kv);
  m->wo = take(&at, L * dim * dim);
  m->rms_ffn = take(&at, L * dim);
  m->w1 = take(&at, L * dim * hid);
  m->w2 = take(&at, L * hid * dim);
  m->w3 = take(&at, L * dim * hid);
  m->rms_final = take(&at, dim);
  take(&at, (size_t)m->seq * hs); /* the two unread RoPE tables */
  m->cls = h[5] > 0 ? m->emb : at;
  return 0;
}

static void rmsnorm(float *o, const float *x, const float *w, int n) {
  float ss = 0.0f;
  for (int j = 0; j < n; j++)
    ss += x[j] * x[j];
  ss /= n;
  ss += 1e-5f;
  ss = 1.0f / sqrtf(ss);
  for (int j = 0; j < n; j++)
    o[j] = w[j] * (ss * x[j]);
}

/* out = W x, W d rows of n. */
static void matmul(float *out, const float *x, const float *w, int n, int d) {
  for (int i = 0; i < d; i++) {
    float v = 0.0f;
    for (int j = 0; j < n; j++)
      v += w[(size_t)i * (size_t)n + (size_t)j] * x[j];
    out[i] = v;
  }
}

static void softmax(float *x, int n) {
  float max = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] > max)
      max = x[i];
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    x[i] = expf(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; i++)
    x[i] /= sum;
}

typedef struct state {
  float *x, *xb, *xb2, *hb, *hb2, *q, *att, *logits, *kc, *vc;
} state;

static void attention(const model *m, state *s, int l, int pos) {
  int dim = m->dim, hs = dim / m->heads, kv_dim = dim * m->kv_heads / m->heads;
  size_t loff = (size_t)l * (size_t)m->seq * (size_t)kv_dim;
  for (int h = 0; h < m->heads; h++) {
    float *q = s->q + h * hs, *att = s->att + h * m->seq;
    int kvh = h / (m->heads / m->kv_heads);
    for (int t = 0; t <= pos; t++) {
      const float *k = s->kc + loff + (size_t)t * (size_t)kv_dim + (size_t)(kvh * hs);
      float score = 0.0f;
      for (int i = 0; i < hs; i++)
        score += q[i] * k[i];
      att[t] = score / sqrtf((float)hs);
    }
    softmax(att, pos + 1);
    float *o = s->xb + h * hs;
    memset(o, 0, (size_t)hs * sizeof *o);
    for (int t = 0; t <= pos; t++) {
      const float *v = s->vc + loff + (size_t)t * (size_t)kv_dim + (size_t)(kvh * hs);
      for (int i = 0; i < hs; i++)
        o[i] += att[t] * v[i];
    }
  }
}

static void rope(const model *m, state *s, float *k, int pos) {
  int hs = m->dim / m->heads, kv_dim = m->dim * m->kv_heads / m->heads;
  for (int i = 0; i < m->dim; i += 2) {
    float freq = 1.0f / powf(10000.0f, (float)(i % hs) / (float)hs);
    float val = (float)pos * freq, fcr = cosf(val), fci = sinf(val);
    for (int v = 0; v < (i < kv_dim ? 2 : 1); v++) {
      float *vec = v == 0 ? s->q : k;
      float v0 = vec[i], v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}

static void forward(const model *m, state *s, int token, int pos) {
  int dim = m->dim, hid = m->hidden, kv_dim = dim * m->kv_heads / m->heads;
  memcpy(s->x, m->emb + (size_t)token * (size_t)dim, (size_t)dim * sizeof *s->x);
  for (int l = 0; l < m->layers; l++) {
    size_t L = (size_t)l;
    rmsnorm(s->xb, s->x, m->rms_att + L * (size_t)dim, dim);
    float *k = s->kc + (L * (size_t)m->seq + (size_t)pos) * (size_t)kv_dim;
    float *v = s->vc + (L * (size_t)m->seq + (size_t)pos) * (size_t)kv_dim;
    matmul(s->q, s->xb, m->wq + L * (size_t)dim * (size_t)dim, dim, dim);
    matmul(k, s->xb, m->wk + L * (size_t)dim * (size_t)kv_dim, dim, kv_dim);
    matmul(v, s->xb, m->wv + L * (size_t)dim * (size_t)kv_dim, dim, kv_dim);
    rope(m, s, k, pos);
    attention(m, s, l, pos);
    matmul(s->xb2, s->xb, m->wo + L * (size_t)dim * (size_t)dim, dim, dim);
    for (int i = 0; i < dim; i++)
      s->x[i] += s->xb2[i];
    rmsnorm(s->xb, s->x, m->rms_ffn + L * (size_t)dim, dim);
    matmul(s->hb, s->xb, m->w1 + L * (size_t)dim * (size_t)hid, dim, hid);
    matmul(s->hb2, s->xb, m->w3 + L * (size_t)dim * (size_t)hid, dim, hid);
    for (int i = 0; i < hid; i++) {
      float val = s->hb[i];
      val *= (1.0f / (1.0f + expf(-val)));
      s->hb[i] = val * s->hb2[i];
    }
    matmul(s->xb, s->hb, m->w2 + L * (size_t)dim * (size_t)hid, hid, dim);
    for (int i = 0; i < dim; i++)
      s->x[i] += s->xb[i];
  }
  rmsnorm(s->x, s->x, m->rms_final, dim);
  matmul(s->logits, s->x, m->cls, dim, m->vocab);
}

int main(int argc, char **argv) {
  model m;
  float *data;
  if (argc < 3 || load(argv[1], &m, &data) != 0) {
    fprintf(stderr, "usage: llama-reference CHECKPOINT STEPS [PROMPT_IDS] [LOGITS_FILE]\n");
    return 2;
  }
  int steps = atoi(argv[2]), prompt[1024] = {1}, np = 1;
  if (steps <= 0 || steps > m.seq)
    steps = m.seq;
  if (argc > 3 && argv[3][0]) /* the prompt's ids, BOS first */
    np = 0;
  for (char *p = argc > 3 ? argv[3] : "", *end; *p && np < 1024; p = end + (*end == ',')) {
    long id = strtol(p, &end, 10);
    if (end == p || id < 0 || id >= m.vocab) {
      fprintf(stderr, "llama-reference: a prompt id that is not a token's: %s\n", p);
      return 2;
    }
    prompt[np++] = (int)id;
  }
  FILE *lf = argc > 4 ? fopen(argv[4], "wb") : NULL;
  size_t kv = (size_t)m.layers * (size_t)m.seq * (size_t)(m.dim * m.kv_heads / m.heads);
  state s = {calloc((size_t)m.dim, 4),
             calloc((size_t)m.dim, 4),
             calloc((size_t)m.dim, 4),
             calloc((size_t)m.hidden, 4),
             calloc((size_t)m.hidden, 4),
             calloc((size_t)m.dim, 4),
             calloc((size_t)(m.heads * m.seq), 4),
             calloc((size_t)m.vocab, 4),
             calloc(kv, 4),
             calloc(kv, 4)};
  int token = prompt[0];
  for (int pos = 0; pos < steps;) {
    forward(&m, &s, token, pos);
    if (lf)
      fwrite(s.logits, 4, (size_t)m.vocab, lf);
    int next = 0;
    for (int i = 1; i < m.vocab; i++)
      if (s.logits[i] > s.logits[next])
        next = i;
    if (pos < np - 1)
      next = prompt[pos + 1];
    pos++;
    if (next == 1)
      break;
    printf("%d ", next);
    token = next;
  }
  printf("\n");
  if (lf)
    fclose(lf);
  float *all[] = {s.x, s.xb, s.xb2, s.hb, s.hb2, s.q, s.att, s.logits, s.kc, s.vc, data};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    free(all[i]);
  return 0;
}
