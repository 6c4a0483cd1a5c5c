// llama.cuh: what the CUDA kernels share: the parameter blocks of
// kernels.h (the driver passes rig's block as the kernel's argument
// buffer, so each kernel takes its struct by value), the thread's index,
// and expf and sqrtf from PTX's own instructions. Written for clang's CUDA
// front end without a toolkit's headers (make-ptx.sh), so threadIdx and
// friends are clang's PTX builtins.
#include "../kernels.h"

#define KERNEL extern "C" __attribute__((global))

static __attribute__((device)) inline int64_t thread_index() {
  return (int64_t)__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
         __nvvm_read_ptx_sreg_tid_x();
}
// e^x as 2^(x log2 e) (ex2.approx, about 2 ulp); the square root rounded.
static __attribute__((device)) inline float dev_expf(float x) {
  return __nvvm_ex2_approx_f(x * 1.4426950408889634f);
}
static __attribute__((device)) inline float dev_sqrtf(float x) { return __nvvm_sqrt_rn_f(x); }
