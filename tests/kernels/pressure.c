/* pressure.c: a kernel that keeps more values live at once than arm64 has
 * registers to spare, so that a compiler free to use x18 does (OBJ-2: the
 * arm64 kernels are built with -ffixed-x18, which forbids it). */
#include <stdint.h>
void pressure(const int64_t *in, int64_t *out, int64_t n) {
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    int64_t v[32];
    for (int k = 0; k < 32; k++)
      v[k] = in[i + k];
    for (int k = 0; k < 32; k++)
      out[i + k] = v[k] * v[(k + 1) & 31] + v[(k + 7) & 31] * v[(k + 13) & 31];
  }
}
