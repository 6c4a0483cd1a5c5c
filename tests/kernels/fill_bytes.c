/* fill_bytes.c: a fill as a host launch (HOST-4). Thread i writes byte i
 * of dst, for i < n: byte i % size of the pattern as the host lays it
 * down (little-endian), as a fill of a 1-, 2- or 4-byte pattern does. */
#include "../support/kernels.h" /* struct fill_bytes */
void fill_bytes(const struct fill_bytes *p, int64_t first, int64_t end) {
  uint32_t size = p->size ? p->size : 1;
  for (int64_t i = first; i < end && i < p->n; i++)
    p->dst[i] = (uint8_t)(p->pattern >> (8 * (uint32_t)(i % size)));
}
