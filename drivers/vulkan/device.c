/* SPDX-License-Identifier: MIT */
/* device.c: the Vulkan instance (with the validation layer where asked),
 * the physical device an open names, and the VkDevice with its queue, and
 * each open's timeline semaphore and command pool on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_private.h"

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static bool has_layer(const char *want) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkLayerProperties *l = calloc(n, sizeof *l);
  bool found = false;
  if (l && vkEnumerateInstanceLayerProperties(&n, l) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(l[i].layerName, want) == 0;
  free(l);
  return found;
}

static VkResult list_exts(VkPhysicalDevice p, const char *layer, uint32_t *n,
                          VkExtensionProperties *e) {
  return p ? vkEnumerateDeviceExtensionProperties(p, NULL, n, e)
           : vkEnumerateInstanceExtensionProperties(layer, n, e);
}

/* Whether physical device p (or, p null, the instance with layer's
 * extensions) has extension want. */
static bool has_ext(VkPhysicalDevice p, const char *layer, const char *want) {
  uint32_t n = 0;
  if (list_exts(p, layer, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *e = calloc(n, sizeof *e);
  bool found = false;
  if (e && list_exts(p, layer, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(e[i].extensionName, want) == 0;
  free(e);
  return found;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  rvk_shared *v = user;
  if (!(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT))
    return VK_FALSE;
  /* The loader's own messages (general ones) are about the machine: a
   * multiarch system lists its other architecture's drivers too (arm64's
   * lavapipe beside x86_64's), which the loader cannot open and calls an
   * error. Nothing rig did: said, not counted. */
  if (!(types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT))) {
    fprintf(stderr, "%s: the Vulkan loader says: %s\n", v->name,
            data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
  }
  atomic_fetch_add(&v->validation.errors, 1);
  fprintf(stderr, "%s: validation error: %s\n", v->name,
          data && data->pMessage ? data->pMessage : "(no message)");
  if (v->validate == 1)
    abort(); /* RIG_VULKAN_VALIDATE=1: an error fails the program loudly */
  return VK_FALSE;
}

/* The layer and the debug messenger's extension, where validation is
 * asked for and installed; returns whether the messenger can be made. */
static bool choose_validation(rvk_shared *v, const char **layers, uint32_t *nlayers,
                              const char **exts, uint32_t *nexts) {
  if (!v->validate)
    return false;
  if (has_layer(VALIDATION_LAYER)) {
    layers[(*nlayers)++] = VALIDATION_LAYER;
    v->validation.active = true;
  } else
    fprintf(stderr, "%s: validation asked for, but " VALIDATION_LAYER " is not "
                    "installed: running without it\n", v->name);
  bool debug = has_ext(NULL, NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
               (*nlayers && has_ext(NULL, layers[0], VK_EXT_DEBUG_UTILS_EXTENSION_NAME));
  if (debug)
    exts[(*nexts)++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  return debug;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(rvk_shared *v) {
  return (VkDebugUtilsMessengerCreateInfoEXT){
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = v};
}

static void make_messenger(rvk_shared *v, const VkDebugUtilsMessengerCreateInfoEXT *mci) {
  PFN_vkCreateDebugUtilsMessengerEXT create =
      (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(v->inst,
                                                                "vkCreateDebugUtilsMessengerEXT");
  v->DestroyMessenger = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
      v->inst, "vkDestroyDebugUtilsMessengerEXT");
  if (create && v->DestroyMessenger)
    (void)create(v->inst, mci, NULL, &v->messenger);
}

int rvk_make_instance(rvk_shared *v, rig_edge_error *err) {
  uint32_t version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "%s: the Vulkan loader is version %u.%u; rig needs 1.2", v->name,
                         VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
  const char *layers[1], *exts[1];
  uint32_t nlayers = 0, nexts = 0;
  bool debug = choose_validation(v, layers, &nlayers, exts, &nexts);
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "rig",
                           .pEngineName = "rig",
                           .apiVersion = VK_API_VERSION_1_2};
  VkDebugUtilsMessengerCreateInfoEXT mci = messenger_info(v);
  /* Synchronization validation too: it finds missing barriers. */
  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .pNext = debug ? &mci : NULL,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pNext = nlayers ? (void *)&features : debug ? (void *)&mci : NULL,
                             .pApplicationInfo = &app,
                             .enabledLayerCount = nlayers,
                             .ppEnabledLayerNames = layers,
                             .enabledExtensionCount = nexts,
                             .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateInstance(&ci, NULL, &v->inst);
  if (r != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: no Vulkan instance: vkCreateInstance: %s%s",
                         v->name, rvk_result_name(r),
                         r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver is installed)" : "");
  if (debug)
    make_messenger(v, &mci);
  return RIG_EDGE_OK;
}

/* Unified memory: no device-local type the host cannot see, and every
 * device-local one coherent. */
static void read_memory_types(rvk_dev *v) {
  vkGetPhysicalDeviceMemoryProperties(v->phys, &v->memprops);
  v->uma = true;
  for (uint32_t i = 0; i < v->memprops.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = v->memprops.memoryTypes[i].propertyFlags;
    if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
        (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) || !(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)))
      v->uma = false;
  }
  v->device_host = v->uma && !v->no_host;
}

/* v->phys: the index-th physical device the loader lists, of Vulkan 1.2
 * or later, with its properties and memory types. */
int rvk_pick_device(rvk_dev *v, uint32_t index, rig_edge_error *err) {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(v->inst, &n, NULL);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkEnumeratePhysicalDevices: %s",
                         v->name, rvk_result_name(r));
  if (index >= n)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: no Vulkan device %u: the loader lists %u%s",
                         v->name, index, n,
                         n == 0 ? " (install a Vulkan driver, e.g. Mesa's lavapipe)" : "");
  VkPhysicalDevice *all = calloc(n, sizeof *all);
  if (!all)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: out of memory", v->name);
  r = vkEnumeratePhysicalDevices(v->inst, &n, all);
  if ((r == VK_SUCCESS || r == VK_INCOMPLETE) && index < n)
    v->phys = all[index];
  free(all);
  if (!v->phys)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: no Vulkan device %u", v->name, index);
  vkGetPhysicalDeviceProperties(v->phys, &v->props);
  if (v->props.apiVersion < VK_API_VERSION_1_2)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s supports Vulkan %u.%u; rig needs 1.2",
                         v->name, v->props.deviceName, VK_API_VERSION_MAJOR(v->props.apiVersion),
                         VK_API_VERSION_MINOR(v->props.apiVersion));
  read_memory_types(v);
  return RIG_EDGE_OK;
}

/* A device's features, chained as vkGetPhysicalDeviceFeatures2 and
 * VkDeviceCreateInfo take them. */
typedef struct features {
  VkPhysicalDeviceFeatures2 f2;
  VkPhysicalDeviceVulkan11Features f11;
  VkPhysicalDeviceVulkan12Features f12;
} features;

static void chain(features *f) {
  f->f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  f->f12.pNext = NULL;
  f->f11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  f->f11.pNext = &f->f12;
  f->f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f->f2.pNext = &f->f11;
}

/* The features kernels may use where the device has them: wider and
 * narrower integers and floats, their storage, the scalar layout and the
 * memory model; nothing that costs what no kernel asks for (robust
 * buffer access, capture and replay). */
static void choose_features(const features *have, bool bda, features *want) {
  const VkPhysicalDeviceVulkan12Features *h12 = &have->f12;
  const VkPhysicalDeviceVulkan11Features *h11 = &have->f11;
  *want = (features){
      .f12 = {.timelineSemaphore = VK_TRUE,
              .bufferDeviceAddress = bda ? VK_TRUE : VK_FALSE,
              .storageBuffer8BitAccess = h12->storageBuffer8BitAccess,
              .uniformAndStorageBuffer8BitAccess = h12->uniformAndStorageBuffer8BitAccess,
              .storagePushConstant8 = h12->storagePushConstant8,
              .shaderBufferInt64Atomics = h12->shaderBufferInt64Atomics,
              .shaderSharedInt64Atomics = h12->shaderSharedInt64Atomics,
              .shaderFloat16 = h12->shaderFloat16,
              .shaderInt8 = h12->shaderInt8,
              .scalarBlockLayout = h12->scalarBlockLayout,
              .vulkanMemoryModel = h12->vulkanMemoryModel,
              .vulkanMemoryModelDeviceScope = h12->vulkanMemoryModelDeviceScope,
              .shaderSubgroupExtendedTypes = h12->shaderSubgroupExtendedTypes},
      .f11 = {.storageBuffer16BitAccess = h11->storageBuffer16BitAccess,
              .uniformAndStorageBuffer16BitAccess = h11->uniformAndStorageBuffer16BitAccess,
              .storagePushConstant16 = h11->storagePushConstant16,
              .variablePointersStorageBuffer = h11->variablePointersStorageBuffer,
              .variablePointers = h11->variablePointers},
      .f2 = {.features = {.shaderInt64 = have->f2.features.shaderInt64,
                          .shaderInt16 = have->f2.features.shaderInt16,
                          .shaderFloat64 = have->f2.features.shaderFloat64}}};
  chain(want);
}

/* v->family: a queue that computes, else any that copies (and then no
 * launches); launches also need buffer device addresses for refs. */
static int pick_family(rvk_dev *v, rig_edge_error *err) {
  uint32_t nf = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nf, NULL);
  VkQueueFamilyProperties *qf = calloc(nf ? nf : 1, sizeof *qf);
  if (!qf)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: out of memory", v->name);
  vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nf, qf);
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
    if (qf[i].queueCount && (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
      family = i;
  v->launches = family != UINT32_MAX && v->bda;
  for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
    if (qf[i].queueCount && (qf[i].queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT)))
      family = i;
  free(qf);
  if (family == UINT32_MAX)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s has no queue that copies", v->name,
                         v->props.deviceName);
  v->family = family;
  return RIG_EDGE_OK;
}

/* The first open of the shared VkDevice makes it; a later one asks the
 * same questions of the same physical device, gets the same answers, and
 * takes it (shared.c's lock held). */
static int make_or_take_vkdevice(rvk_dev *v, features *want, rig_edge_error *err) {
  const char *exts[4];
  uint32_t nexts = 0;
  if (v->push_desc) /* descriptor-bound shaders' buffers (bindings.c) */
    exts[nexts++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
  if (v->import)
    exts[nexts++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  if (v->pci)
    exts[nexts++] = VK_EXT_PCI_BUS_INFO_EXTENSION_NAME;
  if (v->budget_ext)
    exts[nexts++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
  if (v->calibrated) /* a profile's clock offset (profile.c) */
    exts[nexts++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = v->family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &want->f2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = nexts,
                            .ppEnabledExtensionNames = exts};
  VkResult r = VK_SUCCESS;
  if (!v->sh->dev && (r = vkCreateDevice(v->phys, &dci, NULL, &v->sh->dev)) != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateDevice: %s", v->name,
                         rvk_result_name(r));
  if (!v->sh->queue)
    vkGetDeviceQueue(v->sh->dev, v->family, 0, &v->sh->queue);
  v->dev = v->sh->dev;
  v->queue = v->sh->queue;
  return RIG_EDGE_OK;
}

static int get_entry_points(rvk_dev *v, rig_edge_error *err) {
#define GET(field, fn) v->field = (PFN_##fn)vkGetDeviceProcAddr(v->dev, #fn)
  GET(WaitSemaphores, vkWaitSemaphores);
  GET(GetSemaphoreCounterValue, vkGetSemaphoreCounterValue);
  GET(GetBufferDeviceAddress, vkGetBufferDeviceAddress);
  if (v->import)
    GET(GetMemoryHostPointerProperties, vkGetMemoryHostPointerPropertiesEXT);
  if (v->push_desc)
    GET(CmdPushDescriptorSet, vkCmdPushDescriptorSetKHR);
  if (v->calibrated)
    GET(GetCalibratedTimestamps, vkGetCalibratedTimestampsEXT);
#undef GET
  if (!v->WaitSemaphores || !v->GetSemaphoreCounterValue || (v->bda && !v->GetBufferDeviceAddress))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: the device lacks Vulkan 1.2 entry points",
                         v->name);
  if (!v->GetMemoryHostPointerProperties)
    v->import = false;
  if (!v->CmdPushDescriptorSet)
    v->push_desc = false;
  return RIG_EDGE_OK;
}

/* Barriers between the parts of one submission: copies and fills, and
 * launches where the queue computes. */
static void set_part_barriers(rvk_dev *v) {
  v->part_stages = VK_PIPELINE_STAGE_TRANSFER_BIT |
                   (v->launches ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT : 0);
  v->part_writes = VK_ACCESS_TRANSFER_WRITE_BIT | (v->launches ? VK_ACCESS_SHADER_WRITE_BIT : 0);
  v->part_access = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                   (v->launches ? VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                      VK_ACCESS_UNIFORM_READ_BIT
                                : 0);
}

/* The open's own objects on the VkDevice: its timeline semaphore and
 * command pool. */
static int make_timeline_and_pool(rvk_dev *v, rig_edge_error *err) {
  VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                   .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                   .initialValue = 0};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
  VkResult r = vkCreateSemaphore(v->dev, &sci, NULL, &v->timeline);
  if (r != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateSemaphore: %s", v->name,
                         rvk_result_name(r));
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT |
                                          VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                                 .queueFamilyIndex = v->family};
  if ((r = vkCreateCommandPool(v->dev, &pci, NULL, &v->pool)) != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateCommandPool: %s", v->name,
                         rvk_result_name(r));
  return RIG_EDGE_OK;
}

/* The VkDevice of v's physical device (made, or the shared one taken)
 * with the features kernels may need, its entry points, and v's own
 * semaphore and pool. shared.c's lock held. */
int rvk_make_device(rvk_dev *v, rig_edge_error *err) {
  features have = {0}, want;
  chain(&have);
  vkGetPhysicalDeviceFeatures2(v->phys, &have.f2);
  if (!have.f12.timelineSemaphore)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s has no timeline semaphores", v->name,
                         v->props.deviceName);
  v->bda = have.f12.bufferDeviceAddress;
  v->import = has_ext(v->phys, NULL, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  v->pci = has_ext(v->phys, NULL, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  v->budget_ext = has_ext(v->phys, NULL, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  v->push_desc = has_ext(v->phys, NULL, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  v->calibrated = has_ext(v->phys, NULL, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  int r = pick_family(v, err);
  if (r != RIG_EDGE_OK)
    return r;
  choose_features(&have, v->bda, &want);
  v->features = want.f2.features;
  v->features12 = want.f12;
  v->features12.pNext = NULL;
  if ((r = make_or_take_vkdevice(v, &want, err)) != RIG_EDGE_OK ||
      (r = get_entry_points(v, err)) != RIG_EDGE_OK)
    return r;
  set_part_barriers(v);
  return make_timeline_and_pool(v, err);
}

/* The limits an open reads once its device is made: the alignment of
 * host memory it imports, and its largest allocation. */
void rvk_read_limits(rvk_dev *v) {
  VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
  VkPhysicalDeviceMaintenance3Properties m3 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
      .pNext = v->import ? &hp : NULL};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &m3};
  vkGetPhysicalDeviceProperties2(v->phys, &p2);
  if (v->import)
    v->import_align = hp.minImportedHostPointerAlignment ? hp.minImportedHostPointerAlignment : 4096;
  v->max_alloc = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : UINT64_MAX;
}
