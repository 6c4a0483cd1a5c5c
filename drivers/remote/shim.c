/* SPDX-License-Identifier: MIT */
/* shim.c: librig-driver-remote.so, the remote driver as core loads it. It
 * links librig-edge and the C library only: the driver proper (remote.c
 * and UCX, librig-remote-ucx.so beside it) is opened with dlopen at the
 * first open of another machine's device, as the CUDA driver takes libcuda.
 * So a program that lists devices, or never opens another machine, never
 * loads UCX, whose memory hooks (malloc, mmap, madvise) then never patch
 * it. Every entry but open takes a handle that an open made, so it simply
 * calls the driver proper.
 *
 * Under a sanitizer (ASan, TSan, MSan: their interceptors sit on the same
 * calls, and a thread's start crashed in ucm_madvise under TSan) the shim
 * turns UCX's memory hooks off before the load, by the settings UCX reads
 * then: UCX_MEM_MALLOC_HOOKS=no, UCX_MEM_MMAP_HOOK_MODE=none,
 * UCX_MEM_EVENTS=no, each only where the program has not set it. rig uses
 * no registration cache, which is all the hooks serve (docs/remote.md). */
#define _GNU_SOURCE /* dladdr */
#include <rig/edge.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const rig_edge_driver *proper; /* set once, by load() */
static char load_why[RIG_EDGE_MESSAGE_BYTES];

/* Opens librig-remote-ucx.so from the folder this library came from. */
static void load(void) {
  Dl_info self;
  char path[4096];
  if (rig_remote_sanitized()) { /* overwrite 0: the program's own settings win */
    setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
    setenv("UCX_MEM_MMAP_HOOK_MODE", "none", 0);
    setenv("UCX_MEM_EVENTS", "no", 0);
  }
  if (!dladdr((void *)load, &self) || !self.dli_fname || !strrchr(self.dli_fname, '/')) {
    snprintf(load_why, sizeof load_why, "remote: cannot tell where librig-driver-remote.so is");
    return;
  }
  int dir = (int)(strrchr(self.dli_fname, '/') - self.dli_fname);
  snprintf(path, sizeof path, "%.*s/" RIG_REMOTE_UCX_LIBRARY, dir, self.dli_fname);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  rig_remote_entry_fn entry = lib ? (rig_remote_entry_fn)dlsym(lib, RIG_REMOTE_ENTRY_NAME) : NULL;
  if (!entry) {
    snprintf(load_why, sizeof load_why, "remote: %s", dlerror());
    if (lib)
      dlclose(lib);
    return;
  }
  proper = entry(); /* the library stays for the process's life, as plugins do */
}

static int to_open(const char *args, void **out, rig_edge_error *err) {
  /* rig_device_list probes "remote:0": refused as remote.c refuses it, and
   * without loading UCX for it. */
  if (strncmp(args, RIG_EDGE_MACHINE_ARGS_PREFIX, strlen(RIG_EDGE_MACHINE_ARGS_PREFIX)) != 0)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "remote: open another machine's devices with rig_device_open_host and "
                         "rig_device_open_on, not as '%s'",
                         args);
  pthread_once(&once, load);
  if (!proper)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s", load_why);
  return proper->open(args, out, err);
}

/* The rest: a handle exists, so proper is set (the once that set it
 * happened before the open that made the handle). */
static int to_facts(void *h, rig_edge_facts *o, rig_edge_error *e) {
  return proper->facts(h, o, e);
}
static int to_stop(void *h, rig_edge_error *e) {
  return proper->stop(h, e);
}
static void to_destroy(void *h) {
  proper->destroy(h);
}
static int to_bind_word(void *h, volatile uint64_t *w, rig_edge_error *e) {
  return proper->bind_word(h, w, e);
}
static int to_signaled(void *h, uint64_t *v, rig_edge_error *e) {
  return proper->signaled(h, v, e);
}
static int to_wait(void *h, uint64_t v, uint32_t ms, rig_edge_error *e) {
  return proper->wait(h, v, ms, e);
}
static int to_submit(void *h, const rig_edge_work *w, rig_edge_error *e) {
  return proper->submit(h, w, e);
}
static int to_allocate(void *h, uint32_t kind, uint64_t n, rig_edge_alloc *o, rig_edge_error *e) {
  return proper->allocate(h, kind, n, o, e);
}
static int to_release(void *h, rig_edge_alloc *a, rig_edge_error *e) {
  return proper->release(h, a, e);
}
static int to_map(void *h, void *host, uint64_t n, rig_edge_alloc *o, rig_edge_error *e) {
  return proper->map(h, host, n, o, e);
}
static int to_unmap(void *h, rig_edge_alloc *a, rig_edge_error *e) {
  return proper->unmap(h, a, e);
}
static bool to_peer(void *h, void *other) {
  return proper->peer(h, other);
}
static int to_check(void *h, const rig_edge_work *w, rig_edge_error *e) {
  return proper->check(h, w, e);
}
static int to_load(void *h, const void *b, size_t n, void **im, uint64_t *code, rig_edge_error *e) {
  return proper->load(h, b, n, im, code, e);
}
static int to_resolve(void *h, void *im, const char *name, void **f, rig_edge_error *e) {
  return proper->resolve(h, im, name, f, e);
}
static int to_unload(void *h, void *im, rig_edge_error *e) {
  return proper->unload(h, im, e);
}
static const void *to_capability(void *h, const char *key) {
  return proper->capability(h, key);
}
static bool to_copies_from(void *h, void *other) {
  return proper->copies_from(h, other);
}

static const rig_edge_driver table = {
    RIG_EDGE_DRIVER_INIT("remote"),
    .open = to_open,
    .facts = to_facts,
    .stop = to_stop,
    .destroy = to_destroy,
    .bind_word = to_bind_word,
    .signaled = to_signaled,
    .wait = to_wait,
    .submit = to_submit,
    .allocate = to_allocate,
    .release = to_release,
    .map = to_map,
    .unmap = to_unmap,
    .peer = to_peer,
    .check = to_check,
    .load = to_load,
    .resolve = to_resolve,
    .unload = to_unload,
    .capability = to_capability,
    .copies_from = to_copies_from,
};
RIG_EDGE_DRIVER(table)
