/* tokenizer.h: the tokenizer file of the llama2.c project (tokenizer.c):
 * an int32 max_token_length, then per token a float32 score, an int32
 * length and its bytes. Prompts are encoded and pieces printed exactly as
 * that project's run program does, so that the two outputs compare byte
 * for byte. */
#ifndef RIG_LLAMA_TOKENIZER_H
#define RIG_LLAMA_TOKENIZER_H

#include <stdio.h>

typedef struct llama_tokenizer llama_tokenizer;

/* Reads the file at path for a vocabulary of vocab_size tokens. 0, or -1
 * with the reason in why. The caller owns *out (llama_tokenizer_free). */
int llama_tokenizer_read(const char *path, int vocab_size, llama_tokenizer **out, char *why,
                         size_t n);
void llama_tokenizer_free(llama_tokenizer *t);
/* Encodes text: BOS (1), a dummy prefix " " where text is not empty, the
 * UTF-8 code points (or their bytes + 3 where the vocabulary lacks one),
 * then merges of the best-scoring pair until none is in the vocabulary.
 * tokens holds at least strlen(text) + 3; returns their count, or -1 out
 * of memory. */
int llama_tokenizer_encode(llama_tokenizer *t, const char *text, int *tokens);
/* Prints token's piece after prev to out as run.c does: the leading space
 * stripped after BOS, a "<0xHH>" piece as its byte, and a one-byte piece
 * that is neither printable nor space left out. */
void llama_tokenizer_print(const llama_tokenizer *t, int prev, int token, FILE *out);

#endif
