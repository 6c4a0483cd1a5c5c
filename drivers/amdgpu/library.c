/* SPDX-License-Identifier: MIT */
/* library.c: libdrm.so.2 and libdrm_amdgpu.so.1, opened with dlopen at the
 * first open (or devices()) of an amdgpu device, and every entry point the
 * driver calls taken from them with dlsym. Nothing links libdrm, so a
 * machine without it builds, loads the plugin and says "no library".
 *
 * RIG_AMDGPU_LIBDRM and RIG_AMDGPU_LIBRARY, where set (and the program is
 * not setuid), name the two libraries to open instead: the tests point one
 * at no file. The libraries stay loaded for the process: memory made
 * through them may outlive any open.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_private.h"

drm_fns drm;

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tried; /* these three: under the open lock */
static int load_result;
static char load_why[RIG_EDGE_MESSAGE_BYTES];
static amddev *holders; /* opens holding a render node (open lock) */
static pid_t forked_from; /* a child of fork: the parent that had opens */

enum { DRM, AMD };

typedef struct symbol {
  int lib;
  size_t offset;
  const char *name;
} symbol;

static const symbol symbols[] = {
#define AMDGPU_ENTRY(lib, sym) {lib, offsetof(drm_fns, sym), #sym},
    AMDGPU_SYMBOLS(AMDGPU_ENTRY)
#undef AMDGPU_ENTRY
};

void library_lock(bool lock) {
  if (lock)
    pthread_mutex_lock(&open_lock);
  else
    pthread_mutex_unlock(&open_lock);
}

void library_hold(amddev *d) {
  d->next = holders;
  holders = d;
}

void library_drop(amddev *d) {
  for (amddev **p = &holders; *p; p = &(*p)->next)
    if (*p == d) {
      *p = d->next;
      break;
    }
}

/* The parent's opens are lost in the child: their files, contexts and
 * buffer objects are the parent's, and nothing of them is called again. */
void library_forked(void) {
  if (!holders || forked_from)
    return;
  __atomic_store_n(&forked_from, getppid(), __ATOMIC_RELAXED);
  for (amddev *d = holders; d; d = d->next)
    loss_mark(d, "forked: its render node, context and memory are the parent process's");
}

bool library_in_child(void) {
  return __atomic_load_n(&forked_from, __ATOMIC_RELAXED) != 0;
}

static void *open_one(const char *variable, const char *fallback) {
  const char *path = secure_getenv(variable);
  if (!path || !*path)
    path = fallback;
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(load_why, sizeof load_why, "amdgpu: no library: %s", e ? e : path);
  }
  return lib;
}

/* Both libraries and every symbol; "no library" where any is missing
 * (a libdrm older than the driver needs names the symbol). */
static int open_libraries(void) {
  void *libs[2];
  libs[DRM] = open_one("RIG_AMDGPU_LIBDRM", "libdrm.so.2");
  if (!libs[DRM])
    return RIG_EDGE_UNAVAILABLE;
  libs[AMD] = open_one("RIG_AMDGPU_LIBRARY", "libdrm_amdgpu.so.1");
  if (!libs[AMD])
    return RIG_EDGE_UNAVAILABLE;
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
    void *f = dlsym(libs[symbols[i].lib], symbols[i].name);
    if (!f) {
      snprintf(load_why, sizeof load_why, "amdgpu: no library: %s has no %s (too old)",
               symbols[i].lib == DRM ? "libdrm" : "libdrm_amdgpu", symbols[i].name);
      memset(&drm, 0, sizeof drm);
      return RIG_EDGE_UNAVAILABLE;
    }
    memcpy((char *)&drm + symbols[i].offset, &f, sizeof f);
  }
  return RIG_EDGE_OK;
}

int library_load(rig_edge_error *err) {
  pid_t parent = __atomic_load_n(&forked_from, __ATOMIC_RELAXED);
  if (parent)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "amdgpu: this process is a child of fork of process %d, whose amdgpu "
                         "devices it does not use; open them in the parent",
                         (int)parent);
  if (!tried) {
    tried = true;
    load_result = open_libraries();
  }
  if (load_result != RIG_EDGE_OK)
    return rig_edge_fail(err, load_result, "%s", load_why);
  return RIG_EDGE_OK;
}
