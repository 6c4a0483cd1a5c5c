/* SPDX-License-Identifier: MIT */
/* bindings.c: shaders as public projects write them (README, "Shaders
 * with bindings"). At resolve: the module's descriptor bindings, push
 * constants, specialization constants and shared memory, read by
 * spirv_layout.c; what rig cannot run is refused there by name; a function
 * that binds buffers gets a pipeline layout of its own whose set 0 is
 * pushed (VK_KHR_push_descriptor), so that a launch's buffers go into the
 * command buffer and no submit allocates a descriptor set. At check and
 * record: the launch's refs (bytes 0, 8, ... of its block) to buffers. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spirv_layout.h"
#include "vulkan_private.h"

/* ---- resolve -------------------------------------------------------- */

/* The value text s gives a constant of kind and width, in *out as the
 * constant's bytes (little end first). False where s is no such value. */
static bool parse_value(const char *s, size_t len, const rvk_spirv_spec *c, uint64_t *out) {
  char buf[64], *end;
  if (len == 0 || len >= sizeof buf)
    return false;
  memcpy(buf, s, len);
  buf[len] = 0;
  errno = 0;
  if (c->kind == 'b') {
    *out = strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0;
    return *out || strcmp(buf, "false") == 0 || strcmp(buf, "0") == 0;
  }
  if (c->kind == 'f') {
    double d = strtod(buf, &end);
    float f = (float)d;
    if (*end || errno || (c->width == 32 && isinf(f) && !isinf(d)))
      return false;
    uint32_t f32;
    memcpy(&f32, &f, 4);
    if (c->width == 64)
      memcpy(out, &d, 8);
    else
      *out = f32;
    return true;
  }
  uint64_t bits = c->width >= 64 ? UINT64_MAX : (UINT64_C(1) << c->width) - 1;
  if (c->kind == 'i') {
    long long x = strtoll(buf, &end, 0);
    long long lim = (long long)(bits >> 1);
    *out = (uint64_t)x & bits;
    return !*end && !errno && x <= lim && x >= -lim - 1;
  }
  unsigned long long x = strtoull(buf, &end, 0);
  *out = x;
  return !*end && !errno && buf[0] != '-' && x <= bits;
}

static const rvk_spirv_spec *spec_by_id(const rvk_spirv_layout *l, uint32_t id) {
  for (uint32_t k = 0; k < l->nspec; k++)
    if (l->spec[k].spec_id == id)
      return &l->spec[k];
  return NULL;
}

static bool is_axis(const rvk_func *f, uint32_t id) {
  return f->spec[0] == id || f->spec[1] == id || f->spec[2] == id;
}

static bool defaulted(const uint32_t *defaults, uint32_t id) {
  for (uint32_t k = 0; k < defaults[0]; k++)
    if (defaults[k + 1] == id)
      return true;
  return false;
}

/* One "ID=VALUE" or "ID=default" of resolve's options into f; defaults:
 * a count, then the SpecIds the options keep at their default. */
static int set_one(rvk_dev *v, rvk_func *f, const rvk_spirv_layout *l, const char *s, size_t len,
                   uint32_t *defaults, rig_edge_error *err) {
  const char *eq = memchr(s, '=', len);
  char *end = NULL; /* not a number: end stays NULL, the check below refuses it */
  unsigned long id = eq && eq > s && s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
  if (!eq || eq == s || end != eq || id > UINT32_MAX)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: option '%.*s' is not ID=VALUE or "
                         "ID=default",
                         f->name, (int)len, s);
  const rvk_spirv_spec *c = spec_by_id(l, (uint32_t)id);
  if (!c)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s declares no specialization "
                         "constant %lu",
                         f->name, id);
  if (is_axis(f, c->spec_id))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: specialization constant %lu is the "
                         "group's size, which the run's threads set",
                         f->name, id);
  bool twice = defaulted(defaults, c->spec_id);
  for (uint32_t k = 0; k < f->nspec; k++)
    twice |= f->spec_ids[k] == c->spec_id;
  if (twice)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: specialization constant %lu set "
                         "twice",
                         f->name, id);
  size_t vlen = len - (size_t)(eq + 1 - s);
  if (vlen == 7 && memcmp(eq + 1, "default", 7) == 0) {
    defaults[++defaults[0]] = c->spec_id; /* kept at its default, as the program said */
    return RIG_EDGE_OK;
  }
  uint64_t value;
  if (!parse_value(eq + 1, vlen, c, &value))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: '%.*s' is no value of "
                         "specialization constant %lu (%s%u)",
                         f->name, (int)vlen, eq + 1, id,
                         c->kind == 'f'   ? "float"
                         : c->kind == 'b' ? "bool"
                         : c->kind == 'i' ? "int"
                                          : "uint",
                         c->kind == 'b' ? 32 : c->width);
  uint32_t k = f->nspec++;
  f->spec_ids[k] = c->spec_id;
  f->spec_data[k] = value;
  f->spec_map[k] = (VkSpecializationMapEntry){c->spec_id, 8 * k, c->width == 64 ? 8 : 4};
  return RIG_EDGE_OK;
}

/* Resolve's options ("1=64,2=0.5,3=default") into f's constants; then
 * every constant the module declares is set, the group's size, or kept
 * at its default because the options said so. Never a silent default. */
static int set_specs(rvk_dev *v, rvk_func *f, const rvk_spirv_layout *l, const char *options,
                     rig_edge_error *err) {
  uint32_t defaults[RVK_MAX_SPECS + 1] = {0};
  for (const char *s = options; s && *s;) {
    const char *comma = strchr(s, ',');
    size_t len = comma ? (size_t)(comma - s) : strlen(s);
    int r = set_one(v, f, l, s, len, defaults, err);
    if (r != RIG_EDGE_OK)
      return r;
    s = comma ? comma + 1 : s + len;
  }
  for (uint32_t k = 0; k < l->nspec; k++) {
    const rvk_spirv_spec *c = &l->spec[k];
    bool set = false;
    for (uint32_t j = 0; j < f->nspec; j++)
      set |= f->spec_ids[j] == c->spec_id;
    if (!set && !is_axis(f, c->spec_id) && !defaulted(defaults, c->spec_id))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: specialization constant %u is "
                           "not set (resolve \"%s:%u=VALUE\", or \"%s:%u=default\" to keep its "
                           "default %" PRIu64 ")",
                           f->name, c->spec_id, f->name, c->spec_id, f->name, c->spec_id, c->def);
  }
  return RIG_EDGE_OK;
}

/* The limits a module's layout must keep on this device. */
static int check_limits(rvk_dev *v, rvk_func *f, const rvk_spirv_layout *l, rig_edge_error *err) {
  const VkPhysicalDeviceLimits *lim = &v->props.limits;
  uint32_t most = l->nbind ? lim->maxPushConstantsSize : RVK_PUSH_BYTES;
  if (l->push_bytes > most)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: its push-constant block is %u "
                         "bytes; the device takes at most %u (maxPushConstantsSize)",
                         f->name, l->push_bytes, most);
  if (l->shared_fixed && l->shared_bytes > lim->maxComputeSharedMemorySize)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: its shared memory is %" PRIu64
                         " bytes; the device gives a group at most %u "
                         "(maxComputeSharedMemorySize)",
                         f->name, l->shared_bytes, lim->maxComputeSharedMemorySize);
  if (l->nbind && !v->push_desc)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s binds buffers; the device lacks "
                         "VK_KHR_push_descriptor, which rig binds them with",
                         f->name);
  return RIG_EDGE_OK;
}

/* Set 0's layout (pushed) and the function's pipeline layout. */
static int make_layouts(rvk_dev *v, rvk_func *f, rig_edge_error *err) {
  VkDescriptorSetLayoutBinding b[RVK_MAX_BINDINGS];
  for (uint32_t i = 0; i < f->nbind; i++)
    b[i] = (VkDescriptorSetLayoutBinding){f->bind_no[i], f->bind_type[i], 1,
                                          VK_SHADER_STAGE_COMPUTE_BIT, NULL};
  VkDescriptorSetLayoutCreateInfo dci = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
      .bindingCount = f->nbind,
      .pBindings = b};
  VkResult vr = vkCreateDescriptorSetLayout(v->dev, &dci, NULL, &f->dsl);
  if (vr != VK_SUCCESS)
    return rig_edge_fail(
        err, vr == VK_ERROR_OUT_OF_HOST_MEMORY ? RIG_EDGE_NO_ROOM : RIG_EDGE_UNSUPPORTED,
        "vkCreateDescriptorSetLayout: %s", rvk_result_name(vr));
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, (f->push_bytes + 3) / 4 * 4};
  VkPipelineLayoutCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                   .setLayoutCount = 1,
                                   .pSetLayouts = &f->dsl,
                                   .pushConstantRangeCount = f->push_bytes ? 1 : 0,
                                   .pPushConstantRanges = &range};
  if ((vr = vkCreatePipelineLayout(v->dev, &ci, NULL, &f->layout)) != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(v->dev, f->dsl, NULL);
    f->dsl = VK_NULL_HANDLE;
    return rig_edge_fail(
        err, vr == VK_ERROR_OUT_OF_HOST_MEMORY ? RIG_EDGE_NO_ROOM : RIG_EDGE_UNSUPPORTED,
        "vkCreatePipelineLayout: %s", rvk_result_name(vr));
  }
  return RIG_EDGE_OK;
}

/* Reads what f's module asks of its pipeline, sets its specialization
 * constants from options (resolve's text after ':', or NULL), refuses by
 * name what rig cannot run (RIG_EDGE_UNSUPPORTED), and makes the layouts
 * of a function that binds buffers. f's group axes are read already. */
int rvk_func_layout(rvk_dev *v, rvk_func *f, const char *options, rig_edge_error *err) {
  rvk_spirv_layout l;
  char why[256];
  if (rvk_spirv_read_layout(f->image->words, f->image->nwords, &l, why, sizeof why))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s", f->name, why);
  f->push_bytes = l.push_bytes;
  f->num_groups = l.num_groups;
  f->shared_fixed = l.shared_fixed;
  int r = set_specs(v, f, &l, options, err);
  if (r == RIG_EDGE_OK)
    r = check_limits(v, f, &l, err);
  if (r != RIG_EDGE_OK || !l.nbind)
    return r;
  f->nbind = l.nbind;
  for (uint32_t i = 0; i < l.nbind; i++) {
    f->bind_no[i] = l.bind[i].binding;
    f->bind_type[i] = l.bind[i].kind == RVK_BIND_UNIFORM ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                         : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  }
  return make_layouts(v, f, err);
}

void rvk_func_layout_free(rvk_dev *v, rvk_func *f) {
  if (f->layout)
    vkDestroyPipelineLayout(v->dev, f->layout, NULL);
  if (f->dsl)
    vkDestroyDescriptorSetLayout(v->dev, f->dsl, NULL);
  f->layout = VK_NULL_HANDLE;
  f->dsl = VK_NULL_HANDLE;
}

/* ---- check and record ----------------------------------------------- */

/* The memory of this open that holds device address a, with a's offset
 * in its VkBuffer and the bytes from there to its end; false for none. */
bool rvk_find_buffer(const rvk_dev *v, uint64_t a, VkBuffer *buf, uint64_t *offset,
                     uint64_t *rest) {
  pthread_mutex_t *lock = (pthread_mutex_t *)&v->mlock;
  bool found = false;
  pthread_mutex_lock(lock);
  for (const rvk_mem *m = v->mems; m && !found; m = m->next)
    if (m->buf && m->address && a >= m->address && a - m->address < m->bytes) {
      *buf = m->buf;
      *offset = m->base + (a - m->address);
      *rest = m->bytes - (a - m->address);
      found = true;
    }
  pthread_mutex_unlock(lock);
  return found;
}

/* The group's shared bytes for threads t, where they depend on them or
 * on constants: evaluated once per shape (the last kept, under its lock:
 * core checks work before it takes the submit lock). */
static int check_shared(const rvk_dev *v, rvk_func *f, const uint64_t t[3], rig_edge_error *err) {
  if (f->shared_fixed)
    return RIG_EDGE_OK;
  uint64_t bytes;
  pthread_mutex_lock(&f->shared_lock);
  bool known = f->shared_last[0] == t[0] && f->shared_last[1] == t[1] && f->shared_last[2] == t[2];
  bytes = f->shared_last[3];
  pthread_mutex_unlock(&f->shared_lock);
  if (!known) {
    rvk_spirv_value vals[RVK_MAX_SPECS + 3];
    uint32_t n = 0;
    char why[200];
    for (uint32_t k = 0; k < f->nspec; k++)
      vals[n++] = (rvk_spirv_value){f->spec_ids[k], f->spec_data[k]};
    for (int a = 0; a < 3; a++)
      if (f->spec[a] != UINT32_MAX)
        vals[n++] = (rvk_spirv_value){f->spec[a], t[a]};
    if (rvk_spirv_shared(f->image->words, f->image->nwords, vals, n, &bytes, why, sizeof why))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: %s", v->name, f->name, why);
    pthread_mutex_lock(&f->shared_lock);
    memcpy(f->shared_last, t, 3 * sizeof *t);
    f->shared_last[3] = bytes;
    pthread_mutex_unlock(&f->shared_lock);
  }
  if (bytes > v->props.limits.maxComputeSharedMemorySize)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s: groups of %" PRIu64 "x%" PRIu64 "x%" PRIu64
                         " threads take %" PRIu64 " bytes of shared memory; the "
                         "device gives a group at most %u (maxComputeSharedMemorySize)",
                         v->name, f->name, t[0], t[1], t[2], bytes,
                         v->props.limits.maxComputeSharedMemorySize);
  return RIG_EDGE_OK;
}

/* Ref i of a binding launch: a buffer of this open, at an offset its
 * descriptor may start at. */
static int check_ref(const rvk_dev *v, const rvk_func *f, const uint8_t *params, uint32_t i,
                     rig_edge_error *err) {
  uint64_t a, offset, rest;
  VkBuffer buf;
  memcpy(&a, params + 8 * i, 8);
  if (!rvk_find_buffer(v, a, &buf, &offset, &rest))
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s: bytes %u..%u of the parameter "
                         "block hold no buffer of this device: binding %u's buffer is ref %u, "
                         "at byte %u",
                         v->name, f->name, 8 * i, 8 * i + 7, f->bind_no[i], i, 8 * i);
  const VkPhysicalDeviceLimits *l = &v->props.limits;
  uint64_t align = f->bind_type[i] == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                       ? l->minUniformBufferOffsetAlignment
                       : l->minStorageBufferOffsetAlignment;
  if (align && offset % align)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s: binding %u's buffer starts %" PRIu64
                         " bytes into its memory; a descriptor starts on a multiple of %" PRIu64,
                         v->name, f->name, f->bind_no[i], offset, align);
  return RIG_EDGE_OK;
}

/* What a launch of a function read by rvk_func_layout needs beyond the
 * group: one dispatch where it reads gl_NumWorkGroups, shared memory the
 * device has, and for a binding function its refs and push constants. */
int rvk_check_bindings(const rvk_dev *v, const rig_edge_part *p, uint64_t dispatches,
                       rig_edge_error *err) {
  rvk_func *f = p->u.launch.function;
  const uint64_t *g = p->u.launch.groups;
  if (f->num_groups && dispatches > 1)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s reads gl_NumWorkGroups, which a grid "
                         "of %" PRIu64 "x%" PRIu64 "x%" PRIu64 " groups split into %" PRIu64
                         " dispatches (the device's maxComputeWorkGroupCount is %u) would give "
                         "wrong",
                         v->name, f->name, g[0], g[1], g[2], dispatches,
                         v->props.limits.maxComputeWorkGroupCount[0]);
  int r = check_shared(v, f, p->u.launch.threads, err);
  if (r != RIG_EDGE_OK || !f->nbind)
    return r;
  uint64_t need = 8ull * f->nbind + f->push_bytes;
  if (p->u.launch.params_bytes < need)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                         "%s: %s: a parameter block of %u bytes; it "
                         "takes %u refs (bytes 0..%u) and %u bytes of push constants after them",
                         v->name, f->name, p->u.launch.params_bytes, f->nbind, 8 * f->nbind - 1,
                         f->push_bytes);
  for (uint32_t i = 0; i < f->nbind && r == RIG_EDGE_OK; i++)
    r = check_ref(v, f, p->u.launch.params, i, err);
  return r;
}

/* A binding launch's buffers as push descriptors of set 0, and its push
 * constants from the block's bytes after the refs. rvk_check_bindings
 * passed the part. */
void rvk_push_bindings(rvk_dev *v, VkCommandBuffer cb, const rig_edge_part *p) {
  const rvk_func *f = p->u.launch.function;
  const uint8_t *params = p->u.launch.params;
  VkDescriptorBufferInfo info[RVK_MAX_BINDINGS];
  VkWriteDescriptorSet wr[RVK_MAX_BINDINGS];
  for (uint32_t i = 0; i < f->nbind; i++) {
    uint64_t a, offset = 0, rest = 0;
    VkBuffer buf = VK_NULL_HANDLE;
    memcpy(&a, params + 8 * i, 8);
    (void)rvk_find_buffer(v, a, &buf, &offset, &rest);
    bool uniform = f->bind_type[i] == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    uint64_t most =
        uniform ? v->props.limits.maxUniformBufferRange : v->props.limits.maxStorageBufferRange;
    info[i] = (VkDescriptorBufferInfo){buf, offset, rest > most ? most : rest};
    wr[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                   .dstBinding = f->bind_no[i],
                                   .descriptorCount = 1,
                                   .descriptorType = f->bind_type[i],
                                   .pBufferInfo = &info[i]};
  }
  v->CmdPushDescriptorSet(cb, VK_PIPELINE_BIND_POINT_COMPUTE, f->layout, 0, f->nbind, wr);
  if (f->push_bytes) /* core's block has room past its end for the rounding */
    vkCmdPushConstants(cb, f->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (f->push_bytes + 3) / 4 * 4,
                       params + 8 * f->nbind);
}
