/* A bad object: a static variable in use, a non-empty .bss (LINK-4). */
#include <stdint.h>
static int64_t calls;
int64_t count(void) { return ++calls; }
