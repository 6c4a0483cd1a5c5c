/* SPDX-License-Identifier: MIT */
/* loss.c: a lost open. Each open has its own context, which the kernel
 * marks when it resets the GPU (a hang of any context's job past the
 * kernel's timeout, a page fault it recovers from by a reset): its submits
 * then fail with -ECANCELED and amdgpu_cs_query_reset_state2 says whether
 * this context was the guilty one and whether VRAM's contents went. The
 * open is lost with the kernel's word for it; core loses the device. */
#include <stdio.h>
#include <string.h>

#include "amdgpu_private.h"

void loss_mark(amddev *d, const char *why) {
  if (__atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
    return; /* the first reason stays */
  snprintf(d->lost_why, sizeof d->lost_why, "%s", why);
  __atomic_store_n(&d->lost, 1, __ATOMIC_RELEASE);
}

bool loss_query(amddev *d) {
  uint64_t flags = 0;
  if (__atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
    return true;
  if (library_in_child() || drm.amdgpu_cs_query_reset_state2(d->ctx, &flags) != 0)
    return false;
  if (!(flags & AMDGPU_CTX_QUERY2_FLAGS_RESET))
    return false;
  char why[200];
  snprintf(why, sizeof why, "the kernel reset the GPU: %s%s%s",
           flags & AMDGPU_CTX_QUERY2_FLAGS_GUILTY
               ? "this context's work hung or faulted (guilty)"
               : "another context's work hung or faulted (innocent)",
           flags & AMDGPU_CTX_QUERY2_FLAGS_VRAMLOST ? "; VRAM's contents were lost" : "",
           flags & AMDGPU_CTX_QUERY2_FLAGS_RAS_UE ? "; an uncorrectable memory error" : "");
  loss_mark(d, why);
  return true;
}

int loss_check(const amddev *d, rig_edge_error *err) {
  if (!__atomic_load_n(&d->lost, __ATOMIC_ACQUIRE))
    return RIG_EDGE_OK;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s", d->lost_why);
}
