/* A kernel that calls the math library through stubs (SYM-1, RELOC-3,
 * RELOC-7..10): sinf and expf are undefined here and come from the process.
 * tail_exp ends in a tail call (x86_64: jmp, PLT32; arm64: b, JUMP26). */
#include <stdint.h>
float sinf(float);
float expf(float);
struct sin_exp {
  const float *x;
  float *y;
  int64_t n;
};
void sin_exp(const struct sin_exp *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end && i < p->n; i++)
    p->y[i] = sinf(p->x[i]) + expf(p->x[i]);
}
float tail_exp(float x) { return expf(x * 2.0f); }
