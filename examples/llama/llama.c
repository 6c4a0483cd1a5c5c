/* llama.c: rig-llama, greedy decoding of a Llama-2-architecture model on
 * rig's devices.
 *
 *   rig-llama CHECKPOINT [--tokenizer FILE] [--prompt TEXT] [--steps N]
 *             [--device NAME] [--split NAME,NAME] [--logits FILE]
 *
 * CHECKPOINT and the tokenizer are in the llama2.c project's formats; with
 * a tokenizer the prompt and the generated text are printed on one line as
 * that project's run program prints them, without one the token ids. The
 * rate goes to stderr as "N tok/s", with the allocations the tokens made
 * (none: each token runs submissions prepared at open). --logits writes
 * every step's logits as float32, for the tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc_count.h"
#include "model.h"
#include "tokenizer.h"

typedef struct args {
  const char *checkpoint, *tokenizer, *prompt, *device, *split, *logits;
  int steps;
} args;

static int usage(const char *why) {
  fprintf(stderr,
          "rig-llama: %s\nusage: rig-llama CHECKPOINT [--tokenizer FILE] [--prompt TEXT] "
          "[--steps N] [--device NAME] [--split NAME,NAME] [--logits FILE]\n",
          why);
  return 2;
}

static int parse(int argc, char **argv, args *a) {
  *a = (args){.device = "CPU", .steps = 256};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (o[0] != '-' && !a->checkpoint) {
      a->checkpoint = o;
      continue;
    }
    if (i + 1 >= argc)
      return usage(o[0] == '-' ? "an option without its value" : "more than one checkpoint");
    const char *v = argv[++i];
    if (!strcmp(o, "--tokenizer"))
      a->tokenizer = v;
    else if (!strcmp(o, "--prompt"))
      a->prompt = v;
    else if (!strcmp(o, "--device"))
      a->device = v;
    else if (!strcmp(o, "--split"))
      a->split = v;
    else if (!strcmp(o, "--logits"))
      a->logits = v;
    else if (!strcmp(o, "--steps")) {
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || end == v || n < 0 || n > 1 << 30)
        return usage("--steps takes a count");
      a->steps = (int)n;
    } else
      return usage("an unknown option");
  }
  if (!a->checkpoint)
    return usage("no checkpoint");
  if (a->prompt && !a->tokenizer)
    return usage("--prompt needs --tokenizer");
  return 0;
}

/* Splits "A,B" into two device names. A name may hold options after commas
 * ("test:0,fault_nth=5"), so the split is at the first comma that starts
 * a name: one whose next field holds no '='. */
static int split_names(const char *split, char *buf, size_t n, const char **names) {
  if (snprintf(buf, n, "%s", split) >= (int)n)
    return -1;
  for (char *c = strchr(buf, ','); c; c = strchr(c + 1, ',')) {
    size_t field = strcspn(c + 1, ",");
    if (c == buf || field == 0 || memchr(c + 1, '=', field))
      continue;
    *c = '\0';
    names[0] = buf;
    names[1] = c + 1;
    return 0;
  }
  return -1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The prompt's tokens: BOS alone without a tokenizer. */
static int *prompt_tokens(llama_tokenizer *t, const char *prompt, int vocab, int *n) {
  const char *text = prompt ? prompt : "";
  int *tokens = malloc((strlen(text) + 3) * sizeof *tokens);
  if (!tokens)
    return NULL;
  *n = t ? llama_tokenizer_encode(t, text, tokens) : (tokens[0] = 1, 1);
  for (int i = 0; i < *n; i++)
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      fprintf(stderr, "rig-llama: the prompt encodes to token %d, outside the vocabulary\n",
              tokens[i]);
      free(tokens);
      return NULL;
    }
  return *n > 0 ? tokens : (free(tokens), NULL);
}

/* Generates as the llama2.c project's run program does: the prompt's
 * tokens forced, then the greedy choice, until steps or BOS. */
static int generate(llama *m, llama_tokenizer *t, const args *a, const int *prompt, int np,
                    FILE *logits_out) {
  const llama_config *c = llama_config_of(m);
  int steps = a->steps == 0 || a->steps > c->seq_len ? c->seq_len : a->steps;
  float *logits = malloc((size_t)c->vocab_size * sizeof *logits);
  if (!logits)
    return fprintf(stderr, "rig-llama: out of memory\n"), 1;
  int token = prompt[0], pos = 0;
  double start = 0;
  long allocs = 0, allocs_rig = 0;
  while (pos < steps) {
    long before = llama_allocs(), before_rig = llama_allocs_rig();
    rig_status st = llama_forward(m, token, pos, logits);
    if (pos > 0) { /* the first token may make runs and pipelines */
      allocs += llama_allocs() - before;
      allocs_rig += llama_allocs_rig() - before_rig;
    }
    if (st != RIG_OK) {
      fflush(stdout);
      fprintf(stderr, "\nrig-llama: token %d: %s: %s\n", pos, rig_status_name(st),
              rig_error_last()->message);
      free(logits);
      return 1;
    }
    if (logits_out)
      fwrite(logits, sizeof *logits, (size_t)c->vocab_size, logits_out);
    int next = pos < np - 1 ? prompt[pos + 1] : llama_argmax(logits, c->vocab_size);
    pos++;
    if (next == 1)
      break;
    if (t)
      llama_tokenizer_print(t, token, next, stdout);
    else
      printf("%d ", next);
    fflush(stdout);
    token = next;
    if (start == 0)
      start = now();
  }
  printf("\n");
  if (pos > 1)
    fprintf(stderr, "%.2f tok/s\n", (pos - 1) / (now() - start));
  if (llama_allocs_counted())
    fprintf(stderr, "allocations in tokens 2..%d: %ld by rig and rig-llama, %ld in all\n", pos,
            allocs_rig, allocs);
  free(logits);
  return 0;
}

int main(int argc, char **argv) {
  args a;
  int r = parse(argc, argv, &a);
  if (r)
    return r;
  char why[512], names_buf[256];
  const char *names[2] = {a.device, NULL};
  int n = 1;
  if (a.split && split_names(a.split, names_buf, sizeof names_buf, names) != 0)
    return usage("--split takes two device names: A,B");
  if (a.split)
    n = 2;
  llama_code code; /* carried in the program: code.c */
  llama_code_fill(&code);
  llama *m;
  if (llama_open(a.checkpoint, names, n, &code, &m, why, sizeof why) != 0) {
    fprintf(stderr, "rig-llama: %s\n", why);
    return rig_error_last()->status == RIG_UNAVAILABLE ? 77 : 1;
  }
  const llama_config *c = llama_config_of(m);
  llama_tokenizer *t = NULL;
  if (a.tokenizer && llama_tokenizer_read(a.tokenizer, c->vocab_size, &t, why, sizeof why)) {
    fprintf(stderr, "rig-llama: %s\n", why);
    llama_close(m);
    return 1;
  }
  int np;
  int *prompt = prompt_tokens(t, a.prompt, c->vocab_size, &np);
  FILE *lf = a.logits ? fopen(a.logits, "wb") : NULL;
  if (!prompt || (a.logits && !lf)) {
    fprintf(stderr, "rig-llama: %s\n", prompt ? "the logits file does not open" : "no prompt");
    r = 1;
  } else
    r = generate(m, t, &a, prompt, np, lf);
  if (lf && fclose(lf) != 0)
    r = 1;
  free(prompt);
  llama_tokenizer_free(t);
  llama_close(m);
  return r;
}
