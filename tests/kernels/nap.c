/* A kernel that works a while without a CPU: it sleeps ms milliseconds,
 * then writes 0x600dcafe to done[0]. It stands for a server's long
 * request (docs/remote.md, "Liveness"); usleep comes from the process
 * that links it. Run it as one group of one thread. */
#include <stdint.h>
int usleep(unsigned int microseconds);
struct nap { uint32_t *done; int64_t ms; };
void nap(const struct nap *p, int64_t first, int64_t end) {
  if (first != 0 || end <= first)
    return;
  for (int64_t t = 0; t < p->ms; t += 10)
    usleep(10000);
  p->done[0] = 0x600dcafeu;
}
