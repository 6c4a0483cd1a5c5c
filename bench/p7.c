/* p7.c: rig-bench-p7, benchmark P7: submit -> signal of the smallest work
 * on a Vulkan device, through rig vs hand-written Vulkan, in the same run.
 *
 * rig: a prepared submission of one 4-byte fill on "vulkan:0", submitted
 * and its point waited for, once per iteration. rig's submissions have at
 * least one part (VALID-8) and launches come later, so the work is a fill,
 * not an empty dispatch.
 * Anchor: its own VkDevice on the same physical device, one timeline
 * semaphore, and one command buffer recorded once with what rig's driver
 * records for a fill (a barrier after earlier work, the fill, a barrier to
 * the host): each iteration submits it signaling the next value and waits
 * for the value with vkWaitSemaphores. The second anchor records the
 * command buffer again each iteration, as rig does.
 *
 * Prints "P7 ... ratio R" (rig / anchor); target R <= 1.1. Exits 77 where
 * no Vulkan device opens. RIG_P7_DEVICE names another rig device
 * ("vulkan:0,k=1"); the anchor always runs on the first physical device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include <rig/rig.h>

#include "bench.h"

#define ITERS 1000
#define ROUNDS 21

struct ctx {
  /* rig */
  rig_device *d;
  rig_buffer *b;
  rig_submission *s;
  /* the anchor */
  VkInstance inst;
  VkDevice dev;
  VkQueue queue;
  VkSemaphore sem;
  VkCommandPool pool;
  VkCommandBuffer cb;
  VkBuffer buf;
  VkDeviceMemory mem;
  uint64_t value;
  int failed;
};

static void with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->s, &r) || rig_submit(r, &c->b, 1, NULL, 0, &pt) ||
        rig_point_wait(pt))
      c->failed = 1;
  }
}

static void record(struct ctx *c) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT};
  vkBeginCommandBuffer(c->cb, &bi);
  vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &before, 0, NULL, 0, NULL);
  vkCmdFillBuffer(c->cb, c->buf, 0, 4, 0x01010101u);
  vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                       1, &after, 0, NULL, 0, NULL);
  vkEndCommandBuffer(c->cb);
}

static void submit_wait(struct ctx *c) {
  uint64_t v = ++c->value;
  VkTimelineSemaphoreSubmitInfo ti = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .signalSemaphoreValueCount = 1,
                                      .pSignalSemaphoreValues = &v};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .pNext = &ti,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &c->cb,
                     .signalSemaphoreCount = 1,
                     .pSignalSemaphores = &c->sem};
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &c->sem,
                            .pValues = &v};
  if (vkQueueSubmit(c->queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS ||
      vkWaitSemaphores(c->dev, &wi, UINT64_MAX) != VK_SUCCESS)
    c->failed = 1;
}

static void with_vulkan(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    submit_wait(c);
}

static void with_vulkan_recording(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++) {
    record(c);
    submit_wait(c);
  }
}

/* The anchor's device: the first physical device, as "vulkan:0". */
static int anchor_open(struct ctx *c) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pApplicationInfo = &app};
  if (vkCreateInstance(&ici, NULL, &c->inst) != VK_SUCCESS)
    return -1;
  uint32_t n = 1;
  VkPhysicalDevice phys;
  VkResult r = vkEnumeratePhysicalDevices(c->inst, &n, &phys);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0)
    return -1;
  uint32_t nf = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, NULL);
  VkQueueFamilyProperties qf[16];
  nf = nf > 16 ? 16 : nf;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &nf, qf);
  uint32_t family = 0;
  while (family < nf && !(qf[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    family++;
  if (family == nf)
    return -1;
  float prio = 1;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &prio};
  VkPhysicalDeviceVulkan12Features f12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .timelineSemaphore = VK_TRUE};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &f12,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  if (vkCreateDevice(phys, &dci, NULL, &c->dev) != VK_SUCCESS)
    return -1;
  vkGetDeviceQueue(c->dev, family, 0, &c->queue);
  VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                   .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                 .queueFamilyIndex = family};
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .size = 4,
                            .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  if (vkCreateSemaphore(c->dev, &sci, NULL, &c->sem) != VK_SUCCESS ||
      vkCreateCommandPool(c->dev, &pci, NULL, &c->pool) != VK_SUCCESS)
    return -1;
  cai.commandPool = c->pool;
  if (vkAllocateCommandBuffers(c->dev, &cai, &c->cb) != VK_SUCCESS ||
      vkCreateBuffer(c->dev, &bci, NULL, &c->buf) != VK_SUCCESS)
    return -1;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(c->dev, c->buf, &req);
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .allocationSize = req.size,
                              .memoryTypeIndex = (uint32_t)__builtin_ctz(req.memoryTypeBits)};
  if (vkAllocateMemory(c->dev, &mai, NULL, &c->mem) != VK_SUCCESS ||
      vkBindBufferMemory(c->dev, c->buf, c->mem, 0) != VK_SUCCESS)
    return -1;
  record(c);
  return 0;
}

static void anchor_close(struct ctx *c) {
  if (c->dev) {
    vkDeviceWaitIdle(c->dev);
    vkDestroyBuffer(c->dev, c->buf, NULL);
    vkFreeMemory(c->dev, c->mem, NULL);
    vkDestroyCommandPool(c->dev, c->pool, NULL);
    vkDestroySemaphore(c->dev, c->sem, NULL);
    vkDestroyDevice(c->dev, NULL);
  }
  if (c->inst)
    vkDestroyInstance(c->inst, NULL);
}

int main(void) {
  struct ctx c;
  memset(&c, 0, sizeof c);
  const char *name = getenv("RIG_P7_DEVICE"); /* "vulkan:0,k=1", ... */
  if (!name || !*name)
    name = "vulkan:0";
  if (rig_open(name, &c.d) != RIG_OK) {
    printf("P7 skipped: %s does not open: %s\n", name, rig_last_error()->message);
    return 77;
  }
  rig_part fill = rig_part_fill(0, 0x01, 1);
  if (rig_buffer_create(c.d, 4, &c.b) || rig_submission_make(c.d, &fill, 1, &c.s) ||
      anchor_open(&c) != 0) {
    printf("P7 failed to set up: %s\n", rig_last_error()->message);
    return 1;
  }
  printf("P7 on %s (arch %s)\n", rig_name(c.d), rig_arch(c.d));
  rig_bench_compare(stdout, "P7 submit->signal, 4-byte fill", with_rig, with_vulkan, &c, ITERS,
                    ROUNDS);
  rig_bench_compare(stdout, "P7 vs an anchor that records each time", with_rig,
                    with_vulkan_recording, &c, ITERS, ROUNDS);
  int failed = c.failed;
  rig_submission_release(c.s);
  rig_buffer_release(c.b);
  rig_close(c.d);
  rig_device_release(c.d);
  anchor_close(&c);
  if (failed)
    printf("P7: a submit or wait failed\n");
  return failed;
}
