/* host_launch.c: copies and fills as launches on the host (host_launch.h). */
#include "host_launch.h"

#include <stddef.h>
#include <string.h>

#include "kernel_file.h"
#include "kernels.h"

rig_status host_kernels_load(host_kernels *k) {
  memset(k, 0, sizeof *k);
  rig_status st =
      kernel_file_load(rig_device_host(), "copy_bytes.o", "copy_bytes", &k->copy_image, &k->copy);
  if (st == RIG_OK)
    st = kernel_file_load(rig_device_host(), "fill_bytes.o", "fill_bytes", &k->fill_image,
                          &k->fill);
  if (st != RIG_OK)
    host_kernels_release(k);
  return st;
}

void host_kernels_release(host_kernels *k) {
  rig_image_release(k->copy_image);
  rig_image_release(k->fill_image);
  memset(k, 0, sizeof *k);
}

rig_part host_launch_of(const host_kernels *k, const rig_part *p, rig_ref refs[2]) {
  rig_part launch;
  if (p->kind == RIG_PART_COPY) {
    refs[0] = rig_ref_read(p->src, offsetof(struct copy_bytes, src));
    refs[1] = rig_ref_write(p->dst, offsetof(struct copy_bytes, dst));
    launch = rig_part_launch(k->copy, refs, 2, sizeof(struct copy_bytes));
  } else if (p->kind == RIG_PART_FILL) {
    refs[0] = rig_ref_write(p->dst, offsetof(struct fill_bytes, dst));
    launch = rig_part_launch(k->fill, refs, 1, sizeof(struct fill_bytes));
  } else {
    return *p;
  }
  launch.flags = p->flags;
  return launch;
}

rig_status host_launch_set(rig_run *r, uint32_t block, const rig_part *p, uint64_t n) {
  rig_status st;
  if (p->kind == RIG_PART_COPY) {
    struct copy_bytes c = {NULL, NULL, (int64_t)n};
    st = rig_run_bytes(r, block, 0, &c, sizeof c);
  } else {
    struct fill_bytes f = {NULL, (int64_t)n, p->pattern, p->pattern_bytes};
    st = rig_run_bytes(r, block, 0, &f, sizeof f);
  }
  if (st == RIG_OK)
    st = rig_run_groups(r, block, n / COPY_BYTES_THREADS + 1, 1, 1);
  if (st == RIG_OK)
    st = rig_run_threads(r, block, COPY_BYTES_THREADS, 1, 1);
  return st;
}
