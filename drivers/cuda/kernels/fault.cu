// fault.cu: kernels that fail on purpose, for the loss and hang tests.
//   fault: writes through the address it is given (pass a bad one, such as
//          16): CUDA_ERROR_ILLEGAL_ADDRESS, a sticky error that loses the
//          context and every rig device on it (LOSS-14).
//   hang:  spins until *flag is nonzero, which nothing sets: a kernel that
//          never ends, lost by the hang bound (HANG-6).
// Parameter (8 bytes): struct { uint32_t *p; }.
#include <stdint.h>

struct ptr { uint32_t *p; };

extern "C" __global__ void fault(struct ptr a) { a.p[threadIdx.x] = 1u; }

extern "C" __global__ void hang(struct ptr a) {
  while (*(volatile uint32_t *)a.p == 0u) {
  }
}
