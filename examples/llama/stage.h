/* stage.h: one device's share of the model (stage.c): its layers' weights,
 * its key/value cache and activations in its memory, and one submission
 * holding its part of a token's forward pass, made once and run per token. */
#ifndef RIG_LLAMA_STAGE_H
#define RIG_LLAMA_STAGE_H

#include "model.h"

#define LLAMA_MAX_INTS 8

/* A launch part's block as each run sets it: its grid and its integer
 * parameters, the same for every token (the position and the token are in
 * the stage's step buffer). */
typedef struct llama_launch {
  uint32_t k;
  uint64_t groups, threads;
  uint32_t int_off, nints;
  int64_t ints[LLAMA_MAX_INTS];
} llama_launch;

/* A buffer on the stage's device, and the handle its kernels name: itself,
 * or a borrow on the host where the host's cores run them. */
typedef struct llama_mem {
  rig_buffer *own, *use;
} llama_mem;

typedef struct llama_stage {
  rig_device *dev; /* holds the memory */
  rig_device *run_on; /* runs the kernels: dev, or the host */
  int l0, l1; /* layers [l0, l1) */
  bool first, last;
  llama_mem *mems;
  size_t nmems, cap_mems;
  llama_mem x, logits;
  llama_mem step; /* int64 {pos, token}, which every kernel reads */
  /* On a device that runs no code, the step is put into step_in and
   * copied into step by the device's own queue: its work each token. */
  rig_buffer *step_in;
  rig_submission *step_copy;
  rig_image *images[LF_COUNT];
  const rig_function *fn[LF_COUNT];
  rig_submission *sub;
  llama_launch *launches;
  size_t nlaunches;
} llama_stage;

/* Builds stage s (dev, run_on, layers and first/last set by the caller):
 * loads the code on run_on, copies its tensors from io device file, makes
 * its buffers and its submission. 0, or -1 with the reason in why. */
int llama_stage_build(llama_stage *s, const llama_config *c, rig_device *file,
                      const llama_code *code, char *why, size_t n);
/* Writes token and pos into s's step buffer (after the last token's
 * reads of it), takes a run of s's submission, sets its blocks and submits
 * it, with out its point. Allocates nothing. */
rig_status llama_stage_submit(llama_stage *s, int token, int pos, rig_point *out);
/* Releases what llama_stage_build made (not the devices). */
void llama_stage_free(llama_stage *s);

#endif
