/* SPDX-License-Identifier: MIT */
/* rig-vulkan.h: what the Vulkan driver registers for rig_device_capability
 * (PROP-39). Programs and tests include it; the driver itself too. */
#ifndef RIG_VULKAN_H
#define RIG_VULKAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* rig_device_capability(d, RIG_VULKAN_VALIDATION): the validation layer's record
 * for the device. active: the layer runs (validate=1 or count, or
 * $RIG_VULKAN_VALIDATE, and VK_LAYER_KHRONOS_validation installed);
 * errors: the errors it reported so far. */
#define RIG_VULKAN_VALIDATION "vulkan.validation"
typedef struct rig_vulkan_validation {
  uint32_t size;
  bool active;
  _Atomic uint64_t errors;
} rig_vulkan_validation;

/* rig_device_capability(d, RIG_VULKAN_DEVICE): the physical device behind a
 * vulkan:N device, as its driver states it at open (rig info prints it).
 * Strings are NUL-terminated; versions are Vulkan's packed encoding
 * (VK_API_VERSION_MAJOR etc.), but driver_version, whose packing is the
 * vendor's own. */
#define RIG_VULKAN_DEVICE "vulkan.device"
typedef struct rig_vulkan_device {
  uint32_t size;            /* sizeof(rig_vulkan_device) */
  uint32_t vendor_id, device_id;
  uint32_t device_type;     /* VkPhysicalDeviceType: 1 integrated, 2 discrete,
                               3 virtual, 4 cpu, 0 other */
  uint32_t api_version;     /* the Vulkan version the device supports */
  uint32_t driver_version;  /* the vendor's encoding */
  char name[256];           /* deviceName: "llvmpipe (LLVM 15.0.6, 256 bits)" */
  char driver_name[256];    /* driverName: "llvmpipe", "NVIDIA" */
  char driver_info[256];    /* driverInfo: "Mesa 22.3.6 (LLVM 15.0.6)" */
  uint64_t memory_bytes;    /* the device-local heaps' sizes */
} rig_vulkan_device;

/* A words part (rig_part_words) on a vulkan:N device: packets, each a
 * header RIG_VULKAN_PACKET(op, n), n the packet's words with the header,
 * then its operands. An address is what a ref of the buffer stores
 * (rig_submission_address), low word first; it must fall in a buffer of
 * the same device, and the packet's bytes within that buffer. The driver
 * checks every packet before core takes a value: anything else makes the
 * submit RIG_INVALID naming the packet. The packets of a part run in
 * order, each after the one before; the part follows every earlier part
 * of its submission and every later part follows it (one queue). */
#define RIG_VULKAN_PACKET(op, n) (((uint32_t)(op) << 16) | (uint32_t)(n))
enum rig_vulkan_op {
  RIG_VULKAN_NOP = 0x5601, /* n >= 1: does nothing; its other words are ignored */
  RIG_VULKAN_FILL = 0x5602, /* n = 6: address (2 words), bytes (2 words), a pattern
                                 word: vkCmdFillBuffer; address and bytes multiples of 4 */
  RIG_VULKAN_UPDATE = 0x5603, /* n = 3 + k, 1 <= k <= 16384: address (2 words), then k
                                 words written there: vkCmdUpdateBuffer; address a
                                 multiple of 4 */
};

#endif
