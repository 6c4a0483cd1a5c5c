/* A parent project's program: rig through dependency('rig-core'), run
 * with no environment. It copies "hello" to a memory device and back,
 * lists the devices, and opens vulkan:0; both plugins are found beside
 * librig-core, in the build tree or in an install moved elsewhere
 * (docs/finding-devices.md).
 *   parent              the plugins must come from the build's driver folder
 *   parent PREFIX       from the install tree, moved to PREFIX
 * Exits 0, 1 on a failure (a plugin not found among them), 77 where
 * vulkan:0 does not open here for another reason. */
#include <stdio.h>
#include <string.h>

#include <rig/rig.h>

static int hello(void) {
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
  rig_status st = rig_device_close(d);
  rig_device_release(d);
  return st != RIG_OK || strcmp(out, "hello") != 0;
}

/* The list, printed; the memory plugin's must come from the folder from. */
static int list(const char *from) {
  rig_device_entry e[64];
  size_t n = 0;
  if (rig_device_list(e, 64, &n) != RIG_OK) {
    printf("parent: rig_device_list: %s\n", rig_error_last()->message);
    return 1;
  }
  int memory = 0; /* 0: not listed, 1: from from, 2: from elsewhere */
  for (size_t i = 0; i < n && i < 64; i++) {
    printf("parent: %-10s %-7s %s %s\n", e[i].name, rig_device_type_name(e[i].type),
           e[i].opens ? "opens" : "does not open:", e[i].opens ? e[i].path : e[i].why);
    if (strcmp(e[i].name, "memory:0") == 0 && e[i].opens)
      memory = strncmp(e[i].path, from, strlen(from)) == 0 && e[i].path[strlen(from)] == '/' ? 1 : 2;
  }
  if (memory != 1) {
    printf("parent: memory:0 %s (not from %s)\n", memory ? "came from elsewhere" : "is not listed",
           from);
    return 1;
  }
  return 0;
}

static int vulkan(void) {
  rig_device *d;
  if (!strstr(RIG_DRIVER_PATH_BUILT, "/drivers/vulkan")) {
    printf("parent: rig built no Vulkan driver here (no libvulkan-dev or spirv-headers)\n");
    return 77;
  }
  if (rig_device_open("vulkan:0", &d) != RIG_OK) {
    const char *why = rig_error_last()->message;
    printf("parent: vulkan:0: %s\n", why);
    return strstr(why, "no driver 'vulkan'") ? 1 : 77;
  }
  printf("parent: opened %s (%s)\n", rig_device_name(d), rig_device_type_name(rig_device_type_of(d)));
  rig_status st = rig_device_close(d);
  rig_device_release(d);
  return st != RIG_OK;
}

int main(int argc, char **argv) {
  int r = hello();
  if (r == 0)
    r = list(argc > 1 ? argv[1] : RIG_DRIVER_DIR_BUILT);
  return r ? r : vulkan();
}
