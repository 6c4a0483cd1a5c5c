/* SPDX-License-Identifier: MIT */
/* demo_add.c: `rig demo`'s host step, the seed's add example as written
 * (Objects, OBJ-3..6): tests/kernels/add.c, compiled for the host at build
 * time and carried in the rig program (tools/embed.py), loaded once, and
 * launched over n floats in 64 groups on the host's performance cores. */
#include <stdio.h>
#include <stdlib.h>

#include <rig/rig.h>

#include "demo.h"

/* demo_add_object.c, generated from the bench's add.o */
extern const unsigned char rig_demo_add_object[];
extern const unsigned long rig_demo_add_object_bytes;

/* Prints one line per step; returns 0 when z = x + y. */
int rig_demo_add_host(void) {
  enum { N = 1000 };
  rig_image *image = NULL;
  rig_function *add = NULL;
  const void *obj = rig_demo_add_object;
  size_t bytes = rig_demo_add_object_bytes;
  if (rig_image_load(rig_device_host(), obj, bytes, &image) != RIG_OK ||
      rig_image_resolve(image, "add", &add) != RIG_OK || !add) {
    printf("  add on host: %s\n", rig_error_last()->message);
    return 1;
  }
  rig_buffer *x = NULL, *y = NULL, *z = NULL;
  if (rig_buffer_create(rig_device_host(), N * 4, &x) != RIG_OK ||
      rig_buffer_create(rig_device_host(), N * 4, &y) != RIG_OK ||
      rig_buffer_create(rig_device_host(), N * 4, &z) != RIG_OK) {
    printf("  add on host: %s\n", rig_error_last()->message);
    rig_buffer_release(x);
    rig_buffer_release(y);
    rig_image_release(image);
    return 1;
  }
  float *xs = rig_buffer_host_address(x), *ys = rig_buffer_host_address(y),
        *zs = rig_buffer_host_address(z);
  for (int i = 0; i < N; i++) {
    xs[i] = (float)i;
    ys[i] = 2.0f * (float)i;
  }
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(add, refs, 3, 32);
  rig_submission *s = NULL;
  rig_run *run = NULL;
  uint32_t k = 0;
  rig_point p = 0;
  rig_buffer *bufs[3] = {x, y, z};
  rig_status st = rig_submission_make(rig_device_host(), &launch, 1, &s);
  if (st == RIG_OK)
    st = rig_submission_take(s, &run);
  if (st == RIG_OK)
    st = rig_submission_block(s, 0, &k);
  if (st == RIG_OK) {
    st = rig_run_groups(run, k, 64, 1, 1);
    if (st == RIG_OK)
      st = rig_run_threads(run, k, (N + 63) / 64, 1, 1);
    if (st == RIG_OK)
      st = rig_run_int64(run, k, 24, N);
    rig_status sub = rig_run_submit(run, bufs, 3, NULL, 0, &p); /* gives the run back */
    st = st ? st : sub;
  }
  int bad = st != RIG_OK;
  for (int i = 0; i < N && !bad; i++)
    bad = zs[i] != 3.0f * (float)i;
  char pt[64];
  rig_point_format(p, pt, sizeof pt);
  printf("  add z = x + y on the host's %u performance cores, 64 groups   point %s: %s\n",
         rig_host_cores(), pt, bad ? "WRONG" : "z[999] = 2997");
  rig_submission_release(s);
  rig_image_release(image);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  return bad;
}
