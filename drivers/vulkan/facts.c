/* SPDX-License-Identifier: MIT */
/* facts.c: what core learns of an open at its start (README, "Facts"):
 * the arch, the bus, the alignment, the budget, the flags and the queue. */
#include <stdio.h>
#include <string.h>

#include "vulkan_private.h"

static void lowercase(char *s) {
  for (char *c = s; *c; c++)
    *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
}

/* raw as one token: runs of other characters than letters, digits, '/'
 * and '_' become one '-', none at the start or after a '/'. */
static size_t tokenize(const char *raw, char *out, size_t n) {
  size_t k = 0;
  bool dash = false;
  for (const char *c = raw; *c && k + 1 < n; c++) {
    bool keep = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '/' || *c == '_';
    if (keep) {
      if (dash && k > 0 && out[k - 1] != '/' && k + 2 < n)
        out[k++] = '-';
      out[k++] = *c;
      dash = false;
    } else
      dash = true;
  }
  out[k] = 0;
  return k;
}

/* The arch: the driver's name, then the device's, as one lowercase token
 * ("llvmpipe-llvm-15-0-6-256-bits", "radv/amd-radeon-rx-7900-xtx-radv-navi31"). */
static void make_arch(rvk_dev *v, char *out, size_t n) {
  VkPhysicalDeviceDriverProperties dp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &dp};
  vkGetPhysicalDeviceProperties2(v->phys, &p2);
  char raw[2 * VK_MAX_DRIVER_NAME_SIZE + 2];
  char drv[VK_MAX_DRIVER_NAME_SIZE], devn[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  snprintf(drv, sizeof drv, "%s", dp.driverName);
  snprintf(devn, sizeof devn, "%s", v->props.deviceName);
  lowercase(drv);
  lowercase(devn);
  if (!drv[0] || strncmp(devn, drv, strlen(drv)) == 0)
    snprintf(raw, sizeof raw, "%s", devn);
  else
    snprintf(raw, sizeof raw, "%s/%s", drv, devn);
  if (!tokenize(raw, out, n))
    snprintf(out, n, "vulkan-%04x-%04x", v->props.vendorID, v->props.deviceID);
}

static void make_bus(rvk_dev *v, char *out, size_t n) {
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &pci};
  vkGetPhysicalDeviceProperties2(v->phys, &p2);
  snprintf(out, n, "%04x:%02x:%02x.%x", pci.pciDomain & 0xffff, pci.pciBus & 0xff,
           pci.pciDevice & 0xff, pci.pciFunction & 0xf);
}

/* Every allocation is a buffer of its own, at the start of its memory: it
 * starts where the device's offsets for buffers of any use may. */
static uint64_t alignment(const rvk_dev *v) {
  const VkPhysicalDeviceLimits *l = &v->props.limits;
  uint64_t align = 16;
  uint64_t lim[] = {l->minStorageBufferOffsetAlignment, l->minUniformBufferOffsetAlignment,
                    l->minTexelBufferOffsetAlignment, l->nonCoherentAtomSize};
  for (size_t i = 0; i < sizeof lim / sizeof *lim; i++)
    if (lim[i] > align)
      align = lim[i];
  while (align & (align - 1))
    align &= align - 1; /* a power of two (each limit is one) */
  return align;
}

/* The budget: the device-local heaps, or what VK_EXT_memory_budget gives
 * this process of them. */
static uint64_t budget(rvk_dev *v) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT mb = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                           .pNext = v->budget_ext ? &mb : NULL};
  vkGetPhysicalDeviceMemoryProperties2(v->phys, &mp2);
  uint64_t sum = 0;
  for (uint32_t i = 0; i < v->memprops.memoryHeapCount; i++)
    if (v->memprops.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      sum += v->budget_ext && mb.heapBudget[i] ? mb.heapBudget[i] : v->memprops.memoryHeaps[i].size;
  return sum;
}

/* The capability record RIG_VULKAN_DEVICE: what the device and its driver
 * say of themselves. */
static void make_info(rvk_dev *v) {
  VkPhysicalDeviceDriverProperties dp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &dp};
  vkGetPhysicalDeviceProperties2(v->phys, &p2);
  rig_vulkan_device *i = &v->info;
  i->size = sizeof *i;
  i->vendor_id = v->props.vendorID;
  i->device_id = v->props.deviceID;
  i->device_type = (uint32_t)v->props.deviceType;
  i->api_version = v->props.apiVersion;
  i->driver_version = v->props.driverVersion;
  snprintf(i->name, sizeof i->name, "%.*s", VK_MAX_PHYSICAL_DEVICE_NAME_SIZE, v->props.deviceName);
  snprintf(i->driver_name, sizeof i->driver_name, "%.*s", VK_MAX_DRIVER_NAME_SIZE, dp.driverName);
  snprintf(i->driver_info, sizeof i->driver_info, "%.*s", VK_MAX_DRIVER_INFO_SIZE, dp.driverInfo);
  i->memory_bytes = 0;
  for (uint32_t h = 0; h < v->memprops.memoryHeapCount; h++)
    if (v->memprops.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      i->memory_bytes += v->memprops.memoryHeaps[h].size;
}

void rvk_make_facts(rvk_dev *v) {
  rig_edge_facts *f = &v->facts;
  make_info(v);
  make_arch(v, f->arch, sizeof f->arch);
  if (v->pci)
    make_bus(v, f->bus, sizeof f->bus);
  f->alignment = alignment(v);
  f->cache_bytes = 0;     /* Vulkan states none (PROP-33) */
  f->budget = budget(v);
  f->hang_ms = 0;         /* no bound: a kernel may run as long as it likes */
  /* Mesa's lavapipe runs on the host's processors: it says so. */
  f->type = v->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? RIG_EDGE_TYPE_CPU
                                                               : RIG_EDGE_TYPE_GPU;
  f->commit_k = v->k;
  /* COMMIT_IDLE: an idle queue gets its work at the submit, in core's one
   * hold of the signal mask, not at the wait's commit in a second (P7). */
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_OWN_WORD | RIG_EDGE_COMMIT_IDLE |
             (v->import ? RIG_EDGE_MAPS_HOST : 0) | (v->device_host ? RIG_EDGE_HOST_ADDRESSES : 0);
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = v->launches ? 0 : RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = 0; /* rig-vulkan.h's packets (words.c) */
}

int rvk_facts(void *h, rig_edge_facts *out, rig_edge_error *err) {
  rvk_dev *v = h;
  (void)err;
  uint32_t size = out->size; /* an older core knows a shorter struct */
  memcpy(out, &v->facts, size < sizeof v->facts ? size : sizeof v->facts);
  out->size = size;
  return RIG_EDGE_OK;
}
