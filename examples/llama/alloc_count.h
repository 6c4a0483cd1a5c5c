/* alloc_count.h: the process's allocations so far (alloc_count.c). */
#ifndef RIG_LLAMA_ALLOC_COUNT_H
#define RIG_LLAMA_ALLOC_COUNT_H

#include <stdbool.h>

/* Whether allocations are counted here (not under a sanitizer). */
bool llama_allocs_counted(void);
/* The calls of malloc, calloc, realloc and the aligned allocators so far. */
long llama_allocs(void);
/* Those of them made by rig's libraries and this program. */
long llama_allocs_rig(void);

#endif
