/* SPDX-License-Identifier: MIT */
/* words.c: a submission's words part on Vulkan (rig-vulkan.h's packets):
 * checked whole before core takes a value, recorded as transfer commands
 * into the work's command buffer with record.c's barriers around it. */
#include <inttypes.h>
#include <string.h>

#include "vulkan_private.h"

/* Packet i (at word w of the part) has an address at x[1..2] and bytes
 * from it: the buffer that holds them, their offset in it. */
static int locate(const rvk_dev *v, const uint32_t *x, uint64_t bytes, uint32_t w, VkBuffer *buf,
                  uint64_t *offset, rig_edge_error *err) {
  uint64_t a = x[1] | (uint64_t)x[2] << 32, rest = 0;
  if (!rvk_find_buffer(v, a, buf, offset, &rest))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: words: the packet at word %u names "
                         "address 0x%" PRIx64 ", in no buffer of this device",
                         v->name, w, a);
  if (bytes > rest || *offset % 4)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: words: the packet at word %u writes "
                         "%" PRIu64 " bytes at 0x%" PRIx64 ", %s",
                         v->name, w, bytes, a,
                         *offset % 4 ? "not on a multiple of 4" : "past its buffer's end");
  return RIG_EDGE_OK;
}

/* The packet at word w of x (count words left): its words in *n, where
 * it is one the driver runs. */
static int check_packet(const rvk_dev *v, const uint32_t *x, uint32_t left, uint32_t w, uint32_t *n,
                        rig_edge_error *err) {
  uint32_t op = x[0] >> 16, count = x[0] & 0xffff;
  VkBuffer buf;
  uint64_t offset;
  *n = count;
  if (count == 0 || count > left)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: words: the packet at word %u says %u "
                         "words; %u are left",
                         v->name, w, count, left);
  if (op == RIG_VULKAN_NOP)
    return RIG_EDGE_OK;
  if (op == RIG_VULKAN_FILL) {
    uint64_t bytes = x[3] | (uint64_t)(count >= 5 ? x[4] : 0) << 32;
    if (count != 6 || bytes % 4 || bytes == 0)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: words: the fill at word %u needs 6 "
                           "words and a nonzero multiple of 4 bytes",
                           v->name, w);
    return locate(v, x, bytes, w, &buf, &offset, err);
  }
  if (op == RIG_VULKAN_UPDATE) {
    if (count < 4 || count > 3 + 16384)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: words: the update at word %u has %u "
                           "words; it takes 4 to %u",
                           v->name, w, count, 3 + 16384);
    return locate(v, x, 4ull * (count - 3), w, &buf, &offset, err);
  }
  return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                       "%s: words: the packet at word %u "
                       "(0x%08" PRIx32 ") is no packet of rig-vulkan.h's",
                       v->name, w, x[0]);
}

int rvk_check_words(const rvk_dev *v, const rig_edge_part *p, rig_edge_error *err) {
  const uint32_t *x = p->u.words.words;
  for (uint32_t w = 0, n = 0; w < p->u.words.count; w += n) {
    int r = check_packet(v, x + w, p->u.words.count - w, w, &n, err);
    if (r != RIG_EDGE_OK)
      return r;
  }
  return RIG_EDGE_OK;
}

/* The part's packets, each after the one before (a transfer barrier
 * between them). rvk_check_words passed the part. */
void rvk_record_words(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p) {
  static const VkMemoryBarrier transfers = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                            .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                            .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT |
                                                             VK_ACCESS_TRANSFER_WRITE_BIT};
  const uint32_t *x = p->u.words.words;
  bool first = true;
  for (uint32_t w = 0, n; w < p->u.words.count; w += n) {
    uint32_t op = x[w] >> 16;
    n = x[w] & 0xffff;
    if (op == RIG_VULKAN_NOP)
      continue;
    VkBuffer buf = VK_NULL_HANDLE;
    uint64_t offset = 0, rest;
    (void)rvk_find_buffer(v, x[w + 1] | (uint64_t)x[w + 2] << 32, &buf, &offset, &rest);
    if (!first)
      vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                           &transfers, 0, NULL, 0, NULL);
    first = false;
    if (op == RIG_VULKAN_FILL)
      vkCmdFillBuffer(cb, buf, offset, x[w + 3] | (uint64_t)x[w + 4] << 32, x[w + 5]);
    else
      vkCmdUpdateBuffer(cb, buf, offset, 4ull * (n - 3), x + w + 3);
  }
}
