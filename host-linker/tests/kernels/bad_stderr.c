/* A bad object of real compiler output: a kernel that prints to stderr, a
 * variable of the process, which -fPIC code reaches through the GOT
 * (R_X86_64_REX_GOTPCRELX, R_AARCH64_ADR_GOT_PAGE): LINK-6, with the
 * advice to pass what the kernel needs in its parameters. */
#include <stdint.h>
typedef struct FILE FILE;
extern FILE *stderr;
int fprintf(FILE *, const char *, ...);
void say(const void *params, int64_t first, int64_t end) {
  fprintf(stderr, "threads %lld to %lld\n", (long long)first, (long long)end);
}
