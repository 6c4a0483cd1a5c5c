/* model.c: the checkpoint format of the llama2.c project: a header of
 * seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
 * seq_len; a negative vocab_size: the classifier is separate), then float32
 * tensors in the order of enum llama_tensor, where between the final
 * norm's weights and a separate classifier lie two tables of seq_len *
 * head_size / 2 floats that the format keeps and nothing reads. */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

const char *const llama_fn_names[LF_COUNT] = {"llama_embed", "llama_rmsnorm",   "llama_matvec",
                                              "llama_rope",  "llama_attention", "llama_swiglu"};

#define HEADER_BYTES 28u

int llama_config_read(rig_device *f, llama_config *c, char *why, size_t n) {
  rig_buffer *head;
  int32_t h[7];
  if (rig_buffer_of_io(f, 0, sizeof h, &head) != RIG_OK) {
    snprintf(why, n, "%s", rig_error_last()->message);
    return -1;
  }
  rig_status st = rig_buffer_get(head, 0, h, sizeof h);
  rig_buffer_release(head);
  if (st != RIG_OK) {
    snprintf(why, n, "the header: %s", rig_error_last()->message);
    return -1;
  }
  *c = (llama_config){h[0], h[1], h[2], h[3], h[4], abs(h[5]), h[6], h[5] > 0};
  if (c->dim <= 0 || c->hidden_dim <= 0 || c->n_layers <= 0 || c->n_heads <= 0 ||
      c->n_kv_heads <= 0 || c->vocab_size <= 0 || c->seq_len <= 0 || h[5] == INT32_MIN) {
    snprintf(why, n, "the header is not a checkpoint's: a size is zero or negative");
    return -1;
  }
  if (c->dim % c->n_heads || (c->dim / c->n_heads) % 2 || c->n_heads % c->n_kv_heads) {
    snprintf(why, n,
             "the header's shape does not hold: dim %d over %d heads (an even head size), "
             "%d key/value heads dividing the heads",
             c->dim, c->n_heads, c->n_kv_heads);
    return -1;
  }
  /* The file must hold every tensor the header promises: its last byte is
   * read before any buffer of that size is made. */
  uint64_t need = llama_file_bytes(c);
  unsigned char last;
  if (rig_buffer_of_io(f, need - 1, 1, &head) != RIG_OK) {
    snprintf(why, n, "%s", rig_error_last()->message);
    return -1;
  }
  st = rig_buffer_get(head, 0, &last, 1);
  rig_buffer_release(head);
  if (st != RIG_OK) {
    snprintf(why, n, "the header promises %llu bytes of tensors, which the file does not hold",
             (unsigned long long)need);
    return -1;
  }
  return 0;
}

/* The float count of each tensor over all layers, and per layer. */
static uint64_t floats_of(const llama_config *c, enum llama_tensor t, bool per_layer) {
  uint64_t dim = (uint64_t)c->dim, hid = (uint64_t)c->hidden_dim,
           L = per_layer ? 1 : (uint64_t)c->n_layers;
  uint64_t kv_dim = dim * (uint64_t)c->n_kv_heads / (uint64_t)c->n_heads;
  switch (t) {
  case LT_EMBED:
    return (uint64_t)c->vocab_size * dim;
  case LT_RMS_ATT:
  case LT_RMS_FFN:
    return L * dim;
  case LT_WQ:
  case LT_WO:
    return L * dim * dim;
  case LT_WK:
  case LT_WV:
    return L * dim * kv_dim;
  case LT_W1:
  case LT_W2:
  case LT_W3:
    return L * dim * hid;
  case LT_RMS_FINAL:
    return dim;
  case LT_CLASSIFIER:
    return (uint64_t)c->vocab_size * dim;
  default:
    return 0;
  }
}

static bool per_layer(enum llama_tensor t) {
  return t >= LT_RMS_ATT && t <= LT_W3;
}

uint64_t llama_tensor_at(const llama_config *c, enum llama_tensor t, int l, size_t *bytes) {
  if (t == LT_CLASSIFIER && c->shared_classifier)
    return llama_tensor_at(c, LT_EMBED, 0, bytes);
  uint64_t at = HEADER_BYTES;
  for (int u = 0; u < (int)t; u++)
    at += 4 * floats_of(c, (enum llama_tensor)u, false);
  if (t == LT_CLASSIFIER) /* past the two unused RoPE tables */
    at += 4 * (uint64_t)c->seq_len * (uint64_t)(c->dim / c->n_heads);
  uint64_t one = floats_of(c, t, true);
  *bytes = (size_t)(4 * one);
  return per_layer(t) ? at + 4 * one * (uint64_t)l : at;
}

uint64_t llama_file_bytes(const llama_config *c) {
  size_t bytes;
  uint64_t at = llama_tensor_at(c, LT_CLASSIFIER, 0, &bytes);
  return c->shared_classifier ? llama_tensor_at(c, LT_RMS_FINAL, 0, &bytes) + bytes : at + bytes;
}

uint64_t llama_token_weight_bytes(const llama_config *c) {
  uint64_t sum = 0;
  size_t bytes;
  for (int t = LT_RMS_ATT; t <= LT_W3; t++) {
    llama_tensor_at(c, (enum llama_tensor)t, 0, &bytes);
    sum += (uint64_t)bytes * (uint64_t)c->n_layers;
  }
  llama_tensor_at(c, LT_RMS_FINAL, 0, &bytes);
  sum += bytes;
  llama_tensor_at(c, LT_CLASSIFIER, 0, &bytes);
  return sum + bytes + 4 * (uint64_t)c->dim; /* and one row of the embedding table */
}
