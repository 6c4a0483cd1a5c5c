/* SPDX-License-Identifier: MIT */
/* vulkan_private.h: what the Vulkan driver's files share (drivers/vulkan/README.md
 * says which file holds what). Included only by the driver's own .c files.
 *
 * Names. What one file keeps to itself is static and has no prefix. What
 * the files share carries rvk_ ("rig's Vulkan driver"): not vk_/Vk/VK_,
 * which read as Vulkan's own API, nor rig_/rig__, which are rig's public
 * and core-internal names. Every shared name is also hidden (the pragma
 * below, besides the build's -fvisibility=hidden), so the plugin exports
 * its entry symbol only (test plugin-links-edge-and-loader-vulkan).
 *
 * Locks, outermost first: shared.c's list lock; a peer's qlock, taken by
 * peers.c while the submitting open holds none of its own; an open's qlock,
 * then its ilock (the stop), then its VkDevice's qlock (the queue); mlock
 * alone.
 */
#ifndef RIG_VULKAN_PRIVATE_H
#define RIG_VULKAN_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vulkan/vulkan.h>

#include <rig/edge.h>

#include <rig/drivers/rig-vulkan.h>

#pragma GCC visibility push(hidden)

#define RVK_DEFAULT_K 8
#define RVK_SCRATCH_BYTES 65536u /* where unaligned fills stage their bytes */
#define RVK_SLOT 8u              /* scratch bytes per unaligned fill */
#define RVK_PUSH_BYTES 128u      /* push constants of every pipeline: Vulkan's least
                                    maxPushConstantsSize, so a kernel's layout is the
                                    same on every device */
#define RVK_PARAMS_BYTES (2u << 20) /* large parameter blocks of one command buffer */
#define RVK_PARAMS_ALIGN 256u    /* each large block's start in it */
#define RVK_MAX_DISPATCHES 65536u /* dispatches one launch may split into */
#define RVK_MAX_BINDINGS 32u /* buffers a shader binds: the least maxPushDescriptors */
#define RVK_MAX_SPECS 32u /* specialization constants resolve sets */
#define RVK_CACHED_CBS 4         /* command buffers kept for work that comes again */

/* Memory the driver made: an allocation, or host memory it maps. */
typedef struct rvk_mem {
  VkBuffer buf;
  VkDeviceMemory mem;
  uint64_t base;            /* the first byte's offset in buf */
  uint64_t size;            /* buf's bytes */
  uint64_t address; /* the first byte's device address (0: none) */
  uint64_t bytes; /* the bytes from base that core addresses */
  bool imported;            /* host memory mapped by map() */
  VkMemoryPropertyFlags flags; /* of its memory type */
  struct rvk_mem *prev, *next; /* the device's list */
} rvk_mem;

/* The waits of a value's batch on other devices' timeline semaphores of
 * the same VkDevice (map_peer): one block, freed once the batch is on the
 * queue or dropped. */
typedef struct rvk_waitset {
  uint32_t n;
  VkSemaphore *sems;
  uint64_t *values;             /* the semaphores' own values */
  VkPipelineStageFlags *stages; /* ALL_COMMANDS: the batch waits whole */
} rvk_waitset;

/* A value's work: its command buffer, or none for work of no bytes;
 * cached: the cb is the cache's, which keeps it past its run; ws: its
 * waits, or NULL. */
typedef struct rvk_held {
  uint64_t value;
  VkCommandBuffer cb;
  bool cached;
  rvk_waitset *ws;
} rvk_held;

/* A command buffer kept for work that comes again, as each run of one
 * submission does: recorded once, submitted each time its key (the work's
 * parts as recorded: buffers, offsets, patterns, functions, grids and
 * parameter bytes) comes back, while no memory or code of the device went
 * since (gen) and its last run is done (last). */
typedef struct rvk_cached {
  VkCommandBuffer cb;
  uint64_t gen, last;
  uint8_t *key;
  size_t nkey, capkey;
} rvk_cached;

typedef struct rvk_vec {
  rvk_held *at;
  size_t n, cap;
} rvk_vec;

/* A pipeline of a function for one group shape. */
typedef struct rvk_pipe {
  uint32_t threads[3];
  VkPipeline pipe;
} rvk_pipe;

struct rvk_image;
typedef struct rvk_prof rvk_prof; /* profile.c */

/* A resolved entry point: each axis of its group either fixed by the
 * module's LocalSize or a specialization constant (local_size_x_id ...). */
typedef struct rvk_func {
  struct rvk_image *image;
  char *name; /* the entry point's name, without resolve's options */
  uint32_t fixed[3];        /* an axis's LocalSize where fixed, else 0 */
  uint32_t spec[3];         /* an axis's SpecId where it specializes, else UINT32_MAX */
  rvk_pipe *pipes;          /* made at the first launch of each shape (submit) */
  size_t npipes, cappipes;
  struct rvk_func *next;

  /* bindings.c: what the module asks of its pipeline */
  VkDescriptorSetLayout dsl; /* set 0 of push descriptors, where it binds buffers */
  VkPipelineLayout layout; /* its own where it binds buffers, else VK_NULL_HANDLE */
  uint32_t nbind; /* buffers: refs at bytes 0, 8, ... of the block */
  uint32_t bind_no[RVK_MAX_BINDINGS];
  VkDescriptorType bind_type[RVK_MAX_BINDINGS];
  uint32_t push_bytes; /* its push-constant block's end */
  bool num_groups; /* reads gl_NumWorkGroups: one dispatch only */
  bool shared_fixed; /* shared memory sized by constants alone */
  pthread_mutex_t shared_lock; /* shared_last: checks of submits run concurrently */
  uint64_t shared_last[4]; /* the last shape checked (x, y, z) and its bytes */
  uint32_t nspec; /* specialization constants resolve's name set */
  VkSpecializationMapEntry spec_map[RVK_MAX_SPECS];
  uint64_t spec_data[RVK_MAX_SPECS]; /* each value in a slot of 8 bytes */
  uint32_t spec_ids[RVK_MAX_SPECS];
} rvk_func;

/* A loaded SPIR-V module, and a copy of its words for resolve to read. */
typedef struct rvk_image {
  VkShaderModule module;
  uint32_t *words;
  size_t nwords;
  rvk_func *funcs;
  bool dead;                /* its Vulkan objects went at the stop */
  struct rvk_image *prev, *next;
} rvk_image;

/* LOSS-14: how far an open got in marking its shared VkDevice lost. */
enum { RVK_LOST_NONE, RVK_LOST_NAMING, RVK_LOST_SET };

/* A VkDevice and its one queue, shared by every open of one physical
 * device with one validation setting (README, "Sharing a VkDevice"):
 * listed while open, refcounted under shared.c's lock, gone at the last
 * destroy. Every vkQueueSubmit and vkQueueWaitIdle holds qlock: the queue
 * is externally synchronized. */
typedef struct rvk_shared {
  struct rvk_shared *next;
  uint32_t index;
  int validate;
  pid_t pid;                /* the process that made it: a forked child's
                               copy of the list names the parent's devices */
  bool listed;              /* shareable: in the list */
  uint32_t refs;            /* opens on it (the list's lock) */
  char name[32];
  VkInstance inst;
  VkDebugUtilsMessengerEXT messenger;
  PFN_vkDestroyDebugUtilsMessengerEXT DestroyMessenger;
  VkDevice dev;
  VkQueue queue;
  pthread_mutex_t qlock;
  int lost;                 /* RVK_LOST_*: VK_ERROR_DEVICE_LOST seen by an open (atomic) */
  char lost_by[32];         /* the open that saw it; set before lost */
  rig_vulkan_validation validation;
} rvk_shared;

/* One open: a rig device of its own on a (shared) VkDevice. */
typedef struct rvk_dev {
  char name[32];
  rvk_shared *sh;           /* its VkDevice, queue, instance: the rest is its own */
  bool share;               /* share=0: a VkDevice of its own, never a peer's */
  VkInstance inst;          /* sh's */
  VkPhysicalDevice phys;
  VkDevice dev;             /* sh's */
  VkQueue queue;            /* sh's: submit under sh->qlock */
  uint32_t family;
  VkSemaphore timeline;
  VkCommandPool pool;
  rvk_mem scratch;
  bool bda, import, pci, budget_ext;
  bool push_desc; /* VK_KHR_push_descriptor: descriptor-bound shaders run */
  bool calibrated; /* VK_EXT_calibrated_timestamps (profile.c) */
  bool uma;                 /* all its device-local memory is host-visible */
  bool device_host;         /* the host addresses its Device memory: uma, host=1 */
  uint64_t import_align;
  VkPhysicalDeviceMemoryProperties memprops;
  VkPhysicalDeviceProperties props;
  uint64_t max_alloc;
  rig_edge_facts facts;
  rig_vulkan_device info;   /* capability RIG_VULKAN_DEVICE */

  /* entry points of the device (Vulkan 1.2 and extensions) */
  PFN_vkWaitSemaphores WaitSemaphores;
  PFN_vkGetSemaphoreCounterValue GetSemaphoreCounterValue;
  PFN_vkGetBufferDeviceAddress GetBufferDeviceAddress;
  PFN_vkGetMemoryHostPointerPropertiesEXT GetMemoryHostPointerProperties;
  PFN_vkCmdPushDescriptorSetKHR CmdPushDescriptorSet;
  PFN_vkGetCalibratedTimestampsEXT GetCalibratedTimestamps;

  /* the queue: held work, work on the queue, spare command buffers */
  pthread_mutex_t qlock;
  rvk_vec held, flight;
  rvk_cached cache[RVK_CACHED_CBS];
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
  rvk_prof *prof;           /* timestamps, once core handed a ring (qlock) */

  /* memory */
  pthread_mutex_t mlock;
  rvk_mem *mems;

  /* code: images (ilock), the one pipeline layout and the buffer of large
   * parameter blocks, both made at the first resolve */
  pthread_mutex_t ilock;
  rvk_image *images;
  VkPipelineLayout layout;
  rvk_mem params;
  uint64_t params_address;
  bool launches;            /* a compute queue and buffer device addresses */
  VkPhysicalDeviceFeatures features;         /* enabled: what modules may need */
  VkPhysicalDeviceVulkan12Features features12;
  VkPipelineStageFlags part_stages; /* what parts of one submission run in */
  VkAccessFlags part_writes, part_access;

  /* validation */
  int validate;             /* 0, 1 (abort), 2 (count) */
  bool no_host;             /* host=0: the host addresses no Device memory */
} rvk_dev;

/* fail.c: messages, and loss of a shared VkDevice (LOSS-14) */
const char *rvk_result_name(VkResult r);
int rvk_fail(rig_edge_error *err, VkResult r, const char *what, const char *name);
void rvk_mark_lost(rvk_dev *v);
int rvk_check_lost(const rvk_dev *v, rig_edge_error *err);
int rvk_fail_lost(rvk_dev *v, rig_edge_error *err, VkResult r, const char *what);

/* device.c: the instance, the physical device, the VkDevice */
int rvk_make_instance(rvk_shared *v, rig_edge_error *err);
int rvk_pick_device(rvk_dev *v, uint32_t index, rig_edge_error *err);
int rvk_make_device(rvk_dev *v, rig_edge_error *err);
void rvk_read_limits(rvk_dev *v);

/* facts.c */
void rvk_make_facts(rvk_dev *v);
int rvk_facts(void *h, rig_edge_facts *out, rig_edge_error *err);

/* shared.c: the VkDevices opens share */
int rvk_shared_open(rvk_dev *v, uint32_t index, rig_edge_error *err);
void rvk_shared_put(rvk_shared *sh);
void rvk_fork(uint32_t phase);
/* devices.c: the loader's physical devices, "0".."N-1" (edge ABI 1.5). */
int rvk_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err);

/* memory.c */
int rvk_make_buffer(rvk_dev *v, rvk_mem *m, uint64_t size, VkMemoryPropertyFlags need,
                    VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, void *host,
                    uint32_t import_bits, VkMemoryRequirements *out_req, rig_edge_error *err);
void rvk_free_objects(rvk_dev *v, rvk_mem *m);
uint64_t rvk_address_of(const rvk_dev *v, const rvk_mem *m);
void rvk_objects_go(rvk_dev *v);
void rvk_free_host_maps(rvk_dev *v);
void rvk_free_mems(rvk_dev *v);
int rvk_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err);
int rvk_release(void *h, rig_edge_alloc *a, rig_edge_error *err);
int rvk_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err);
int rvk_unmap(void *h, rig_edge_alloc *a, rig_edge_error *err);

/* code.c: SPIR-V images and their entry points */
int rvk_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
             rig_edge_error *err);
int rvk_resolve(void *h, void *image, const char *name, void **out_function, rig_edge_error *err);
int rvk_unload(void *h, void *image, rig_edge_error *err);
bool rvk_images_objects_free(rvk_dev *v);
void rvk_images_free(rvk_dev *v);

/* pipeline.c: launches, their pipelines and the objects they share */
int rvk_make_code_objects(rvk_dev *v, rig_edge_error *err);
void rvk_free_code_objects(rvk_dev *v);
void rvk_free_pipelines(rvk_dev *v, rvk_func *f);
int rvk_check_launch(const rvk_dev *v, const rig_edge_part *p, uint64_t *out_dispatches,
                     rig_edge_error *err);
int rvk_pipeline_for(rvk_dev *v, rvk_func *f, const uint64_t t[3], VkPipeline *out,
                     rig_edge_error *err);

/* bindings.c: descriptor-bound shaders (refs to bindings), their
 * specialization constants, and what rig refuses of a module */
int rvk_func_layout(rvk_dev *v, rvk_func *f, const char *options, rig_edge_error *err);
void rvk_func_layout_free(rvk_dev *v, rvk_func *f);
int rvk_check_bindings(const rvk_dev *v, const rig_edge_part *p, uint64_t dispatches,
                       rig_edge_error *err);
void rvk_push_bindings(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p);
bool rvk_find_buffer(const rvk_dev *v, uint64_t a, VkBuffer *buf, uint64_t *offset, uint64_t *rest);

/* words.c: words parts, rig-vulkan.h's packets */
int rvk_check_words(const rvk_dev *v, const rig_edge_part *p, rig_edge_error *err);
void rvk_record_words(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p);

/* record.c: a work's command buffer; with stamps, a timestamp before and
 * after each part that runs, into queries first, first + 1, ... of pool */
typedef struct rvk_stamps {
  VkQueryPool pool;
  uint32_t first;
} rvk_stamps;
bool rvk_part_runs(const rig_edge_part *p);
uint32_t rvk_count_runs(const rig_edge_work *w);
int rvk_record_cb(rvk_dev *v, const rig_edge_work *w, bool once, const rvk_stamps *stamps,
                  VkCommandBuffer cb, rig_edge_error *err);

/* profile.c: timestamps of the work while a profile is taken (qlock held) */
int rvk_profile(void *h, rig_edge_profile *ring, rig_edge_error *err);
bool rvk_profile_pairs(rvk_dev *v, const rig_edge_work *w, uint32_t n, uint32_t *out);
VkQueryPool rvk_profile_pool(const rvk_dev *v);
void rvk_profile_harvest(rvk_dev *v);
void rvk_profile_end(rvk_dev *v);

/* replay.c: the command buffers of work that comes again, and spares */
int rvk_record(rvk_dev *v, const rig_edge_work *w, rvk_held *out, rig_edge_error *err);
void rvk_cache_clear(rvk_dev *v);
bool rvk_put_spare(rvk_dev *v, VkCommandBuffer cb);

/* queue.c: submit, commit, the batches on the queue */
int rvk_submit(void *h, const rig_edge_work *w, rig_edge_error *err);
int rvk_commit(void *h, uint64_t value, rig_edge_error *err);
int rvk_flush(rvk_dev *v, uint64_t upto, rig_edge_error *err);

/* timeline.c: the semaphore, the driver's own word */
VkResult rvk_counter(rvk_dev *v, uint64_t *out);
void rvk_note_reached(rvk_dev *v, uint64_t value);
int rvk_signaled(void *h, uint64_t *out, rig_edge_error *err);
int rvk_wait(void *h, uint64_t value, uint32_t timeout_ms, rig_edge_error *err);
void rvk_own_work_done(rvk_dev *v);

/* peers.c: waits on other opens' semaphores (map_peer, edge ABI 1.2) */
int rvk_map_peer(void *h, void *peer_h, void **out, rig_edge_error *err);
void rvk_unmap_word(void *h, void *mapping);
int rvk_take_waits(const rig_edge_work *w, rvk_waitset **out, rig_edge_error *err);

/* stop.c: the end of an open */
int rvk_stop(void *h, rig_edge_error *err);
void rvk_destroy(void *h);

#pragma GCC visibility pop

#endif
