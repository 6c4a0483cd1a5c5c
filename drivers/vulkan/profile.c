/* SPDX-License-Identifier: MIT */
/* profile.c: the open's work timed by timestamp queries (edge ABI 1.6,
 * docs/profiling.md).
 *
 * While a profile is being taken, record.c writes a timestamp before and
 * after each part of a value's command buffer, into a pair of queries of
 * the open's query pool, and replay.c records that work anew each time
 * (a cached command buffer would write the same queries at each run).
 * The pairs are handed out in order from a ring of RVK_PAIRS; once the
 * semaphore says a value is reached, harvest reads its pairs, converts the
 * device's ticks to the host's clock and writes a record per part into
 * core's ring. Every function here runs with the open's qlock held.
 *
 * The clocks: ticks * timestampPeriod are nanoseconds of the device's own
 * clock; the offset to CLOCK_MONOTONIC is measured once, when core hands
 * the ring over: by VK_EXT_calibrated_timestamps where the device has it
 * (lavapipe does), else by the best of many timestamps each written
 * between two readings of the host's clock. The bound of its error goes
 * into the profile, so that a reader comparing devices allows for it.
 */
#include <stdlib.h>

#include "vulkan_private.h"

#define RVK_PAIRS 1024u /* parts timed and not yet read back */

/* What a pair of queries timed. Padding at the ring's end has no value. */
typedef struct pair_info {
  uint64_t value;
  uint32_t part, kind, queue, label;
} pair_info;

struct rvk_prof {
  rig_edge_profile *ring;
  VkQueryPool pool;
  double period;      /* ns per tick */
  int64_t offset;     /* host ns - device ns */
  uint64_t error_ns; /* the offset's bound, either way */
  uint64_t mask;      /* the ticks' valid bits */
  uint64_t head, tail; /* pairs handed out, pairs read back: both only grow */
  pair_info info[RVK_PAIRS];
};

#define RVK_SAMPLES 32u /* readings a calibration takes the best of */

/* Where the device has VK_EXT_calibrated_timestamps with both its own
 * clock and CLOCK_MONOTONIC: the reading of the two whose deviation (the
 * driver's bound of the time between them) is least of RVK_SAMPLES. */
static bool calibrate_ext(rvk_dev *v, rvk_prof *p) {
  PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT domains =
      (PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT)vkGetInstanceProcAddr(
          v->inst, "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT");
  VkTimeDomainEXT have[8];
  uint32_t n = 8, found = 0;
  if (!v->GetCalibratedTimestamps || !domains || domains(v->phys, &n, have) < 0)
    return false;
  for (uint32_t i = 0; i < n; i++)
    found |= have[i] == VK_TIME_DOMAIN_DEVICE_EXT            ? 1u
             : have[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT ? 2u
                                                             : 0u;
  if (found != 3u)
    return false;
  VkCalibratedTimestampInfoEXT ci[2] = {{.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                         .timeDomain = VK_TIME_DOMAIN_DEVICE_EXT},
                                        {.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT,
                                         .timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
  uint64_t best = UINT64_MAX;
  for (uint32_t k = 0; k < RVK_SAMPLES; k++) {
    uint64_t ts[2], dev = 0;
    if (v->GetCalibratedTimestamps(v->dev, 2, ci, ts, &dev) != VK_SUCCESS)
      break;
    if (dev < best) {
      best = dev;
      p->offset = (int64_t)ts[1] - (int64_t)((double)(ts[0] & p->mask) * p->period);
    }
  }
  if (best == UINT64_MAX)
    return false;
  p->error_ns = best + (uint64_t)p->period + 1; /* and a tick of the device's clock */
  return true;
}

/* One timestamp between two readings of the host's clock: cb writes it,
 * submitted with fence (reset after). */
static VkResult sample(rvk_dev *v, rvk_prof *p, VkCommandBuffer cb, VkFence fence, uint64_t *before,
                       uint64_t *after, uint64_t *ticks) {
  VkSubmitInfo si = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
  *before = rig_edge_now_ns();
  pthread_mutex_lock(&v->sh->qlock);
  VkResult r = vkQueueSubmit(v->queue, 1, &si, fence);
  pthread_mutex_unlock(&v->sh->qlock);
  if (r == VK_SUCCESS)
    r = vkWaitForFences(v->dev, 1, &fence, VK_TRUE, UINT64_MAX);
  *after = rig_edge_now_ns();
  if (r == VK_SUCCESS)
    r = vkGetQueryPoolResults(v->dev, p->pool, 0, 1, sizeof *ticks, ticks, sizeof *ticks,
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r == VK_SUCCESS)
    r = vkResetFences(v->dev, 1, &fence);
  return r;
}

/* Without the extension: RVK_SAMPLES timestamps, each written between two
 * readings of the host's clock; the one of the shortest round trip gives
 * the offset (its readings' middle), off by at most half that trip. One
 * round trip, as before, was off by up to 6 ms on a loaded host. */
static int calibrate_trips(rvk_dev *v, rvk_prof *p, rig_edge_error *err) {
  VkCommandBuffer cb;
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = v->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult r = vkAllocateCommandBuffers(v->dev, &ai, &cb);
  if (r != VK_SUCCESS)
    return rvk_fail(err, r, "vkAllocateCommandBuffers", v->name);
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkFence fence = VK_NULL_HANDLE;
  VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  if ((r = vkBeginCommandBuffer(cb, &bi)) == VK_SUCCESS) {
    vkCmdResetQueryPool(cb, p->pool, 0, 1);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->pool, 0);
    r = vkEndCommandBuffer(cb);
  }
  if (r == VK_SUCCESS)
    r = vkCreateFence(v->dev, &fi, NULL, &fence);
  uint64_t best = UINT64_MAX;
  for (uint32_t k = 0; k < RVK_SAMPLES && r == VK_SUCCESS; k++) {
    uint64_t before, after, ticks = 0;
    if ((r = sample(v, p, cb, fence, &before, &after, &ticks)) == VK_SUCCESS &&
        after - before < best) {
      best = after - before;
      p->offset =
          (int64_t)(before / 2 + after / 2) - (int64_t)((double)(ticks & p->mask) * p->period);
    }
  }
  if (fence)
    vkDestroyFence(v->dev, fence, NULL);
  vkFreeCommandBuffers(v->dev, v->pool, 1, &cb);
  if (r != VK_SUCCESS)
    return rvk_fail(err, r, "calibrating timestamps", v->name);
  p->error_ns = best / 2 + 1 + (uint64_t)p->period + 1;
  return RIG_EDGE_OK;
}

/* The offset of the device's clock from CLOCK_MONOTONIC, and its error
 * bound, which the ring carries into the profile (rig_profile_clock_error). */
static int calibrate(rvk_dev *v, rvk_prof *p, rig_edge_error *err) {
  int r = calibrate_ext(v, p) ? RIG_EDGE_OK : calibrate_trips(v, p, err);
  if (r == RIG_EDGE_OK)
    rig_edge_profile_clock_error(p->ring, p->error_ns);
  return r;
}

/* The bits of the queue's timestamps; 0 where it writes none. */
static uint32_t timestamp_bits(const rvk_dev *v) {
  uint32_t nf = 0, bits = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nf, NULL);
  VkQueueFamilyProperties *qf = calloc(nf ? nf : 1, sizeof *qf);
  if (!qf)
    return 0;
  vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nf, qf);
  if (v->family < nf)
    bits = qf[v->family].timestampValidBits;
  free(qf);
  return bits;
}

static int make_prof(rvk_dev *v, rig_edge_profile *ring, rig_edge_error *err) {
  uint32_t bits = timestamp_bits(v);
  if (!bits || v->props.limits.timestampPeriod <= 0)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: its queue writes no timestamps",
                         v->name);
  rvk_prof *p = calloc(1, sizeof *p);
  if (!p)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory to time work", v->name);
  p->ring = ring;
  p->period = v->props.limits.timestampPeriod;
  p->mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                              .queryType = VK_QUERY_TYPE_TIMESTAMP,
                              .queryCount = 2 * RVK_PAIRS};
  VkResult r = vkCreateQueryPool(v->dev, &qi, NULL, &p->pool);
  int res = r == VK_SUCCESS ? calibrate(v, p, err)
                            : rvk_fail(err, r, "vkCreateQueryPool", v->name);
  if (res != RIG_EDGE_OK) {
    if (p->pool)
      vkDestroyQueryPool(v->dev, p->pool, NULL);
    free(p);
    return RIG_EDGE_UNSUPPORTED; /* the device goes on, untimed */
  }
  __atomic_store_n(&v->prof, p, __ATOMIC_RELEASE); /* timeline.c peeks without qlock */
  return RIG_EDGE_OK;
}

/* The driver table's profile entry: core hands over its ring. */
int rvk_profile(void *h, rig_edge_profile *ring, rig_edge_error *err) {
  rvk_dev *v = h;
  pthread_mutex_lock(&v->qlock);
  int r = v->prof || v->stopped ? RIG_EDGE_OK : make_prof(v, ring, err);
  pthread_mutex_unlock(&v->qlock);
  return r;
}

/* Pairs for the n parts of w that run, as one run of the ring: *out the
 * first query. False while the profile is off or the ring has no room
 * (the work then runs untimed). */
bool rvk_profile_pairs(rvk_dev *v, const rig_edge_work *w, uint32_t n, uint32_t *out) {
  rvk_prof *p = v->prof;
  if (!p || !n || n > RVK_PAIRS || !rig_edge_profile_on(p->ring))
    return false;
  uint64_t at = p->head % RVK_PAIRS;
  uint64_t pad = at + n > RVK_PAIRS ? RVK_PAIRS - at : 0; /* no run wraps */
  if (p->head + pad + n - p->tail > RVK_PAIRS)
    rvk_profile_harvest(v);
  if (p->head + pad + n - p->tail > RVK_PAIRS)
    return false;
  for (uint64_t i = 0; i < pad; i++)
    p->info[(p->head + i) % RVK_PAIRS] = (pair_info){0};
  p->head += pad;
  for (uint32_t i = 0, j = 0; i < w->nparts; i++)
    if (rvk_part_runs(&w->parts[i]))
      p->info[(p->head + j++) % RVK_PAIRS] =
          (pair_info){w->value, i, w->parts[i].kind, w->parts[i].queue, rig_edge_work_label(w, i)};
  *out = (uint32_t)(2 * (p->head % RVK_PAIRS));
  p->head += n;
  return true;
}

VkQueryPool rvk_profile_pool(const rvk_dev *v) { return v->prof ? v->prof->pool : VK_NULL_HANDLE; }

/* The record of pair i, whose value is reached; none where its queries
 * hold nothing (work a loss never ran). */
static void read_pair(rvk_dev *v, rvk_prof *p, uint64_t i) {
  uint64_t t[2];
  const pair_info *e = &p->info[i];
  if (vkGetQueryPoolResults(v->dev, p->pool, (uint32_t)(2 * i), 2, sizeof t, t, sizeof t[0],
                            VK_QUERY_RESULT_64_BIT) != VK_SUCCESS)
    return;
  rig_edge_span s = {.value = e->value, .part = e->part, .kind = e->kind, .queue = e->queue,
                     .label = e->label};
  s.start_ns = (uint64_t)((double)(t[0] & p->mask) * p->period + (double)p->offset);
  s.end_ns = (uint64_t)((double)(t[1] & p->mask) * p->period + (double)p->offset);
  rig_edge_profile_record(p->ring, &s);
}

/* Reads back the pairs of every value the semaphore reached, in order. */
void rvk_profile_harvest(rvk_dev *v) {
  rvk_prof *p = v->prof;
  uint64_t done = 0;
  if (!p || p->tail == p->head || rvk_counter(v, &done) != VK_SUCCESS)
    return;
  for (; p->tail < p->head; p->tail++) {
    uint64_t i = p->tail % RVK_PAIRS;
    if (p->info[i].value > done)
      break;
    if (p->info[i].value)
      read_pair(v, p, i);
  }
}

/* The stop: the work done is read back, and the queries go. */
void rvk_profile_end(rvk_dev *v) {
  if (!v->prof)
    return;
  rvk_profile_harvest(v);
  rvk_prof *p = v->prof;
  __atomic_store_n(&v->prof, NULL, __ATOMIC_RELEASE);
  vkDestroyQueryPool(v->dev, p->pool, NULL);
  free(p);
}
