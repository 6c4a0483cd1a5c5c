/* test_vk.c: the Vulkan driver's tests' shared setup and close (test_vk.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include <rig/drivers/rig-vulkan.h>
#include "test_vk.h"

void vk_close_dev(rig_device *d) {
  const rig_vulkan_validation *v = rig_device_capability(d, RIG_VULKAN_VALIDATION);
  assert_non_null(v);
  assert_int_equal(atomic_load(&v->errors), 0); /* the layer found nothing */
  ok(rig_device_close(d));
  rig_device_release(d);
}

int vk_test_setup(void **st) {
  (void)st;
  device_under_test_from("RIG_VK_DEVICE", "vulkan:0");
  const char *base = device_under_test("");
  rig_device *d = NULL;
  if (rig_device_open(base, &d) != RIG_OK) {
    rig_status s = rig_error_last()->status;
    printf("%s %s does not open here: %s\n", s == RIG_UNAVAILABLE ? "skip:" : "error:", base,
           rig_error_last()->message);
    exit(s == RIG_UNAVAILABLE ? 77 : 1);
  }
  ok(rig_device_close(d));
  rig_device_release(d);
  return 0;
}

rig_buffer *vk_buffer_of(rig_device *d, const void *src, size_t n) {
  rig_buffer *b;
  ok(rig_buffer_create(d, n, &b));
  ok(rig_buffer_put(b, 0, src, n));
  return b;
}
