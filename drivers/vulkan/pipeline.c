/* SPDX-License-Identifier: MIT */
/* pipeline.c: what a launch needs of the device: the one pipeline layout
 * and the buffer of large parameter blocks (made at the first resolve), a
 * compute pipeline per function and group shape (made at the first launch
 * of the shape), and the check that the device can run the launch at all
 * (VALID-20). */
#include <stdlib.h>
#include <string.h>

#include "vulkan_private.h"

/* The pipeline layout every pipeline shares (RVK_PUSH_BYTES of push
 * constants, no descriptors) and the buffer of large parameter blocks:
 * made at the first resolve, so that no submit makes them. ilock held. */
int rvk_make_code_objects(rvk_dev *v, rig_edge_error *err) {
  if (v->layout)
    return RIG_EDGE_OK;
  int r = rvk_make_buffer(v, &v->params, RVK_PARAMS_BYTES, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, NULL, 0, NULL, err);
  if (r != RIG_EDGE_OK)
    return r == RIG_EDGE_NO_ROOM ? r : RIG_EDGE_UNSUPPORTED;
  v->params_address = rvk_address_of(v, &v->params);
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, RVK_PUSH_BYTES};
  VkPipelineLayoutCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .pushConstantRangeCount = 1,
                                   .pPushConstantRanges = &range};
  VkResult vr = vkCreatePipelineLayout(v->dev, &ci, NULL, &v->layout);
  if (vr != VK_SUCCESS) {
    rvk_free_objects(v, &v->params);
    v->layout = VK_NULL_HANDLE;
    return rvk_fail(err, vr, "vkCreatePipelineLayout", v->name);
  }
  return RIG_EDGE_OK;
}

/* The layout and the parameter buffer go (the stop, destroy). */
void rvk_free_code_objects(rvk_dev *v) {
  rvk_free_objects(v, &v->params);
  if (v->layout)
    vkDestroyPipelineLayout(v->dev, v->layout, NULL);
  v->layout = VK_NULL_HANDLE;
}

/* f's pipelines go; the work that used them is done. */
void rvk_free_pipelines(rvk_dev *v, rvk_func *f) {
  for (size_t i = 0; i < f->npipes; i++)
    vkDestroyPipeline(v->dev, f->pipes[i].pipe, NULL);
  f->npipes = 0;
}

/* Whether f can run groups of t threads here: each fixed axis is t's, and
 * the group is within the device's limits. */
static int check_threads(const rvk_dev *v, const rvk_func *f, const uint64_t t[3],
                         rig_edge_error *err) {
  const VkPhysicalDeviceLimits *l = &v->props.limits;
  for (int a = 0; a < 3; a++) {
    if (f->spec[a] == UINT32_MAX && t[a] != f->fixed[a])
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: %s has a fixed LocalSize %ux%ux%u; the launch asks groups of "
                           "%llux%llux%llu threads (declare local_size_x_id/y_id/z_id)",
                           v->name, f->name, f->fixed[0] ? f->fixed[0] : 1u,
                           f->fixed[1] ? f->fixed[1] : 1u, f->fixed[2] ? f->fixed[2] : 1u,
                           (unsigned long long)t[0], (unsigned long long)t[1],
                           (unsigned long long)t[2]);
    if (t[a] > l->maxComputeWorkGroupSize[a])
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: %s: %llu threads on axis %d; the device runs at most %u",
                           v->name, f->name, (unsigned long long)t[a], a,
                           l->maxComputeWorkGroupSize[a]);
  }
  if (t[0] * t[1] * t[2] > l->maxComputeWorkGroupInvocations)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s: groups of %llu threads; the device runs at most %u", v->name,
                         f->name, (unsigned long long)(t[0] * t[1] * t[2]),
                         l->maxComputeWorkGroupInvocations);
  return RIG_EDGE_OK;
}

/* Whether the device can run launch part p: no shared bytes asked (a
 * Vulkan kernel declares its own), at most 2^32 groups an axis in at most
 * RVK_MAX_DISPATCHES dispatches, groups of a shape the function takes
 * within the device's limits. The driver's check runs it before core
 * takes a value, so that its refusal is RIG_INVALID (VALID-20); record
 * runs it again for the dispatches. */
int rvk_check_launch(const rvk_dev *v, const rig_edge_part *p, uint64_t *out_dispatches,
                     rig_edge_error *err) {
  const rvk_func *f = p->u.launch.function;
  const uint64_t *g = p->u.launch.groups;
  const uint32_t *max = v->props.limits.maxComputeWorkGroupCount;
  if (p->u.launch.shared_bytes)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s asks %u bytes of shared memory per group; a Vulkan kernel "
                         "declares its shared memory itself", v->name, f->name,
                         p->u.launch.shared_bytes);
  uint64_t dispatches = 1;
  for (int a = 0; a < 3; a++) {
    if (g[a] > UINT32_MAX)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: %llu groups on axis %d; a "
                           "shader numbers at most 2^32", v->name, f->name,
                           (unsigned long long)g[a], a);
    dispatches *= (g[a] + max[a] - 1) / max[a];
  }
  if (dispatches > RVK_MAX_DISPATCHES)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: %llux%llux%llu groups take %llu "
                         "dispatches", v->name, f->name, (unsigned long long)g[0],
                         (unsigned long long)g[1], (unsigned long long)g[2],
                         (unsigned long long)dispatches);
  *out_dispatches = dispatches;
  int r = check_threads(v, f, p->u.launch.threads, err);
  return r == RIG_EDGE_OK ? rvk_check_bindings(v, p, dispatches, err) : r;
}

/* Room for one more pipeline in f's array. */
static int grow_pipes(rvk_dev *v, rvk_func *f, rig_edge_error *err) {
  if (f->npipes < f->cappipes)
    return RIG_EDGE_OK;
  size_t cap = f->cappipes ? 2 * f->cappipes : 4;
  rvk_pipe *p = realloc(f->pipes, cap * sizeof *p);
  if (!p)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: out of host memory", v->name);
  f->pipes = p;
  f->cappipes = cap;
  return RIG_EDGE_OK;
}

/* A compute pipeline of f with its group's axes specialized to t. */
static int make_pipeline(rvk_dev *v, rvk_func *f, const uint32_t t[3], VkPipeline *out,
                         rig_edge_error *err) {
  /* the constants resolve set (8 bytes a slot), then the group's axes */
  VkSpecializationMapEntry map[RVK_MAX_SPECS + 3];
  uint64_t data[RVK_MAX_SPECS + 2];
  uint32_t nmap = f->nspec;
  memcpy(map, f->spec_map, f->nspec * sizeof *map);
  memcpy(data, f->spec_data, f->nspec * sizeof *data);
  memcpy(data + f->nspec, t, 3 * sizeof *t);
  for (uint32_t a = 0; a < 3; a++)
    if (f->spec[a] != UINT32_MAX)
      map[nmap++] = (VkSpecializationMapEntry){f->spec[a], 8 * f->nspec + 4 * a, 4};
  VkSpecializationInfo si = {nmap, map, 8 * f->nspec + 3 * sizeof *t, data};
  VkComputePipelineCreateInfo ci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = f->image->module,
                .pName = f->name,
                .pSpecializationInfo = nmap ? &si : NULL},
      .layout = f->layout ? f->layout : v->layout};
  VkResult vr = vkCreateComputePipelines(v->dev, VK_NULL_HANDLE, 1, &ci, NULL, out);
  if (vr != VK_SUCCESS)
    return rig_edge_fail(err, RIG_EDGE_FAULT, "%s: vkCreateComputePipelines (%s): %s (%d)",
                         v->name, f->name, rvk_result_name(vr), (int)vr);
  return RIG_EDGE_OK;
}

/* f's pipeline for groups of t threads: made at the first launch of that
 * shape and kept until the image goes. rvk_check_launch checked t. qlock held. */
int rvk_pipeline_for(rvk_dev *v, rvk_func *f, const uint64_t t[3], VkPipeline *out,
                     rig_edge_error *err) {
  for (size_t i = 0; i < f->npipes; i++)
    if (f->pipes[i].threads[0] == t[0] && f->pipes[i].threads[1] == t[1] &&
        f->pipes[i].threads[2] == t[2]) {
      *out = f->pipes[i].pipe;
      return RIG_EDGE_OK;
    }
  uint32_t shape[3] = {(uint32_t)t[0], (uint32_t)t[1], (uint32_t)t[2]};
  VkPipeline pipe;
  int r = grow_pipes(v, f, err);
  if (r == RIG_EDGE_OK)
    r = make_pipeline(v, f, shape, &pipe, err);
  if (r != RIG_EDGE_OK)
    return r;
  f->pipes[f->npipes++] = (rvk_pipe){{shape[0], shape[1], shape[2]}, pipe};
  *out = pipe;
  return RIG_EDGE_OK;
}
