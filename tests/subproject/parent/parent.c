/* Uses rig through dependency('rig-core'): copies "hello" to a memory device
 * and back, as the reference's first example does (PRE-33). */
#include <stdio.h>
#include <string.h>

#include <rig/rig.h>

int main(void) {
  rig_device *d;
  rig_buffer *b;
  char out[6] = {0};
  if (rig_device_open_memory("parent", &d) || rig_buffer_create(d, 5, &b) ||
      rig_buffer_put(b, 0, "hello", 5) || rig_buffer_get(b, 0, out, 5)) {
    printf("parent: %s\n", rig_error_last()->message);
    return 1;
  }
  printf("parent: %s through %s\n", out, rig_device_name(d));
  rig_buffer_release(b);
  rig_device_close(d);
  rig_device_release(d);
  return strcmp(out, "hello") != 0;
}
