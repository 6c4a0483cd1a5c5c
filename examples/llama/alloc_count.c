/* alloc_count.c: counts the program's calls of the C library's allocator,
 * so that rig-llama can say how many allocations its tokens made (none is
 * the claim, llama.c). It replaces malloc and its kin for the process and
 * forwards to glibc's own; under AddressSanitizer, which owns malloc, it
 * counts nothing and says so. Each call is also told apart by its caller:
 * rig's libraries and this program, or another library (a Vulkan driver
 * such as lavapipe allocates inside vkQueueSubmit and on its own queue
 * thread, which no program can prevent). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>
#include <stdbool.h>
#include <stddef.h>

#include "alloc_count.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NOT_COUNTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NOT_COUNTED 1
#endif
#endif

#ifdef NOT_COUNTED
bool llama_allocs_counted(void) {
  return false;
}
long llama_allocs(void) {
  return 0;
}
long llama_allocs_rig(void) {
  return 0;
}
#else
static atomic_long allocs, allocs_rig;

bool llama_allocs_counted(void) {
  return true;
}
long llama_allocs(void) {
  return atomic_load_explicit(&allocs, memory_order_relaxed);
}
long llama_allocs_rig(void) {
  return atomic_load_explicit(&allocs_rig, memory_order_relaxed);
}

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

#define EXPORTED __attribute__((visibility("default")))
static _Thread_local bool inside; /* dladdr's own calls, if it made any */

/* Counts a call from caller: rig's when the object that holds caller is
 * one of rig's libraries (librig-core, a librig-driver) or this program. */
static void count(void *caller) {
  atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
  if (inside)
    return;
  inside = true;
  Dl_info info;
  static const char *self;
  if (!self && dladdr((void *)count, &info))
    self = info.dli_fname;
  if (dladdr(caller, &info) && info.dli_fname &&
      (strstr(info.dli_fname, "librig") || (self && !strcmp(info.dli_fname, self))))
    atomic_fetch_add_explicit(&allocs_rig, 1, memory_order_relaxed);
  inside = false;
}
#define note() count(__builtin_return_address(0))

EXPORTED void *malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
EXPORTED void *calloc(size_t k, size_t n) {
  note();
  return __libc_calloc(k, n);
}
EXPORTED void *realloc(void *p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
EXPORTED int posix_memalign(void **out, size_t align, size_t n) {
  note();
  void *p = __libc_memalign(align, n);
  if (!p)
    return 12; /* ENOMEM */
  *out = p;
  return 0;
}
EXPORTED void *aligned_alloc(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
EXPORTED void *memalign(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
#endif
