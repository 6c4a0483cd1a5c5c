/* SPDX-License-Identifier: MIT */
/* peers.c: waits on other opens' points (README, "Waits on another
 * device"): where two opens share a VkDevice, a batch of one waits on the
 * other's timeline semaphore in the queue (map_peer, edge ABI 1.2,
 * SUBMIT-2); elsewhere core waits on the host (SUBMIT-3). */
#include <stdlib.h>

#include "vulkan_private.h"

/* SUBMIT-2, OPEN-20..23: h's queue can wait on peer's timeline semaphore
 * where both are opens on one VkDevice (a semaphore of another VkDevice
 * would need exporting, VK_KHR_external_semaphore_fd). The mapping is peer
 * itself; it counts in peer->maps, which keeps peer's semaphore past its
 * stop until unmap_word gives it back (core's mapping also holds peer's
 * device, so peer's destroy comes after). RIG_EDGE_UNSUPPORTED for another
 * VkDevice (share=0, another validation setting) or a stopped peer: core
 * waits on the host (SUBMIT-3). Takes peer's qlock; waits for nothing. */
int rvk_map_peer(void *h, void *peer_h, void **out, rig_edge_error *err) {
  rvk_dev *v = h, *p = peer_h;
  if (v->sh != p->sh)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s is another VkDevice", v->name,
                         p->name);
  pthread_mutex_lock(&p->qlock);
  bool ok = !p->stopped && p->timeline;
  if (ok)
    p->maps++;
  pthread_mutex_unlock(&p->qlock);
  if (!ok)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s is stopped", v->name, p->name);
  *out = p;
  return RIG_EDGE_OK;
}

/* Gives back a mapping of rvk_map_peer: the queue passed the waits that
 * used it, or h's stop waited for its work. Takes the peer's qlock. */
void rvk_unmap_word(void *h, void *mapping) {
  rvk_dev *p = mapping;
  (void)h;
  pthread_mutex_lock(&p->qlock);
  p->maps--;
  pthread_mutex_unlock(&p->qlock);
}

/* Whether the batch that waits for peer's value must wait on its
 * semaphore: 0 where it need not (reached, or peer stopped, whose held
 * work never runs and whose values count as reached, STOP-1), 1 where it
 * must, once the value's work is on the queue; the value is sent there
 * now where it is still held (TL-9, as core's commit does first), so that
 * its signal precedes the wait in the queue's order and no wait waits on
 * a signal nobody will submit. Else a fault of peer's flush, which is one
 * of the shared queue's. Called holding no lock of v's: peer's qlock only. */
static int peer_ready(rvk_dev *peer, uint64_t value, rig_edge_error *err) {
  if (value <= __atomic_load_n(&peer->reached, __ATOMIC_ACQUIRE))
    return 0;
  if (value <= __atomic_load_n(&peer->queued, __ATOMIC_ACQUIRE))
    return 1;
  pthread_mutex_lock(&peer->qlock);
  int r = peer->stopped ? 0 : rvk_flush(peer, value, err);
  bool queued = !peer->stopped && r == RIG_EDGE_OK;
  pthread_mutex_unlock(&peer->qlock);
  return r != RIG_EDGE_OK ? r : queued;
}

/* One block for n waits: the set and its three arrays. */
static rvk_waitset *new_waitset(size_t n) {
  rvk_waitset *ws = malloc(sizeof *ws + n * (sizeof(VkSemaphore) + sizeof(uint64_t) +
                                             sizeof(VkPipelineStageFlags)));
  if (!ws)
    return NULL;
  ws->sems = (VkSemaphore *)(ws + 1);
  ws->values = (uint64_t *)(ws->sems + n);
  ws->stages = (VkPipelineStageFlags *)(ws->values + n);
  ws->n = 0;
  return ws;
}

/* The waits of work w on peers' semaphores (map_peer's mappings, each the
 * peer's rvk_dev), into *out: NULL where none is left. SUBMIT-2. */
int rvk_take_waits(const rig_edge_work *w, rvk_waitset **out, rig_edge_error *err) {
  *out = NULL;
  if (!w->nwaits)
    return RIG_EDGE_OK;
  rvk_waitset *ws = new_waitset(w->nwaits);
  if (!ws)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "out of host memory for a submit's waits");
  for (size_t i = 0; i < w->nwaits; i++) {
    rvk_dev *peer = w->waits[i].mapping;
    uint64_t value = w->waits[i].value, base = __atomic_load_n(&peer->base, __ATOMIC_ACQUIRE);
    int r = peer_ready(peer, value, err);
    if (r < 0) {
      free(ws);
      return r;
    }
    if (!r)
      continue;
    /* The mapping keeps peer->timeline alive (rvk_map_peer). */
    ws->sems[ws->n] = peer->timeline;
    ws->values[ws->n] = value > base ? value - base : 1;
    ws->stages[ws->n++] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  }
  if (!ws->n)
    free(ws);
  else
    *out = ws;
  return RIG_EDGE_OK;
}
