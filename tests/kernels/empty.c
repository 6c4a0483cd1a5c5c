/* An empty host kernel: bench P1's launch. */
#include <stdint.h>
void empty(const void *p, int64_t first, int64_t end) {}
