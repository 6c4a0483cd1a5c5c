/* SPDX-License-Identifier: MIT */
/* code.c: the Vulkan driver's code: an image is a SPIR-V module (load),
 * a function one of its GLCompute entry points (resolve), and an unload
 * frees both once core says their work is done. The words are read by
 * spirv_reader.c; the pipelines are pipeline.c's. */
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#include "spirv_reader.h"
#include "vulkan_private.h"

/* The capabilities a module declares that need a feature the device may
 * lack: refused at load with the feature's name, not at the first launch. */
static const char *missing_feature(const void *ctx, uint32_t cap) {
  const rvk_dev *v = ctx;
  switch (cap) {
  case SpvCapabilityFloat16:
    return v->features12.shaderFloat16 ? NULL : "shaderFloat16";
  case SpvCapabilityFloat64:
    return v->features.shaderFloat64 ? NULL : "shaderFloat64";
  case SpvCapabilityInt64:
    return v->features.shaderInt64 ? NULL : "shaderInt64";
  case SpvCapabilityInt16:
    return v->features.shaderInt16 ? NULL : "shaderInt16";
  case SpvCapabilityInt8:
    return v->features12.shaderInt8 ? NULL : "shaderInt8";
  case SpvCapabilityVulkanMemoryModel:
    return v->features12.vulkanMemoryModel ? NULL : "vulkanMemoryModel";
  default:
    return NULL;
  }
}

/* Checks n words of a module (a copy, aligned): a module the reader
 * takes, with no capability the device lacks. */
static int check_module(const rvk_dev *v, const uint32_t *words, size_t n, rig_edge_error *err) {
  char why[200];
  rvk_spirv_fault fault;
  rvk_spirv_status s = rvk_spirv_check(words, n, missing_feature, v, &fault);
  if (s == RVK_SPIRV_REFUSED)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "the module needs the %s feature, which "
                         "%.64s lacks", fault.feature, v->props.deviceName);
  if (s != RVK_SPIRV_OK)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s",
                         rvk_spirv_why(s, &fault, why, sizeof why));
  return RIG_EDGE_OK;
}

/* im->module from words; a failure other than no memory is the module's. */
static int make_module(rvk_dev *v, rvk_image *im, const uint32_t *words, size_t n,
                       rig_edge_error *err) {
  VkShaderModuleCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                 .codeSize = n,
                                 .pCode = words};
  VkResult r = vkCreateShaderModule(v->dev, &ci, NULL, &im->module);
  if (r == VK_SUCCESS)
    return RIG_EDGE_OK;
  if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
    return rvk_fail(err, r, "vkCreateShaderModule", v->name);
  return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "%s: vkCreateShaderModule: %s", v->name,
                       rvk_result_name(r));
}

static void link_image(rvk_dev *v, rvk_image *im) {
  pthread_mutex_lock(&v->ilock);
  im->next = v->images;
  if (v->images)
    v->images->prev = im;
  v->images = im;
  pthread_mutex_unlock(&v->ilock);
}

int rvk_load(void *h, const void *bytes, size_t n, void **out_image, uint64_t *out_code_bytes,
             rig_edge_error *err) {
  rvk_dev *v = h;
  if (!v->launches)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s runs no code (%s)", v->name,
                         v->bda ? "no queue computes" : "no buffer device addresses");
  if (n % 4)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "not a SPIR-V module: %zu bytes is no whole number of words", n);
  uint32_t *words = malloc(n ? n : 4);
  rvk_image *im = calloc(1, sizeof *im);
  int r = words && im ? RIG_EDGE_OK
                      : rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  if (r == RIG_EDGE_OK && n)
    memcpy(words, bytes, n); /* aligned, and kept for resolve */
  if (r == RIG_EDGE_OK)
    r = check_module(v, words, n / 4, err);
  if (r == RIG_EDGE_OK)
    r = make_module(v, im, words, n, err);
  if (r != RIG_EDGE_OK) {
    free(words);
    free(im);
    return r;
  }
  im->words = words;
  im->nwords = n / 4;
  link_image(v, im);
  *out_image = im;
  *out_code_bytes = n;
  return RIG_EDGE_OK;
}

static void func_free(rvk_func *f) {
  pthread_mutex_destroy(&f->shared_lock);
  free(f->pipes);
  free(f->name);
  free(f);
}

/* The entry point a resolve names: the whole name where the module has
 * an entry of that name, else the name before its first ':', whose rest
 * is options (bindings.c: specialization constants). */
static char *entry_name(const rvk_image *im, const char *name, const char **options) {
  rvk_spirv_group g;
  const char *colon = strchr(name, ':');
  *options = NULL;
  if (!colon || rvk_spirv_entry(im->words, im->nwords, name, &g) != 0)
    return strdup(name);
  *options = colon + 1;
  return strndup(name, (size_t)(colon - name));
}

int rvk_resolve(void *h, void *image, const char *name, void **out_function,
                rig_edge_error *err) {
  rvk_dev *v = h;
  rvk_image *im = image;
  const char *options;
  rvk_func *f = calloc(1, sizeof *f);
  if (f)
    pthread_mutex_init(&f->shared_lock, NULL);
  if (!f || !(f->name = entry_name(im, name, &options))) {
    if (f)
      pthread_mutex_destroy(&f->shared_lock);
    free(f);
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "%s: out of host memory", v->name);
  }
  rvk_spirv_group g;
  int found = rvk_spirv_entry(im->words, im->nwords, f->name, &g);
  if (found <= 0) {
    int r = found == 0 ? RIG_EDGE_OK
                       : rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                                       "%s: entry point %s: its "
                                       "group size is neither a LocalSize nor constants",
                                       v->name, f->name);
    func_free(f);
    *out_function = NULL; /* None */
    return r;
  }
  memcpy(f->fixed, g.fixed, sizeof f->fixed);
  memcpy(f->spec, g.spec, sizeof f->spec);
  f->image = im;
  int r = rvk_func_layout(v, f, options, err);
  if (r != RIG_EDGE_OK) {
    rvk_func_layout_free(v, f);
    func_free(f);
    return r;
  }
  pthread_mutex_lock(&v->ilock);
  r = rvk_make_code_objects(v, err);
  if (r == RIG_EDGE_OK) {
    f->image = im;
    f->next = im->funcs;
    im->funcs = f;
  }
  pthread_mutex_unlock(&v->ilock);
  if (r != RIG_EDGE_OK) {
    rvk_func_layout_free(v, f);
    func_free(f);
    return r;
  }
  *out_function = f;
  return RIG_EDGE_OK;
}

/* Destroys im's pipelines and module; the work that used them is done. */
static void image_objects_free(rvk_dev *v, rvk_image *im) {
  for (rvk_func *f = im->funcs; f; f = f->next) {
    rvk_free_pipelines(v, f);
    rvk_func_layout_free(v, f);
  }
  if (im->module)
    vkDestroyShaderModule(v->dev, im->module, NULL);
  im->module = VK_NULL_HANDLE;
  im->dead = true;
}

static void image_free(rvk_dev *v, rvk_image *im) {
  if (!im->dead)
    image_objects_free(v, im);
  for (rvk_func *f = im->funcs, *next; f; f = next) {
    next = f->next;
    func_free(f);
  }
  free(im->words);
  free(im);
}

/* Core unloads an image once the work submitted until its release is done
 * (RUN-8); after the stop, which destroyed its objects, it only frees. */
int rvk_unload(void *h, void *image, rig_edge_error *err) {
  rvk_dev *v = h;
  rvk_image *im = image;
  (void)err;
  rvk_objects_go(v); /* its pipelines */
  pthread_mutex_lock(&v->ilock);
  if (im->prev)
    im->prev->next = im->next;
  else if (v->images == im)
    v->images = im->next;
  if (im->next)
    im->next->prev = im->prev;
  pthread_mutex_unlock(&v->ilock);
  image_free(v, im);
  return RIG_EDGE_OK;
}

/* The stop: every image's pipelines and module go (core unloads no image
 * of a stopped device; their records go at destroy). Returns whether any
 * pipeline went. ilock held. */
bool rvk_images_objects_free(rvk_dev *v) {
  bool pipelines = false;
  for (rvk_image *im = v->images; im; im = im->next)
    if (!im->dead) {
      for (rvk_func *f = im->funcs; f; f = f->next)
        pipelines |= f->npipes > 0;
      image_objects_free(v, im);
    }
  return pipelines;
}

/* Destroy: the images core never unloaded. */
void rvk_images_free(rvk_dev *v) {
  while (v->images) {
    rvk_image *im = v->images;
    v->images = im->next;
    image_free(v, im);
  }
}
