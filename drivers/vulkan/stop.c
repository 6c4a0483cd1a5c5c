/* SPDX-License-Identifier: MIT */
/* stop.c: the end of an open (README, "Loss and the stop"): the stop ends
 * its queue and frees all but its memory still out; destroy frees the
 * rest, and drops its reference to the shared VkDevice. */
#include <stdlib.h>

#include "vulkan_private.h"

/* Held work never runs (TL-8): its command buffers go back, its waits go. */
static void drop_held(rvk_dev *v) {
  for (size_t i = 0; i < v->held.n; i++) {
    if (v->held.at[i].cb && !v->held.at[i].cached)
      rvk_put_spare(v, v->held.at[i].cb);
    free(v->held.at[i].ws);
  }
  v->held.n = 0;
}

/* Every command buffer, and the pool they came from. */
static void free_command_buffers(rvk_dev *v) {
  for (size_t i = 0; i < v->flight.n; i++)
    rvk_put_spare(v, v->flight.at[i].cb);
  v->flight.n = 0;
  rvk_cache_clear(v);
  if (v->nspare)
    vkFreeCommandBuffers(v->dev, v->pool, (uint32_t)v->nspare, v->spare);
  v->nspare = 0;
  vkDestroyCommandPool(v->dev, v->pool, NULL);
  v->pool = VK_NULL_HANDLE;
}

/* Code: nothing runs any more. Core unloads no image of a stopped device,
 * so their objects go now, and their records at destroy. */
static void free_code(rvk_dev *v) {
  pthread_mutex_lock(&v->ilock);
  bool pipelines = rvk_images_objects_free(v);
  /* Lavapipe (Mesa 22.3) frees a pipeline its queue ran only when the
   * queue next runs or idles, and leaks it at vkDestroyDevice: idle it. */
  if (pipelines) {
    pthread_mutex_lock(&v->sh->qlock);
    (void)vkQueueWaitIdle(v->queue);
    pthread_mutex_unlock(&v->sh->qlock);
  }
  rvk_free_code_objects(v);
  pthread_mutex_unlock(&v->ilock);
}

/* Ends the queue: held work never runs (TL-8); what the queue holds ends;
 * then it reports the last value it took, run or not (STOP-1), and frees
 * everything but the memory still out and the device it lives on. */
int rvk_stop(void *h, rig_edge_error *err) {
  rvk_dev *v = h;
  (void)err;
  if (v->stopped)
    return RIG_EDGE_OK;
  pthread_mutex_lock(&v->qlock);
  drop_held(v);
  rvk_own_work_done(v);
  uint64_t done = 0;
  if (rvk_counter(v, &done) != VK_SUCCESS)
    done = 0;
  v->final = done > v->taken ? done : v->taken;
  rvk_profile_end(v); /* the last records, before the queries go */
  free_command_buffers(v);
  rvk_free_objects(v, &v->scratch);
  free_code(v);
  __atomic_store_n(&v->stopped, true, __ATOMIC_RELEASE);
  if (!v->maps) { /* else other opens' queues may wait on it: it goes at destroy */
    vkDestroySemaphore(v->dev, v->timeline, NULL);
    v->timeline = VK_NULL_HANDLE;
  }
  pthread_mutex_unlock(&v->qlock);
  rvk_free_host_maps(v);
  return RIG_EDGE_OK;
}

/* The open's Vulkan objects that outlive a stop, or that an open that
 * failed half-way made. */
static void free_vulkan_objects(rvk_dev *v) {
  rig_edge_error err;
  if (v->opened && !v->stopped)
    rvk_stop(v, &err);
  rvk_free_mems(v);
  rvk_free_objects(v, &v->scratch);
  rvk_images_free(v);
  rvk_free_code_objects(v);
  if (v->timeline)
    vkDestroySemaphore(v->dev, v->timeline, NULL);
  if (v->pool)
    vkDestroyCommandPool(v->dev, v->pool, NULL);
}

void rvk_destroy(void *h) {
  rvk_dev *v = h;
  if (v->dev)
    free_vulkan_objects(v);
  rvk_shared_put(v->sh);
  free(v->held.at);
  free(v->flight.at);
  free(v->spare);
  free(v->infos);
  free(v->tinfos);
  free(v->values);
  free(v->key);
  for (int i = 0; i < RVK_CACHED_CBS; i++)
    free(v->cache[i].key);
  pthread_mutex_destroy(&v->qlock);
  pthread_mutex_destroy(&v->mlock);
  pthread_mutex_destroy(&v->ilock);
  free(v);
}
