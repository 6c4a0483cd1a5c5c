/* SPDX-License-Identifier: MIT */
/* memory.c: the Vulkan driver's memory: each allocation a VkBuffer on
 * memory of its own (device memory of the kind core asks, or host memory
 * it imports through VK_EXT_external_memory_host), listed per open. */
#include <inttypes.h>
#include <stdlib.h>

#include "vulkan_private.h"

/* The memory type among bits with every flag of need, the most of want
 * and none of avoid where it can; UINT32_MAX for none. */
static uint32_t pick_type(const rvk_dev *v, uint32_t bits, VkMemoryPropertyFlags need,
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

static VkBufferUsageFlags usage(const rvk_dev *v) {
  return VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
         (v->bda ? VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT : 0);
}

static void link_mem(rvk_dev *v, rvk_mem *m) {
  pthread_mutex_lock(&v->mlock);
  m->prev = NULL;
  m->next = v->mems;
  if (v->mems)
    v->mems->prev = m;
  v->mems = m;
  pthread_mutex_unlock(&v->mlock);
}

static void unlink_mem(rvk_dev *v, rvk_mem *m) {
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
void rvk_free_objects(rvk_dev *v, rvk_mem *m) {
  if (m->buf)
    vkDestroyBuffer(v->dev, m->buf, NULL);
  if (m->mem)
    vkFreeMemory(v->dev, m->mem, NULL);
  m->buf = VK_NULL_HANDLE;
  m->mem = VK_NULL_HANDLE;
}

/* m->buf: a VkBuffer of size bytes, importable where host is not NULL. */
static int create_vkbuffer(rvk_dev *v, rvk_mem *m, uint64_t size, void *host,
                           rig_edge_error *err) {
  VkExternalMemoryBufferCreateInfo ext = {
      .sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
      .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT};
  VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                            .pNext = host ? &ext : NULL,
                            .size = size,
                            .usage = usage(v),
                            .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(v->dev, &bci, NULL, &m->buf);
  return r == VK_SUCCESS ? RIG_EDGE_OK : rvk_fail(err, r, "vkCreateBuffer", v->name);
}

/* m->mem: memory of type for m->buf (host's pages where host is not
 * NULL), bound to it. Frees m's objects on failure. */
static int bind_memory(rvk_dev *v, rvk_mem *m, uint32_t type, uint64_t bytes, void *host,
                       rig_edge_error *err) {
  VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                     .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
  VkImportMemoryHostPointerInfoEXT imp = {
      .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT,
      .pNext = v->bda ? &flags : NULL,
      .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT,
      .pHostPointer = host};
  VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                              .pNext = host ? (void *)&imp : v->bda ? (void *)&flags : NULL,
                              .allocationSize = bytes,
                              .memoryTypeIndex = type};
  VkResult r = vkAllocateMemory(v->dev, &mai, NULL, &m->mem);
  if (r != VK_SUCCESS) {
    rvk_free_objects(v, m);
    return rvk_fail(err, r, host ? "vkAllocateMemory (host memory)" : "vkAllocateMemory", v->name);
  }
  if ((r = vkBindBufferMemory(v->dev, m->buf, m->mem, 0)) != VK_SUCCESS) {
    rvk_free_objects(v, m);
    return rvk_fail(err, r, "vkBindBufferMemory", v->name);
  }
  return RIG_EDGE_OK;
}

/* A buffer of size bytes on memory of a type that need/want/avoid choose,
 * or on imported host memory (import: its type bits, host its address). */
int rvk_make_buffer(rvk_dev *v, rvk_mem *m, uint64_t size, VkMemoryPropertyFlags need,
                    VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid, void *host,
                    uint32_t import_bits, VkMemoryRequirements *out_req, rig_edge_error *err) {
  int r = create_vkbuffer(v, m, size, host, err);
  if (r != RIG_EDGE_OK)
    return r;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(v->dev, m->buf, &req);
  uint32_t bits = req.memoryTypeBits & (host ? import_bits : ~0u);
  uint32_t type = pick_type(v, bits, need, want, avoid);
  if (type == UINT32_MAX) {
    rvk_free_objects(v, m);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory type for this kind", v->name);
  }
  if (host && req.size > size) {
    rvk_free_objects(v, m);
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: a buffer over %" PRIu64
                         " bytes of host memory needs %" PRIu64, v->name, size, (uint64_t)req.size);
  }
  if ((r = bind_memory(v, m, type, host ? size : req.size, host, err)) != RIG_EDGE_OK)
    return r;
  m->size = size;
  m->flags = v->memprops.memoryTypes[type].propertyFlags;
  if (out_req)
    *out_req = req;
  return RIG_EDGE_OK;
}

uint64_t rvk_address_of(const rvk_dev *v, const rvk_mem *m) {
  if (!v->bda || !m->buf)
    return 0;
  VkBufferDeviceAddressInfo i = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
                                 .buffer = m->buf};
  return v->GetBufferDeviceAddress(v->dev, &i) + m->base;
}

/* The memory type flags of a kind of memory: what it needs, wants most
 * and avoids where it can. False for no such kind. */
static bool kind_flags(uint32_t kind, VkMemoryPropertyFlags f[3]) {
  const VkMemoryPropertyFlags coherent =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  switch (kind) {
  case RIG_EDGE_KIND_DEVICE: /* device-local, not host-visible where it can */
    f[0] = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, f[1] = 0, f[2] = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    return true;
  case RIG_EDGE_KIND_MAPPED: /* device memory the host addresses */
    f[0] = coherent, f[1] = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, f[2] = 0;
    return true;
  case RIG_EDGE_KIND_PINNED: /* host memory the device maps */
    f[0] = coherent, f[1] = VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
    f[2] = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    return true;
  default:
    return false;
  }
}

/* The host's address of m where the host addresses it (NULL where not).
 * Frees m's objects on failure. */
static int map_for_host(rvk_dev *v, rvk_mem *m, bool addressed, void **host, rig_edge_error *err) {
  const VkMemoryPropertyFlags coherent =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  *host = NULL;
  if (!addressed || (m->flags & coherent) != coherent)
    return RIG_EDGE_OK;
  VkResult vr = vkMapMemory(v->dev, m->mem, 0, VK_WHOLE_SIZE, 0, host);
  if (vr == VK_SUCCESS)
    return RIG_EDGE_OK;
  rvk_free_objects(v, m);
  return rvk_fail(err, vr, "vkMapMemory", v->name);
}

int rvk_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                 rig_edge_error *err) {
  rvk_dev *v = h;
  static _Alignas(4096) unsigned char empty[4]; /* where no bytes live */
  uint64_t size = (bytes + 3) / 4 * 4;
  VkMemoryPropertyFlags f[3];
  if (size > v->max_alloc)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: %" PRIu64 " bytes exceed the largest "
                         "allocation of %" PRIu64, v->name, bytes, v->max_alloc);
  if (!kind_flags(kind, f))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: no memory kind %u", v->name, kind);
  bool addressed = kind != RIG_EDGE_KIND_DEVICE || v->device_host;
  rvk_mem *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  if (size == 0) { /* no bytes: no Vulkan object, and nothing charged */
    link_mem(v, m);
    *out = (rig_edge_alloc){m, addressed ? empty : NULL, 0, 0};
    return RIG_EDGE_OK;
  }
  VkMemoryRequirements req;
  void *host = NULL;
  int r = rvk_make_buffer(v, m, size, f[0], f[1], f[2], NULL, 0, &req, err);
  if (r == RIG_EDGE_OK)
    r = map_for_host(v, m, addressed, &host, err);
  if (r != RIG_EDGE_OK) {
    free(m);
    return r;
  }
  link_mem(v, m);
  out->handle = m;
  out->host = host;
  out->address = m->address = rvk_address_of(v, m);
  m->bytes = size;
  out->bytes = req.size; /* what the device took */
  return RIG_EDGE_OK;
}

/* A command buffer that names an object is invalid once the object goes,
 * even where a new one takes its handle: the cache's entries recorded
 * before go stale. Counted before the object goes, so that no record can
 * see its handle reused under the old count. */
void rvk_objects_go(rvk_dev *v) { __atomic_fetch_add(&v->gen, 1, __ATOMIC_ACQ_REL); }

int rvk_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  rvk_dev *v = h;
  rvk_mem *m = a->handle;
  (void)err;
  rvk_objects_go(v);
  unlink_mem(v, m);
  rvk_free_objects(v, m);
  free(m);
  return RIG_EDGE_OK;
}

/* Maps host memory through VK_EXT_external_memory_host: the pages that
 * hold [host, host + bytes), with the range's first byte at m->base. */
int rvk_map(void *h, void *host, uint64_t bytes, rig_edge_alloc *out, rig_edge_error *err) {
  rvk_dev *v = h;
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
    return rvk_fail(err, vr, "vkGetMemoryHostPointerPropertiesEXT", v->name);
  rvk_mem *m = calloc(1, sizeof *m);
  if (!m)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  int r = rvk_make_buffer(v, m, end - first, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
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
  out->address = m->address = rvk_address_of(v, m);
  m->bytes = bytes;
  out->bytes = bytes;
  return RIG_EDGE_OK;
}

int rvk_unmap(void *h, rig_edge_alloc *a, rig_edge_error *err) { return rvk_release(h, a, err); }

/* Host memory it maps goes back at the stop: nothing runs on it any more,
 * and core unmaps nothing of a stopped device. */
void rvk_free_host_maps(rvk_dev *v) {
  pthread_mutex_lock(&v->mlock);
  for (rvk_mem *m = v->mems; m; m = m->next)
    if (m->imported)
      rvk_free_objects(v, m);
  pthread_mutex_unlock(&v->mlock);
}

/* What core never gave back (its mappings after the stop) goes at destroy. */
void rvk_free_mems(rvk_dev *v) {
  while (v->mems) {
    rvk_mem *m = v->mems;
    v->mems = m->next;
    rvk_free_objects(v, m);
    free(m);
  }
}
