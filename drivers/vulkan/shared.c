/* SPDX-License-Identifier: MIT */
/* shared.c: the VkDevices that opens share (README, "Sharing a VkDevice"):
 * one VkInstance, VkDevice and queue per physical device and validation
 * setting, listed while open, refcounted, gone at the last destroy. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vulkan_private.h"

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static rvk_shared *shared_list; /* the shareable ones (shared_lock) */

/* The edge's fork hook (ABI 1.4), which core calls holding its own locks:
 * a fork waits for an open under way, which holds shared_lock while it
 * makes a VkDevice, so the child finds the lock free and the list whole
 * (and makes VkDevices of its own, since entries carry the parent's pid).
 * The child never calls a handle of the parent's (STOP-20), so their
 * qlock, mlock and ilock, and their VkDevices' qlock, are not taken. */
void rvk_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_PREPARE)
    pthread_mutex_lock(&shared_lock);
  else
    pthread_mutex_unlock(&shared_lock);
}

/* Drops one open's reference; the last frees the queue's work (a pipeline
 * lavapipe frees only when the queue next runs or idles, and leaks at
 * vkDestroyDevice), the VkDevice, the messenger and the instance. */
void rvk_shared_put(rvk_shared *sh) {
  if (!sh)
    return;
  pthread_mutex_lock(&shared_lock);
  bool last = --sh->refs == 0;
  if (last && sh->listed)
    for (rvk_shared **p = &shared_list; *p; p = &(*p)->next)
      if (*p == sh) {
        *p = sh->next;
        break;
      }
  pthread_mutex_unlock(&shared_lock);
  if (!last)
    return;
  if (sh->queue)
    (void)vkQueueWaitIdle(sh->queue); /* no open is left to submit */
  if (sh->dev)
    vkDestroyDevice(sh->dev, NULL);
  if (sh->messenger)
    sh->DestroyMessenger(sh->inst, sh->messenger, NULL);
  if (sh->inst)
    vkDestroyInstance(sh->inst, NULL);
  pthread_mutex_destroy(&sh->qlock);
  free(sh);
}

/* v->sh: the listed VkDevice of v's physical device and validation
 * setting where v shares (v->share, the default), else a new one with its
 * instance, which rvk_shared_open lists once its device is made.
 * shared_lock held, so that two opens make one. */
static int shared_get(rvk_dev *v, uint32_t index, rig_edge_error *err) {
  for (rvk_shared *s = v->share ? shared_list : NULL; s; s = s->next)
    if (s->index == index && s->validate == v->validate && s->pid == getpid() &&
        __atomic_load_n(&s->lost, __ATOMIC_ACQUIRE) == RVK_LOST_NONE) { /* a lost one is done */
      s->refs++;
      v->sh = s;
      v->inst = s->inst;
      return RIG_EDGE_OK;
    }
  rvk_shared *s = calloc(1, sizeof *s);
  if (!s)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: out of memory", v->name);
  pthread_mutex_init(&s->qlock, NULL);
  s->refs = 1;
  s->index = index;
  s->validate = v->validate;
  s->pid = getpid();
  s->validation.size = sizeof s->validation;
  snprintf(s->name, sizeof s->name, "%s", v->name);
  v->sh = s;
  int r = rvk_make_instance(s, err);
  v->inst = s->inst;
  return r;
}

/* Lists v's new shared VkDevice for later opens to share. shared_lock held. */
static void shared_list_add(rvk_dev *v) {
  if (!v->share || v->sh->listed)
    return;
  v->sh->listed = true;
  v->sh->next = shared_list;
  shared_list = v->sh;
}

/* v's VkDevice: made by the first open of its physical device and
 * validation setting and shared by the later ones (share=0: one of its
 * own), with v's semaphore and pool on it. shared_lock is held until it
 * is made and listed, so that two opens at once make one. On failure v->sh
 * may hold a reference, which rvk_destroy drops. */
int rvk_shared_open(rvk_dev *v, uint32_t index, rig_edge_error *err) {
  pthread_mutex_lock(&shared_lock);
  int r = shared_get(v, index, err);
  if (r == RIG_EDGE_OK)
    r = rvk_pick_device(v, index, err);
  if (r == RIG_EDGE_OK)
    r = rvk_make_device(v, err);
  if (r == RIG_EDGE_OK)
    shared_list_add(v);
  pthread_mutex_unlock(&shared_lock);
  return r;
}
