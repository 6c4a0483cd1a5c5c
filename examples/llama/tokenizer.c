/* tokenizer.c: the llama2.c project's tokenizer file and its byte-pair
 * encoding, with the behaviour of its run program (tokenizer.h). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

struct llama_tokenizer {
  int vocab_size;
  unsigned max_len;
  char **vocab;
  float *scores;
  int *sorted; /* token ids by strcmp of their pieces, for bsearch */
};

static const llama_tokenizer *sort_by; /* qsort's comparison has no context */

static int by_piece(const void *a, const void *b) {
  return strcmp(sort_by->vocab[*(const int *)a], sort_by->vocab[*(const int *)b]);
}

struct key {
  const llama_tokenizer *t;
  const char *s;
};
static int find_piece(const void *k, const void *e) {
  const struct key *key = k;
  return strcmp(key->s, key->t->vocab[*(const int *)e]);
}

/* The id of piece s, or -1. */
static int lookup(const llama_tokenizer *t, const char *s) {
  struct key k = {t, s};
  const int *hit = bsearch(&k, t->sorted, (size_t)t->vocab_size, sizeof(int), find_piece);
  return hit ? *hit : -1;
}

static int bad(char *why, size_t n, const char *path, const char *what, FILE *f) {
  snprintf(why, n, "%s: %s", path, what);
  if (f)
    fclose(f);
  return -1;
}

int llama_tokenizer_read(const char *path, int vocab_size, llama_tokenizer **out, char *why,
                         size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return bad(why, n, path, "does not open", NULL);
  llama_tokenizer *t = calloc(1, sizeof *t);
  int32_t max_len;
  if (!t || fread(&max_len, 4, 1, f) != 1 || max_len <= 0) {
    free(t);
    return bad(why, n, path, "no tokenizer header", f);
  }
  t->vocab_size = vocab_size;
  t->max_len = (unsigned)max_len;
  t->vocab = calloc((size_t)vocab_size, sizeof *t->vocab);
  t->scores = calloc((size_t)vocab_size, sizeof *t->scores);
  t->sorted = calloc((size_t)vocab_size, sizeof *t->sorted);
  int ok = t->vocab && t->scores && t->sorted;
  for (int i = 0; ok && i < vocab_size; i++) {
    int32_t len;
    ok = fread(&t->scores[i], 4, 1, f) == 1 && fread(&len, 4, 1, f) == 1 && len >= 0 &&
         len <= max_len && (t->vocab[i] = malloc((size_t)len + 1)) &&
         fread(t->vocab[i], 1, (size_t)len, f) == (size_t)len;
    if (ok)
      t->vocab[i][len] = '\0';
    t->sorted[i] = i;
  }
  if (!ok) {
    llama_tokenizer_free(t);
    return bad(why, n, path, "ends early or holds a piece longer than its maximum", f);
  }
  fclose(f);
  sort_by = t;
  qsort(t->sorted, (size_t)vocab_size, sizeof(int), by_piece);
  *out = t;
  return 0;
}

void llama_tokenizer_free(llama_tokenizer *t) {
  if (!t)
    return;
  for (int i = 0; t->vocab && i < t->vocab_size; i++)
    free(t->vocab[i]);
  free(t->vocab);
  free(t->scores);
  free(t->sorted);
  free(t);
}

/* The code points of text, each a token, or its bytes + 3 where the
 * vocabulary has no piece for it (the byte tokens follow <unk>, <s>, </s>).
 * A code point is a lead byte and at most three continuation bytes. */
static int code_points(const llama_tokenizer *t, const char *text, char *buf, int *tokens, int n) {
  size_t len = 0;
  for (const char *c = text; *c; c++) {
    if ((*c & 0xC0) != 0x80)
      len = 0;
    buf[len++] = *c;
    buf[len] = '\0';
    if ((c[1] & 0xC0) == 0x80 && len < 4)
      continue;
    int id = lookup(t, buf);
    if (id != -1)
      tokens[n++] = id;
    else
      for (size_t i = 0; i < len; i++)
        tokens[n++] = (unsigned char)buf[i] + 3;
    len = 0;
  }
  return n;
}

/* Merges the pair whose joined piece scores best (the first of equals)
 * until no pair joins into a piece of the vocabulary. */
static int merge(const llama_tokenizer *t, char *buf, int *tokens, int n) {
  for (;;) {
    float best = -1e10f;
    int best_id = -1, at = -1;
    for (int i = 0; i + 1 < n; i++) {
      strcpy(buf, t->vocab[tokens[i]]);
      strcat(buf, t->vocab[tokens[i + 1]]);
      int id = lookup(t, buf);
      if (id != -1 && t->scores[id] > best) {
        best = t->scores[id];
        best_id = id;
        at = i;
      }
    }
    if (at < 0)
      return n;
    tokens[at] = best_id;
    memmove(tokens + at + 1, tokens + at + 2, (size_t)(n - at - 2) * sizeof *tokens);
    n--;
  }
}

int llama_tokenizer_encode(llama_tokenizer *t, const char *text, int *tokens) {
  char *buf = malloc(2 * (size_t)t->max_len + 3);
  if (!buf)
    return -1;
  int n = 0;
  tokens[n++] = 1;
  if (text[0])
    tokens[n++] = lookup(t, " ");
  n = code_points(t, text, buf, tokens, n);
  n = merge(t, buf, tokens, n);
  free(buf);
  return n;
}

void llama_tokenizer_print(const llama_tokenizer *t, int prev, int token, FILE *out) {
  const char *piece = t->vocab[token];
  if (prev == 1 && piece[0] == ' ')
    piece++;
  unsigned char byte;
  char one[2] = {0};
  if (sscanf(piece, "<0x%02hhX>", &byte) == 1) {
    one[0] = (char)byte;
    piece = one;
  }
  if (piece[0] == '\0')
    return;
  if (piece[1] == '\0' && !(isprint((unsigned char)piece[0]) || isspace((unsigned char)piece[0])))
    return;
  fputs(piece, out);
}
