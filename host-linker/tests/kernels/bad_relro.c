/* A bad object of real compiler output: a static const table of pointers,
 * which -fPIC puts in .data.rel.ro (writable, for a loader to patch):
 * LINK-4, with the advice to hold indexes or offsets. */
#include <stdint.h>
static const char *const names[] = {"rms", "softmax", "matmul"};
struct pick {
  const char **out;
};
void pick(const struct pick *p, int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++)
    p->out[i] = names[i % 3];
}
