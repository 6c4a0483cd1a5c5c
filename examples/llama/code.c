/* code.c: the kernels rig-llama carries (model.h's llama_code): the host
 * object and the SPIR-V of each kernel, embedded by the build
 * (examples/llama/meson.build, tools/embed.py). */
#include "model.h"

#define EMBEDDED(name)                                                                             \
  extern const unsigned char name[];                                                               \
  extern const unsigned long name##_bytes;
EMBEDDED(llama_host)
EMBEDDED(llama_spv_embed)
EMBEDDED(llama_spv_rmsnorm)
EMBEDDED(llama_spv_matvec)
EMBEDDED(llama_spv_rope)
EMBEDDED(llama_spv_attention)
EMBEDDED(llama_spv_swiglu)
EMBEDDED(llama_ptx_embed)
EMBEDDED(llama_ptx_rmsnorm)
EMBEDDED(llama_ptx_matvec)
EMBEDDED(llama_ptx_rope)
EMBEDDED(llama_ptx_attention)
EMBEDDED(llama_ptx_swiglu)

static const unsigned char *const spirv[LF_COUNT] = {llama_spv_embed,     llama_spv_rmsnorm,
                                                     llama_spv_matvec,    llama_spv_rope,
                                                     llama_spv_attention, llama_spv_swiglu};
static const unsigned char *const ptx[LF_COUNT] = {llama_ptx_embed,     llama_ptx_rmsnorm,
                                                   llama_ptx_matvec,    llama_ptx_rope,
                                                   llama_ptx_attention, llama_ptx_swiglu};

void llama_code_fill(llama_code *c) {
  const unsigned long spirv_bytes[LF_COUNT] = {llama_spv_embed_bytes,     llama_spv_rmsnorm_bytes,
                                               llama_spv_matvec_bytes,    llama_spv_rope_bytes,
                                               llama_spv_attention_bytes, llama_spv_swiglu_bytes};
  const unsigned long ptx_bytes[LF_COUNT] = {llama_ptx_embed_bytes,     llama_ptx_rmsnorm_bytes,
                                             llama_ptx_matvec_bytes,    llama_ptx_rope_bytes,
                                             llama_ptx_attention_bytes, llama_ptx_swiglu_bytes};
  *c = (llama_code){.host = llama_host, .host_bytes = llama_host_bytes};
  for (int f = 0; f < LF_COUNT; f++) {
    c->spirv[f] = spirv[f];
    c->spirv_bytes[f] = spirv_bytes[f];
    c->ptx[f] = ptx_bytes[f] ? ptx[f] : NULL; /* none yet: an empty file */
    c->ptx_bytes[f] = ptx_bytes[f];
  }
}
