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

#endif
