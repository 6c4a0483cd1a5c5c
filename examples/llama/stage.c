/* stage.c: one device's share of the forward pass (stage.h). Every buffer
 * is made at build; the submission names each by a fixed ref, so a submit
 * passes no slots, and rig orders each launch after the parts whose memory
 * it shares (ORDER-3): no wait is written here. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "stage.h"

#define GPU_GROUP 64 /* threads of a group on a GPU */

/* What a stage collects while it builds its submission. */
typedef struct builder {
  llama_stage *s;
  const llama_config *c;
  rig_part *parts;
  rig_ref *refs;
  size_t nparts, nrefs, cap;
  char *why;
  size_t why_bytes;
} builder;

static int fail(builder *b, const char *what) {
  snprintf(b->why, b->why_bytes, "%s: %s", what, rig_error_last()->message);
  return -1;
}

/* A buffer of n bytes on the stage's device, and its borrow where the
 * host's cores run the kernels; NULL own on failure. */
static llama_mem mem_new(builder *b, size_t n) {
  llama_stage *s = b->s;
  llama_mem m = {0};
  if (s->nmems == s->cap_mems) {
    size_t cap = s->cap_mems ? 2 * s->cap_mems : 64;
    llama_mem *more = realloc(s->mems, cap * sizeof *more);
    if (!more) {
      snprintf(b->why, b->why_bytes, "out of host memory");
      return m;
    }
    s->mems = more;
    s->cap_mems = cap;
  }
  if (rig_buffer_create(s->dev, n, &m.own) != RIG_OK) {
    fail(b, "a buffer");
    return (llama_mem){0};
  }
  if (s->run_on == s->dev)
    m.use = rig_buffer_retain(m.own);
  else if (rig_buffer_borrow(s->run_on, m.own, &m.use) != RIG_OK) {
    fail(b, "a borrow on the host");
    rig_buffer_release(m.own);
    return (llama_mem){0};
  }
  s->mems[s->nmems++] = m;
  return m;
}

/* A buffer holding tensor t of layer l, copied from the file by rig: from
 * the io device's memory into the device's, with no copy of the model in
 * the program's memory. */
static llama_mem mem_load(builder *b, rig_device *file, enum llama_tensor t, int l) {
  size_t bytes;
  uint64_t at = llama_tensor_at(b->c, t, l, &bytes);
  llama_mem m = mem_new(b, bytes);
  if (!m.own)
    return m;
  rig_buffer *src;
  if (rig_buffer_of_io(file, at, bytes, &src) != RIG_OK) {
    fail(b, "the checkpoint");
    return (llama_mem){0};
  }
  rig_status st = rig_buffer_copy(src, m.own);
  rig_buffer_release(src);
  if (st != RIG_OK) {
    fail(b, "a tensor from the checkpoint");
    return (llama_mem){0};
  }
  return m;
}

/* The RoPE table: cos and sin of pos * freq for each position and pair of
 * a head, computed as the reference computes them. */
static llama_mem rope_table(builder *b) {
  const llama_config *c = b->c;
  int hs = c->dim / c->n_heads;
  size_t n = (size_t)c->seq_len * (size_t)hs;
  float *t = malloc(n * sizeof *t);
  if (!t) {
    snprintf(b->why, b->why_bytes, "out of host memory");
    return (llama_mem){0};
  }
  for (int pos = 0; pos < c->seq_len; pos++)
    for (int i = 0; i < hs; i += 2) {
      float freq = 1.0f / powf(10000.0f, (float)i / (float)hs);
      float val = (float)pos * freq;
      t[(size_t)pos * (size_t)hs + (size_t)i] = cosf(val);
      t[(size_t)pos * (size_t)hs + (size_t)i + 1] = sinf(val);
    }
  llama_mem m = mem_new(b, n * sizeof *t);
  if (m.own && rig_buffer_put(m.own, 0, t, n * sizeof *t) != RIG_OK) {
    fail(b, "the RoPE table");
    m = (llama_mem){0};
  }
  free(t);
  return m;
}

/* Loads the kernels on the device that runs them. */
static int load_code(builder *b, const llama_code *code) {
  llama_stage *s = b->s;
  const char *name = rig_device_name(s->run_on);
  bool vulkan = strncmp(name, "vulkan", 6) == 0, cuda = strncmp(name, "cuda", 4) == 0;
  for (int f = 0; f < LF_COUNT; f++) {
    const void *bytes = vulkan ? code->spirv[f] : cuda ? code->ptx[f] : code->host;
    size_t n = vulkan ? code->spirv_bytes[f] : cuda ? code->ptx_bytes[f] : code->host_bytes;
    if (!bytes) {
      snprintf(b->why, b->why_bytes, "%s: this program carries no %s code for %s", name,
               vulkan ? "SPIR-V"
               : cuda ? "PTX"
                      : "host",
               llama_fn_names[f]);
      return -1;
    }
    if (f == 0 || vulkan || cuda) { /* the host's one object holds every kernel */
      if (rig_image_load(s->run_on, bytes, n, &s->images[f]) != RIG_OK)
        return fail(b, "loading the kernels");
    }
    rig_image *im = s->images[vulkan || cuda ? f : 0];
    rig_function *fn;
    if (rig_image_resolve(im, llama_fn_names[f], &fn) != RIG_OK)
      return fail(b, llama_fn_names[f]);
    if (!fn) {
      snprintf(b->why, b->why_bytes, "%s: no function %s in its code", name, llama_fn_names[f]);
      return -1;
    }
    s->fn[f] = fn;
  }
  return 0;
}

/* One ref: mem m read (or read and written) at byte at of the block. */
typedef struct ref_of {
  llama_mem m;
  bool write;
  uint32_t at;
} ref_of;

/* Adds a launch of f over n threads with its refs and its integer
 * parameters from int_off on. Elementwise kernels run as one group on the
 * host (one call, no hand-off to the pool); row and head kernels as one
 * group per row, which the pool shares out; on a GPU, groups of GPU_GROUP
 * threads. */
static int launch(builder *b, enum llama_fn f, const ref_of *r, uint32_t nr, uint32_t params,
                  int64_t n, bool rows, uint32_t int_off, const int64_t *ints, uint32_t nints) {
  llama_stage *s = b->s;
  if (b->nparts == b->cap || b->nrefs + nr > 8 * b->cap || nints > LLAMA_MAX_INTS) {
    snprintf(b->why, b->why_bytes, "too many parts");
    return -1;
  }
  rig_ref *refs = b->refs + b->nrefs;
  for (uint32_t i = 0; i < nr; i++)
    refs[i] = rig_ref_fixed(r[i].m.use, r[i].write ? RIG_READ_WRITE : RIG_READ, r[i].at);
  b->nrefs += nr;
  llama_launch *l = &s->launches[b->nparts];
  *l = (llama_launch){.int_off = int_off, .nints = nints};
  memcpy(l->ints, ints, nints * sizeof *ints);
  if (s->run_on == rig_device_host()) {
    l->groups = rows ? (uint64_t)n : 1;
    l->threads = rows ? 1 : (uint64_t)n;
  } else {
    l->threads = GPU_GROUP;
    l->groups = ((uint64_t)n + GPU_GROUP - 1) / GPU_GROUP;
  }
  b->parts[b->nparts++] = rig_part_launch(s->fn[f], refs, nr, params);
  return 0;
}

#define NR(a) (uint32_t)(sizeof a / sizeof a[0])
#define INTS(a) a, NR(a)

static int rmsnorm(builder *b, llama_mem x, llama_mem w, llama_mem o) {
  ref_of r[] = {{x, false, 0}, {w, false, 8}, {o, true, 16}};
  int64_t v[] = {b->c->dim};
  return launch(b, LF_RMSNORM, r, NR(r), sizeof(struct llama_rmsnorm), b->c->dim, false,
                offsetof(struct llama_rmsnorm, n), INTS(v));
}

/* out[pos * pos_mul ...] (+)= W x, W d rows of n. */
static int matvec(builder *b, llama_mem w, llama_mem x, llama_mem out, int64_t n, int64_t d,
                  int64_t pos_mul, bool acc) {
  ref_of r[] = {{w, false, 0}, {x, false, 8}, {out, true, 16}, {b->s->step, false, 24}};
  int64_t v[] = {n, d, pos_mul, acc};
  return launch(b, LF_MATVEC, r, NR(r), sizeof(struct llama_matvec), d, true,
                offsetof(struct llama_matvec, n), INTS(v));
}

/* The attention half of layer l: norm, q k v (k and v straight into the
 * cache's row pos), rotation, attention, the output projection added to x. */
static int attention_half(builder *b, const llama_mem *w, llama_mem kc, llama_mem vc,
                          const llama_mem *a) {
  const llama_config *c = b->c;
  int64_t dim = c->dim, hs = dim / c->n_heads, kv_dim = dim * c->n_kv_heads / c->n_heads;
  llama_mem x = a[0], xb = a[1], q = a[2], att = a[3], table = a[4];
  if (rmsnorm(b, x, w[LT_RMS_ATT], xb) || matvec(b, w[LT_WQ], xb, q, dim, dim, 0, false) ||
      matvec(b, w[LT_WK], xb, kc, dim, kv_dim, kv_dim, false) ||
      matvec(b, w[LT_WV], xb, vc, dim, kv_dim, kv_dim, false))
    return -1;
  llama_mem step = b->s->step;
  ref_of rr[] = {{q, true, 0}, {kc, true, 8}, {table, false, 16}, {step, false, 24}};
  int64_t rv[] = {dim, kv_dim, hs};
  if (launch(b, LF_ROPE, rr, NR(rr), sizeof(struct llama_rope), dim / 2, false,
             offsetof(struct llama_rope, dim), INTS(rv)))
    return -1;
  ref_of ar[] = {{q, false, 0},   {kc, false, 8}, {vc, false, 16},
                 {att, true, 24}, {xb, true, 32}, {step, false, 40}};
  int64_t av[] = {c->n_heads, c->n_heads / c->n_kv_heads, hs, kv_dim, c->seq_len};
  if (launch(b, LF_ATTENTION, ar, NR(ar), sizeof(struct llama_attention), c->n_heads, true,
             offsetof(struct llama_attention, n_heads), INTS(av)))
    return -1;
  return matvec(b, w[LT_WO], xb, x, dim, dim, 0, true);
}

/* The feed-forward half: norm, w1 and w3, SwiGLU, w2 added to x. */
static int ffn_half(builder *b, const llama_mem *w, const llama_mem *a) {
  const llama_config *c = b->c;
  int64_t dim = c->dim, hid = c->hidden_dim;
  llama_mem x = a[0], xb = a[1], hb = a[5], hb2 = a[6];
  if (rmsnorm(b, x, w[LT_RMS_FFN], xb) || matvec(b, w[LT_W1], xb, hb, dim, hid, 0, false) ||
      matvec(b, w[LT_W3], xb, hb2, dim, hid, 0, false))
    return -1;
  ref_of sr[] = {{hb, true, 0}, {hb2, false, 8}};
  int64_t sv[] = {hid};
  if (launch(b, LF_SWIGLU, sr, NR(sr), sizeof(struct llama_swiglu), hid, false,
             offsetof(struct llama_swiglu, n), INTS(sv)))
    return -1;
  return matvec(b, w[LT_W2], hb, x, hid, dim, 0, true);
}

/* The activations: x, xb, q, att, the RoPE table, hb, hb2. */
static int activations(builder *b, llama_mem *a) {
  const llama_config *c = b->c;
  size_t f = sizeof(float);
  size_t sizes[] = {(size_t)c->dim * f,
                    (size_t)c->dim * f,
                    (size_t)c->dim * f,
                    (size_t)c->n_heads * (size_t)c->seq_len * f,
                    0,
                    (size_t)c->hidden_dim * f,
                    (size_t)c->hidden_dim * f};
  for (int i = 0; i < 7; i++) {
    a[i] = i == 4 ? rope_table(b) : mem_new(b, sizes[i]);
    if (!a[i].own)
      return -1;
  }
  return 0;
}

static int layers(builder *b, rig_device *file, const llama_mem *a) {
  const llama_config *c = b->c;
  size_t cache = (size_t)c->seq_len * (size_t)(c->dim * c->n_kv_heads / c->n_heads) * sizeof(float);
  for (int l = b->s->l0; l < b->s->l1; l++) {
    llama_mem w[LT_COUNT] = {{0}};
    for (int t = LT_RMS_ATT; t <= LT_W3; t++)
      if (!(w[t] = mem_load(b, file, (enum llama_tensor)t, l)).own)
        return -1;
    llama_mem kc = mem_new(b, cache), vc = mem_new(b, cache);
    if (!kc.own || !vc.own || attention_half(b, w, kc, vc, a) || ffn_half(b, w, a))
      return -1;
  }
  return 0;
}

static int ends(builder *b, rig_device *file, const llama_mem *a, bool first) {
  llama_stage *s = b->s;
  const llama_config *c = b->c;
  if (first) {
    llama_mem table = mem_load(b, file, LT_EMBED, 0);
    if (!table.own)
      return -1;
    ref_of r[] = {{table, false, 0}, {a[0], true, 8}, {s->step, false, 16}};
    int64_t v[] = {c->dim};
    return launch(b, LF_EMBED, r, NR(r), sizeof(struct llama_embed), c->dim, false,
                  offsetof(struct llama_embed, dim), INTS(v));
  }
  llama_mem norm = mem_load(b, file, LT_RMS_FINAL, 0), cls = mem_load(b, file, LT_CLASSIFIER, 0);
  s->logits = mem_new(b, (size_t)c->vocab_size * sizeof(float));
  if (!norm.own || !cls.own || !s->logits.own || rmsnorm(b, a[0], norm, a[1]))
    return -1;
  return matvec(b, cls, a[1], s->logits, c->dim, c->vocab_size, 0, false);
}

/* The step's way in on a device that runs no code: a copy on its queue
 * from step_in, which the host writes, into step, which the kernels read
 * through their borrows; they follow the copy by its point. */
static int step_copy(llama_stage *s, char *why, size_t n) {
  rig_part copy = rig_part_copy(0, 1);
  if (rig_buffer_create(s->dev, 2 * sizeof(int64_t), &s->step_in) != RIG_OK ||
      rig_submission_make(s->dev, &copy, 1, &s->step_copy) != RIG_OK) {
    snprintf(why, n, "the step's copy: %s", rig_error_last()->message);
    return -1;
  }
  return 0;
}

/* Puts {pos, token} where the kernels read it. */
static rig_status put_step(llama_stage *s, int token, int pos) {
  int64_t step[2] = {pos, token};
  if (!s->step_copy)
    return rig_buffer_put(s->step.own, 0, step, sizeof step);
  rig_run *run;
  rig_point p;
  rig_buffer *slots[2] = {s->step_in, s->step.own};
  rig_status st = rig_buffer_put(s->step_in, 0, step, sizeof step);
  if (st == RIG_OK)
    st = rig_submission_take(s->step_copy, &run);
  return st == RIG_OK ? rig_run_submit(run, slots, 2, NULL, 0, &p) : st;
}

int llama_stage_build(llama_stage *s, const llama_config *c, rig_device *file,
                      const llama_code *code, char *why, size_t n) {
  size_t cap = (size_t)(s->l1 - s->l0) * 12 + 4;
  builder b = {.s = s, .c = c, .cap = cap, .why = why, .why_bytes = n};
  b.parts = calloc(cap, sizeof *b.parts);
  b.refs = calloc(8 * cap, sizeof *b.refs);
  s->launches = calloc(cap, sizeof *s->launches);
  llama_mem a[7];
  int r = -1;
  if (!b.parts || !b.refs || !s->launches)
    snprintf(why, n, "out of host memory");
  else if (load_code(&b, code) == 0 && (s->step = mem_new(&b, 2 * sizeof(int64_t))).own &&
           activations(&b, a) == 0 && (!s->first || ends(&b, file, a, true) == 0) &&
           layers(&b, file, a) == 0 && (!s->last || ends(&b, file, a, false) == 0)) {
    s->x = a[0];
    if (rig_submission_make(s->run_on, b.parts, b.nparts, &s->sub) != RIG_OK)
      fail(&b, "the forward pass's submission");
    else
      r = s->run_on != s->dev ? step_copy(s, why, n) : 0;
    for (size_t i = 0; r == 0 && i < b.nparts; i++)
      if (rig_submission_block(s->sub, (uint32_t)i, &s->launches[i].k) != RIG_OK)
        r = fail(&b, "a launch's block");
    s->nlaunches = b.nparts;
  }
  free(b.parts);
  free(b.refs);
  return r;
}

rig_status llama_stage_submit(llama_stage *s, int token, int pos, rig_point *out) {
  rig_status st = put_step(s, token, pos);
  rig_run *run;
  if (st != RIG_OK || (st = rig_submission_take(s->sub, &run)) != RIG_OK)
    return st;
  for (size_t i = 0; st == RIG_OK && i < s->nlaunches; i++) {
    const llama_launch *l = &s->launches[i];
    if ((st = rig_run_groups(run, l->k, l->groups, 1, 1)) != RIG_OK ||
        (st = rig_run_threads(run, l->k, l->threads, 1, 1)) != RIG_OK)
      break;
    st = rig_run_bytes(run, l->k, l->int_off, l->ints, l->nints * (uint32_t)sizeof *l->ints);
  }
  if (st != RIG_OK) { /* a setter out of its block: the run goes back untaken */
    rig_status dropped = rig_run_drop(run);
    (void)dropped; /* this thread's taken run: never refused */
    return st;
  }
  return rig_run_submit(run, NULL, 0, NULL, 0, out);
}

void llama_stage_free(llama_stage *s) {
  if (s->sub)
    rig_submission_release(s->sub);
  if (s->step_copy)
    rig_submission_release(s->step_copy);
  rig_buffer_release(s->step_in);
  for (size_t i = 0; i < s->nmems; i++) {
    rig_buffer_release(s->mems[i].use);
    rig_buffer_release(s->mems[i].own);
  }
  for (int f = 0; f < LF_COUNT; f++)
    if (s->images[f])
      rig_image_release(s->images[f]);
  free(s->mems);
  free(s->launches);
  memset(s, 0, sizeof *s);
}
