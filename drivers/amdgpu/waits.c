/* SPDX-License-Identifier: MIT */
/* waits.c: waits on another amdgpu open in the queue (map_peer, edge ABI
 * 1.2). Each open's timeline is a syncobj of its own file; the peer's is
 * exported as a file descriptor and imported into this open's file, once
 * per mapping, and each wait on it is a SYNCOBJ_TIMELINE_WAIT chunk of the
 * submit at the peer's value: the kernel's scheduler holds the job until
 * that point signals, with no host thread waiting. Other devices' points
 * are waited for on the host by core (the driver states no QUEUE_WAITS).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_private.h"

/* A mapping is the imported handle, plus one so that it is never NULL. */
int waits_map_peer(void *h, void *peer, void **out, rig_edge_error *err) {
  amddev *d = h, *p = peer;
  int fd = -1;
  uint32_t handle = 0;
  if (library_in_child() || d->lost || p->lost)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no queue wait on %s", d->name, p->name);
  int r = drm.amdgpu_cs_export_syncobj(p->node.dev, p->syncobj, &fd);
  if (r == 0) {
    r = drm.amdgpu_cs_import_syncobj(d->node.dev, fd, &handle);
    close(fd);
  }
  if (r != 0)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s's syncobj: %s", d->name, p->name,
                         strerror(-r));
  *out = (void *)((uintptr_t)handle + 1);
  return RIG_EDGE_OK;
}

void waits_unmap(void *h, void *mapping) {
  amddev *d = h;
  if (!library_in_child())
    drm.amdgpu_cs_destroy_syncobj(d->node.dev, (uint32_t)((uintptr_t)mapping - 1));
}

int waits_chunk(amddev *d, const rig_edge_work *w, struct drm_amdgpu_cs_chunk_syncobj *out,
                uint32_t *n, rig_edge_error *err) {
  *n = 0;
  for (uint32_t i = 0; i < w->nwaits; i++) {
    uint32_t handle = (uint32_t)((uintptr_t)w->waits[i].mapping - 1);
    uint64_t point = w->waits[i].value;
    if (*n < WAITS_MAX) {
      out[(*n)++] = (struct drm_amdgpu_cs_chunk_syncobj){
          .handle = handle, .flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, .point = point};
      continue;
    }
    /* past the chunk's room: wait here (the submit may block) */
    int r = drm.amdgpu_cs_syncobj_timeline_wait(
        d->node.dev, &handle, &point, 1, INT64_MAX,
        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
    if (r != 0)
      return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: a wait on a peer's point: %s", d->name,
                           strerror(-r));
  }
  return RIG_EDGE_OK;
}
