/* SPDX-License-Identifier: MIT */
/* loss.c: a CUDA context that a sticky error broke, and every rig device
 * on it (LOSS-14).
 *
 * After an illegal address, a failed launch or a trap, CUDA returns the
 * same error from every later call on the context: all opens sharing it
 * are lost, with the error's name and text as the reason, named by the
 * open that saw it first. Other failures lose only the open whose call
 * failed (core does that with the RIG_EDGE_FAULT message), and no memory
 * is RIG_EDGE_NO_ROOM, which core reclaims on and retries (RECLAIM-52).
 */
#include <stdio.h>

#include "cuda_private.h"

bool loss_sticky(CUresult r) {
  switch (r) {
  case CUDA_ERROR_ECC_UNCORRECTABLE:
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case 710: /* CUDA_ERROR_ASSERT: a device-side assert */
  case CUDA_ERROR_UNKNOWN:
    return true;
  default:
    return false;
  }
}

bool loss_is_lost(const gpu *g) {
  return __atomic_load_n(&g->lost, __ATOMIC_ACQUIRE) != LOST_NONE;
}

void loss_mark(cudev *d, const char *why) {
  gpu *g = d->g;
  int none = LOST_NONE;
  if (!__atomic_compare_exchange_n(&g->lost, &none, LOST_NAMING, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return;
  snprintf(g->lost_why, sizeof g->lost_why, "%.150s at %.40s", why, d->name);
  __atomic_store_n(&g->lost, LOST_SET, __ATOMIC_RELEASE);
}

int loss_check(const cudev *d, rig_edge_error *err) {
  if (__atomic_load_n(&d->g->lost, __ATOMIC_ACQUIRE) != LOST_SET)
    return RIG_EDGE_OK;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: its CUDA context is lost: %s", d->name,
                       d->g->lost_why);
}

int loss_fail(cudev *d, rig_edge_error *err, CUresult r, const char *call) {
  char why[160];
  library_error(r, why, sizeof why);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: %s: %s", d->name, call, why);
  if (!loss_sticky(r))
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: %s: %s", d->name, call, why);
  char whole[200];
  snprintf(whole, sizeof whole, "%s: %s", call, why);
  loss_mark(d, whole);
  return loss_check(d, err);
}
