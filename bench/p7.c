/* p7.c: rig-bench-p7, benchmark P7: submit -> signal of the smallest work
 * on a Vulkan device, through rig vs hand-written Vulkan, in the same run;
 * and the seed's add example on the Vulkan device vs on the host.
 *
 * rig: a prepared submission of one 4-byte fill on "vulkan:0", submitted
 * and its point waited for, once per iteration; then the same of an empty
 * dispatch (one group of tests/kernels/vulkan/empty.comp).
 * Anchor: its own VkDevice on the same physical device, one timeline
 * semaphore, and one command buffer recorded once with what rig's driver
 * records for a fill (a barrier after earlier work, the fill, a barrier to
 * the host): each iteration submits it signaling the next value and waits
 * for the value with vkWaitSemaphores. The second anchor records the
 * command buffer again each iteration, as rig does.
 *
 * The empty dispatch's anchor records what rig's driver records for a
 * launch (the barrier, the pipeline, 128 bytes of push constants, the
 * dispatch, the barrier to the host) once, and submits it each time.
 *
 * The add example: z = x + y over n = 2^20 floats, a prepared submission
 * run and waited for each iteration, on "vulkan:0" (add.spv, 16384 groups
 * of 64) against the host's launch of the C kernel (add.o, the seed's 64
 * groups of n / 64); the ratio is Vulkan / host. Lavapipe runs on the CPU,
 * so it measures lavapipe's code against clang's, not a GPU.
 *
 * Kernels come from $RIG_KERNELS (the tests' build folder, where
 * tests/meson.build builds add.o and kernels/vulkan/NAME.spv), else the
 * build tree's; the comparisons that lack theirs say so and are skipped.
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
#define ADD_N (1 << 20)
#define ADD_ITERS 20
#define ADD_ROUNDS 7
#define PUSH_BYTES 128 /* what rig's Vulkan driver pushes for every launch */

#ifndef RIG_P7_KERNELS
#define RIG_P7_KERNELS "."
#endif

struct ctx {
  /* rig */
  rig_device *d;
  rig_buffer *b;
  rig_submission *s;
  rig_submission *empty;             /* one group of empty.comp */
  /* the add example: on d, and on the host */
  rig_submission *add_vk, *add_host;
  rig_buffer *vk[3], *host[3];
  /* the anchor */
  VkInstance inst;
  VkDevice dev;
  VkQueue queue;
  VkSemaphore sem;
  VkCommandPool pool;
  VkCommandBuffer cb;
  VkBuffer buf;
  VkDeviceMemory mem;
  VkShaderModule module;             /* the empty dispatch */
  VkPipelineLayout layout;
  VkPipeline pipe;
  VkCommandBuffer dispatch_cb;
  uint64_t value;
  int failed;
};

/* The bytes of kernel file NAME under $RIG_KERNELS or the build tree's
 * tests folder; NULL where it is not there. The caller frees them. */
static void *kernel(const char *name, size_t *n) {
  const char *dir = getenv("RIG_KERNELS");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : RIG_P7_KERNELS, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("P7: no kernel %s (build the tests, or set RIG_KERNELS)\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = size > 0 ? malloc((size_t)size) : NULL;
  if (b && fread(b, 1, (size_t)size, f) != (size_t)size) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *n = (size_t)size;
  return b;
}

/* A submission of one launch of function fn of the kernel file on d, with
 * refs; NULL where the kernel is missing or does not load. */
static rig_submission *launch_of(rig_device *d, const char *file, const char *fn,
                                 const rig_ref *refs, uint32_t nrefs, uint32_t params) {
  size_t n;
  void *bytes = kernel(file, &n);
  rig_image *im = NULL;
  rig_function *f = NULL;
  rig_submission *s = NULL;
  if (!bytes)
    return NULL;
  if (rig_image_load(d, bytes, n, &im) == RIG_OK && rig_image_resolve(im, fn, &f) == RIG_OK &&
      f) {
    rig_part launch = rig_part_launch(f, refs, nrefs, params);
    if (rig_submission_make(d, &launch, 1, &s) != RIG_OK)
      s = NULL;
  }
  if (!s)
    printf("P7: %s (%s) does not launch on %s: %s\n", file, fn, rig_device_name(d),
           rig_error_last()->message);
  rig_image_release(im);
  free(bytes);
  return s;
}

static void with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->s, &r) || rig_run_submit(r, &c->b, 1, NULL, 0, &pt) ||
        rig_point_wait(pt))
      c->failed = 1;
  }
}

/* One run of a prepared launch of g groups of t threads, n at byte 24;
 * waited for. */
static void run_add(struct ctx *c, rig_submission *s, rig_buffer **bufs, uint64_t g, uint64_t t) {
  rig_run *r;
  rig_point pt;
  if (rig_submission_take(s, &r) || rig_run_groups(r, 0, g, 1, 1) ||
      rig_run_threads(r, 0, t, 1, 1) || rig_run_int64(r, 0, 24, ADD_N) ||
      rig_run_submit(r, bufs, 3, NULL, 0, &pt) || rig_point_wait(pt))
    c->failed = 1;
}

static void add_on_vulkan(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    run_add(c, c->add_vk, c->vk, ADD_N / 64, 64);
}

static void add_on_host(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    run_add(c, c->add_host, c->host, 64, ADD_N / 64); /* the seed's shape */
}

/* The add example's buffers and submissions; 0 where a kernel is missing. */
static int add_setup(struct ctx *c) {
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  c->add_vk = launch_of(c->d, "kernels/vulkan/add.spv", "add", refs, 3, 32);
  c->add_host = launch_of(rig_device_host(), "add.o", "add", refs, 3, 32);
  if (!c->add_vk || !c->add_host)
    return 0;
  float *in = malloc(ADD_N * sizeof *in);
  for (int i = 0; i < ADD_N; i++)
    in[i] = (float)i;
  for (int k = 0; k < 3; k++)
    if (!in || rig_buffer_create(c->d, ADD_N * 4, &c->vk[k]) ||
        rig_buffer_create(rig_device_host(), ADD_N * 4, &c->host[k]) ||
        rig_buffer_put(c->vk[k], 0, in, ADD_N * 4) || rig_buffer_put(c->host[k], 0, in, ADD_N * 4))
      c->failed = 1;
  free(in);
  return !c->failed;
}

/* Both sides computed z = 2 i. */
static int add_check(struct ctx *c) {
  float z[2][4];
  if (rig_buffer_get(c->vk[2], (ADD_N - 4) * 4, z[0], sizeof z[0]) ||
      rig_buffer_get(c->host[2], (ADD_N - 4) * 4, z[1], sizeof z[1]))
    return 0;
  for (int i = 0; i < 4; i++)
    if (z[0][i] != 2.f * (float)(ADD_N - 4 + i) || z[1][i] != z[0][i])
      return 0;
  return 1;
}

static void empty_with_rig(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++) {
    rig_run *r;
    rig_point pt;
    if (rig_submission_take(c->empty, &r) || rig_run_groups(r, 0, 1, 1, 1) ||
        rig_run_threads(r, 0, 1, 1, 1) || rig_run_submit(r, NULL, 0, NULL, 0, &pt) ||
        rig_point_wait(pt))
      c->failed = 1;
  }
}

/* Records into cb what rig's driver records around a part: a barrier
 * after earlier work, the part (work), and a barrier before the host
 * reads, once. */
static void record_part(VkCommandBuffer cb, void (*work)(struct ctx *, VkCommandBuffer),
                        struct ctx *c) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
  VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT};
  vkBeginCommandBuffer(cb, &bi);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                       0, 1, &before, 0, NULL, 0, NULL);
  work(c, cb);
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &after, 0, NULL, 0, NULL);
  vkEndCommandBuffer(cb);
}

static void fill_part(struct ctx *c, VkCommandBuffer cb) {
  vkCmdFillBuffer(cb, c->buf, 0, 4, 0x01010101u);
}

static void record(struct ctx *c) { record_part(c->cb, fill_part, c); }

/* A launch of one group, as rig's driver records it. */
static void dispatch_part(struct ctx *c, VkCommandBuffer cb) {
  uint8_t push[PUSH_BYTES] = {0};
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipe);
  vkCmdPushConstants(cb, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, PUSH_BYTES, push);
  vkCmdDispatch(cb, 1, 1, 1);
}

static void record_dispatch(struct ctx *c) { record_part(c->dispatch_cb, dispatch_part, c); }

/* The anchor's empty dispatch: empty.spv's pipeline, its group of one
 * thread given as rig's driver gives it (specialization constants 0..2),
 * and a command buffer recorded once. 0 where the kernel is missing. */
static int anchor_dispatch(struct ctx *c) {
  size_t n;
  uint32_t *code = kernel("kernels/vulkan/empty.spv", &n);
  if (!code)
    return 0;
  VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                  .codeSize = n,
                                  .pCode = code};
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, PUSH_BYTES};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                    .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &range};
  VkResult r = vkCreateShaderModule(c->dev, &mci, NULL, &c->module);
  free(code);
  if (r != VK_SUCCESS || vkCreatePipelineLayout(c->dev, &lci, NULL, &c->layout) != VK_SUCCESS)
    return 0;
  uint32_t one[3] = {1, 1, 1};
  VkSpecializationMapEntry map[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
  VkSpecializationInfo si = {3, map, sizeof one, one};
  VkComputePipelineCreateInfo pci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = c->module,
                .pName = "empty",
                .pSpecializationInfo = &si},
      .layout = c->layout};
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                     .commandPool = c->pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                     .commandBufferCount = 1};
  if (vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 1, &pci, NULL, &c->pipe) != VK_SUCCESS ||
      vkAllocateCommandBuffers(c->dev, &cai, &c->dispatch_cb) != VK_SUCCESS)
    return 0;
  record_dispatch(c);
  return 1;
}

static void submit_cb(struct ctx *c, VkCommandBuffer cb) {
  uint64_t v = ++c->value;
  VkTimelineSemaphoreSubmitInfo ti = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                      .signalSemaphoreValueCount = 1,
                                      .pSignalSemaphoreValues = &v};
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                     .pNext = &ti,
                     .commandBufferCount = 1,
                     .pCommandBuffers = &cb,
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

static void submit_wait(struct ctx *c) { submit_cb(c, c->cb); }

static void empty_with_vulkan(void *p, uint64_t iters) {
  struct ctx *c = p;
  for (uint64_t i = 0; i < iters && !c->failed; i++)
    submit_cb(c, c->dispatch_cb);
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
    if (c->pipe)
      vkDestroyPipeline(c->dev, c->pipe, NULL);
    if (c->layout)
      vkDestroyPipelineLayout(c->dev, c->layout, NULL);
    if (c->module)
      vkDestroyShaderModule(c->dev, c->module, NULL);
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
  if (rig_device_open(name, &c.d) != RIG_OK) {
    printf("P7 skipped: %s does not open: %s\n", name, rig_error_last()->message);
    return 77;
  }
  rig_part fill = rig_part_fill(0, 0x01, 1);
  if (rig_buffer_create(c.d, 4, &c.b) || rig_submission_make(c.d, &fill, 1, &c.s) ||
      anchor_open(&c) != 0) {
    printf("P7 failed to set up: %s\n", rig_error_last()->message);
    return 1;
  }
  printf("P7 on %s (arch %s)\n", rig_device_name(c.d), rig_device_arch(c.d));
  rig_bench_compare(stdout, "P7 submit->signal, 4-byte fill", with_rig, with_vulkan, &c, ITERS,
                    ROUNDS);
  rig_bench_compare(stdout, "P7 vs an anchor that records each time", with_rig,
                    with_vulkan_recording, &c, ITERS, ROUNDS);
  c.empty = launch_of(c.d, "kernels/vulkan/empty.spv", "empty", NULL, 0, 0);
  if (c.empty && anchor_dispatch(&c))
    rig_bench_compare(stdout, "P7 submit->signal, empty dispatch", empty_with_rig,
                      empty_with_vulkan, &c, ITERS, ROUNDS);
  if (add_setup(&c)) {
    rig_bench_compare(stdout, "add n=1<<20 on vulkan:0 vs host launch", add_on_vulkan,
                      add_on_host, &c, ADD_ITERS, ADD_ROUNDS);
    if (!c.failed && !add_check(&c)) {
      printf("P7: the add example computed wrong values\n");
      c.failed = 1;
    }
  }
  int failed = c.failed;
  rig_submission_release(c.empty);
  rig_submission_release(c.add_vk);
  rig_submission_release(c.add_host);
  for (int k = 0; k < 3; k++) {
    rig_buffer_release(c.vk[k]);
    rig_buffer_release(c.host[k]);
  }
  rig_submission_release(c.s);
  rig_buffer_release(c.b);
  rig_bench_status(rig_device_close(c.d), "rig_device_close(c.d)");
  rig_device_release(c.d);
  anchor_close(&c);
  if (failed)
    printf("P7: a submit or wait failed\n");
  return failed;
}
