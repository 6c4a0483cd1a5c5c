/* SPDX-License-Identifier: MIT */
/* timeline.c: the open's timeline semaphore as its own word (OWN_WORD):
 * signaled() reads its counter, wait() is vkWaitSemaphores. The semaphore
 * holds rig's value less base (queue.c sets base at the first submit). */
#include "vulkan_private.h"

/* The value the semaphore has reached, in rig's values. */
VkResult rvk_counter(rvk_dev *v, uint64_t *out) {
  uint64_t raw = 0;
  VkResult r = v->GetSemaphoreCounterValue(v->dev, v->timeline, &raw);
  *out = raw ? raw + v->base : 0;
  return r;
}

/* Raises the value known reached to at least value. */
void rvk_note_reached(rvk_dev *v, uint64_t value) {
  uint64_t old = __atomic_load_n(&v->reached, __ATOMIC_RELAXED);
  while (old < value && !__atomic_compare_exchange_n(&v->reached, &old, value, true,
                                                     __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    ;
}

/* A profile's records of the work now done (profile.c), where no other
 * call holds the queue: one that does harvests in its turn. */
static void harvest(rvk_dev *v) {
  if (__atomic_load_n(&v->prof, __ATOMIC_RELAXED) && pthread_mutex_trylock(&v->qlock) == 0) {
    rvk_profile_harvest(v);
    pthread_mutex_unlock(&v->qlock);
  }
}

/* The semaphore's counter; once it reached every value taken, the value
 * itself, without asking the device again. */
int rvk_signaled(void *h, uint64_t *out, rig_edge_error *err) {
  rvk_dev *v = h;
  if (v->stopped) {
    *out = v->final;
    return RIG_EDGE_OK;
  }
  uint64_t known = __atomic_load_n(&v->reached, __ATOMIC_ACQUIRE);
  if (known >= __atomic_load_n(&v->taken, __ATOMIC_ACQUIRE)) {
    *out = known;
    return RIG_EDGE_OK;
  }
  int lost = rvk_check_lost(v, err);
  if (lost != RIG_EDGE_OK)
    return lost;
  VkResult r = rvk_counter(v, out);
  if (r != VK_SUCCESS)
    return rvk_fail_lost(v, err, r, "vkGetSemaphoreCounterValue");
  rvk_note_reached(v, *out);
  harvest(v);
  return RIG_EDGE_OK;
}

/* vkWaitSemaphores for rig's value on v's semaphore, up to ns. */
static VkResult wait_value(rvk_dev *v, uint64_t value, uint64_t ns) {
  uint64_t raw = value > v->base ? value - v->base : 1;
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &v->timeline,
                            .pValues = &raw};
  return v->WaitSemaphores(v->dev, &wi, ns);
}

/* A wait commits what it waits for (TL-9), then waits on the semaphore. */
int rvk_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  rvk_dev *v = h;
  int lost = rvk_check_lost(v, err);
  if (lost != RIG_EDGE_OK)
    return lost;
  if (__atomic_load_n(&v->queued, __ATOMIC_ACQUIRE) < value) {
    pthread_mutex_lock(&v->qlock);
    int r = rvk_flush(v, value, err);
    pthread_mutex_unlock(&v->qlock);
    if (r != RIG_EDGE_OK)
      return r;
  }
  VkResult r = wait_value(v, value, (uint64_t)timeout_ms * 1000000u);
  if (r == VK_SUCCESS) {
    rvk_note_reached(v, value);
    harvest(v);
    return RIG_EDGE_OK;
  }
  if (r == VK_TIMEOUT)
    return RIG_EDGE_TIMEOUT;
  return rvk_fail_lost(v, err, r, "vkWaitSemaphores");
}

/* Waits until the work v sent to the queue is done: its semaphore reaches
 * the last value queued. Not vkQueueWaitIdle: the queue is shared, and
 * other opens' work is not this stop's to wait for. Every wait in v's
 * batches is on a value some open sent to the queue before them
 * (peers.c's peer_ready), so this ends; a lost device returns at once.
 * qlock held. */
void rvk_own_work_done(rvk_dev *v) {
  uint64_t q = __atomic_load_n(&v->queued, __ATOMIC_ACQUIRE);
  if (!q || !v->timeline)
    return;
  if (wait_value(v, q, UINT64_MAX) == VK_ERROR_DEVICE_LOST)
    rvk_mark_lost(v);
}
