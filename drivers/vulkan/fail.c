/* SPDX-License-Identifier: MIT */
/* fail.c: the Vulkan driver's failures: a VkResult's name, the status of a
 * failed call, and the loss of a shared VkDevice (LOSS-14). */
#include <stdio.h>

#include "vulkan_private.h"

const char *rvk_result_name(VkResult r) {
  switch (r) {
#define N(x) case x: return #x;
    N(VK_SUCCESS) N(VK_NOT_READY) N(VK_TIMEOUT) N(VK_INCOMPLETE)
    N(VK_ERROR_OUT_OF_HOST_MEMORY) N(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    N(VK_ERROR_INITIALIZATION_FAILED) N(VK_ERROR_DEVICE_LOST)
    N(VK_ERROR_MEMORY_MAP_FAILED) N(VK_ERROR_LAYER_NOT_PRESENT)
    N(VK_ERROR_EXTENSION_NOT_PRESENT) N(VK_ERROR_FEATURE_NOT_PRESENT)
    N(VK_ERROR_INCOMPATIBLE_DRIVER) N(VK_ERROR_TOO_MANY_OBJECTS)
    N(VK_ERROR_FORMAT_NOT_SUPPORTED) N(VK_ERROR_UNKNOWN)
    N(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    N(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef N
  default:
    return "VkResult";
  }
}

/* The result of a failed Vulkan call on a working device: a lost device,
 * or no memory, which core reclaims and retries on (RECLAIM-52). */
int rvk_fail(rig_edge_error *err, VkResult r, const char *what, const char *name) {
  int code = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ||
                     r == VK_ERROR_TOO_MANY_OBJECTS
                 ? RIG_EDGE_NO_ROOM
                 : RIG_EDGE_FAULT;
  return rig_edge_fail(err, code, "%s: %s: %s (%d)", name, what, rvk_result_name(r), (int)r);
}

/* LOSS-14: VK_ERROR_DEVICE_LOST loses the VkDevice, and so every open
 * that shares it, not only the one whose call saw it. The first to see it
 * names itself in the others' messages. */
void rvk_mark_lost(rvk_dev *v) {
  rvk_shared *sh = v->sh;
  int none = RVK_LOST_NONE;
  if (!sh || !__atomic_compare_exchange_n(&sh->lost, &none, RVK_LOST_NAMING, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return;
  snprintf(sh->lost_by, sizeof sh->lost_by, "%s", v->name);
  __atomic_store_n(&sh->lost, RVK_LOST_SET, __ATOMIC_RELEASE);
}

/* RIG_EDGE_FAULT where the shared VkDevice is lost (LOSS-14), else OK:
 * an open whose own calls still succeed (lavapipe, or an injected loss)
 * is lost with the one that saw it. */
int rvk_check_lost(const rvk_dev *v, rig_edge_error *err) {
  if (!v->sh || __atomic_load_n(&v->sh->lost, __ATOMIC_ACQUIRE) != RVK_LOST_SET)
    return RIG_EDGE_OK;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: its VkDevice is lost (VK_ERROR_DEVICE_LOST "
                       "at %s, which shares it)", v->name, v->sh->lost_by);
}

/* A failed call on the queue or the semaphore: a fault, which a lost
 * device's makes every sharer's (LOSS-14). */
int rvk_fail_lost(rvk_dev *v, rig_edge_error *err, VkResult r, const char *what) {
  if (r == VK_ERROR_DEVICE_LOST)
    rvk_mark_lost(v);
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: %s: %s (%d)", v->name, what,
                       rvk_result_name(r), (int)r);
}
