/* SPDX-License-Identifier: MIT */
/* record.c: a work's command buffer: its copies, fills and launches, with
 * the barriers that order them after every earlier value's work
 * (ORDER-2), after each other, and before the host's reads (TL-20). */
#include <string.h>

#include "vulkan_private.h"

static const VkMemoryBarrier all_to_all = {
    .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
    .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
    .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
static const VkMemoryBarrier transfer_to_transfer = {
    .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
    .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
    .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
static const VkMemoryBarrier to_host = {
    .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
    .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
    .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT};

static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst,
                    const VkMemoryBarrier *mb) {
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, mb, 0, NULL, 0, NULL);
}

static void access_barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
                           VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = src_access,
                        .dstAccessMask = dst_access};
  barrier(cb, src, dst, &mb);
}

static void transfer_barrier(VkCommandBuffer cb) {
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          &transfer_to_transfer);
}

static void copy_bytes(VkCommandBuffer cb, VkBuffer src, uint64_t so, VkBuffer dst, uint64_t d,
                       uint64_t n) {
  VkBufferCopy c = {so, d, n};
  vkCmdCopyBuffer(cb, src, dst, 1, &c);
}

/* A fill of bytes [o, o + n) of buffer m with a pattern that starts at o.
 * vkCmdFillBuffer writes the 4-byte-aligned middle; the bytes before and
 * after it are copied from the pattern's word, written into a scratch slot
 * of 8 bytes with vkCmdUpdateBuffer, since a fill takes only whole words. */
static void record_fill(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p, uint64_t *slot) {
  const rig_edge_range *r = &p->u.fill.dst;
  const rvk_mem *m = r->alloc->handle;
  uint64_t o = m->base + r->offset, n = r->bytes;
  uint32_t pb = p->u.fill.pattern_bytes ? p->u.fill.pattern_bytes : 1;
  uint8_t pat[4], w[RVK_SLOT];
  memcpy(pat, &p->u.fill.pattern, 4);
  for (uint32_t j = 0; j < RVK_SLOT; j++) /* byte j of an aligned word: the range's byte j - o */
    w[j] = pat[(j + pb - o % pb) % pb];
  uint32_t word;
  memcpy(&word, w, 4);
  uint64_t a = (o + 3) / 4 * 4, b = (o + n) / 4 * 4;
  if (a == o && b == o + n) {
    vkCmdFillBuffer(cb, m->buf, o, n, word);
    return;
  }
  if (*slot + RVK_SLOT > RVK_SCRATCH_BYTES) { /* every slot used in this work: reuse them */
    transfer_barrier(cb);
    *slot = 0;
  }
  uint64_t s = *slot;
  *slot += RVK_SLOT;
  vkCmdUpdateBuffer(cb, v->scratch.buf, s, RVK_SLOT, w);
  transfer_barrier(cb);
  if (a > b) { /* within one word */
    copy_bytes(cb, v->scratch.buf, s + o % 4, m->buf, o, n);
    return;
  }
  if (a > o)
    copy_bytes(cb, v->scratch.buf, s + o % 4, m->buf, o, a - o);
  if (b > a)
    vkCmdFillBuffer(cb, m->buf, a, b - a, word);
  if (o + n > b)
    copy_bytes(cb, v->scratch.buf, s, m->buf, b, o + n - b);
}

/* Whether a part records anything: copies and fills of bytes, words,
 * launches. */
bool rvk_part_runs(const rig_edge_part *p) {
  return p->kind == RIG_EDGE_PART_COPY    ? p->u.copy.dst.bytes > 0
         : p->kind == RIG_EDGE_PART_FILL  ? p->u.fill.dst.bytes > 0
         : p->kind == RIG_EDGE_PART_WORDS ? p->u.words.count > 0
                                          : p->kind == RIG_EDGE_PART_LAUNCH;
}

/* The parts of w that record anything. */
uint32_t rvk_count_runs(const rig_edge_work *w) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < w->nparts; i++)
    n += rvk_part_runs(&w->parts[i]);
  return n;
}

/* Between two parts of one submission: the later one follows the earlier
 * one's writes, and its writes follow the earlier one's reads. */
static void part_barrier(const rvk_dev *v, VkCommandBuffer cb) {
  access_barrier(cb, v->part_stages, v->part_writes, v->part_stages, v->part_access);
}

/* What record keeps across the parts of one command buffer. */
typedef struct recording {
  uint64_t slot;            /* next scratch slot of unaligned fills */
  uint64_t params;          /* next byte of the large-parameter buffer */
  VkPipeline bound;         /* the pipeline bound last */
} recording;

/* A launch's RVK_PUSH_BYTES of push constants: its parameter block, or,
 * over RVK_PUSH_BYTES, the device address of a copy of the block that
 * vkCmdUpdateBuffer writes into the parameter buffer. */
static void params_to_push(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p,
                           recording *rec, uint8_t push[RVK_PUSH_BYTES]) {
  uint32_t bytes = p->u.launch.params_bytes;
  memset(push, 0, RVK_PUSH_BYTES);
  if (bytes <= RVK_PUSH_BYTES) {
    if (bytes)
      memcpy(push, p->u.launch.params, bytes);
    return;
  }
  uint64_t size = ((uint64_t)bytes + 3) / 4 * 4; /* core's block has room past its end */
  if (rec->params + size > RVK_PARAMS_BYTES) { /* every byte used in this command buffer */
    access_barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    rec->params = 0;
  }
  const uint8_t *src = p->u.launch.params;
  for (uint64_t o = 0; o < size; o += 65536) /* vkCmdUpdateBuffer's most */
    vkCmdUpdateBuffer(cb, v->params.buf, rec->params + o, size - o < 65536 ? size - o : 65536,
                      src + o);
  access_barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_UNIFORM_READ_BIT);
  uint64_t address = v->params_address + rec->params;
  memcpy(push, &address, sizeof address);
  rec->params += (size + RVK_PARAMS_ALIGN - 1) / RVK_PARAMS_ALIGN * RVK_PARAMS_ALIGN;
}

/* The groups g, in as many dispatches as the device's
 * maxComputeWorkGroupCount (max) asks. */
static void dispatch(VkCommandBuffer cb, const uint64_t g[3], const uint32_t max[3],
                     uint64_t dispatches) {
  if (dispatches == 1) {
    vkCmdDispatch(cb, (uint32_t)g[0], (uint32_t)g[1], (uint32_t)g[2]);
    return;
  }
  for (uint64_t z = 0; z < g[2]; z += max[2])
    for (uint64_t y = 0; y < g[1]; y += max[1])
      for (uint64_t x = 0; x < g[0]; x += max[0])
        vkCmdDispatchBase(cb, (uint32_t)x, (uint32_t)y, (uint32_t)z,
                          (uint32_t)(g[0] - x < max[0] ? g[0] - x : max[0]),
                          (uint32_t)(g[1] - y < max[1] ? g[1] - y : max[1]),
                          (uint32_t)(g[2] - z < max[2] ? g[2] - z : max[2]));
}

/* A launch: its pipeline for the run's group shape (made at the first
 * launch of that shape), bound where it changes, its parameters pushed,
 * then its groups. */
static int record_launch(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p, recording *rec,
                         rig_edge_error *err) {
  uint64_t dispatches = 1;
  int r = rvk_check_launch(v, p, &dispatches, err);
  if (r != RIG_EDGE_OK)
    return r;
  VkPipeline pipe = VK_NULL_HANDLE;
  if ((r = rvk_pipeline_for(v, p->u.launch.function, p->u.launch.threads, &pipe, err)) !=
      RIG_EDGE_OK)
    return r;
  const rvk_func *f = p->u.launch.function;
  uint8_t push[RVK_PUSH_BYTES];
  if (!f->layout) /* buffer addresses: the block is the push constants */
    params_to_push(v, cb, p, rec, push);
  if (pipe != rec->bound) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    rec->bound = pipe;
  }
  if (f->layout)
    rvk_push_bindings(v, cb, p);
  else
    vkCmdPushConstants(cb, v->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, RVK_PUSH_BYTES, push);
  dispatch(cb, p->u.launch.groups, v->props.limits.maxComputeWorkGroupCount, dispatches);
  return RIG_EDGE_OK;
}

static int record_part(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p, recording *rec,
                       rig_edge_error *err) {
  if (p->kind == RIG_EDGE_PART_COPY) {
    const rvk_mem *s = p->u.copy.src.alloc->handle, *d = p->u.copy.dst.alloc->handle;
    copy_bytes(cb, s->buf, s->base + p->u.copy.src.offset, d->buf,
               d->base + p->u.copy.dst.offset, p->u.copy.dst.bytes);
    return RIG_EDGE_OK;
  }
  if (p->kind == RIG_EDGE_PART_FILL) {
    record_fill(v, cb, p, &rec->slot);
    return RIG_EDGE_OK;
  }
  if (p->kind == RIG_EDGE_PART_WORDS) {
    int r = rvk_check_words(v, p, err); /* the buffers may have gone since the check */
    if (r == RIG_EDGE_OK)
      rvk_record_words(v, cb, p);
    return r;
  }
  return record_launch(v, cb, p, rec, err);
}

/* Records the work's parts into cb: after every earlier value's work
 * (ORDER-2), each part after the one before it (parts of one queue run in
 * order), and visible to the host once its value is signaled (TL-20).
 * once: the cb runs once (VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
 * else the cache keeps it for the same work again. */
int rvk_record_cb(rvk_dev *v, const rig_edge_work *w, bool once, const rvk_stamps *stamps,
                  VkCommandBuffer cb, rig_edge_error *err) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = once ? VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT : 0};
  VkResult vr = vkBeginCommandBuffer(cb, &bi);
  if (vr != VK_SUCCESS)
    return rvk_fail(err, vr, "vkBeginCommandBuffer", v->name);
  barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, &all_to_all);
  recording rec = {0, 0, VK_NULL_HANDLE};
  uint32_t timed = 0; /* queries written */
  bool first = true;
  int r = RIG_EDGE_OK;
  if (stamps)
    vkCmdResetQueryPool(cb, stamps->pool, stamps->first, 2 * rvk_count_runs(w));
  for (uint32_t i = 0; i < w->nparts && r == RIG_EDGE_OK; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (!rvk_part_runs(p))
      continue;
    if (!first)
      part_barrier(v, cb);
    first = false;
    /* Bottom of pipe: once every command before it is done, so the part's
     * time starts after the barrier's wait and ends with its last write. */
    if (stamps)
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps->pool,
                          stamps->first + timed++);
    r = record_part(v, cb, p, &rec, err);
    if (stamps)
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps->pool,
                          stamps->first + timed++);
  }
  if (r != RIG_EDGE_OK) {
    (void)vkEndCommandBuffer(cb);
    return r;
  }
  barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, &to_host);
  if ((vr = vkEndCommandBuffer(cb)) != VK_SUCCESS)
    return rvk_fail(err, vr, "vkEndCommandBuffer", v->name);
  return RIG_EDGE_OK;
}
