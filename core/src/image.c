/* SPDX-License-Identifier: MIT */
/* image.c: code loaded on a device, and its functions (RUN-1, RUN-4,
 * HOST-2, HOST-3, OPEN-42; Image.load, resolve, device, name, image,
 * params, threads, entry).
 *
 * An image holds its driver's handle and the bytes its code takes, which
 * count in the device's budget until the code goes. Its functions are
 * resolved once per name and live as long as the image, on a list that
 * only grows at its head and is read with no lock, so that no thread holds
 * a lock of an image at a fork (docs/fork.md). Submissions that
 * launch a function hold its image, so the code stays while work may run
 * it; the last release hands the image to the device's kept values
 * (keep.c), which give it back to the driver once the work submitted until
 * then is done (RUN-8, RECLAIM-17).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

struct rig_function {
  rig_image *image;
  void *handle;                /* the driver's function */
  char *name;
  uint32_t label;              /* its name in profiles (profile.c) */
  struct rig_function *next;
};

struct rig_image {
  _Atomic uint32_t refs;
  rig_device *dev;
  void *handle;                /* the driver's image */
  uint64_t code_bytes;         /* charged to dev's budget */
  _Atomic(rig_function *) functions; /* grows at its head */
};

/* A driver's failure while it changes code loses the device with its text
 * (ERR-23, LOSS-4); its refusal of misuse is Invalid_argument. */
static rig_status driver_failed(rig_device *d, int r, const rig_edge_error *err, const char *fn) {
  if (r == RIG_EDGE_UNSUPPORTED)
    return rig__fail(RIG_INVALID, d, 0, "%s: %s: %s", fn, d->name, err->message);
  if (r == RIG_EDGE_UNAVAILABLE)                              /* the text's Error */
    return rig__fail(RIG_UNAVAILABLE, d, 0, "%s: %s", d->name, err->message);
  if (r == RIG_EDGE_NO_ROOM)
    return rig__fail(RIG_OUT_OF_MEMORY, d, 0, "%s: %s: %s", fn, d->name, err->message);
  rig__lose_for(d, r, err->message);
  return rig__lost_error(d);
}

/* Gives the code back and uncharges it: the image's last hold went and
 * its work is done. */
static void unload(void *p) {
  rig_image *im = p;
  rig_device *d = im->dev;
  rig_edge_error err = {0};
  if (d->drv->unload && !d->life.forked && !rig__is_stopped(d))
    (void)RIG__DRIVER_OF(d, d->drv->unload(d->h, im->handle, &err));
  atomic_fetch_sub(&d->mem.allocated, im->code_bytes);
  for (rig_function *f = atomic_load(&im->functions), *n; f; f = n) {
    n = f->next;
    free(f->name);
    free(f);
  }
  rig_device_release(d);
  free(im);
}

/* Charges the code to d's budget; refused over it (the code was loaded:
 * the caller unloads it). */
static rig_status charge(rig_device *d, uint64_t bytes) {
  uint64_t was = atomic_fetch_add(&d->mem.allocated, bytes);
  if (d->is_host || was + bytes <= atomic_load(&d->mem.budget))
    return RIG_OK;
  atomic_fetch_sub(&d->mem.allocated, bytes);
  return rig__fail(RIG_OUT_OF_MEMORY, d, bytes, "%s: out of memory for %llu bytes of code",
                   d->name, (unsigned long long)bytes);
}

RIG_API rig_status rig_image_load(rig_device *d, const void *bytes, size_t n, rig_image **out) {
  rig_status st = rig__may_lock("rig_image_load");
  if (st)
    return st;
  if (!d || !out || (!bytes && n))
    return rig__fail(RIG_INVALID, d, 0, "rig_image_load: NULL argument");
  if (rig__is_lost(d))
    return rig__lost_error(d);
  if (!d->drv->load || !rig_device_computes(d))
    return rig__fail(RIG_INVALID, d, 0, "rig_image_load: %s loads no code", d->name); /* OPEN-42 */
  rig_image *im = calloc(1, sizeof *im);
  if (!im)
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), sizeof *im, "rig_image_load: out of memory");
  rig_edge_error err = {0};
  int r = RIG__DRIVER_OF(d, d->drv->load(d->h, bytes, n, &im->handle, &im->code_bytes, &err));
  if (r != RIG_EDGE_OK) {
    free(im);
    return driver_failed(d, r, &err, "rig_image_load");
  }
  if ((st = charge(d, im->code_bytes)) != RIG_OK) {
    if (d->drv->unload)
      (void)RIG__DRIVER_OF(d, d->drv->unload(d->h, im->handle, &err));
    free(im);
    return st;
  }
  im->dev = rig_device_retain(d);
  atomic_store(&im->refs, 1);
  *out = im;
  return RIG_OK;
}

/* The function of name among those from head on, or NULL. */
static rig_function *known(rig_function *head, const char *name) {
  for (rig_function *f = head; f; f = f->next)
    if (strcmp(f->name, name) == 0)
      return f;
  return NULL;
}

/* The last name this thread's rig_image_resolve found no function for, and
 * its device's name: rig_submission_make names it when a launch part has
 * no function, since a resolve's None (RIG_OK, NULL) says nothing itself. */
static _Thread_local char missing_name[96], missing_device[64];

const char *rig__missing_function(const char **device) {
  *device = missing_device;
  return missing_name[0] ? missing_name : NULL;
}

RIG_API rig_status rig_image_resolve(rig_image *im, const char *name, rig_function **out) {
  rig_status st = rig__may_lock("rig_image_resolve");
  if (st)
    return st;
  if (!im || !name || !out)
    return rig__fail(RIG_INVALID, im ? im->dev : NULL, 0, "rig_image_resolve: NULL argument");
  rig_device *d = im->dev;
  if (rig__is_lost(d))
    return rig__lost_error(d);
  rig_function *head = atomic_load(&im->functions);
  rig_function *f = known(head, name);
  if (f) {
    *out = f;
    return RIG_OK;
  }
  void *handle = NULL;
  rig_edge_error err = {0};
  int r = d->drv->resolve ? RIG__DRIVER_OF(d, d->drv->resolve(d->h, im->handle, name, &handle, &err))
                          : RIG_EDGE_OK;
  if (r != RIG_EDGE_OK)
    return driver_failed(d, r, &err, "rig_image_resolve");
  if (!handle) {
    snprintf(missing_name, sizeof missing_name, "%s", name);
    snprintf(missing_device, sizeof missing_device, "%s", d->name);
    *out = NULL;                                              /* None */
    return RIG_OK;
  }
  rig_function *made = calloc(1, sizeof *made);
  if (!made || !(made->name = strdup(name))) {
    free(made);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), 0, "rig_image_resolve: out of memory");
  }
  made->image = im;
  made->handle = handle;
  made->label = rig__profile_label(name);
  /* Another thread may have resolved it meanwhile. */
  for (;;) {
    if ((f = known(head, name)))
      break;
    made->next = head;
    if (atomic_compare_exchange_weak(&im->functions, &head, made)) {
      f = made;
      break;
    }
  }
  if (f != made) {
    free(made->name);
    free(made);
  }
  *out = f;
  return RIG_OK;
}

RIG_API rig_image *rig_image_retain(rig_image *im) {
  if (im)
    atomic_fetch_add(&im->refs, 1);
  return im;
}

RIG_API void rig_image_release(rig_image *im) {
  if (!im || atomic_fetch_sub(&im->refs, 1) != 1)
    return;
  if (rig__keep_queue(im->dev, im, unload) != RIG_OK)
    unload(im); /* no memory to queue it: nothing of it can run now */
}

RIG_API rig_device *rig_image_device(const rig_image *im) { return im ? im->dev : NULL; }
RIG_API const char *rig_function_name(const rig_function *f) { return f ? f->name : NULL; }
RIG_API rig_image *rig_function_image(const rig_function *f) { return f ? f->image : NULL; }
RIG_API uint32_t rig_function_params(const rig_function *f) { return 0; }
RIG_API uint64_t rig_function_threads(const rig_function *f) { return f ? UINT64_MAX : 0; }
RIG_API uint64_t rig_function_entry(const rig_function *f) {
  return f ? (uint64_t)(uintptr_t)f->handle : 0;
}

void *rig__function_handle(const rig_function *f) { return f->handle; }
uint32_t rig__function_label(const rig_function *f) { return f->label; }
