/* model.h: rig-llama's model: the checkpoint's header and where each
 * tensor lies in the file (llama2.c's format, model.c), and the forward
 * pass on one device or split over two (stage.c, forward.c). */
#ifndef RIG_LLAMA_MODEL_H
#define RIG_LLAMA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

/* The header: seven int32, then float32 tensors. A negative vocab_size
 * says the classifier is a tensor of its own, after the rest. */
typedef struct llama_config {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
  bool shared_classifier; /* the classifier is the embedding table */
} llama_config;

/* The tensors, in file order. */
enum llama_tensor {
  LT_EMBED,
  LT_RMS_ATT,
  LT_WQ,
  LT_WK,
  LT_WV,
  LT_WO,
  LT_RMS_FFN,
  LT_W1,
  LT_W2,
  LT_W3,
  LT_RMS_FINAL,
  LT_CLASSIFIER,
  LT_COUNT
};

/* Reads and checks the header at the start of io device f; 0, or -1 with
 * a message in why (n bytes). Blocks on the file. */
int llama_config_read(rig_device *f, llama_config *c, char *why, size_t n);
/* The byte offset in the file of tensor t of layer l (l ignored for the
 * tensors that are not per layer), and its bytes into *bytes. */
uint64_t llama_tensor_at(const llama_config *c, enum llama_tensor t, int l, size_t *bytes);
/* The bytes the whole checkpoint needs: a shorter file is refused. */
uint64_t llama_file_bytes(const llama_config *c);
/* The bytes of weights one token's forward pass reads. */
uint64_t llama_token_weight_bytes(const llama_config *c);

/* The code each kind of device runs, as bytes carried in the program. */
typedef struct llama_code {
  const void *host;
  size_t host_bytes; /* kernels.c as an ELF object */
  const void *spirv[6];
  size_t spirv_bytes[6]; /* vulkan/NAME.comp, by llama_fn */
  const void *ptx[6];
  size_t ptx_bytes[6]; /* cuda/NAME.cu, by llama_fn */
} llama_code;
/* Fills c with the code this program carries (code.c). */
void llama_code_fill(llama_code *c);
enum llama_fn { LF_EMBED, LF_RMSNORM, LF_MATVEC, LF_ROPE, LF_ATTENTION, LF_SWIGLU, LF_COUNT };
extern const char *const llama_fn_names[LF_COUNT];

typedef struct llama llama;
/* Opens the model of the checkpoint at path on device names[0], or its
 * layers split in halves over names[0] and names[1] (n = 2): opens the
 * devices and the file as an io device, copies each tensor from the file
 * into its device's buffers, makes every buffer, the key/value cache and
 * one submission per device, ready for llama_forward. A device that runs
 * no code (a memory device) holds the memory, and the host's cores run
 * the kernels over it through borrows. 0, or -1 with rig's message in why.
 * Owns what it made until llama_close. Blocks. */
int llama_open(const char *path, const char *const *names, int n, const llama_code *code,
               llama **out, char *why, size_t why_bytes);
const llama_config *llama_config_of(const llama *m);
/* Runs token at pos through the model and writes vocab_size logits into
 * logits: one run per device, taken from the submissions made at open,
 * the activations copied between devices by their points alone. Allocates
 * nothing. RIG_OK, or rig's status (the message in rig_error_last()).
 * Blocks until the logits are read. */
rig_status llama_forward(llama *m, int token, int pos, float *logits);
/* The index of the largest of v's n values, the first of equals: greedy
 * decoding's choice, as the llama2.c project's run program makes it. */
int llama_argmax(const float *v, int n);
/* The tokens run so far, and their total time in the calls that submit
 * (the step's put, takes, setters, submits and the copies between
 * devices; on the host, the launches run inside the submit) and in the
 * read of the logits, which waits for the work, in microseconds. */
void llama_times(const llama *m, uint64_t *tokens, double *submit_us, double *wait_us);
/* The point of the last device's last submit (for profiles and tests). */
rig_point llama_last_point(const llama *m);
/* Releases everything llama_open made and closes the devices it opened. */
void llama_close(llama *m);

#endif
