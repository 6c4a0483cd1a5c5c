/* SPDX-License-Identifier: MIT */
/* shim.h: between librig-driver-remote.so (shim.c), which core loads, and
 * the driver proper with UCX, librig-remote-ucx.so (remote.c), which the
 * shim opens at the first open of another machine's device. */
#ifndef RIG_REMOTE_SHIM_H
#define RIG_REMOTE_SHIM_H

#include <rig/edge.h>

#define RIG_REMOTE_UCX_LIBRARY "librig-remote-ucx.so"
#define RIG_REMOTE_ENTRY_NAME "rig_remote_ucx_driver"

/* The driver proper's table (remote.c): every entry the shim forwards. */
typedef const rig_edge_driver *(*rig_remote_entry_fn)(void);

/* Whether this process runs under a sanitizer whose interceptors sit on
 * malloc and mmap (ASan, TSan, MSan): its runtime's entry is among the
 * process's symbols. UCX's memory hooks must then stay off (shim.c,
 * ucx.c). */
#include <dlfcn.h>
#include <stdbool.h>
static inline bool rig_remote_sanitized(void) {
  return dlsym(RTLD_DEFAULT, "__tsan_init") || dlsym(RTLD_DEFAULT, "__asan_init") ||
         dlsym(RTLD_DEFAULT, "__msan_init");
}

#endif
