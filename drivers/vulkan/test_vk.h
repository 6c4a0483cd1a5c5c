/* test_vk.h: what the Vulkan driver's tests (test_vulkan.c,
 * test_shaders.c) share: the device under test and its close. */
#ifndef RIG_TEST_VK_H
#define RIG_TEST_VK_H

#include <rig/rig.h>

/* cmocka's group setup: names the device under test ($RIG_VK_DEVICE, else
 * "vulkan:0") and opens it once; exits 77 saying why where it does not
 * open (no Vulkan device), 1 on any other failure. */
int vk_test_setup(void **st);

/* Closes and releases d, asserting the validation layer found nothing. */
void vk_close_dev(rig_device *d);

/* A buffer of n bytes on d holding src; the caller releases it. */
rig_buffer *vk_buffer_of(rig_device *d, const void *src, size_t n);

#endif
