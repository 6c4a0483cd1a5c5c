/* SPDX-License-Identifier: MIT */
/* devices.c: the physical devices rig_device_list shows (edge ABI 1.5):
 * those the loader lists, numbered as open takes them ("vulkan:0"). */

#include "vulkan_private.h"

/* An instance of its own, without the validation layer: a list opens
 * nothing that outlives it, and takes no lock of an open. */
int rvk_devices(char (*names)[64], uint32_t cap, uint32_t *n, rig_edge_error *err) {
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                           .pApplicationName = "rig",
                           .pEngineName = "rig",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                             .pApplicationInfo = &app};
  VkInstance inst = VK_NULL_HANDLE;
  uint32_t count = 0;
  *n = 0;
  VkResult r = vkCreateInstance(&ci, NULL, &inst);
  if (r != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "vulkan: no Vulkan instance: vkCreateInstance: %s%s",
                         rvk_result_name(r),
                         r == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan driver is installed)" : "");
  r = vkEnumeratePhysicalDevices(inst, &count, NULL);
  vkDestroyInstance(inst, NULL);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "vulkan: vkEnumeratePhysicalDevices: %s",
                         rvk_result_name(r));
  if (count == 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "vulkan: the loader lists no device (install a Vulkan driver, e.g. Mesa's lavapipe)");
  rig_edge_devices_numbered(names, cap, count, n);
  return RIG_EDGE_OK;
}
