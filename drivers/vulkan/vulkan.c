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
 *   share=0             a VkInstance and VkDevice of its own (default: the
 *                       one shared by the opens of its physical device and
 *                       validation setting)
 *   fault_nth=N         its N-th submit fails as a lost device's would, with
 *                       "injected fault at V" (tests of loss)
 *   lose_nth=N          its N-th submit fails as VK_ERROR_DEVICE_LOST, which
 *                       loses the shared VkDevice and every open on it
 *                       (LOSS-14; tests)
 *
 * One VkInstance, VkDevice and queue per physical device and validation
 * setting, shared by its opens (refcounted; the queue under a lock of the
 * VkDevice's); one timeline semaphore per open: work of value v signals v.
 * An open's queue waits on another open's point through map_peer (edge ABI
 * 1.2) where both share the VkDevice: the batch waits on the peer's
 * semaphore (SUBMIT-2); elsewhere core waits on the host (SUBMIT-3).
 * The driver keeps its word itself (OWN_WORD): signaled() reads the
 * semaphore's counter, wait() is vkWaitSemaphores. Submit records a
 * command buffer and holds it; commit, a wait, or k held values send the
 * held ones to the queue in one vkQueueSubmit, one batch per value.
 *
 * Code: an image is a SPIR-V module; resolve finds a GLCompute entry point
 * and a launch binds a compute pipeline of it, specialized for the run's
 * threads of a group, pushes the parameter block as push constants (a block
 * over 128 bytes goes into a buffer whose device address is pushed) and
 * dispatches the groups (drivers/vulkan/README.md, "Launches").
 *
 * k (commit): 8 unless opened with k=K.
 * Per open: a semaphore, a 64 KiB scratch buffer, a command pool and one
 * record of about 1 KiB; gone at destroy. Per shared VkDevice: an instance,
 * the device and a record; gone at the last open's destroy. From the
 * first resolve: a pipeline layout and a 2 MiB buffer for large parameter
 * blocks.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include <rig/edge.h>

#include "rig-vulkan.h"

#define DEFAULT_K 8
#define SCRATCH_BYTES 65536u /* where unaligned fills stage their bytes */
#define SLOT 8u              /* scratch bytes per unaligned fill */
#define PUSH_BYTES 128u      /* push constants of every pipeline: Vulkan's least
                                maxPushConstantsSize, so a kernel's layout is the
                                same on every device */
#define PARAMS_BYTES (2u << 20) /* large parameter blocks of one command buffer */
#define PARAMS_ALIGN 256u    /* each large block's start in it */
#define MAX_DISPATCHES 65536u /* dispatches one launch may split into */

/* SPIR-V */
#define SPV_MAGIC 0x07230203u
enum {
  SPV_OP_MEMORY_MODEL = 14, SPV_OP_ENTRY_POINT = 15, SPV_OP_EXECUTION_MODE = 16,
  SPV_OP_CAPABILITY = 17, SPV_OP_EXECUTION_MODE_ID = 331, SPV_OP_DECORATE = 71, SPV_OP_CONSTANT = 43,
  SPV_OP_CONSTANT_COMPOSITE = 44, SPV_OP_SPEC_CONSTANT = 50,
  SPV_OP_SPEC_CONSTANT_COMPOSITE = 51,
  SPV_MODEL_GLCOMPUTE = 5, SPV_MODE_LOCAL_SIZE = 17, SPV_MODE_LOCAL_SIZE_ID = 38,
  SPV_DECORATION_SPEC_ID = 1, SPV_DECORATION_BUILTIN = 11, SPV_BUILTIN_WORKGROUP_SIZE = 25,
};

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

/* The waits of a value's batch on other devices' timeline semaphores of
 * the same VkDevice (map_peer): one block, freed once the batch is on the
 * queue or dropped. */
typedef struct waitset {
  uint32_t n;
  VkSemaphore *sems;
  uint64_t *values;             /* the semaphores' own values */
  VkPipelineStageFlags *stages; /* ALL_COMMANDS: the batch waits whole */
} waitset;

/* A value's work: its command buffer, or none for work of no bytes;
 * cached: the cb is the cache's, which keeps it past its run; ws: its
 * waits, or NULL. */
typedef struct held {
  uint64_t value;
  VkCommandBuffer cb;
  bool cached;
  waitset *ws;
} held;

/* A command buffer kept for work that comes again, as each run of one
 * submission does: recorded once, submitted each time its key (the work's
 * parts as recorded: buffers, offsets, patterns, functions, grids and
 * parameter bytes) comes back, while no memory or code of the device went
 * since (gen) and its last run is done (last). */
#define CACHED_CBS 4
typedef struct cached {
  VkCommandBuffer cb;
  uint64_t gen, last;
  uint8_t *key;
  size_t nkey, capkey;
} cached;

typedef struct vec {
  held *at;
  size_t n, cap;
} vec;

/* A pipeline of a function for one group shape. */
typedef struct vkpipe {
  uint32_t threads[3];
  VkPipeline pipe;
} vkpipe;

struct vkimage;

/* A resolved entry point: each axis of its group either fixed by the
 * module's LocalSize or a specialization constant (local_size_x_id ...). */
typedef struct vkfunc {
  struct vkimage *image;
  char *name;
  uint32_t fixed[3];        /* an axis's LocalSize where fixed, else 0 */
  uint32_t spec[3];         /* an axis's SpecId where it specializes, else UINT32_MAX */
  vkpipe *pipes;            /* made at the first launch of each shape (submit) */
  size_t npipes, cappipes;
  struct vkfunc *next;
} vkfunc;

/* A loaded SPIR-V module, and a copy of its words for resolve to read. */
typedef struct vkimage {
  VkShaderModule module;
  uint32_t *words;
  size_t nwords;
  vkfunc *funcs;
  bool dead;                /* its Vulkan objects went at the stop */
  struct vkimage *prev, *next;
} vkimage;

/* A VkDevice and its one queue, shared by every open of one physical
 * device with one validation setting (README, "Sharing a VkDevice"):
 * listed while open, refcounted under shared_lock, gone at the last
 * destroy. Every vkQueueSubmit and vkQueueWaitIdle holds qlock: the queue
 * is externally synchronized. */
typedef struct vkshared {
  struct vkshared *next;
  uint32_t index;
  int validate;
  pid_t pid;                /* the process that made it: a forked child's
                               copy of the list names the parent's devices */
  bool listed;              /* shareable: in shared_list */
  uint32_t refs;            /* opens on it (shared_lock) */
  char name[32];
  VkInstance inst;
  VkDebugUtilsMessengerEXT messenger;
  PFN_vkDestroyDebugUtilsMessengerEXT DestroyMessenger;
  VkDevice dev;
  VkQueue queue;
  pthread_mutex_t qlock;
  int lost;                 /* LOST_*: VK_ERROR_DEVICE_LOST seen by an open (atomic) */
  char lost_by[32];         /* the open that saw it; set before lost */
  rig_vulkan_validation validation;
} vkshared;

typedef struct vkdev {
  char name[32];
  vkshared *sh;             /* its VkDevice, queue, instance: the rest is its own */
  bool share;               /* share=0: a VkDevice of its own, never a peer's */
  VkInstance inst;          /* sh's */
  VkPhysicalDevice phys;
  VkDevice dev;             /* sh's */
  VkQueue queue;            /* sh's: submit under sh->qlock */
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

  /* the queue: held work, work on the queue, spare command buffers */
  pthread_mutex_t qlock;
  vec held, flight;
  cached cache[CACHED_CBS];
  uint64_t gen;             /* counts each release of memory or code (atomic) */
  uint8_t *key;             /* the key of the work record() takes */
  size_t nkey, capkey;
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
  uint64_t fault_nth, lose_nth, submits;
  uint32_t maps;            /* other opens' mappings of its semaphore (qlock):
                               it outlives the stop while any is out */
  bool opened, stopped;
  uint64_t final;           /* after the stop: the last value it reports */

  /* memory */
  pthread_mutex_t mlock;
  vkmem *mems;

  /* code: images (ilock), the one pipeline layout and the buffer of large
   * parameter blocks, both made at the first resolve */
  pthread_mutex_t ilock;
  vkimage *images;
  VkPipelineLayout layout;
  vkmem params;
  uint64_t params_address;
  bool launches;            /* a compute queue and buffer device addresses */
  VkPhysicalDeviceFeatures features;         /* enabled: what modules may need */
  VkPhysicalDeviceVulkan12Features features12;
  VkPipelineStageFlags part_stages; /* what parts of one submission run in */
  VkAccessFlags part_writes, part_access;

  /* validation */
  int validate;             /* 0, 1 (abort), 2 (count) */
  bool no_host;             /* host=0: the host addresses no Device memory */
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

/* LOSS-14: VK_ERROR_DEVICE_LOST loses the VkDevice, and so every open
 * that shares it, not only the one whose call saw it. The first to see it
 * names itself in the others' messages. */
enum { LOST_NONE, LOST_NAMING, LOST_SET };

static void mark_lost(vkdev *v) {
  vkshared *sh = v->sh;
  int none = LOST_NONE;
  if (!sh || !__atomic_compare_exchange_n(&sh->lost, &none, LOST_NAMING, false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return;
  snprintf(sh->lost_by, sizeof sh->lost_by, "%s", v->name);
  __atomic_store_n(&sh->lost, LOST_SET, __ATOMIC_RELEASE);
}

/* RIG_EDGE_FAULT where the shared VkDevice is lost (LOSS-14), else OK:
 * an open whose own calls still succeed (lavapipe, or an injected loss)
 * is lost with the one that saw it. */
static int check_lost(const vkdev *v, rig_edge_error *err) {
  if (!v->sh || __atomic_load_n(&v->sh->lost, __ATOMIC_ACQUIRE) != LOST_SET)
    return RIG_EDGE_OK;
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: its VkDevice is lost (VK_ERROR_DEVICE_LOST "
                       "at %s, which shares it)", v->name, v->sh->lost_by);
}

/* A failed call on the queue or the semaphore: a fault, which a lost
 * device's makes every sharer's (LOSS-14). */
static int vk_fail_lost(vkdev *v, rig_edge_error *err, VkResult r, const char *what) {
  if (r == VK_ERROR_DEVICE_LOST)
    mark_lost(v);
  return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: %s: %s (%d)", v->name, what, vk_name(r), (int)r);
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  vkshared *v = user;
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

/* The validation setting of $RIG_VULKAN_VALIDATE: unset or empty is 0;
 * else it must be 0, 1 or count, as validate= (the same parser). */
static int validate_of_env(int *out, rig_edge_error *err) {
  const char *env = secure_getenv("RIG_VULKAN_VALIDATE"); /* ignored when setuid */
  rig_edge_arg key = {.key = "validate", .type = RIG_EDGE_ARG_WORD, .words = "0|1|count"};
  char entry[32];
  *out = 0;
  if (!env || !*env)
    return RIG_EDGE_OK;
  if (strlen(env) > 8) /* longer than any word: refused without a cut */
    env = "(too long)";
  snprintf(entry, sizeof entry, ",validate=%s", env);
  int r = rig_edge_args_parse("vulkan: RIG_VULKAN_VALIDATE", entry, &key, 1, NULL, err);
  *out = (int)key.value;
  return r;
}

/* Parses "N[,key=value...]" with librig-edge's parser: N a device index
 * (empty: 0), then the keys of the README's table, strictly. */
static int parse(vkdev *v, const char *args, uint32_t *index, rig_edge_error *err) {
  enum { VALIDATE, K, HOST, SHARE, FAULT_NTH, LOSE_NTH, NKEYS };
  rig_edge_arg keys[NKEYS] = {
      [VALIDATE] = {.key = "validate", .type = RIG_EDGE_ARG_WORD, .words = "0|1|count"},
      [K] = {.key = "k", .type = RIG_EDGE_ARG_NUMBER, .min = 1, .max = UINT32_MAX,
             .value = DEFAULT_K},
      [HOST] = {.key = "host", .type = RIG_EDGE_ARG_BOOL, .value = 1},
      [SHARE] = {.key = "share", .type = RIG_EDGE_ARG_BOOL, .value = 1},
      [FAULT_NTH] = {.key = "fault_nth", .type = RIG_EDGE_ARG_NUMBER, .max = UINT64_MAX},
      [LOSE_NTH] = {.key = "lose_nth", .type = RIG_EDGE_ARG_NUMBER, .max = UINT64_MAX},
  };
  size_t head;
  uint64_t n = 0;
  *index = 0;
  int r = rig_edge_args_parse("vulkan", args, keys, NKEYS, &head, err);
  if (r != RIG_EDGE_OK)
    return r;
  if (head && !rig_edge_args_number(args, head, 0, 255, &n))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "vulkan: '%.*s' is not N, a device's index (0..255)", (int)head, args);
  if (!keys[VALIDATE].given && (r = validate_of_env(&v->validate, err)) != RIG_EDGE_OK)
    return r;
  if (keys[VALIDATE].given)
    v->validate = (int)keys[VALIDATE].value;
  *index = (uint32_t)n;
  v->k = (uint32_t)keys[K].value;
  v->no_host = !keys[HOST].value;
  v->share = keys[SHARE].value;
  v->fault_nth = keys[FAULT_NTH].value;
  v->lose_nth = keys[LOSE_NTH].value;
  return RIG_EDGE_OK;
}

static int make_instance(vkshared *v, rig_edge_error *err) {
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
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                          .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
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
  /* A compute queue, else any that copies (and no launches). */
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
    if (qf[i].queueCount && (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT))
      family = i;
  /* Launches: a queue that computes, and buffer device addresses for refs. */
  v->launches = family != UINT32_MAX && v->bda;
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
  /* The features kernels may use where the device has them: wider and
   * narrower integers and floats, their storage, the scalar layout and the
   * memory model; nothing that costs what no kernel asks for (robust
   * buffer access, capture and replay). */
  VkPhysicalDeviceVulkan12Features want = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      .timelineSemaphore = VK_TRUE,
      .bufferDeviceAddress = v->bda ? VK_TRUE : VK_FALSE,
      .storageBuffer8BitAccess = f12.storageBuffer8BitAccess,
      .uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess,
      .storagePushConstant8 = f12.storagePushConstant8,
      .shaderBufferInt64Atomics = f12.shaderBufferInt64Atomics,
      .shaderSharedInt64Atomics = f12.shaderSharedInt64Atomics,
      .shaderFloat16 = f12.shaderFloat16,
      .shaderInt8 = f12.shaderInt8,
      .scalarBlockLayout = f12.scalarBlockLayout,
      .vulkanMemoryModel = f12.vulkanMemoryModel,
      .vulkanMemoryModelDeviceScope = f12.vulkanMemoryModelDeviceScope,
      .shaderSubgroupExtendedTypes = f12.shaderSubgroupExtendedTypes};
  VkPhysicalDeviceVulkan11Features want11 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
      .pNext = &want,
      .storageBuffer16BitAccess = f11.storageBuffer16BitAccess,
      .uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess,
      .storagePushConstant16 = f11.storagePushConstant16,
      .variablePointersStorageBuffer = f11.variablePointersStorageBuffer,
      .variablePointers = f11.variablePointers};
  VkPhysicalDeviceFeatures2 want2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
      .pNext = &want11,
      .features = {.shaderInt64 = f2.features.shaderInt64,
                   .shaderInt16 = f2.features.shaderInt16,
                   .shaderFloat64 = f2.features.shaderFloat64}};
  v->features = want2.features;
  v->features12 = want;
  v->features12.pNext = NULL;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                            .pNext = &want2,
                            .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci,
                            .enabledExtensionCount = nexts,
                            .ppEnabledExtensionNames = exts};
  /* The first open of the shared VkDevice makes it; a later one asks the
   * same questions of the same physical device, gets the same answers,
   * and takes it (shared_lock held). */
  VkResult r = VK_SUCCESS;
  if (!v->sh->dev && (r = vkCreateDevice(v->phys, &dci, NULL, &v->sh->dev)) != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateDevice: %s", v->name, vk_name(r));
  if (!v->sh->queue)
    vkGetDeviceQueue(v->sh->dev, family, 0, &v->sh->queue);
  v->dev = v->sh->dev;
  v->queue = v->sh->queue;
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
  /* Barriers between the parts of one submission: copies and fills, and
   * launches where the queue computes. */
  v->part_stages = VK_PIPELINE_STAGE_TRANSFER_BIT |
                   (v->launches ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT : 0);
  v->part_writes = VK_ACCESS_TRANSFER_WRITE_BIT | (v->launches ? VK_ACCESS_SHADER_WRITE_BIT : 0);
  v->part_access = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                   (v->launches ? VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                      VK_ACCESS_UNIFORM_READ_BIT
                                : 0);

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

/* A command buffer that names an object is invalid once the object goes,
 * even where a new one takes its handle: the cache's entries recorded
 * before go stale. Counted before the object goes, so that no record can
 * see its handle reused under the old count. */
static void objects_go(vkdev *v) { __atomic_fetch_add(&v->gen, 1, __ATOMIC_ACQ_REL); }

static int vk_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  vkdev *v = h;
  vkmem *m = a->handle;
  objects_go(v);
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

/* ---- code: SPIR-V images, entry points, pipelines ------------------------- */

/* The capabilities a module declares that need a feature the device may
 * lack: refused at load with the feature's name, not at the first launch. */
static const char *missing_feature(const vkdev *v, uint32_t cap) {
  switch (cap) {
  case 9: /* Float16 */
    return v->features12.shaderFloat16 ? NULL : "shaderFloat16";
  case 10: /* Float64 */
    return v->features.shaderFloat64 ? NULL : "shaderFloat64";
  case 11: /* Int64 */
    return v->features.shaderInt64 ? NULL : "shaderInt64";
  case 22: /* Int16 */
    return v->features.shaderInt16 ? NULL : "shaderInt16";
  case 39: /* Int8 */
    return v->features12.shaderInt8 ? NULL : "shaderInt8";
  case 5345: /* VulkanMemoryModel */
    return v->features12.vulkanMemoryModel ? NULL : "vulkanMemoryModel";
  default:
    return NULL;
  }
}

/* Checks a module's header and that its instructions tile its words.
 * Returns NULL, or why it is no SPIR-V module this device takes. */
static const char *check_module(const vkdev *v, const uint32_t *w, size_t n, char *why,
                                size_t whyn) {
  if (n < 5 || w[0] != SPV_MAGIC) {
    snprintf(why, whyn, "not a SPIR-V module (%s)",
             n < 5 ? "shorter than its header"
             : w[0] == __builtin_bswap32(SPV_MAGIC) ? "words of the other byte order"
                                                    : "magic is not 0x07230203");
    return why;
  }
  bool model = false, entries = false;
  for (size_t i = 5; i < n;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    if (count == 0 || count > n - i) {
      snprintf(why, whyn, "malformed SPIR-V: instruction at word %zu runs past the module", i);
      return why;
    }
    const char *f = op == SPV_OP_CAPABILITY && count >= 2 ? missing_feature(v, w[i + 1]) : NULL;
    if (f) {
      snprintf(why, whyn, "the module needs the %s feature, which %.64s lacks", f,
               v->props.deviceName);
      return why;
    }
    model |= op == SPV_OP_MEMORY_MODEL;
    entries |= op == SPV_OP_ENTRY_POINT;
    i += count;
  }
  if (!model || !entries) {
    snprintf(why, whyn, "malformed SPIR-V: no %s", model ? "OpEntryPoint" : "OpMemoryModel");
    return why;
  }
  return NULL;
}

static int vk_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
                   rig_edge_error *err) {
  vkdev *v = h;
  char why[200];
  if (!v->launches)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s runs no code (%s)", v->name,
                         v->bda ? "no queue computes" : "no buffer device addresses");
  if (n % 4)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "not a SPIR-V module: %zu bytes is no whole number of words", n);
  uint32_t *words = malloc(n ? n : 4);
  if (!words)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  if (n)
    memcpy(words, bytes, n); /* aligned, and kept for resolve */
  if (check_module(v, words, n / 4, why, sizeof why)) {
    free(words);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s", why);
  }
  vkimage *im = calloc(1, sizeof *im);
  if (!im) {
    free(words);
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  }
  VkShaderModuleCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 .codeSize = n,
                                 .pCode = words};
  VkResult r = vkCreateShaderModule(v->dev, &ci, NULL, &im->module);
  if (r != VK_SUCCESS) {
    free(words);
    free(im);
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
      return vk_fail(err, r, "vkCreateShaderModule", v->name);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateShaderModule: %s", v->name,
                         vk_name(r));
  }
  im->words = words;
  im->nwords = n / 4;
  pthread_mutex_lock(&v->ilock);
  im->next = v->images;
  if (v->images)
    v->images->prev = im;
  v->images = im;
  pthread_mutex_unlock(&v->ilock);
  *out_image = im;
  *out_code_bytes = n;
  return RIG_EDGE_OK;
}

/* The instruction that defines id (a constant or a composite), or NULL. */
static const uint32_t *definition(const vkimage *im, uint32_t id) {
  const uint32_t *w = im->words;
  for (size_t i = 5; i < im->nwords; i += w[i] >> 16) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    if ((op == SPV_OP_CONSTANT || op == SPV_OP_SPEC_CONSTANT || op == SPV_OP_CONSTANT_COMPOSITE ||
         op == SPV_OP_SPEC_CONSTANT_COMPOSITE) && count >= 4 && w[i + 2] == id)
      return w + i;
  }
  return NULL;
}

/* The SpecId that decorates id, or UINT32_MAX. */
static uint32_t spec_id_of(const vkimage *im, uint32_t id) {
  const uint32_t *w = im->words;
  for (size_t i = 5; i < im->nwords; i += w[i] >> 16)
    if ((w[i] & 0xffff) == SPV_OP_DECORATE && (w[i] >> 16) >= 4 && w[i + 1] == id &&
        w[i + 2] == SPV_DECORATION_SPEC_ID)
      return w[i + 3];
  return UINT32_MAX;
}

/* Axis a of f's group from the 32-bit constant id: a specialization
 * constant with a SpecId, or a fixed value. */
static bool axis_from(const vkimage *im, uint32_t id, vkfunc *f, int a) {
  const uint32_t *x = definition(im, id);
  if (!x || ((x[0] & 0xffff) != SPV_OP_CONSTANT && (x[0] & 0xffff) != SPV_OP_SPEC_CONSTANT))
    return false;
  uint32_t spec = (x[0] & 0xffff) == SPV_OP_SPEC_CONSTANT ? spec_id_of(im, id) : UINT32_MAX;
  f->spec[a] = spec;
  f->fixed[a] = spec == UINT32_MAX ? x[3] : 0;
  return true;
}

/* Finds the GLCompute entry point name in im and its group's axes: the
 * WorkgroupSize built-in where the module decorates one (it overrides the
 * rest), else a LocalSizeId, else the LocalSize. glslang's
 * local_size_x_id = 0 makes the built-in a composite of specialization
 * constants with SpecIds. Returns 1 found, 0 none, -1 for an entry whose
 * group size it cannot read. Allocates nothing; load checked the words. */
static int parse_entry(const vkimage *im, const char *name, vkfunc *f) {
  const uint32_t *w = im->words;
  size_t n = im->nwords;
  uint32_t entry = UINT32_MAX, wgs = UINT32_MAX, ids[3] = {0, 0, 0}, literal[3] = {0, 0, 0};
  bool has_literal = false, has_ids = false;
  for (size_t i = 5; i < n; i += w[i] >> 16) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    const uint32_t *x = w + i;
    if (op == SPV_OP_ENTRY_POINT && count >= 4 && x[1] == SPV_MODEL_GLCOMPUTE) {
      const char *str = (const char *)(x + 3);
      size_t room = (count - 3) * 4;
      if (strnlen(str, room) < room && strcmp(str, name) == 0)
        entry = x[2];
    } else if (op == SPV_OP_DECORATE && count >= 4 && x[2] == SPV_DECORATION_BUILTIN &&
               x[3] == SPV_BUILTIN_WORKGROUP_SIZE)
      wgs = x[1];
  }
  if (entry == UINT32_MAX)
    return 0; /* None */
  for (size_t i = 5; i < n; i += w[i] >> 16) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    const uint32_t *x = w + i;
    if (op == SPV_OP_EXECUTION_MODE && count >= 6 && x[1] == entry && x[2] == SPV_MODE_LOCAL_SIZE) {
      memcpy(literal, x + 3, sizeof literal);
      has_literal = true;
    } else if (op == SPV_OP_EXECUTION_MODE_ID && count >= 6 && x[1] == entry &&
               x[2] == SPV_MODE_LOCAL_SIZE_ID) {
      memcpy(ids, x + 3, sizeof ids);
      has_ids = true;
    }
  }
  const uint32_t *composite = wgs != UINT32_MAX ? definition(im, wgs) : NULL;
  if (composite && (composite[0] >> 16) >= 6 &&
      ((composite[0] & 0xffff) == SPV_OP_CONSTANT_COMPOSITE ||
       (composite[0] & 0xffff) == SPV_OP_SPEC_CONSTANT_COMPOSITE)) {
    memcpy(ids, composite + 3, sizeof ids);
    has_ids = true;
  }
  if (has_ids) {
    for (int a = 0; a < 3; a++)
      if (!axis_from(im, ids[a], f, a))
        return -1;
    return 1;
  }
  if (!has_literal)
    return -1;
  for (int a = 0; a < 3; a++) {
    f->fixed[a] = literal[a];
    f->spec[a] = UINT32_MAX;
  }
  return 1;
}

/* The pipeline layout every pipeline shares (PUSH_BYTES of push constants,
 * no descriptors) and the buffer of large parameter blocks: made at the
 * first resolve, so that no submit makes them. ilock held. */
static int make_code_objects(vkdev *v, rig_edge_error *err) {
  if (v->layout)
    return RIG_EDGE_OK;
  int r = make_buffer(v, &v->params, PARAMS_BYTES, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, NULL, 0, NULL, err);
  if (r != RIG_EDGE_OK)
    return r == RIG_EDGE_NO_ROOM ? r : RIG_EDGE_UNSUPPORTED;
  v->params_address = address_of(v, &v->params);
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, PUSH_BYTES};
  VkPipelineLayoutCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &range};
  VkResult vr = vkCreatePipelineLayout(v->dev, &ci, NULL, &v->layout);
  if (vr != VK_SUCCESS) {
    free_objects(v, &v->params);
    v->layout = VK_NULL_HANDLE;
    return vk_fail(err, vr, "vkCreatePipelineLayout", v->name);
  }
  return RIG_EDGE_OK;
}

static int vk_resolve(void *h, void *image, const char *name, void **out_function,
                      rig_edge_error *err) {
  vkdev *v = h;
  vkimage *im = image;
  vkfunc *f = calloc(1, sizeof *f);
  if (!f || !(f->name = strdup(name))) {
    free(f);
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  }
  int found = parse_entry(im, name, f);
  if (found <= 0) {
    free(f->name);
    free(f);
    *out_function = NULL; /* None */
    return found == 0 ? RIG_EDGE_OK
                      : rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: entry point %s: its group "
                                      "size is neither a LocalSize nor constants", v->name, name);
  }
  pthread_mutex_lock(&v->ilock);
  int r = make_code_objects(v, err);
  if (r == RIG_EDGE_OK) {
    f->image = im;
    f->next = im->funcs;
    im->funcs = f;
  }
  pthread_mutex_unlock(&v->ilock);
  if (r != RIG_EDGE_OK) {
    free(f->name);
    free(f);
    return r;
  }
  *out_function = f;
  return RIG_EDGE_OK;
}

/* Destroys im's pipelines and module; the work that used them is done. */
static void image_objects_free(vkdev *v, vkimage *im) {
  for (vkfunc *f = im->funcs; f; f = f->next) {
    for (size_t i = 0; i < f->npipes; i++)
      vkDestroyPipeline(v->dev, f->pipes[i].pipe, NULL);
    f->npipes = 0;
  }
  if (im->module)
    vkDestroyShaderModule(v->dev, im->module, NULL);
  im->module = VK_NULL_HANDLE;
  im->dead = true;
}

static void image_free(vkdev *v, vkimage *im) {
  if (!im->dead)
    image_objects_free(v, im);
  for (vkfunc *f = im->funcs, *next; f; f = next) {
    next = f->next;
    free(f->pipes);
    free(f->name);
    free(f);
  }
  free(im->words);
  free(im);
}

/* Core unloads an image once the work submitted until its release is done
 * (RUN-8); after the stop, which destroyed its objects, it only frees. */
static int vk_unload(void *h, void *image, rig_edge_error *err) {
  vkdev *v = h;
  vkimage *im = image;
  objects_go(v); /* its pipelines */
  pthread_mutex_lock(&v->ilock);
  if (im->prev)
    im->prev->next = im->next;
  else if (v->images == im)
    v->images = im->next;
  if (im->next)
    im->next->prev = im->prev;
  pthread_mutex_unlock(&v->ilock);
  image_free(v, im);
  return RIG_EDGE_OK;
}

/* Whether f can run groups of t threads here: each fixed axis is t's, and
 * the group is within the device's limits. */
static int check_threads(const vkdev *v, const vkfunc *f, const uint64_t t[3], rig_edge_error *err) {
  const VkPhysicalDeviceLimits *l = &v->props.limits;
  for (int a = 0; a < 3; a++) {
    if (f->spec[a] == UINT32_MAX && t[a] != f->fixed[a])
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: %s has a fixed LocalSize %ux%ux%u; the launch asks groups of "
                           "%llux%llux%llu threads (declare local_size_x_id/y_id/z_id)",
                           v->name, f->name, f->fixed[0] ? f->fixed[0] : 1u,
                           f->fixed[1] ? f->fixed[1] : 1u, f->fixed[2] ? f->fixed[2] : 1u,
                           (unsigned long long)t[0], (unsigned long long)t[1],
                           (unsigned long long)t[2]);
    if (t[a] > l->maxComputeWorkGroupSize[a])
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: %s: %llu threads on axis %d; the device runs at most %u",
                           v->name, f->name, (unsigned long long)t[a], a,
                           l->maxComputeWorkGroupSize[a]);
  }
  if (t[0] * t[1] * t[2] > l->maxComputeWorkGroupInvocations)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s: groups of %llu threads; the device runs at most %u", v->name,
                         f->name, (unsigned long long)(t[0] * t[1] * t[2]),
                         l->maxComputeWorkGroupInvocations);
  return RIG_EDGE_OK;
}

/* f's pipeline for groups of t threads: made at the first launch of that
 * shape, with t as the specialization constants of f's group axes, and
 * kept until the image goes. qlock held. */
static int pipeline_for(vkdev *v, vkfunc *f, const uint64_t t[3], VkPipeline *out,
                        rig_edge_error *err) {
  for (size_t i = 0; i < f->npipes; i++)
    if (f->pipes[i].threads[0] == t[0] && f->pipes[i].threads[1] == t[1] &&
        f->pipes[i].threads[2] == t[2]) {
      *out = f->pipes[i].pipe;
      return RIG_EDGE_OK;
    }
  if (f->npipes == f->cappipes) { /* check_launch checked t */
    size_t cap = f->cappipes ? 2 * f->cappipes : 4;
    vkpipe *p = realloc(f->pipes, cap * sizeof *p);
    if (!p)
      return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
    f->pipes = p;
    f->cappipes = cap;
  }
  uint32_t data[3] = {(uint32_t)t[0], (uint32_t)t[1], (uint32_t)t[2]};
  VkSpecializationMapEntry map[3];
  uint32_t nmap = 0;
  for (uint32_t a = 0; a < 3; a++)
    if (f->spec[a] != UINT32_MAX)
      map[nmap++] = (VkSpecializationMapEntry){f->spec[a], 4 * a, 4};
  VkSpecializationInfo si = {nmap, map, sizeof data, data};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = f->image->module,
                .pName = f->name,
                .pSpecializationInfo = nmap ? &si : NULL},
      .layout = v->layout};
  VkPipeline pipe;
  VkResult vr = vkCreateComputePipelines(v->dev, VK_NULL_HANDLE, 1, &ci, NULL, &pipe);
  if (vr != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkCreateComputePipelines (%s): %s (%d)",
                         v->name, f->name, vk_name(vr), (int)vr);
  f->pipes[f->npipes++] = (vkpipe){{data[0], data[1], data[2]}, pipe};
  *out = pipe;
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

/* Whether a part records anything: copies and fills of bytes, launches. */
static bool part_runs(const rig_edge_part *p) {
  return p->kind == RIG_EDGE_PART_COPY ? p->u.copy.dst.bytes > 0
         : p->kind == RIG_EDGE_PART_FILL ? p->u.fill.dst.bytes > 0
                                         : p->kind == RIG_EDGE_PART_LAUNCH;
}

/* Between two parts of one submission: the later one follows the earlier
 * one's writes, and its writes follow the earlier one's reads. */
static void part_barrier(const vkdev *v, VkCommandBuffer cb) {
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = v->part_writes,
                        .dstAccessMask = v->part_access};
  barrier(cb, v->part_stages, v->part_stages, &mb);
}

/* What record keeps across the parts of one command buffer. */
typedef struct recording {
  uint64_t slot;            /* next scratch slot of unaligned fills */
  uint64_t params;          /* next byte of the large-parameter buffer */
  VkPipeline bound;         /* the pipeline bound last */
} recording;

/* Whether the device can run launch part p: no shared bytes asked (a
 * Vulkan kernel declares its own), at most 2^32 groups an axis in at most
 * MAX_DISPATCHES dispatches, groups of a shape the function takes within
 * the device's limits. Its refusal fails the submit today (SUBMIT-30); it
 * is what a driver entry that checks work before core takes a value would
 * call, so that the refusal were RIG_INVALID (VALID-20). */
static int check_launch(const vkdev *v, const rig_edge_part *p, uint64_t *out_dispatches,
                        rig_edge_error *err) {
  const vkfunc *f = p->u.launch.function;
  const uint64_t *g = p->u.launch.groups;
  const uint32_t *max = v->props.limits.maxComputeWorkGroupCount;
  if (p->u.launch.shared_bytes)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s asks %u bytes of shared memory per group; a Vulkan kernel "
                         "declares its shared memory itself", v->name, f->name,
                         p->u.launch.shared_bytes);
  uint64_t dispatches = 1;
  for (int a = 0; a < 3; a++) {
    if (g[a] > UINT32_MAX)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: %llu groups on axis %d; a "
                           "shader numbers at most 2^32", v->name, f->name,
                           (unsigned long long)g[a], a);
    dispatches *= (g[a] + max[a] - 1) / max[a];
  }
  if (dispatches > MAX_DISPATCHES)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: %llux%llux%llu groups take %llu "
                         "dispatches", v->name, f->name, (unsigned long long)g[0],
                         (unsigned long long)g[1], (unsigned long long)g[2],
                         (unsigned long long)dispatches);
  *out_dispatches = dispatches;
  return check_threads(v, f, p->u.launch.threads, err);
}

/* A launch: its pipeline for the run's group shape (made at the first
 * launch of that shape), the parameter block as push constants, or, over
 * PUSH_BYTES, copied into the parameter buffer with vkCmdUpdateBuffer and
 * its device address pushed; then the groups, in as many dispatches as the
 * device's maxComputeWorkGroupCount asks. */
static int record_launch(vkdev *v, VkCommandBuffer cb, const rig_edge_part *p, recording *rec,
                         rig_edge_error *err) {
  vkfunc *f = p->u.launch.function;
  const uint64_t *g = p->u.launch.groups;
  const uint32_t *max = v->props.limits.maxComputeWorkGroupCount;
  uint32_t bytes = p->u.launch.params_bytes;
  uint64_t dispatches = 1;
  int r = check_launch(v, p, &dispatches, err);
  if (r != RIG_EDGE_OK)
    return r;
  VkPipeline pipe = VK_NULL_HANDLE;
  if ((r = pipeline_for(v, f, p->u.launch.threads, &pipe, err)) != RIG_EDGE_OK)
    return r;
  uint8_t push[PUSH_BYTES] = {0};
  if (bytes <= PUSH_BYTES) {
    if (bytes)
      memcpy(push, p->u.launch.params, bytes);
  } else {
    uint64_t size = ((uint64_t)bytes + 3) / 4 * 4; /* core's block has room past its end */
    if (rec->params + size > PARAMS_BYTES) { /* every byte used in this command buffer */
      VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_SHADER_READ_BIT,
                            .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
      barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, &mb);
      rec->params = 0;
    }
    const uint8_t *src = p->u.launch.params;
    for (uint64_t o = 0; o < size; o += 65536) /* vkCmdUpdateBuffer's most */
      vkCmdUpdateBuffer(cb, v->params.buf, rec->params + o, size - o < 65536 ? size - o : 65536,
                        src + o);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_UNIFORM_READ_BIT};
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, &mb);
    uint64_t address = v->params_address + rec->params;
    memcpy(push, &address, sizeof address);
    rec->params += (size + PARAMS_ALIGN - 1) / PARAMS_ALIGN * PARAMS_ALIGN;
  }
  if (pipe != rec->bound) {
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    rec->bound = pipe;
  }
  vkCmdPushConstants(cb, v->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, PUSH_BYTES, push);
  if (dispatches == 1) {
    vkCmdDispatch(cb, (uint32_t)g[0], (uint32_t)g[1], (uint32_t)g[2]);
    return RIG_EDGE_OK;
  }
  for (uint64_t z = 0; z < g[2]; z += max[2])
    for (uint64_t y = 0; y < g[1]; y += max[1])
      for (uint64_t x = 0; x < g[0]; x += max[0])
        vkCmdDispatchBase(cb, (uint32_t)x, (uint32_t)y, (uint32_t)z,
                          (uint32_t)(g[0] - x < max[0] ? g[0] - x : max[0]),
                          (uint32_t)(g[1] - y < max[1] ? g[1] - y : max[1]),
                          (uint32_t)(g[2] - z < max[2] ? g[2] - z : max[2]));
  return RIG_EDGE_OK;
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

/* Records the work's parts into cb: after every earlier value's work
 * (ORDER-2), each part after the one before it (parts of one queue run in
 * order), and visible to the host once its value is signaled (TL-20).
 * once: the cb runs once (VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
 * else the cache keeps it for the same work again. */
static int record_cb(vkdev *v, const rig_edge_work *w, bool once, VkCommandBuffer cb,
                     rig_edge_error *err) {
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                 .flags = once ? VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT : 0};
  VkResult vr = vkBeginCommandBuffer(cb, &bi);
  if (vr != VK_SUCCESS)
    return vk_fail(err, vr, "vkBeginCommandBuffer", v->name);
  barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, &all_to_all);
  recording rec = {0, 0, VK_NULL_HANDLE};
  bool first = true;
  int r = RIG_EDGE_OK;
  for (uint32_t i = 0; i < w->nparts && r == RIG_EDGE_OK; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (!part_runs(p))
      continue;
    if (!first)
      part_barrier(v, cb);
    first = false;
    if (p->kind == RIG_EDGE_PART_COPY) {
      const vkmem *s = p->u.copy.src.alloc->handle, *d = p->u.copy.dst.alloc->handle;
      copy_bytes(cb, s->buf, s->base + p->u.copy.src.offset, d->buf,
                 d->base + p->u.copy.dst.offset, p->u.copy.dst.bytes);
    } else if (p->kind == RIG_EDGE_PART_FILL)
      record_fill(v, cb, p, &rec.slot);
    else
      r = record_launch(v, cb, p, &rec, err);
  }
  if (r != RIG_EDGE_OK) {
    (void)vkEndCommandBuffer(cb);
    return r;
  }
  barrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, &to_host);
  if ((vr = vkEndCommandBuffer(cb)) != VK_SUCCESS)
    return vk_fail(err, vr, "vkEndCommandBuffer", v->name);
  return RIG_EDGE_OK;
}

/* ---- the cache of recorded command buffers -------------------------------- */

static VkResult counter(vkdev *v, uint64_t *out);
static void note_reached(vkdev *v, uint64_t value);

/* Appends n bytes to the key; false without memory. */
static bool key_add(vkdev *v, const void *bytes, size_t n) {
  if (v->nkey + n > v->capkey) {
    size_t cap = (v->nkey + n) * 2;
    uint8_t *k = realloc(v->key, cap);
    if (!k)
      return false;
    v->key = k;
    v->capkey = cap;
  }
  memcpy(v->key + v->nkey, bytes, n);
  v->nkey += n;
  return true;
}

/* A range as recorded: the VkBuffer and the offset in it. */
static bool key_range(vkdev *v, const rig_edge_range *r) {
  const vkmem *m = r->alloc->handle;
  uint64_t at[3] = {(uint64_t)(uintptr_t)m->buf, m->base + r->offset, r->bytes};
  return key_add(v, at, sizeof at);
}

/* The key of w into v->key: what record_cb reads of each part. False
 * without memory, and the work is not cached. */
static bool make_key(vkdev *v, const rig_edge_work *w) {
  bool ok = true;
  v->nkey = 0;
  for (uint32_t i = 0; i < w->nparts && ok; i++) {
    const rig_edge_part *p = &w->parts[i];
    ok = key_add(v, &p->kind, sizeof p->kind);
    if (p->kind == RIG_EDGE_PART_COPY)
      ok = ok && key_range(v, &p->u.copy.src) && key_range(v, &p->u.copy.dst);
    else if (p->kind == RIG_EDGE_PART_FILL)
      ok = ok && key_range(v, &p->u.fill.dst) &&
           key_add(v, &p->u.fill.pattern, 2 * sizeof p->u.fill.pattern);
    else /* a launch: the function, the grid, then the parameter block */
      ok = ok && key_add(v, &p->u.launch.function, sizeof p->u.launch.function) &&
           key_add(v, &p->u.launch.params_bytes, 2 * sizeof(uint32_t) + 6 * sizeof(uint64_t)) &&
           key_add(v, p->u.launch.params, p->u.launch.params_bytes);
  }
  return ok;
}

/* Whether the run of value last is done. qlock held. */
static bool done(vkdev *v, uint64_t last) {
  uint64_t now;
  if (last <= __atomic_load_n(&v->reached, __ATOMIC_ACQUIRE))
    return true;
  if (counter(v, &now) != VK_SUCCESS)
    return false;
  note_reached(v, now);
  return last <= now;
}

/* The entry of v->key recorded since gen, or NULL. */
static cached *cache_find(vkdev *v, uint64_t gen) {
  for (int i = 0; i < CACHED_CBS; i++) {
    cached *c = &v->cache[i];
    if (c->cb && c->gen == gen && c->nkey == v->nkey && memcmp(c->key, v->key, v->nkey) == 0)
      return c;
  }
  return NULL;
}

/* An entry to record new work into: an empty one, else the one whose last
 * run is oldest, once it is done; its command buffer goes back to the
 * spares. NULL where every entry's work still runs. */
static cached *cache_slot(vkdev *v) {
  cached *best = NULL;
  for (int i = 0; i < CACHED_CBS; i++) {
    cached *c = &v->cache[i];
    if (!c->cb)
      return c;
    if (!best || c->last < best->last)
      best = c;
  }
  if (!done(v, best->last))
    return NULL;
  put_spare(v, best->cb);
  best->cb = VK_NULL_HANDLE;
  return best;
}

/* Keeps cb in c for the work of value, under v->key. */
static bool cache_keep(vkdev *v, cached *c, VkCommandBuffer cb, uint64_t gen, uint64_t value) {
  if (v->nkey > c->capkey) {
    uint8_t *k = realloc(c->key, v->nkey);
    if (!k)
      return false;
    c->key = k;
    c->capkey = v->nkey;
  }
  memcpy(c->key, v->key, v->nkey);
  c->nkey = v->nkey;
  c->cb = cb;
  c->gen = gen;
  c->last = value;
  return true;
}

/* The cache's command buffers go back to the spares (the stop). */
static void cache_clear(vkdev *v) {
  for (int i = 0; i < CACHED_CBS; i++) {
    if (v->cache[i].cb)
      put_spare(v, v->cache[i].cb);
    v->cache[i].cb = VK_NULL_HANDLE;
  }
}

/* The work's command buffer into out: none for work of no bytes; the
 * cache's where the same work ran before and is done, as each run of a
 * submission is (no recording, as a hand-written program records once);
 * else a new one, which the cache keeps where it has room. */
static int record(vkdev *v, const rig_edge_work *w, held *out, rig_edge_error *err) {
  bool any = false;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (p->kind != RIG_EDGE_PART_COPY && p->kind != RIG_EDGE_PART_FILL &&
        (p->kind != RIG_EDGE_PART_LAUNCH || !v->launches))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: part kind %u is not run here",
                           v->name, p->kind);
    any |= part_runs(p);
  }
  *out = (held){w->value, VK_NULL_HANDLE, false, NULL};
  if (!any)
    return RIG_EDGE_OK; /* the signal alone follows every earlier submission */
  /* Read before recording: memory released meanwhile is none of this
   * work's, and makes the entry stale at once. */
  uint64_t gen = __atomic_load_n(&v->gen, __ATOMIC_ACQUIRE);
  bool keyed = make_key(v, w);
  cached *c = keyed ? cache_find(v, gen) : NULL;
  if (c && done(v, c->last)) {
    c->last = w->value;
    *out = (held){w->value, c->cb, true, NULL};
    return RIG_EDGE_OK;
  }
  c = keyed && !c ? cache_slot(v) : NULL; /* the same work still runs: record it once */
  VkCommandBuffer cb;
  int r = get_cb(v, &cb, err);
  if (r == RIG_EDGE_OK && (r = record_cb(v, w, !c, cb, err)) != RIG_EDGE_OK)
    put_spare(v, cb);
  if (r != RIG_EDGE_OK)
    return r;
  *out = (held){w->value, cb, c && cache_keep(v, c, cb, gen, w->value), NULL};
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
    const waitset *ws = e->ws;
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
  /* The queue is the shared VkDevice's: externally synchronized. */
  pthread_mutex_lock(&v->sh->qlock);
  VkResult r = vkQueueSubmit(v->queue, (uint32_t)n, v->infos, VK_NULL_HANDLE);
  pthread_mutex_unlock(&v->sh->qlock);
  if (r != VK_SUCCESS)
    return vk_fail_lost(v, err, r, "vkQueueSubmit");
  for (size_t i = 0; i < n; i++) {
    free(v->held.at[i].ws); /* on the queue: Vulkan copied the waits */
    v->held.at[i].ws = NULL;
  }
  for (size_t i = 0; i < n; i++) /* the cache keeps its own */
    if (v->held.at[i].cb && !v->held.at[i].cached && !push(&v->flight, v->held.at[i]))
      return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  __atomic_store_n(&v->queued, v->held.at[n - 1].value, __ATOMIC_RELEASE);
  memmove(v->held.at, v->held.at + n, (v->held.n - n) * sizeof *v->held.at);
  v->held.n -= n;
  return RIG_EDGE_OK;
}

/* Whether the batch that waits for peer's value must wait on its
 * semaphore: 0 where it need not (reached, or peer stopped, whose held
 * work never runs and whose values count as reached, STOP-1), 1 where it
 * must, once the value's work is on the queue; the value is sent there
 * now where it is still held (TL-9, as core's commit does first), so that
 * its signal precedes the wait in the queue's order and no wait waits on
 * a signal nobody will submit. Else a fault of peer's flush, which is one
 * of the shared queue's. Called holding no lock of v's: peer's qlock only. */
static int peer_ready(vkdev *peer, uint64_t value, rig_edge_error *err) {
  if (value <= __atomic_load_n(&peer->reached, __ATOMIC_ACQUIRE))
    return 0;
  if (value <= __atomic_load_n(&peer->queued, __ATOMIC_ACQUIRE))
    return 1;
  pthread_mutex_lock(&peer->qlock);
  int r = peer->stopped ? 0 : flush(peer, value, err);
  bool queued = !peer->stopped && r == RIG_EDGE_OK;
  pthread_mutex_unlock(&peer->qlock);
  return r != RIG_EDGE_OK ? r : queued;
}

/* The waits of work w on peers' semaphores (map_peer's mappings, each the
 * peer's vkdev), into *out: NULL where none is left. SUBMIT-2. */
static int take_waits(const rig_edge_work *w, waitset **out, rig_edge_error *err) {
  *out = NULL;
  if (!w->nwaits)
    return RIG_EDGE_OK;
  size_t n = w->nwaits;
  waitset *ws = malloc(sizeof *ws + n * (sizeof(VkSemaphore) + sizeof(uint64_t) +
                                         sizeof(VkPipelineStageFlags)));
  if (!ws)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "out of host memory for a submit's waits");
  ws->sems = (VkSemaphore *)(ws + 1);
  ws->values = (uint64_t *)(ws->sems + n);
  ws->stages = (VkPipelineStageFlags *)(ws->values + n);
  ws->n = 0;
  for (size_t i = 0; i < n; i++) {
    vkdev *peer = w->waits[i].mapping;
    uint64_t value = w->waits[i].value, base = __atomic_load_n(&peer->base, __ATOMIC_ACQUIRE);
    int r = peer_ready(peer, value, err);
    if (r < 0) {
      free(ws);
      return r;
    }
    if (!r)
      continue;
    /* The mapping keeps peer->timeline alive (vk_map_peer). */
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

static int vk_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  vkdev *v = h;
  uint64_t nth = ++v->submits; /* core serialises a device's submits (DOM-5) */
  if (v->fault_nth && nth == v->fault_nth)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "injected fault at %" PRIu64, w->value);
  if (v->lose_nth && nth == v->lose_nth) { /* as a lost VkDevice's submit would */
    mark_lost(v);
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkQueueSubmit: VK_ERROR_DEVICE_LOST (-4), "
                         "injected at %" PRIu64, v->name, w->value);
  }
  int r = check_lost(v, err);
  waitset *ws = NULL;
  if (r == RIG_EDGE_OK)
    r = take_waits(w, &ws, err); /* before qlock: it takes peers' (lock order) */
  if (r != RIG_EDGE_OK)
    return r;
  pthread_mutex_lock(&v->qlock);
  if (!__atomic_load_n(&v->taken, __ATOMIC_RELAXED)) /* the first value: 1 on the semaphore */
    __atomic_store_n(&v->base, w->value - 1, __ATOMIC_RELEASE);
  if (!v->nspare || v->flight.n >= 64)
    recycle(v);
  held e;
  r = record(v, w, &e, err);
  e.ws = r == RIG_EDGE_OK ? ws : NULL;
  if (r == RIG_EDGE_OK && !push(&v->held, e))
    r = rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  if (r != RIG_EDGE_OK)
    free(ws);
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
  int r = check_lost(v, err);
  if (r != RIG_EDGE_OK)
    return r;
  pthread_mutex_lock(&v->qlock);
  r = flush(v, value, err);
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
  int lost = check_lost(v, err);
  if (lost != RIG_EDGE_OK)
    return lost;
  VkResult r = counter(v, out);
  if (r != VK_SUCCESS)
    return vk_fail_lost(v, err, r, "vkGetSemaphoreCounterValue");
  note_reached(v, *out);
  return RIG_EDGE_OK;
}

/* A wait commits what it waits for (TL-9), then waits on the semaphore. */
static int vk_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err) {
  vkdev *v = h;
  int lost = check_lost(v, err);
  if (lost != RIG_EDGE_OK)
    return lost;
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
  return vk_fail_lost(v, err, r, "vkWaitSemaphores");
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
  f->hang_ms = 0;         /* no bound: a kernel may run as long as it likes */
  f->commit_k = v->k;
  f->flags = RIG_EDGE_COMPUTES | RIG_EDGE_OWN_WORD | (v->import ? RIG_EDGE_MAPS_HOST : 0) |
             (v->device_host ? RIG_EDGE_HOST_ADDRESSES : 0);
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = v->launches ? 0 : RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
}

static int vk_facts(void *h, rig_edge_facts *out, rig_edge_error *err) {
  vkdev *v = h;
  uint32_t size = out->size; /* an older core knows a shorter struct */
  memcpy(out, &v->facts, size < sizeof v->facts ? size : sizeof v->facts);
  out->size = size;
  return RIG_EDGE_OK;
}

/* Waits until the work v sent to the queue is done: its semaphore reaches
 * the last value queued. Not vkQueueWaitIdle: the queue is shared, and
 * other opens' work is not this stop's to wait for. Every wait in v's
 * batches is on a value some open sent to the queue before them
 * (peer_ready), so this ends; a lost device returns at once. qlock held. */
static void own_work_done(vkdev *v) {
  uint64_t q = __atomic_load_n(&v->queued, __ATOMIC_ACQUIRE);
  if (!q || !v->timeline)
    return;
  uint64_t raw = q > v->base ? q - v->base : 1;
  VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                            .semaphoreCount = 1,
                            .pSemaphores = &v->timeline,
                            .pValues = &raw};
  if (v->WaitSemaphores(v->dev, &wi, UINT64_MAX) == VK_ERROR_DEVICE_LOST)
    mark_lost(v);
}

/* Ends the queue: held work never runs (TL-8); what the queue holds ends;
 * then it reports the last value it took, run or not (STOP-1), and frees
 * everything but the memory still out and the device it lives on. */
static int vk_stop(void *h, rig_edge_error *err) {
  vkdev *v = h;
  if (v->stopped)
    return RIG_EDGE_OK;
  pthread_mutex_lock(&v->qlock);
  for (size_t i = 0; i < v->held.n; i++) {
    if (v->held.at[i].cb && !v->held.at[i].cached)
      put_spare(v, v->held.at[i].cb);
    free(v->held.at[i].ws);
  }
  v->held.n = 0;
  own_work_done(v);
  uint64_t done = 0;
  if (counter(v, &done) != VK_SUCCESS)
    done = 0;
  v->final = done > v->taken ? done : v->taken;
  for (size_t i = 0; i < v->flight.n; i++)
    put_spare(v, v->flight.at[i].cb);
  v->flight.n = 0;
  cache_clear(v);
  if (v->nspare)
    vkFreeCommandBuffers(v->dev, v->pool, (uint32_t)v->nspare, v->spare);
  v->nspare = 0;
  vkDestroyCommandPool(v->dev, v->pool, NULL);
  v->pool = VK_NULL_HANDLE;
  free_objects(v, &v->scratch);
  /* Code: nothing runs any more. Core unloads no image of a stopped
   * device, so their objects go now, and their records at destroy. */
  pthread_mutex_lock(&v->ilock);
  bool pipelines = false;
  for (vkimage *im = v->images; im; im = im->next)
    if (!im->dead) {
      for (vkfunc *f = im->funcs; f; f = f->next)
        pipelines |= f->npipes > 0;
      image_objects_free(v, im);
    }
  /* Lavapipe (Mesa 22.3) frees a pipeline its queue ran only when the
   * queue next runs or idles, and leaks it at vkDestroyDevice: idle it. */
  if (pipelines) {
    pthread_mutex_lock(&v->sh->qlock);
    (void)vkQueueWaitIdle(v->queue);
    pthread_mutex_unlock(&v->sh->qlock);
  }
  free_objects(v, &v->params);
  if (v->layout)
    vkDestroyPipelineLayout(v->dev, v->layout, NULL);
  v->layout = VK_NULL_HANDLE;
  pthread_mutex_unlock(&v->ilock);
  __atomic_store_n(&v->stopped, true, __ATOMIC_RELEASE);
  if (!v->maps) { /* else other opens' queues may wait on it: it goes at destroy */
    vkDestroySemaphore(v->dev, v->timeline, NULL);
    v->timeline = VK_NULL_HANDLE;
  }
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

/* ---- the shared VkDevice -------------------------------------------------- */

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static vkshared *shared_list; /* the shareable ones (shared_lock) */

/* The edge's fork hook (ABI 1.4), which core calls holding its own locks:
 * a fork waits for an open under way, which holds shared_lock while it
 * makes a VkDevice, so the child finds the lock free and the list whole
 * (and makes VkDevices of its own, since entries carry the parent's pid).
 * The child never calls a handle of the parent's (STOP-20), so their
 * qlock, mlock and ilock, and their VkDevices' qlock, are not taken. */
static void vk_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_PREPARE)
    pthread_mutex_lock(&shared_lock);
  else
    pthread_mutex_unlock(&shared_lock);
}

/* Drops one open's reference; the last frees the queue's work (a pipeline
 * lavapipe frees only when the queue next runs or idles, and leaks at
 * vkDestroyDevice), the VkDevice, the messenger and the instance. */
static void shared_put(vkshared *sh) {
  if (!sh)
    return;
  pthread_mutex_lock(&shared_lock);
  bool last = --sh->refs == 0;
  if (last && sh->listed)
    for (vkshared **p = &shared_list; *p; p = &(*p)->next)
      if (*p == sh) {
        *p = sh->next;
        break;
      }
  pthread_mutex_unlock(&shared_lock);
  if (!last)
    return;
  if (sh->queue)
    (void)vkQueueWaitIdle(sh->queue); /* no open is left to submit */
  if (sh->dev)
    vkDestroyDevice(sh->dev, NULL);
  if (sh->messenger)
    sh->DestroyMessenger(sh->inst, sh->messenger, NULL);
  if (sh->inst)
    vkDestroyInstance(sh->inst, NULL);
  pthread_mutex_destroy(&sh->qlock);
  free(sh);
}

/* v->sh: the listed VkDevice of v's physical device and validation
 * setting where v shares (v->share, the default), else a new one with its
 * instance, which vk_open lists once its device is made. shared_lock held,
 * so that two opens make one. */
static int shared_get(vkdev *v, uint32_t index, rig_edge_error *err) {
  for (vkshared *s = v->share ? shared_list : NULL; s; s = s->next)
    if (s->index == index && s->validate == v->validate && s->pid == getpid() &&
        __atomic_load_n(&s->lost, __ATOMIC_ACQUIRE) == LOST_NONE) { /* a lost one is done */
      s->refs++;
      v->sh = s;
      v->inst = s->inst;
      return RIG_EDGE_OK;
    }
  vkshared *s = calloc(1, sizeof *s);
  if (!s)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: out of memory", v->name);
  pthread_mutex_init(&s->qlock, NULL);
  s->refs = 1;
  s->index = index;
  s->validate = v->validate;
  s->pid = getpid();
  s->validation.size = sizeof s->validation;
  snprintf(s->name, sizeof s->name, "%s", v->name);
  v->sh = s;
  int r = make_instance(s, err);
  v->inst = s->inst;
  return r;
}

/* Lists v's new shared VkDevice for later opens to share. shared_lock held. */
static void shared_list_add(vkdev *v) {
  if (!v->share || v->sh->listed)
    return;
  v->sh->listed = true;
  v->sh->next = shared_list;
  shared_list = v->sh;
}

/* ---- waits on peers: map_peer (edge ABI 1.2) ------------------------------ */

/* SUBMIT-2, OPEN-20..23: h's queue can wait on peer's timeline semaphore
 * where both are opens on one VkDevice (a semaphore of another VkDevice
 * would need exporting, VK_KHR_external_semaphore_fd). The mapping is peer
 * itself; it counts in peer->maps, which keeps peer's semaphore past its
 * stop until unmap_word gives it back (core's mapping also holds peer's
 * device, so peer's destroy comes after). RIG_EDGE_UNSUPPORTED for another
 * VkDevice (share=0, another validation setting) or a stopped peer: core
 * waits on the host (SUBMIT-3). Takes peer's qlock; waits for nothing. */
static int vk_map_peer(void *h, void *peer_h, void **out, rig_edge_error *err) {
  vkdev *v = h, *p = peer_h;
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

/* Gives back a mapping of vk_map_peer: the queue passed the waits that
 * used it, or h's stop waited for its work. Takes the peer's qlock. */
static void vk_unmap_word(void *h, void *mapping) {
  vkdev *p = mapping;
  (void)h;
  pthread_mutex_lock(&p->qlock);
  p->maps--;
  pthread_mutex_unlock(&p->qlock);
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
    while (v->images) {
      vkimage *im = v->images;
      v->images = im->next;
      image_free(v, im);
    }
    free_objects(v, &v->params);
    if (v->layout)
      vkDestroyPipelineLayout(v->dev, v->layout, NULL);
    if (v->timeline)
      vkDestroySemaphore(v->dev, v->timeline, NULL);
    if (v->pool)
      vkDestroyCommandPool(v->dev, v->pool, NULL);
  }
  shared_put(v->sh);
  free(v->held.at);
  free(v->flight.at);
  free(v->spare);
  free(v->infos);
  free(v->tinfos);
  free(v->values);
  free(v->key);
  for (int i = 0; i < CACHED_CBS; i++)
    free(v->cache[i].key);
  pthread_mutex_destroy(&v->qlock);
  pthread_mutex_destroy(&v->mlock);
  pthread_mutex_destroy(&v->ilock);
  free(v);
}

static int vk_open(const char *args, void **out, rig_edge_error *err) {
  vkdev *v = calloc(1, sizeof *v);
  if (!v)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "vulkan: out of memory");
  pthread_mutex_init(&v->qlock, NULL);
  pthread_mutex_init(&v->mlock, NULL);
  pthread_mutex_init(&v->ilock, NULL);
  uint32_t index;
  snprintf(v->name, sizeof v->name, "vulkan:%.20s", args);
  if (parse(v, args, &index, err) != RIG_EDGE_OK) {
    vk_destroy(v);
    return RIG_EDGE_UNSUPPORTED;
  }
  snprintf(v->name, sizeof v->name, "vulkan:%u", index);
  /* One VkDevice per physical device and validation setting, made by the
   * first open and shared by the later ones (share=0: one of its own);
   * shared_lock held until it is made and listed, so that two opens at
   * once make one. */
  pthread_mutex_lock(&shared_lock);
  int r = shared_get(v, index, err);
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
  if (r == RIG_EDGE_OK)
    shared_list_add(v);
  pthread_mutex_unlock(&shared_lock);
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

/* The validation record is the shared VkDevice's: its layer and messenger
 * serve every open on it. */
static const void *vk_capability(void *h, const char *key) {
  vkdev *v = h;
  return strcmp(key, RIG_VULKAN_VALIDATION) == 0 ? &v->sh->validation : NULL;
}

/* VALID-20: the launches of work it cannot run are refused before core
 * takes a value (edge.h's check). */
static int vk_check(void *h, const rig_edge_work *work, rig_edge_error *err) {
  const vkdev *v = h;
  for (uint32_t i = 0; i < work->nparts; i++) {
    uint64_t dispatches;
    if (work->parts[i].kind != RIG_EDGE_PART_LAUNCH)
      continue;
    int r = check_launch(v, &work->parts[i], &dispatches, err);
    if (r != RIG_EDGE_OK)
      return r;
  }
  return RIG_EDGE_OK;
}

static const rig_edge_driver vulkan_driver = {
    RIG_EDGE_DRIVER_INIT("vulkan"),
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
    .load = vk_load,
    .resolve = vk_resolve,
    .unload = vk_unload,
    .capability = vk_capability,
    .check = vk_check,
    .unmap_word = vk_unmap_word,
    .map_peer = vk_map_peer,
    .fork = vk_fork,
};

RIG_EDGE_DRIVER(vulkan_driver)
