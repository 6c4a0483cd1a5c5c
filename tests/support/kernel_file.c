/* kernel_file.c: kernels read and loaded (kernel_file.h). */
#include "kernel_file.h"

#include <stdio.h>
#include <stdlib.h>

char *kernel_file_path(const char *file, char *path, size_t size) {
  const char *dir = getenv("RIG_KERNELS");
  snprintf(path, size, "%s/%s", dir && *dir ? dir : ".", file);
  return path;
}

void *kernel_file_read(const char *file, size_t *n) {
  char path[512];
  FILE *f = fopen(kernel_file_path(file, path, sizeof path), "rb");
  if (!f)
    return NULL;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  void *bytes = size >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc(size ? (size_t)size : 1) : NULL;
  if (bytes && fread(bytes, 1, (size_t)size, f) != (size_t)size) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  *n = bytes ? (size_t)size : 0;
  return bytes;
}

rig_status kernel_file_load(rig_device *d, const char *file, const char *entry, rig_image **im,
                            rig_function **f) {
  char path[512];
  size_t n = 0;
  void *bytes = kernel_file_read(file, &n);
  *im = NULL;
  *f = NULL;
  if (!bytes) {
    fprintf(stderr, "no kernel %s: build the tests\n", kernel_file_path(file, path, sizeof path));
    return RIG_UNAVAILABLE;
  }
  rig_status st = rig_image_load(d, bytes, n, im);
  free(bytes);
  if (st == RIG_OK && (st = rig_image_resolve(*im, entry, f)) == RIG_OK && !*f)
    st = RIG_UNAVAILABLE; /* resolve finds no such function: *f NULL */
  if (st != RIG_OK) {
    fprintf(stderr, "kernel %s does not load: %s: %s\n", kernel_file_path(file, path, sizeof path),
            rig_status_name(st), rig_error_last()->message);
    rig_image_release(*im); /* NULL where the load failed: a no-op */
    *im = NULL;
  }
  return st;
}
