/* SPDX-License-Identifier: MIT */
/* queue.c: submit and commit (README, "The timeline: a word of its own"):
 * submit records a value's work and holds it; a commit, a wait, or k
 * values held send the held work to the queue in one vkQueueSubmit, one
 * batch per value, each signaling its value on the open's semaphore. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_private.h"

static bool push(rvk_vec *x, rvk_held e) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 32;
    rvk_held *a = realloc(x->at, cap * sizeof *a);
    if (!a)
      return false;
    x->at = a;
    x->cap = cap;
  }
  x->at[x->n++] = e;
  return true;
}

/* Gives back the command buffers of work the device has finished. qlock held. */
static void recycle(rvk_dev *v) {
  uint64_t done = 0;
  if (!v->flight.n || rvk_counter(v, &done) != VK_SUCCESS)
    return;
  size_t keep = 0;
  for (size_t i = 0; i < v->flight.n; i++)
    if (v->flight.at[i].value <= done)
      rvk_put_spare(v, v->flight.at[i].cb);
    else
      v->flight.at[keep++] = v->flight.at[i];
  v->flight.n = keep;
}

static bool grow_infos(rvk_dev *v, size_t n) {
  if (n <= v->capinfos)
    return true;
  size_t cap = n < 32 ? 32 : n * 2;
  VkSubmitInfo *a = realloc(v->infos, cap * sizeof *a);
  if (a)
    v->infos = a;
  VkTimelineSemaphoreSubmitInfo *b = realloc(v->tinfos, cap * sizeof *b);
  if (b)
    v->tinfos = b;
  uint64_t *c = realloc(v->values, cap * sizeof *c);
  if (c)
    v->values = c;
  if (!a || !b || !c)
    return false;
  v->capinfos = cap;
  return true;
}

/* Batch i of a submit: held work e, after its waits, signaling its value. */
static void fill_batch(rvk_dev *v, size_t i, rvk_held *e) {
  const rvk_waitset *ws = e->ws;
  v->values[i] = e->value - v->base;
  v->tinfos[i] = (VkTimelineSemaphoreSubmitInfo){
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .waitSemaphoreValueCount = ws ? ws->n : 0,
      .pWaitSemaphoreValues = ws ? ws->values : NULL,
      .signalSemaphoreValueCount = 1,
      .pSignalSemaphoreValues = &v->values[i]};
  v->infos[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .pNext = &v->tinfos[i],
                               .waitSemaphoreCount = ws ? ws->n : 0,
                               .pWaitSemaphores = ws ? ws->sems : NULL,
                               .pWaitDstStageMask = ws ? ws->stages : NULL,
                               .commandBufferCount = e->cb ? 1 : 0,
                               .pCommandBuffers = e->cb ? &e->cb : NULL,
                               .signalSemaphoreCount = 1,
                               .pSignalSemaphores = &v->timeline};
}

/* The first n held values are on the queue: their waits go (Vulkan copied
 * them), their command buffers join the work in flight (the cache keeps
 * its own), and the rest move up. */
static int sent(rvk_dev *v, size_t n, rig_edge_error *err) {
  for (size_t i = 0; i < n; i++) {
    free(v->held.at[i].ws);
    v->held.at[i].ws = NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (v->held.at[i].cb && !v->held.at[i].cached && !push(&v->flight, v->held.at[i]))
      return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  __atomic_store_n(&v->queued, v->held.at[n - 1].value, __ATOMIC_RELEASE);
  memmove(v->held.at, v->held.at + n, (v->held.n - n) * sizeof *v->held.at);
  v->held.n -= n;
  return RIG_EDGE_OK;
}

/* Sends the held work of values up to upto to the queue, in one
 * vkQueueSubmit of a batch per value. qlock held. */
int rvk_flush(rvk_dev *v, uint64_t upto, rig_edge_error *err) {
  size_t n = 0;
  while (n < v->held.n && v->held.at[n].value <= upto)
    n++;
  if (!n)
    return RIG_EDGE_OK;
  if (!grow_infos(v, n))
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory for a submit", v->name);
  for (size_t i = 0; i < n; i++)
    fill_batch(v, i, &v->held.at[i]);
  /* The queue is the shared VkDevice's: externally synchronized. */
  pthread_mutex_lock(&v->sh->qlock);
  VkResult r = vkQueueSubmit(v->queue, (uint32_t)n, v->infos, VK_NULL_HANDLE);
  pthread_mutex_unlock(&v->sh->qlock);
  if (r != VK_SUCCESS)
    return rvk_fail_lost(v, err, r, "vkQueueSubmit");
  return sent(v, n, err);
}

/* fault_nth= and lose_nth=: the nth submit fails as a lost device's
 * would, or as VK_ERROR_DEVICE_LOST, which loses the shared VkDevice. */
static int injected(rvk_dev *v, const rig_edge_work *w, rig_edge_error *err) {
  uint64_t nth = ++v->submits; /* core serialises a device's submits (DOM-5) */
  if (v->fault_nth && nth == v->fault_nth)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "injected fault at %" PRIu64, w->value);
  if (v->lose_nth && nth == v->lose_nth) {
    rvk_mark_lost(v);
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkQueueSubmit: VK_ERROR_DEVICE_LOST (-4), "
                         "injected at %" PRIu64, v->name, w->value);
  }
  return RIG_EDGE_OK;
}

/* Records w and holds it with its waits ws (which it owns from here);
 * sends the held work to the queue once k values are held. qlock held. */
static int hold(rvk_dev *v, const rig_edge_work *w, rvk_waitset *ws, rig_edge_error *err) {
  if (!__atomic_load_n(&v->taken, __ATOMIC_RELAXED)) /* the first value: 1 on the semaphore */
    __atomic_store_n(&v->base, w->value - 1, __ATOMIC_RELEASE);
  if (!v->nspare || v->flight.n >= 64)
    recycle(v);
  rvk_profile_harvest(v); /* nothing unless a profile timed work */
  rvk_held e;
  int r = rvk_record(v, w, &e, err);
  e.ws = r == RIG_EDGE_OK ? ws : NULL;
  if (r == RIG_EDGE_OK && !push(&v->held, e))
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  if (r != RIG_EDGE_OK) {
    free(ws);
    return r;
  }
  __atomic_store_n(&v->taken, w->value, __ATOMIC_RELEASE);
  if (v->held.n >= v->k) /* TL-10: at most k values wait uncommitted */
    return rvk_flush(v, w->value, err);
  return RIG_EDGE_OK;
}

int rvk_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  rvk_dev *v = h;
  int r = injected(v, w, err);
  if (r == RIG_EDGE_OK)
    r = rvk_check_lost(v, err);
  rvk_waitset *ws = NULL;
  if (r == RIG_EDGE_OK)
    r = rvk_take_waits(w, &ws, err); /* before qlock: it takes peers' (lock order) */
  if (r != RIG_EDGE_OK)
    return r;
  pthread_mutex_lock(&v->qlock);
  r = hold(v, w, ws, err);
  pthread_mutex_unlock(&v->qlock);
  return r; /* any failure loses the device (SUBMIT-30) */
}

int rvk_commit(void *h, uint64_t value, rig_edge_error *err) {
  rvk_dev *v = h;
  int r = rvk_check_lost(v, err);
  if (r != RIG_EDGE_OK)
    return r;
  pthread_mutex_lock(&v->qlock);
  r = rvk_flush(v, value, err);
  pthread_mutex_unlock(&v->qlock);
  return r;
}
