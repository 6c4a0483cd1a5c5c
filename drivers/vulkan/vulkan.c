/* vulkan.c: the Vulkan driver, librig-driver-vulkan.so (drivers/vulkan/README.md).
 *
 * Opened as "vulkan:N[,option...]" for the N-th physical device the loader
 * lists. It links the Vulkan loader (libvulkan.so.1) and librig-edge only.
 *
 *   validate=0|1|count  the Khronos validation layer with synchronization
 *                       validation; 1 aborts at the first error, count only
 *                       counts (capability "vulkan.validation"). Default:
 *                       $RIG_VULKAN_VALIDATE, else 0.
 *   k=K                 commit at least every K values (8); k=1: each submit
 *                       goes to the queue at once
 *   host=0              the host addresses none of its Device memory, even
 *                       on unified memory: copies to and from the host go
 *                       through staging, as on a discrete GPU
 *   fault_nth=N         its N-th submit fails as a lost device's would, with
 *                       "injected fault at V" (tests of loss)
 *
 * One VkInstance and one VkDevice per open, one queue, one timeline
 * semaphore: work of value v signals v. The driver keeps its word itself
 * (OWN_WORD): signaled() reads the semaphore's counter, wait() is
 * vkWaitSemaphores. Submit records a command buffer and holds it; commit,
 * a wait, or k held values send the held ones to the queue in one
 * vkQueueSubmit, one batch per value.
 *
 * k (commit): 8 unless opened with k=K.
 * Per open: an instance, a device, a 64 KiB scratch buffer, a command pool
 * and one record of about 1 KiB; gone at destroy.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include <rig/edge.h>

#include "rig-vulkan.h"

#define DEFAULT_K 8
#define SCRATCH_BYTES 65536u /* where unaligned fills stage their bytes */
#define SLOT 8u              /* scratch bytes per unaligned fill */

/* Memory the driver made: an allocation, or host memory it maps. */
typedef struct vkmem {
  VkBuffer buf;
  VkDeviceMemory mem;
  uint64_t base;            /* the first byte's offset in buf */
  uint64_t size;            /* buf's bytes */
  bool imported;            /* host memory mapped by map() */
  VkMemoryPropertyFlags flags; /* of its memory type */
  struct vkmem *prev, *next; /* the device's list */
} vkmem;

/* A value's work: its command buffer, or none for work of no bytes. */
typedef struct held {
  uint64_t value;
  VkCommandBuffer cb;
} held;

typedef struct vec {
  held *at;
  size_t n, cap;
} vec;

typedef struct vkdev {
  char name[32];
  VkInstance inst;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice phys;
  VkDevice dev;
  VkQueue queue;
  uint32_t family;
  VkSemaphore timeline;
  VkCommandPool pool;
  vkmem scratch;
  bool bda, import, pci, budget_ext;
  bool uma;                 /* all its device-local memory is host-visible */
  bool device_host;         /* the host addresses its Device memory: uma, host=1 */
  uint64_t import_align;
  VkPhysicalDeviceMemoryProperties memprops;
  VkPhysicalDeviceProperties props;
  uint64_t max_alloc;
  rig_edge_facts facts;

  /* entry points of the device (Vulkan 1.2 and extensions) */
  PFN_vkWaitSemaphores WaitSemaphores;
  PFN_vkGetSemaphoreCounterValue GetSemaphoreCounterValue;
  PFN_vkGetBufferDeviceAddress GetBufferDeviceAddress;
  PFN_vkGetMemoryHostPointerPropertiesEXT GetMemoryHostPointerProperties;
  PFN_vkDestroyDebugUtilsMessengerEXT DestroyMessenger;

  /* the queue: held work, work on the queue, spare command buffers */
  pthread_mutex_t qlock;
  vec held, flight;
  VkCommandBuffer *spare;
  size_t nspare, capspare;
  VkSubmitInfo *infos;
  VkTimelineSemaphoreSubmitInfo *tinfos;
  uint64_t *values;
  size_t capinfos;
  uint64_t queued;          /* the last value sent to the queue */
  uint64_t taken;           /* the last value submit took (atomic) */
  uint64_t reached;         /* a value the semaphore is known to have reached (atomic) */
  uint64_t base;            /* the semaphore holds value - base: set at the first
                               submit, so that a slot's later device, whose values
                               start high, stays within the device's
                               maxTimelineSemaphoreValueDifference */
  uint32_t k;
  uint64_t fault_nth, submits;
  bool opened, stopped;
  uint64_t final;           /* after the stop: the last value it reports */

  /* memory */
  pthread_mutex_t mlock;
  vkmem *mems;

  /* validation */
  int validate;             /* 0, 1 (abort), 2 (count) */
  bool no_host;             /* host=0: the host addresses no Device memory */
  rig_vulkan_validation validation;
} vkdev;

/* ---- messages ------------------------------------------------------------ */

static const char *vk_name(VkResult r) {
  switch (r) {
#define N(x) case x: return #x;
    N(VK_SUCCESS) N(VK_NOT_READY) N(VK_TIMEOUT) N(VK_INCOMPLETE)
    N(VK_ERROR_OUT_OF_HOST_MEMORY) N(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    N(VK_ERROR_INITIALIZATION_FAILED) N(VK_ERROR_DEVICE_LOST)
    N(VK_ERROR_MEMORY_MAP_FAILED) N(VK_ERROR_LAYER_NOT_PRESENT)
    N(VK_ERROR_EXTENSION_NOT_PRESENT) N(VK_ERROR_FEATURE_NOT_PRESENT)
    N(VK_ERROR_INCOMPATIBLE_DRIVER) N(VK_ERROR_TOO_MANY_OBJECTS)
    N(VK_ERROR_FORMAT_NOT_SUPPORTED) N(VK_ERROR_UNKNOWN)
    N(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    N(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
#undef N
  default:
    return "VkResult";
  }
}

/* The result of a failed Vulkan call on a working device: a lost device,
 * or no memory, which core reclaims and retries on (RECLAIM-52). */
static int vk_fail(rig_edge_error *err, VkResult r, const char *what, const char *name) {
  int code = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ||
                     r == VK_ERROR_TOO_MANY_OBJECTS
                 ? RIG_EDGE_NO_ROOM
                 : RIG_EDGE_FAULT;
  return rig_edge_fail(err, code, "%s: %s: %s (%d)", name, what, vk_name(r), (int)r);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  vkdev *v = user;
  (void)types;
  if (!(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT))
    return VK_FALSE;
  atomic_fetch_add(&v->validation.errors, 1);
  fprintf(stderr, "%s: validation error: %s\n", v->name,
          data && data->pMessage ? data->pMessage : "(no message)");
  if (v->validate == 1)
    abort(); /* RIG_VULKAN_VALIDATE=1: an error fails the program loudly */
  return VK_FALSE;
}

/* ---- opening ------------------------------------------------------------- */

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

static bool has_instance_ext(const char *layer, const char *want) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *e = calloc(n, sizeof *e);
  bool found = false;
  if (e && vkEnumerateInstanceExtensionProperties(layer, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(e[i].extensionName, want) == 0;
  free(e);
  return found;
}

static bool has_device_ext(VkPhysicalDevice p, const char *want) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(p, NULL, &n, NULL) != VK_SUCCESS || n == 0)
    return false;
  VkExtensionProperties *e = calloc(n, sizeof *e);
  bool found = false;
  if (e && vkEnumerateDeviceExtensionProperties(p, NULL, &n, e) == VK_SUCCESS)
    for (uint32_t i = 0; i < n && !found; i++)
      found = strcmp(e[i].extensionName, want) == 0;
  free(e);
  return found;
}

/* Parses "N[,option...]"; false for a malformed name. */
static bool parse(vkdev *v, const char *args, uint32_t *index) {
  char *end;
  const char *env = getenv("RIG_VULKAN_VALIDATE");
  v->k = DEFAULT_K;
  v->validate = !env || !*env || strcmp(env, "0") == 0 ? 0 : strcmp(env, "count") == 0 ? 2 : 1;
  *index = 0;
  if (*args && *args != ',') {
    unsigned long n = strtoul(args, &end, 10);
    if (end == args || (*end && *end != ',') || n > 255)
      return false;
    *index = (uint32_t)n;
  }
  for (const char *p = strchr(args, ','); p; p = strchr(p + 1, ',')) {
    if (strncmp(p + 1, "validate=", 9) == 0)
      v->validate = p[10] == '1' ? 1 : p[10] == 'c' ? 2 : 0;
    else if (strncmp(p + 1, "k=", 2) == 0)
      v->k = (uint32_t)strtoul(p + 3, NULL, 10);
    else if (strncmp(p + 1, "host=", 5) == 0)
      v->no_host = p[6] == '0';
    else if (strncmp(p + 1, "fault_nth=", 10) == 0)
      v->fault_nth = strtoull(p + 11, NULL, 10);
    else
      return false;
  }
  if (v->k == 0)
    v->k = 1;
  return true;
}

static int make_instance(vkdev *v, rig_edge_error *err) {
  uint32_t version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&version) != VK_SUCCESS || version < VK_API_VERSION_1_2)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "%s: the Vulkan loader is version %u.%u; rig needs 1.2", v->name,
                         VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
  const char *layers[1], *exts[1];
  uint32_t nlayers = 0, nexts = 0;
  bool debug = false;
  if (v->validate) {
    if (has_layer("VK_LAYER_KHRONOS_validation")) {
      layers[nlayers++] = "VK_LAYER_KHRONOS_validation";
      v->validation.active = true;
    } else
      fprintf(stderr, "%s: validation asked for, but VK_LAYER_KHRONOS_validation is not "
                      "installed: running without it\n", v->name);
    debug = has_instance_ext(NULL, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
            (nlayers && has_instance_ext(layers[0], VK_EXT_DEBUG_UTILS_EXTENSION_NAME));
    if (debug)
      exts[nexts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  }
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "rig",
                           .pEngineName = "rig",
                           .apiVersion = VK_API_VERSION_1_2};
  VkDebugUtilsMessengerCreateInfoEXT mci = {
      .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
      .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
      .pfnUserCallback = on_message,
      .pUserData = v};
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
                         v->name, vk_name(r),
                         r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver is installed)" : "");
  if (debug) {
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(v->inst,
                                                                  "vkCreateDebugUtilsMessengerEXT");
    v->DestroyMessenger = (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
        v->inst, "vkDestroyDebugUtilsMessengerEXT");
    if (create && v->DestroyMessenger)
      (void)create(v->inst, &mci, NULL, &v->messenger);
  }
  return RIG_EDGE_OK;
}

static int pick_device(vkdev *v, uint32_t index, rig_edge_error *err) {
  uint32_t n = 0;
  VkResult r = vkEnumeratePhysicalDevices(v->inst, &n, NULL);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkEnumeratePhysicalDevices: %s",
                         v->name, vk_name(r));
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
  return RIG_EDGE_OK;
}

static int make_device(vkdev *v, rig_edge_error *err) {
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f12};
  vkGetPhysicalDeviceFeatures2(v->phys, &f2);
  if (!f12.timelineSemaphore)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s has no timeline semaphores", v->name,
                         v->props.deviceName);
  v->bda = f12.bufferDeviceAddress;
  v->import = has_device_ext(v->phys, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
  v->pci = has_device_ext(v->phys, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  v->budget_ext = has_device_ext(v->phys, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

  uint32_t nf = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nf, NULL);
  VkQueueFamilyProperties *qf = calloc(nf ? nf : 1, sizeof *qf);
  if (!qf)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: out of memory", v->name);
  vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nf, qf);
  /* A compute queue (launches come later), else any that copies. */
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
    if (qf[i].queueCount && (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
      family = i;
  for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
    if (qf[i].queueCount && (qf[i].queueFlags & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT)))
      family = i;
  free(qf);
  if (family == UINT32_MAX)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: %s has no queue that copies", v->name,
                         v->props.deviceName);
  v->family = family;

  const char *exts[3];
  uint32_t nexts = 0;
  if (v->import)
    exts[nexts++] = VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME;
  if (v->pci)
    exts[nexts++] = VK_EXT_PCI_BUS_INFO_EXTENSION_NAME;
  if (v->budget_ext)
    exts[nexts++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
  VkPhysicalDeviceVulkan12Features want = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .timelineSemaphore = VK_TRUE,
      .bufferDeviceAddress = v->bda ? VK_TRUE : VK_FALSE};
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &want,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = nexts,
                            .ppEnabledExtensionNames = exts};
  VkResult r = vkCreateDevice(v->phys, &dci, NULL, &v->dev);
  if (r != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateDevice: %s", v->name, vk_name(r));
  vkGetDeviceQueue(v->dev, family, 0, &v->queue);
#define GET(field, fn) v->field = (PFN_##fn)vkGetDeviceProcAddr(v->dev, #fn)
  GET(WaitSemaphores, vkWaitSemaphores);
  GET(GetSemaphoreCounterValue, vkGetSemaphoreCounterValue);
  GET(GetBufferDeviceAddress, vkGetBufferDeviceAddress);
  if (v->import)
    GET(GetMemoryHostPointerProperties, vkGetMemoryHostPointerPropertiesEXT);
#undef GET
  if (!v->WaitSemaphores || !v->GetSemaphoreCounterValue || (v->bda && !v->GetBufferDeviceAddress))
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: the device lacks Vulkan 1.2 entry points",
                         v->name);
  if (!v->GetMemoryHostPointerProperties)
    v->import = false;

  VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                   .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
                                   .initialValue = 0};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
  if ((r = vkCreateSemaphore(v->dev, &sci, NULL, &v->timeline)) != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateSemaphore: %s", v->name, vk_name(r));
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT |
                                          VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
                                 .queueFamilyIndex = family};
  if ((r = vkCreateCommandPool(v->dev, &pci, NULL, &v->pool)) != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateCommandPool: %s", v->name, vk_name(r));
  return RIG_EDGE_OK;
}

/* ---- memory -------------------------------------------------------------- */

/* The memory type among bits with every flag of need, the most of want
 * and none of avoid where it can; UINT32_MAX for none. */
static uint32_t pick_type(const vkdev *v, uint32_t bits, VkMemoryPropertyFlags need,
                          VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) {
  uint32_t best = UINT32_MAX;
  int best_score = -1;
  for (uint32_t i = 0; i < v->memprops.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = v->memprops.memoryTypes[i].propertyFlags;
    if (!(bits & (1u << i)) || (f & need) != need)
      continue;
    int score = 2 * __builtin_popcount(f & want) + !(f & avoid);
    if (score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

static VkBufferUsageFlags usage(const vkdev *v) {
  return VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
         (v->bda ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0);
}

static void link_mem(vkdev *v, vkmem *m) {
  pthread_mutex_lock(&v->mlock);
  m->prev = NULL;
  m->next = v->mems;
  if (v->mems)
    v->mems->prev = m;
  v->mems = m;
  pthread_mutex_unlock(&v->mlock);
}

static void unlink_mem(vkdev *v, vkmem *m) {
  pthread_mutex_lock(&v->mlock);
  if (m->prev)
    m->prev->next = m->next;
  else if (v->mems == m)
    v->mems = m->next;
  if (m->next)
    m->next->prev = m->prev;
  m->prev = m->next = NULL;
  pthread_mutex_unlock(&v->mlock);
}

/* Frees m's Vulkan objects (not m). */
static void free_objects(vkdev *v, vkmem *m) {
  if (m->buf)
    vkDestroyBuffer(v->dev, m->buf, NULL);
  if (m->mem)
    vkFreeMemory(v->dev, m->mem, NULL);
  m->buf = VK_NULL_HANDLE;
  m->mem = VK_NULL_HANDLE;
}

/* A buffer of size bytes on memory of a type that need/want/avoid choose,
 * or on imported host memory (import: its type bits, host its address). */
static int make_buffer(vkdev *v, vkmem *m, uint64_t size, VkMemoryPropertyFlags need,
                       VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, void *host,
                       uint32_t import_bits, VkMemoryRequirements *out_req, rig_edge_error *err) {
  VkExternalMemoryBufferCreateInfo ext = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = host ? &ext : NULL,
                            .size = size,
                            .usage = usage(v),
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(v->dev, &bci, NULL, &m->buf);
  if (r != VK_SUCCESS)
    return vk_fail(err, r, "vkCreateBuffer", v->name);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(v->dev, m->buf, &req);
  uint32_t bits = req.memoryTypeBits & (host ? import_bits : ~0u);
  uint32_t type = pick_type(v, bits, need, want, avoid);
  if (type == UINT32_MAX) {
    free_objects(v, m);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory type for this kind", v->name);
  }
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkImportMemoryHostPointerInfoEXT imp = {
      .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
      .pNext = v->bda ? &flags : NULL,
      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
      .pHostPointer = host};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = host ? (void *)&imp : v->bda ? (void *)&flags : NULL,
                              .allocationSize = host ? size : req.size,
                              .memoryTypeIndex = type};
  if (host && req.size > size) {
    free_objects(v, m);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: a buffer over %" PRIu64
                         " bytes of host memory needs %" PRIu64, v->name, size, (uint64_t)req.size);
  }
  if ((r = vkAllocateMemory(v->dev, &mai, NULL, &m->mem)) != VK_SUCCESS) {
    free_objects(v, m);
    return vk_fail(err, r, host ? "vkAllocateMemory (host memory)" : "vkAllocateMemory", v->name);
  }
  if ((r = vkBindBufferMemory(v->dev, m->buf, m->mem, 0)) != VK_SUCCESS) {
    free_objects(v, m);
    return vk_fail(err, r, "vkBindBufferMemory", v->name);
  }
  m->size = size;
  m->flags = v->memprops.memoryTypes[type].propertyFlags;
  if (out_req)
    *out_req = req;
  return RIG_EDGE_OK;
}

static uint64_t address_of(const vkdev *v, const vkmem *m) {
  if (!v->bda || !m->buf)
    return 0;
  VkBufferDeviceAddressInfo i = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
                                 .buffer = m->buf};
  return v->GetBufferDeviceAddress(v->dev, &i) + m->base;
}

static int vk_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                       rig_edge_error *err) {
  vkdev *v = h;
  static _Alignas(4096) unsigned char empty[4]; /* where no bytes live */
  uint64_t size = (bytes + 3) / 4 * 4;
  if (size > v->max_alloc)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: %" PRIu64 " bytes exceed the largest "
                         "allocation of %" PRIu64, v->name, bytes, v->max_alloc);
  VkMemoryPropertyFlags need, want, avoid;
  switch (kind) {
  case RIG_EDGE_KIND_DEVICE:  /* device-local, not host-visible where it can */
    need = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    want = 0;
    avoid = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    break;
  case RIG_EDGE_KIND_MAPPED:  /* device memory the host addresses */
    need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    avoid = 0;
    break;
  case RIG_EDGE_KIND_PINNED:  /* host memory the device maps */
    need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    want = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    avoid = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    break;
  default:
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory kind %u", v->name, kind);
  }
  bool addressed = kind != RIG_EDGE_KIND_DEVICE || v->device_host;
  vkmem *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  if (size == 0) { /* no bytes: no Vulkan object, and nothing charged */
    link_mem(v, m);
    *out = (rig_edge_alloc){m, addressed ? empty : NULL, 0, 0};
    return RIG_EDGE_OK;
  }
  VkMemoryRequirements req;
  int r = make_buffer(v, m, size, need, want, avoid, NULL, 0, &req, err);
  if (r != RIG_EDGE_OK) {
    free(m);
    return r;
  }
  const VkMemoryPropertyFlags coherent =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  void *host = NULL;
  if (addressed && (m->flags & coherent) == coherent) {
    VkResult vr = vkMapMemory(v->dev, m->mem, 0, VK_WHOLE_SIZE, 0, &host);
    if (vr != VK_SUCCESS) {
      free_objects(v, m);
      free(m);
      return vk_fail(err, vr, "vkMapMemory", v->name);
    }
  }
  link_mem(v, m);
  out->handle = m;
  out->host = host;
  out->address = address_of(v, m);
  out->bytes = req.size; /* what the device took */
  return RIG_EDGE_OK;
}

static int vk_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  vkdev *v = h;
  vkmem *m = a->handle;
  unlink_mem(v, m);
  free_objects(v, m);
  free(m);
  return RIG_EDGE_OK;
}

/* Maps host memory through VK_EXT_external_memory_host: the pages that
 * hold [host, host + bytes), with the range's first byte at m->base. */
static int vk_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err) {
  vkdev *v = h;
  if (!v->import)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: maps no host memory "
                         "(no VK_EXT_external_memory_host)", v->name);
  uintptr_t a = v->import_align;
  uintptr_t first = (uintptr_t)host / a * a;
  uintptr_t end = ((uintptr_t)host + (bytes ? bytes : 1) + a - 1) / a * a;
  VkMemoryHostPointerPropertiesEXT props = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT};
  VkResult vr = v->GetMemoryHostPointerProperties(
      v->dev, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, (void *)first, &props);
  if (vr != VK_SUCCESS)
    return vk_fail(err, vr, "vkGetMemoryHostPointerPropertiesEXT", v->name);
  vkmem *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  int r = make_buffer(v, m, end - first, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, 0, (void *)first,
                      props.memoryTypeBits, NULL, err);
  if (r != RIG_EDGE_OK) {
    free(m);
    /* No room, or a refusal of this memory: either leaves the device as
     * it was, and a borrow or staging is refused (RECLAIM-63, RECLAIM-79). */
    return RIG_EDGE_NO_ROOM;
  }
  m->imported = true;
  m->base = (uintptr_t)host - first;
  link_mem(v, m);
  out->handle = m;
  out->host = host;
  out->address = address_of(v, m);
  out->bytes = bytes;
  return RIG_EDGE_OK;
}

/* ---- work ---------------------------------------------------------------- */

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
static void record_fill(vkdev *v, VkCommandBuffer cb, const rig_edge_part *p, uint64_t *slot) {
  const rig_edge_range *r = &p->u.fill.dst;
  const vkmem *m = r->alloc->handle;
  uint64_t o = m->base + r->offset, n = r->bytes;
  uint32_t pb = p->u.fill.pattern_bytes ? p->u.fill.pattern_bytes : 1;
  uint8_t pat[4], w[SLOT];
  memcpy(pat, &p->u.fill.pattern, 4);
  for (uint32_t j = 0; j < SLOT; j++) /* byte j of an aligned word: the range's byte j - o */
    w[j] = pat[(j + pb - o % pb) % pb];
  uint32_t word;
  memcpy(&word, w, 4);
  uint64_t a = (o + 3) / 4 * 4, b = (o + n) / 4 * 4;
  if (a == o && b == o + n) {
    vkCmdFillBuffer(cb, m->buf, o, n, word);
    return;
  }
  if (*slot + SLOT > SCRATCH_BYTES) { /* every slot used in this work: reuse them */
    transfer_barrier(cb);
    *slot = 0;
  }
  uint64_t s = *slot;
  *slot += SLOT;
  vkCmdUpdateBuffer(cb, v->scratch.buf, s, SLOT, w);
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

static uint64_t part_bytes(const rig_edge_part *p) {
  return p->kind == RIG_EDGE_PART_COPY ? p->u.copy.dst.bytes
         : p->kind == RIG_EDGE_PART_FILL ? p->u.fill.dst.bytes
                                         : 0;
}

static int get_cb(vkdev *v, VkCommandBuffer *out, rig_edge_error *err) {
  if (v->nspare) {
    *out = v->spare[--v->nspare];
    return RIG_EDGE_OK;
  }
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = v->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult r = vkAllocateCommandBuffers(v->dev, &ai, out);
  return r == VK_SUCCESS ? RIG_EDGE_OK : vk_fail(err, r, "vkAllocateCommandBuffers", v->name);
}

static bool put_spare(vkdev *v, VkCommandBuffer cb) {
  if (v->nspare == v->capspare) {
    size_t cap = v->capspare ? 2 * v->capspare : 16;
    VkCommandBuffer *s = realloc(v->spare, cap * sizeof *s);
    if (!s) {
      vkFreeCommandBuffers(v->dev, v->pool, 1, &cb);
      return false;
    }
    v->spare = s;
    v->capspare = cap;
  }
  v->spare[v->nspare++] = cb;
  return true;
}

static bool push(vec *x, held e) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 32;
    held *a = realloc(x->at, cap * sizeof *a);
    if (!a)
      return false;
    x->at = a;
    x->cap = cap;
  }
  x->at[x->n++] = e;
  return true;
}

/* Records the work's parts into a command buffer: after every earlier
 * value's work (ORDER-2), each part after the one before it (parts of one
 * queue run in order), and visible to the host once its value is signaled
 * (TL-20). */
static int record(vkdev *v, const rig_edge_work *w, VkCommandBuffer *out, rig_edge_error *err) {
  bool any = false;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (p->kind != RIG_EDGE_PART_COPY && p->kind != RIG_EDGE_PART_FILL)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: part kind %u is not run here",
                           v->name, p->kind);
    any |= part_bytes(p) > 0;
  }
  *out = VK_NULL_HANDLE;
  if (!any)
    return RIG_EDGE_OK; /* the signal alone follows every earlier submission */
  VkCommandBuffer cb;
  int r = get_cb(v, &cb, err);
  if (r != RIG_EDGE_OK)
    return r;
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  VkResult vr = vkBeginCommandBuffer(cb, &bi);
  if (vr != VK_SUCCESS) {
    put_spare(v, cb);
    return vk_fail(err, vr, "vkBeginCommandBuffer", v->name);
  }
  barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, &all_to_all);
  uint64_t slot = 0;
  bool first = true;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (!part_bytes(p))
      continue;
    if (!first)
      transfer_barrier(cb);
    first = false;
    if (p->kind == RIG_EDGE_PART_COPY) {
      const vkmem *s = p->u.copy.src.alloc->handle, *d = p->u.copy.dst.alloc->handle;
      copy_bytes(cb, s->buf, s->base + p->u.copy.src.offset, d->buf,
                 d->base + p->u.copy.dst.offset, p->u.copy.dst.bytes);
    } else
      record_fill(v, cb, p, &slot);
  }
  barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, &to_host);
  if ((vr = vkEndCommandBuffer(cb)) != VK_SUCCESS) {
    put_spare(v, cb);
    return vk_fail(err, vr, "vkEndCommandBuffer", v->name);
  }
  *out = cb;
  return RIG_EDGE_OK;
}

/* The value the semaphore has reached, in rig's values. */
static VkResult counter(vkdev *v, uint64_t *out) {
  uint64_t raw = 0;
  VkResult r = v->GetSemaphoreCounterValue(v->dev, v->timeline, &raw);
  *out = raw ? raw + v->base : 0;
  return r;
}

/* Gives back the command buffers of work the device has finished. qlock held. */
static void recycle(vkdev *v) {
  uint64_t done = 0;
  if (!v->flight.n || counter(v, &done) != VK_SUCCESS)
    return;
  size_t keep = 0;
  for (size_t i = 0; i < v->flight.n; i++)
    if (v->flight.at[i].value <= done)
      put_spare(v, v->flight.at[i].cb);
    else
      v->flight.at[keep++] = v->flight.at[i];
  v->flight.n = keep;
}

static bool grow_infos(vkdev *v, size_t n) {
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

/* Sends the held work of values up to upto to the queue, in one
 * vkQueueSubmit of a batch per value. qlock held. */
static int flush(vkdev *v, uint64_t upto, rig_edge_error *err) {
  size_t n = 0;
  while (n < v->held.n && v->held.at[n].value <= upto)
    n++;
  if (!n)
    return RIG_EDGE_OK;
  if (!grow_infos(v, n))
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory for a submit", v->name);
  for (size_t i = 0; i < n; i++) {
    held *e = &v->held.at[i];
    v->values[i] = e->value - v->base;
    v->tinfos[i] = (VkTimelineSemaphoreSubmitInfo){
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .signalSemaphoreValueCount = 1,
        .pSignalSemaphoreValues = &v->values[i]};
    v->infos[i] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                 .pNext = &v->tinfos[i],
                                 .commandBufferCount = e->cb ? 1 : 0,
                                 .pCommandBuffers = e->cb ? &e->cb : NULL,
                                 .signalSemaphoreCount = 1,
                                 .pSignalSemaphores = &v->timeline};
  }
  VkResult r = vkQueueSubmit(v->queue, (uint32_t)n, v->infos, VK_NULL_HANDLE);
  if (r != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkQueueSubmit: %s (%d)", v->name, vk_name(r),
                         (int)r);
  for (size_t i = 0; i < n; i++)
    if (v->held.at[i].cb && !push(&v->flight, v->held.at[i]))
      return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  __atomic_store_n(&v->queued, v->held.at[n - 1].value, __ATOMIC_RELEASE);
  memmove(v->held.at, v->held.at + n, (v->held.n - n) * sizeof *v->held.at);
  v->held.n -= n;
  return RIG_EDGE_OK;
}

static int vk_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  vkdev *v = h;
  if (v->fault_nth && ++v->submits == v->fault_nth)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "injected fault at %" PRIu64, w->value);
  if (w->nwaits) /* no QUEUE_WAITS: core waits on the host (SUBMIT-3) */
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: its queue waits on no word", v->name);
  pthread_mutex_lock(&v->qlock);
  if (!__atomic_load_n(&v->taken, __ATOMIC_RELAXED))
    v->base = w->value - 1; /* the first value: 1 on the semaphore */
  if (!v->nspare || v->flight.n >= 64)
    recycle(v);
  VkCommandBuffer cb;
  int r = record(v, w, &cb, err);
  if (r == RIG_EDGE_OK && !push(&v->held, (held){w->value, cb}))
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  if (r == RIG_EDGE_OK) {
    __atomic_store_n(&v->taken, w->value, __ATOMIC_RELEASE);
    if (v->held.n >= v->k) /* TL-10: at most k values wait uncommitted */
      r = flush(v, w->value, err);
  }
  pthread_mutex_unlock(&v->qlock);
  return r; /* any failure loses the device (SUBMIT-30) */
}

static int vk_commit(void *h, uint64_t value, rig_edge_error *err) {
  vkdev *v = h;
  pthread_mutex_lock(&v->qlock);
  int r = flush(v, value, err);
  pthread_mutex_unlock(&v->qlock);
  return r;
}

/* ---- the timeline -------------------------------------------------------- */

/* Raises the value known reached to at least value. */
static void note_reached(vkdev *v, uint64_t value) {
  uint64_t old = __atomic_load_n(&v->reached, __ATOMIC_RELAXED);
  while (old < value && !__atomic_compare_exchange_n(&v->reached, &old, value, true,
                                                     __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    ;
}

/* The semaphore's counter; once it reached every value taken, the value
 * itself, without asking the device again. */
static int vk_signaled(void *h, uint64_t *out, rig_edge_error *err) {
  vkdev *v = h;
  if (v->stopped) {
    *out = v->final;
    return RIG_EDGE_OK;
  }
  uint64_t known = __atomic_load_n(&v->reached, __ATOMIC_ACQUIRE);
  if (known >= __atomic_load_n(&v->taken, __ATOMIC_ACQUIRE)) {
    *out = known;
    return RIG_EDGE_OK;
  }
  VkResult r = counter(v, out);
  if (r != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkGetSemaphoreCounterValue: %s", v->name,
                         vk_name(r));
  note_reached(v, *out);
  return RIG_EDGE_OK;
}

/* A wait commits what it waits for (TL-9), then waits on the semaphore. */
static int vk_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  vkdev *v = h;
  if (__atomic_load_n(&v->queued, __ATOMIC_ACQUIRE) < value) {
    pthread_mutex_lock(&v->qlock);
    int r = flush(v, value, err);
    pthread_mutex_unlock(&v->qlock);
    if (r != RIG_EDGE_OK)
      return r;
  }
  uint64_t raw = value > v->base ? value - v->base : 1;
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &v->timeline,
                            .pValues = &raw};
  VkResult r = v->WaitSemaphores(v->dev, &wi, (uint64_t)timeout_ms * 1000000u);
  if (r == VK_SUCCESS) {
    note_reached(v, value);
    return RIG_EDGE_OK;
  }
  if (r == VK_TIMEOUT)
    return RIG_EDGE_TIMEOUT;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkWaitSemaphores: %s", v->name, vk_name(r));
}

/* ---- facts, stop, destroy ------------------------------------------------ */

/* The arch: the driver's name, then the device's, as one lowercase token
 * ("llvmpipe-llvm-15-0-6-256-bits", "radv/amd-radeon-rx-7900-xtx-radv-navi31"). */
static void make_arch(vkdev *v, char *out, size_t n) {
  VkPhysicalDeviceDriverProperties dp = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &dp};
  vkGetPhysicalDeviceProperties2(v->phys, &p2);
  char raw[2 * VK_MAX_DRIVER_NAME_SIZE + 2];
  char drv[VK_MAX_DRIVER_NAME_SIZE], devn[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
  snprintf(drv, sizeof drv, "%s", dp.driverName);
  snprintf(devn, sizeof devn, "%s", v->props.deviceName);
  for (char *c = drv; *c; c++)
    *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
  for (char *c = devn; *c; c++)
    *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
  if (!drv[0] || strncmp(devn, drv, strlen(drv)) == 0)
    snprintf(raw, sizeof raw, "%s", devn);
  else
    snprintf(raw, sizeof raw, "%s/%s", drv, devn);
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
  if (!k)
    snprintf(out, n, "vulkan-%04x-%04x", v->props.vendorID, v->props.deviceID);
}

static void make_facts(vkdev *v) {
  rig_edge_facts *f = &v->facts;
  make_arch(v, f->arch, sizeof f->arch);
  if (v->pci) {
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &pci};
    vkGetPhysicalDeviceProperties2(v->phys, &p2);
    snprintf(f->bus, sizeof f->bus, "%04x:%02x:%02x.%x", pci.pciDomain & 0xffff,
             pci.pciBus & 0xff, pci.pciDevice & 0xff, pci.pciFunction & 0xf);
  }
  /* Every allocation is a buffer of its own, at the start of its memory:
   * it starts where the device's offsets for buffers of any use may. */
  const VkPhysicalDeviceLimits *l = &v->props.limits;
  uint64_t align = 16;
  uint64_t lim[] = {l->minStorageBufferOffsetAlignment, l->minUniformBufferOffsetAlignment,
                    l->minTexelBufferOffsetAlignment, l->nonCoherentAtomSize};
  for (size_t i = 0; i < sizeof lim / sizeof *lim; i++)
    if (lim[i] > align)
      align = lim[i];
  while (align & (align - 1))
    align &= align - 1; /* a power of two (each limit is one) */
  f->alignment = align;
  f->cache_bytes = 0;     /* Vulkan states none (PROP-33) */
  /* The budget: the device-local heaps, or what VK_EXT_memory_budget
   * gives this process of them. */
  VkPhysicalDeviceMemoryBudgetPropertiesEXT mb = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                           .pNext = v->budget_ext ? &mb : NULL};
  vkGetPhysicalDeviceMemoryProperties2(v->phys, &mp2);
  uint64_t budget = 0;
  for (uint32_t i = 0; i < v->memprops.memoryHeapCount; i++)
    if (v->memprops.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      budget += v->budget_ext && mb.heapBudget[i] ? mb.heapBudget[i] : v->memprops.memoryHeaps[i].size;
  f->budget = budget;
  f->hang_ms = 0;         /* copies and fills end; launches bring a bound */
  f->commit_k = v->k;
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_OWN_WORD | (v->import ? RIG_EDGE_MAPS_HOST : 0) |
             (v->device_host ? RIG_EDGE_HOST_ADDRESSES : 0);
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE; /* no launches yet */
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
}

static int vk_facts(void *h, rig_edge_facts *out, rig_edge_error *err) {
  vkdev *v = h;
  uint32_t size = out->size; /* an older core knows a shorter struct */
  memcpy(out, &v->facts, size < sizeof v->facts ? size : sizeof v->facts);
  out->size = size;
  return RIG_EDGE_OK;
}

/* Ends the queue: held work never runs (TL-8); what the queue holds ends;
 * then it reports the last value it took, run or not (STOP-1), and frees
 * everything but the memory still out and the device it lives on. */
static int vk_stop(void *h, rig_edge_error *err) {
  vkdev *v = h;
  if (v->stopped)
    return RIG_EDGE_OK;
  pthread_mutex_lock(&v->qlock);
  for (size_t i = 0; i < v->held.n; i++)
    if (v->held.at[i].cb)
      put_spare(v, v->held.at[i].cb);
  v->held.n = 0;
  (void)vkQueueWaitIdle(v->queue); /* a lost device returns at once */
  uint64_t done = 0;
  if (counter(v, &done) != VK_SUCCESS)
    done = 0;
  v->final = done > v->taken ? done : v->taken;
  for (size_t i = 0; i < v->flight.n; i++)
    put_spare(v, v->flight.at[i].cb);
  v->flight.n = 0;
  if (v->nspare)
    vkFreeCommandBuffers(v->dev, v->pool, (uint32_t)v->nspare, v->spare);
  v->nspare = 0;
  vkDestroyCommandPool(v->dev, v->pool, NULL);
  v->pool = VK_NULL_HANDLE;
  free_objects(v, &v->scratch);
  __atomic_store_n(&v->stopped, true, __ATOMIC_RELEASE);
  vkDestroySemaphore(v->dev, v->timeline, NULL);
  v->timeline = VK_NULL_HANDLE;
  pthread_mutex_unlock(&v->qlock);
  /* Host memory it maps goes back now: nothing runs on it any more, and
   * core unmaps nothing of a stopped device. */
  pthread_mutex_lock(&v->mlock);
  for (vkmem *m = v->mems; m; m = m->next)
    if (m->imported)
      free_objects(v, m);
  pthread_mutex_unlock(&v->mlock);
  return RIG_EDGE_OK;
}

static int vk_unmap(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  return vk_release(h, a, err);
}

static void vk_destroy(void *h) {
  vkdev *v = h;
  rig_edge_error err;
  if (v->dev) {
    if (v->opened && !v->stopped)
      vk_stop(v, &err);
    while (v->mems) { /* what core never gave back: its mappings after the stop */
      vkmem *m = v->mems;
      v->mems = m->next;
      free_objects(v, m);
      free(m);
    }
    free_objects(v, &v->scratch);
    if (v->timeline)
      vkDestroySemaphore(v->dev, v->timeline, NULL);
    if (v->pool)
      vkDestroyCommandPool(v->dev, v->pool, NULL);
    vkDestroyDevice(v->dev, NULL);
  }
  if (v->messenger)
    v->DestroyMessenger(v->inst, v->messenger, NULL);
  if (v->inst)
    vkDestroyInstance(v->inst, NULL);
  free(v->held.at);
  free(v->flight.at);
  free(v->spare);
  free(v->infos);
  free(v->tinfos);
  free(v->values);
  pthread_mutex_destroy(&v->qlock);
  pthread_mutex_destroy(&v->mlock);
  free(v);
}

static int vk_open(const char *args, void **out, rig_edge_error *err) {
  vkdev *v = calloc(1, sizeof *v);
  if (!v)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "vulkan: out of memory");
  pthread_mutex_init(&v->qlock, NULL);
  pthread_mutex_init(&v->mlock, NULL);
  uint32_t index;
  snprintf(v->name, sizeof v->name, "vulkan:%.20s", args);
  if (!parse(v, args, &index)) {
    rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "vulkan: '%s' is not N[,validate=0|1|count][,k=K][,host=0|1]"
                  "[,fault_nth=N]", args);
    vk_destroy(v);
    return RIG_EDGE_UNSUPPORTED;
  }
  snprintf(v->name, sizeof v->name, "vulkan:%u", index);
  v->validation.size = sizeof v->validation;
  int r = make_instance(v, err);
  if (r == RIG_EDGE_OK)
    r = pick_device(v, index, err);
  if (r == RIG_EDGE_OK) {
    vkGetPhysicalDeviceMemoryProperties(v->phys, &v->memprops);
    /* Unified memory: no device-local type the host cannot see, and
     * every device-local one coherent. */
    v->uma = true;
    for (uint32_t i = 0; i < v->memprops.memoryTypeCount; i++) {
      VkMemoryPropertyFlags f = v->memprops.memoryTypes[i].propertyFlags;
      if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
          (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) || !(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)))
        v->uma = false;
    }
    v->device_host = v->uma && !v->no_host;
    r = make_device(v, err);
  }
  if (r == RIG_EDGE_OK && v->import) {
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT hp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &hp};
    vkGetPhysicalDeviceProperties2(v->phys, &p2);
    v->import_align = hp.minImportedHostPointerAlignment ? hp.minImportedHostPointerAlignment : 4096;
  }
  if (r == RIG_EDGE_OK) {
    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &m3};
    vkGetPhysicalDeviceProperties2(v->phys, &p2);
    v->max_alloc = m3.maxMemoryAllocationSize ? m3.maxMemoryAllocationSize : UINT64_MAX;
    r = make_buffer(v, &v->scratch, SCRATCH_BYTES, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                    NULL, 0, NULL, err);
    if (r != RIG_EDGE_OK)
      r = RIG_EDGE_UNAVAILABLE;
  }
  if (r != RIG_EDGE_OK) {
    vk_destroy(v);
    return r;
  }
  make_facts(v);
  v->opened = true;
  *out = v;
  return RIG_EDGE_OK;
}

static const void *vk_capability(void *h, const char *key) {
  vkdev *v = h;
  return strcmp(key, RIG_VULKAN_VALIDATION) == 0 ? &v->validation : NULL;
}

static const rig_edge_driver vulkan_driver = {
    .abi_major = RIG_EDGE_ABI_MAJOR,
    .abi_minor = RIG_EDGE_ABI_MINOR,
    .size = sizeof(rig_edge_driver),
    .name = "vulkan",
    .open = vk_open,
    .facts = vk_facts,
    .stop = vk_stop,
    .destroy = vk_destroy,
    .signaled = vk_signaled,
    .wait = vk_wait,
    .submit = vk_submit,
    .commit = vk_commit,
    .allocate = vk_allocate,
    .release = vk_release,
    .map = vk_map,
    .unmap = vk_unmap,
    .capability = vk_capability,
};

RIG_EDGE_DRIVER(vulkan_driver)
