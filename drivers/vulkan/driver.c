/* SPDX-License-Identifier: MIT */
/* driver.c: the Vulkan driver's entry, librig-driver-vulkan.so
 * (drivers/vulkan/README.md): its table, the open and its arguments, the
 * capability and the check. vulkan_private.h says which file holds the rest.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_private.h"

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
static int parse(rvk_dev *v, const char *args, uint32_t *index, rig_edge_error *err) {
  enum { VALIDATE, K, HOST, SHARE, FAULT_NTH, LOSE_NTH, NKEYS };
  rig_edge_arg keys[NKEYS] = {
      [VALIDATE] = {.key = "validate", .type = RIG_EDGE_ARG_WORD, .words = "0|1|count"},
      [K] = {.key = "k", .type = RIG_EDGE_ARG_NUMBER, .min = 1, .max = UINT32_MAX,
             .value = RVK_DEFAULT_K},
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

/* Once its VkDevice is made: its limits and its scratch buffer. */
static int finish_open(rvk_dev *v, rig_edge_error *err) {
  rvk_read_limits(v);
  int r = rvk_make_buffer(v, &v->scratch, RVK_SCRATCH_BYTES, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                          0, NULL, 0, NULL, err);
  return r == RIG_EDGE_OK ? r : RIG_EDGE_UNAVAILABLE;
}

static int open_device(const char *args, void **out, rig_edge_error *err) {
  rvk_dev *v = calloc(1, sizeof *v);
  if (!v)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "vulkan: out of memory");
  pthread_mutex_init(&v->qlock, NULL);
  pthread_mutex_init(&v->mlock, NULL);
  pthread_mutex_init(&v->ilock, NULL);
  uint32_t index;
  snprintf(v->name, sizeof v->name, "vulkan:%.20s", args);
  if (parse(v, args, &index, err) != RIG_EDGE_OK) {
    rvk_destroy(v);
    return RIG_EDGE_UNSUPPORTED;
  }
  snprintf(v->name, sizeof v->name, "vulkan:%u", index);
  int r = rvk_shared_open(v, index, err);
  if (r == RIG_EDGE_OK)
    r = finish_open(v, err);
  if (r != RIG_EDGE_OK) {
    rvk_destroy(v);
    return r;
  }
  rvk_make_facts(v);
  v->opened = true;
  *out = v;
  return RIG_EDGE_OK;
}

/* The validation record is the shared VkDevice's: its layer and messenger
 * serve every open on it. */
static const void *capability(void *h, const char *key) {
  rvk_dev *v = h;
  if (strcmp(key, RIG_VULKAN_DEVICE) == 0)
    return &v->info;
  return strcmp(key, RIG_VULKAN_VALIDATION) == 0 ? &v->sh->validation : NULL;
}

/* VALID-20: the launches and words of work it cannot run are refused
 * before core takes a value (edge.h's check). */
static int check(void *h, const rig_edge_work *work, rig_edge_error *err) {
  const rvk_dev *v = h;
  for (uint32_t i = 0; i < work->nparts; i++) {
    uint64_t dispatches;
    int r = work->parts[i].kind == RIG_EDGE_PART_WORDS ? rvk_check_words(v, &work->parts[i], err)
            : work->parts[i].kind == RIG_EDGE_PART_LAUNCH
                ? rvk_check_launch(v, &work->parts[i], &dispatches, err)
                : RIG_EDGE_OK;
    if (r != RIG_EDGE_OK)
      return r;
  }
  return RIG_EDGE_OK;
}

static const rig_edge_driver vulkan_driver = {
    RIG_EDGE_DRIVER_INIT("vulkan"),
    .open = open_device,
    .facts = rvk_facts,
    .stop = rvk_stop,
    .destroy = rvk_destroy,
    .signaled = rvk_signaled,
    .wait = rvk_wait,
    .submit = rvk_submit,
    .commit = rvk_commit,
    .allocate = rvk_allocate,
    .release = rvk_release,
    .map = rvk_map,
    .unmap = rvk_unmap,
    .load = rvk_load,
    .resolve = rvk_resolve,
    .unload = rvk_unload,
    .capability = capability,
    .check = check,
    .unmap_word = rvk_unmap_word,
    .map_peer = rvk_map_peer,
    .fork = rvk_fork,
    .devices = rvk_devices,
    .profile = rvk_profile,
};

RIG_EDGE_DRIVER(vulkan_driver)
