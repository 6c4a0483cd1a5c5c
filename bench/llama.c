/* llama.c: bench P12, rig-llama's forward pass (examples/llama) on the
 * host's cores against the same forward pass written directly in C with
 * OpenMP: tokens per second on two shapes with random weights, min and
 * median over 5 runs of 128 tokens each side, alternated.
 *
 * Like with like: the anchor calls the kernels of the very object rig
 * links (loaded as an image, called through rig_function_entry, as P4's
 * anchor does), with the same parameter blocks, in the same order, on
 * rig_host_cores() OpenMP threads; its row kernels (matvecs, attention)
 * are shared out in chunks of whole rows from one counter, about 8 chunks
 * per thread, as rig's pool shares a launch's groups. Its weights are the
 * file read into the program's memory; rig's are copied from the file
 * through an io device into host buffers. Beside each figure, the limit:
 * the weight bytes a token reads over memcpy's bandwidth on this machine.
 *
 * Then on vulkan:0 and split CPU,vulkan:0 (where Vulkan opens) the small
 * shape's tokens per second, and the time per token rig spends outside
 * the device's work, from a profile: the wall time of a token less the
 * time its device ran parts, split into the submitting calls and the
 * wait for the logits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <rig/rig.h>

#include "bench.h"
#include "kernels.h"
#include "model.h"

#define TOKENS 128
#define RUNS 5

typedef struct shape {
  const char *name;
  int dim, hidden, layers, heads, vocab, seq;
} shape;
static const shape shapes[] = {
    {"dim 288, 6 layers", 288, 768, 6, 6, 32000, 256},
    {"dim 768, 12 layers", 768, 2048, 12, 12, 32000, 1024},
};

/* Writes a random checkpoint of shape s (a tied classifier) to path. */
static int write_checkpoint(const char *path, const shape *s) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  int32_t h[7] = {s->dim, s->hidden, s->layers, s->heads, s->heads, s->vocab, s->seq};
  llama_config c = {s->dim, s->hidden, s->layers, s->heads, s->heads, s->vocab, s->seq, true};
  uint64_t floats = (llama_file_bytes(&c) - sizeof h) / 4;
  float buf[4096];
  uint64_t x = 88172645463325252u;
  int ok = fwrite(h, sizeof h, 1, f) == 1;
  for (uint64_t i = 0; ok && i < floats; i += 4096) {
    size_t n = floats - i < 4096 ? (size_t)(floats - i) : 4096;
    for (size_t j = 0; j < n; j++) { /* xorshift: uniform in +-0.05 */
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      buf[j] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5) * 0.1f;
    }
    ok = fwrite(buf, 4, n, f) == n;
  }
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* ---- the anchor --------------------------------------------------------- */

typedef struct anchor {
  llama_config c;
  float *file; /* the whole checkpoint, header included */
  float *x, *xb, *q, *att, *hb, *hb2, *logits, *table, *kc, *vc;
  int64_t step[2];
  llama_kernel_fn fn[LF_COUNT];
  int threads;
} anchor;

static const float *tensor(const anchor *a, enum llama_tensor t, int l) {
  size_t bytes;
  return a->file + llama_tensor_at(&a->c, t, l, &bytes) / 4;
}

/* A row kernel over n rows in chunks of about n / (8 threads). */
static void rows(const anchor *a, enum llama_fn f, const void *p, int64_t n) {
  int64_t chunks = 8 * (int64_t)a->threads, size = (n + chunks - 1) / chunks;
  llama_kernel_fn fn = a->fn[f];
#pragma omp parallel for schedule(dynamic, 1) num_threads(a->threads)
  for (int64_t k = 0; k < chunks; k++)
    if (k * size < n)
      fn(p, k * size, (k + 1) * size < n ? (k + 1) * size : n);
}

static void matvec(const anchor *a, const float *w, const float *x, float *out, int64_t n,
                   int64_t d, int64_t pos_mul, int64_t acc) {
  struct llama_matvec p = {w, x, out, a->step, n, d, pos_mul, acc};
  rows(a, LF_MATVEC, &p, d);
}

static void anchor_forward(anchor *a, int token, int pos) {
  const llama_config *c = &a->c;
  int64_t dim = c->dim, hid = c->hidden_dim, hs = dim / c->n_heads;
  int64_t kv_dim = dim * c->n_kv_heads / c->n_heads, cache = (int64_t)c->seq_len * kv_dim;
  a->step[0] = pos;
  a->step[1] = token;
  struct llama_embed e = {tensor(a, LT_EMBED, 0), a->x, a->step, dim};
  a->fn[LF_EMBED](&e, 0, dim);
  for (int l = 0; l < c->n_layers; l++) {
    float *kc = a->kc + l * cache, *vc = a->vc + l * cache;
    struct llama_rmsnorm n1 = {a->x, tensor(a, LT_RMS_ATT, l), a->xb, dim};
    a->fn[LF_RMSNORM](&n1, 0, dim);
    matvec(a, tensor(a, LT_WQ, l), a->xb, a->q, dim, dim, 0, 0);
    matvec(a, tensor(a, LT_WK, l), a->xb, kc, dim, kv_dim, kv_dim, 0);
    matvec(a, tensor(a, LT_WV, l), a->xb, vc, dim, kv_dim, kv_dim, 0);
    struct llama_rope r = {a->q, kc, a->table, a->step, dim, kv_dim, hs};
    a->fn[LF_ROPE](&r, 0, dim / 2);
    struct llama_attention at = {a->q,  kc,      vc,         a->att,
                                 a->xb, a->step, c->n_heads, c->n_heads / c->n_kv_heads,
                                 hs,    kv_dim,  c->seq_len};
    rows(a, LF_ATTENTION, &at, c->n_heads);
    matvec(a, tensor(a, LT_WO, l), a->xb, a->x, dim, dim, 0, 1);
    struct llama_rmsnorm n2 = {a->x, tensor(a, LT_RMS_FFN, l), a->xb, dim};
    a->fn[LF_RMSNORM](&n2, 0, dim);
    matvec(a, tensor(a, LT_W1, l), a->xb, a->hb, dim, hid, 0, 0);
    matvec(a, tensor(a, LT_W3, l), a->xb, a->hb2, dim, hid, 0, 0);
    struct llama_swiglu sw = {a->hb, a->hb2, hid};
    a->fn[LF_SWIGLU](&sw, 0, hid);
    matvec(a, tensor(a, LT_W2, l), a->hb, a->x, hid, dim, 0, 1);
  }
  struct llama_rmsnorm nf = {a->x, tensor(a, LT_RMS_FINAL, 0), a->xb, dim};
  a->fn[LF_RMSNORM](&nf, 0, dim);
  matvec(a, tensor(a, LT_CLASSIFIER, 0), a->xb, a->logits, dim, c->vocab_size, 0, 0);
}

static void anchor_free(anchor *a) {
  float *all[] = {a->file, a->x,      a->xb,    a->q,  a->att, a->hb,
                  a->hb2,  a->logits, a->table, a->kc, a->vc};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    free(all[i]);
}

/* The anchor's model: the file in memory, its buffers, the RoPE table as
 * stage.c computes it, and the kernels of the object rig links. */
static int anchor_open(anchor *a, const char *path, const llama_config *c, rig_image **im) {
  size_t n;
  *a = (anchor){.c = *c, .threads = (int)rig_host_cores()};
  a->file = rig_bench_read_file(path, &n);
  int64_t hs = c->dim / c->n_heads,
          kv = (int64_t)c->n_layers * c->seq_len * (c->dim * c->n_kv_heads / c->n_heads);
  size_t sizes[] = {(size_t)c->dim,
                    (size_t)c->dim,
                    (size_t)c->dim,
                    (size_t)(c->n_heads * c->seq_len),
                    (size_t)c->hidden_dim,
                    (size_t)c->hidden_dim,
                    (size_t)c->vocab_size,
                    (size_t)(c->seq_len * hs),
                    (size_t)kv,
                    (size_t)kv};
  float **bufs[] = {&a->x,   &a->xb,     &a->q,     &a->att, &a->hb,
                    &a->hb2, &a->logits, &a->table, &a->kc,  &a->vc};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (!(*bufs[i] = calloc(sizes[i], sizeof(float))))
      return -1;
  for (int pos = 0; pos < c->seq_len; pos++)
    for (int i = 0; i < hs; i += 2) {
      float freq = 1.0f / powf(10000.0f, (float)i / (float)hs), val = (float)pos * freq;
      a->table[pos * hs + i] = cosf(val);
      a->table[pos * hs + i + 1] = sinf(val);
    }
  llama_code code;
  llama_code_fill(&code);
  if (!a->file || rig_image_load(rig_device_host(), code.host, code.host_bytes, im) != RIG_OK)
    return -1;
  for (int f = 0; f < LF_COUNT; f++) {
    rig_function *fn;
    if (rig_image_resolve(*im, llama_fn_names[f], &fn) != RIG_OK || !fn)
      return -1;
    a->fn[f] = (llama_kernel_fn)(uintptr_t)rig_function_entry(fn);
  }
  return 0;
}

/* ---- runs --------------------------------------------------------------- */

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

/* ns for `tokens` greedy tokens from BOS through rig. */
static double rig_tokens(llama *m, float *logits, int tokens, int *failed) {
  int token = 1, vocab = llama_config_of(m)->vocab_size;
  double t = now_ns();
  for (int pos = 0; pos < tokens; pos++) {
    if (llama_forward(m, token, pos, logits) != RIG_OK) {
      fprintf(stderr, "bench P12: %s\n", rig_error_last()->message);
      *failed = 1;
      return 0;
    }
    token = llama_argmax(logits, vocab);
  }
  return now_ns() - t;
}

static double anchor_run(anchor *a, int tokens) {
  int token = 1;
  double t = now_ns();
  for (int pos = 0; pos < tokens; pos++) {
    anchor_forward(a, token, pos);
    token = llama_argmax(a->logits, a->c.vocab_size);
  }
  return now_ns() - t;
}

/* memcpy's bandwidth in bytes per second: the best of 5 copies of 256 MiB. */
static double memcpy_bandwidth(void) {
  size_t n = (size_t)256 << 20;
  char *a = malloc(n), *b = malloc(n);
  double best = 0;
  if (a && b) {
    memset(a, 1, n);
    memset(b, 2, n);
    for (int i = 0; i < 5; i++) {
      double t = now_ns();
      memcpy(b, a, n);
      double bw = (double)n / ((now_ns() - t) * 1e-9);
      best = bw > best ? bw : best;
    }
  }
  free(a);
  free(b);
  return best;
}

/* The host rows: RUNS alternated runs of TOKENS tokens each side. */
static int host_rows(FILE *out, const shape *s, const char *path, double bandwidth) {
  const char *names[1] = {"CPU"};
  char why[512];
  llama_code code;
  llama_code_fill(&code);
  llama *m;
  anchor a;
  rig_image *im = NULL;
  if (llama_open(path, names, 1, &code, &m, why, sizeof why) != 0) {
    fprintf(out, "bench P12: %s\n", why);
    return 1;
  }
  const llama_config *c = llama_config_of(m);
  float *logits = malloc((size_t)c->vocab_size * sizeof *logits);
  int failed = !logits || anchor_open(&a, path, c, &im) != 0;
  double r[RUNS], an[RUNS];
  if (!failed) { /* warm: caches, the pool, OpenMP's threads */
    rig_tokens(m, logits, 16, &failed);
    anchor_run(&a, 16);
  }
  for (int i = 0; i < RUNS && !failed; i++) {
    rig_bench_progress_round(s->name, i, RUNS);
    if (i % 2 == 0)
      r[i] = rig_tokens(m, logits, TOKENS, &failed), an[i] = anchor_run(&a, TOKENS);
    else
      an[i] = anchor_run(&a, TOKENS), r[i] = rig_tokens(m, logits, TOKENS, &failed);
  }
  if (!failed) {
    rig_bench_stats x = rig_bench_stats_of(r, RUNS), y = rig_bench_stats_of(an, RUNS);
    char name[96];
    snprintf(name, sizeof name, "P12 %s: 128 tokens vs OpenMP", s->name);
    rig_bench_row row = {name, x.min, x.median, y.min, y.median};
    rig_bench_table_row(out, &row);
    double bytes = (double)llama_token_weight_bytes(c), limit = bandwidth / bytes;
    fprintf(out,
            "    tok/s rig %.1f / %.1f, OpenMP %.1f / %.1f (min / median time); %.0f MB of "
            "weights a token: memcpy's %.2f GB/s allows %.1f tok/s: rig reaches %.2f, OpenMP "
            "%.2f of it\n",
            1e9 * TOKENS / x.min, 1e9 * TOKENS / x.median, 1e9 * TOKENS / y.min,
            1e9 * TOKENS / y.median, bytes / 1e6, bandwidth / 1e9, limit,
            1e9 * TOKENS / x.min / limit, 1e9 * TOKENS / y.min / limit);
  } else
    fprintf(out, "bench P12 %s: failed\n", s->name);
  free(logits);
  anchor_free(&a);
  if (im)
    rig_image_release(im);
  llama_close(m);
  return failed;
}

#define DEVICE_TOKENS 32

/* Tokens per second on names (a device, or a split of two) and rig's time
 * per token outside the devices' parts, from a profile of one run. */
static int device_row(FILE *out, const char *path, const char *const *names, int n) {
  char why[512], label[96];
  snprintf(label, sizeof label, "%s%s%s", names[0], n > 1 ? "," : "", n > 1 ? names[1] : "");
  llama_code code;
  llama_code_fill(&code);
  llama *m;
  if (llama_open(path, names, n, &code, &m, why, sizeof why) != 0) {
    fprintf(out, "P12 on %s skipped: %s\n", label, why);
    return rig_error_last()->status == RIG_UNAVAILABLE ? 0 : 1;
  }
  float *logits = malloc((size_t)llama_config_of(m)->vocab_size * sizeof *logits);
  int failed = !logits;
  rig_profile *p = NULL;
  double wall = 0, busy = 0, submit0 = 0, wait0 = 0, submit_us = 0, wait_us = 0;
  uint64_t tokens;
  if (!failed) {
    rig_tokens(m, logits, 4, &failed); /* pipelines and command buffers made */
    llama_close(m); /* reopened so that the times count one run */
    failed = llama_open(path, names, n, &code, &m, why, sizeof why) != 0;
  }
  if (!failed) {
    rig_tokens(m, logits, 1, &failed);
    llama_times(m, &tokens, &submit0, &wait0); /* the profiled run's alone */
    rig_profile_start(1u << 16);
    wall = rig_tokens(m, logits, DEVICE_TOKENS, &failed);
    rig_profile_stop();
    failed |= rig_profile_take(&p) != RIG_OK;
  }
  if (!failed) {
    size_t nr;
    const rig_profile_record *r = rig_profile_records(p, &nr);
    for (size_t i = 0; i < nr; i++)
      busy += (double)(r[i].end_ns - r[i].start_ns);
    llama_times(m, &tokens, &submit_us, &wait_us);
    submit_us -= submit0;
    wait_us -= wait0;
    fprintf(out,
            "P12 %s, dim 288: %.1f tok/s over %d tokens; per token %.2f ms, of which the "
            "devices ran parts %.2f ms (%zu parts) and rig and the driver %.3f ms (submitting "
            "calls %.3f ms a token, the wait for the logits %.3f ms)\n",
            label, 1e9 * DEVICE_TOKENS / wall, DEVICE_TOKENS, wall / DEVICE_TOKENS / 1e6,
            busy / DEVICE_TOKENS / 1e6, nr / DEVICE_TOKENS, (wall - busy) / DEVICE_TOKENS / 1e6,
            submit_us / 1e3 / DEVICE_TOKENS, wait_us / 1e3 / DEVICE_TOKENS);
  } else
    fprintf(out, "P12 on %s: %s\n", label, rig_error_last()->message);
  rig_profile_free(p);
  free(logits);
  llama_close(m);
  return failed;
}

int rig_bench_llama(FILE *out) {
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[512];
  snprintf(path, sizeof path, "%s/rig-bench-llama-%d.bin", tmp, (int)getpid());
  double bandwidth = memcpy_bandwidth();
  int failed = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    rig_bench_progress("writing a random checkpoint of %s", shapes[i].name);
    if (write_checkpoint(path, &shapes[i]) != 0) {
      fprintf(out, "bench P12: cannot write %s\n", path);
      unlink(path);
      return 1;
    }
    failed |= host_rows(out, &shapes[i], path, bandwidth);
    if (i == 0) {
      const char *vk[1] = {"vulkan:0"}, *split[2] = {"CPU", "vulkan:0"};
      failed |= device_row(out, path, vk, 1);
      failed |= device_row(out, path, split, 2);
    }
  }
  unlink(path);
  return failed;
}
