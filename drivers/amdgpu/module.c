/* SPDX-License-Identifier: MIT */
/* module.c: code objects on the GPU. load reads the object (codeobj.c: for
 * this device's gfx name, with kernels that use scratch refused by name),
 * places its image in a GTT buffer object at a GPU address of its own,
 * applies its relocations for that address and writes it there once; the
 * GPU then fetches its code and descriptors from it. resolve finds a
 * kernel by name (NULL where the image has none). Nothing is compiled:
 * the image is machine code for the target named in its ELF header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amdgpu_private.h"

typedef struct amdimage {
  codeobj c;
  amem *mem;
  amdfn *fns; /* one per kernel, in c.kernels' order */
} amdimage;

int module_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
                rig_edge_error *err) {
  amddev *d = h;
  char why[200];
  int r = loss_check(d, err);
  if (r != RIG_EDGE_OK)
    return r;
  amdimage *im = calloc(1, sizeof *im);
  if (!im)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  if (codeobj_read(bytes, n, d->node.arch, &im->c, why, sizeof why) != 0) {
    free(im);
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: the image: %s", d->name, why);
  }
  im->fns = calloc(im->c.nkernels, sizeof *im->fns);
  r = im->fns ? mem_make(d, im->c.image_bytes, AMDGPU_GEM_DOMAIN_GTT,
                         AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, true, &im->mem, err)
              : rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", d->name);
  if (r != RIG_EDGE_OK) {
    codeobj_free(&im->c);
    free(im->fns);
    free(im);
    return r;
  }
  codeobj_relocate(&im->c, im->mem->va);
  memcpy(im->mem->host, im->c.image, im->c.image_bytes);
  for (uint32_t i = 0; i < im->c.nkernels; i++)
    im->fns[i] = (amdfn){.k = &im->c.kernels[i], .base = im->mem->va};
  *out_image = im;
  *out_code_bytes = im->mem->bytes;
  return RIG_EDGE_OK;
}

int module_resolve(void *h, void *image, const char *name, void **out_function,
                   rig_edge_error *err) {
  amdimage *im = image;
  (void)h;
  (void)err;
  *out_function = NULL;
  for (uint32_t i = 0; i < im->c.nkernels; i++)
    if (strcmp(im->c.kernels[i].name, name) == 0)
      *out_function = &im->fns[i];
  return RIG_EDGE_OK;
}

/* Core unloads an image once no work that uses it can still run. */
int module_unload(void *h, void *image, rig_edge_error *err) {
  amdimage *im = image;
  (void)err;
  mem_free(h, im->mem);
  codeobj_free(&im->c);
  free(im->fns);
  free(im);
  return RIG_EDGE_OK;
}
