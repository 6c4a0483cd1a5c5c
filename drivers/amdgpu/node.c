/* SPDX-License-Identifier: MIT */
/* node.c: the render nodes of AMD GPUs, and the open of one.
 *
 * libdrm's drmGetDevices2 lists every DRM device of the machine (from
 * /dev/dri and sysfs); the driver keeps the render nodes of PCI devices of
 * vendor 0x1002 and numbers them in the order of their PCI address, so that
 * amdgpu:0 is the same GPU at every run. Opening one checks, before libdrm_amdgpu
 * is asked anything, that the file is a DRM device at all (DRM_IOCTL_VERSION
 * answers), that the amdgpu kernel driver drives it (an old GPU may be bound
 * to radeon), and that its vendor is AMD's: each failure names the node and
 * what it is.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgpu_private.h"

static void bus_of(const drmDevice *d, char *out, size_t n) {
  const drmPciBusInfo *b = d->businfo.pci;
  snprintf(out, n, "%04x:%02x:%02x.%x", b->domain, b->bus, b->dev, b->func);
}

static int by_bus(const void *a, const void *b) {
  return strcmp(((const amd_node *)a)->bus, ((const amd_node *)b)->bus);
}

/* Appends "; what" to why (as much as fits). */
static void add_reason(char *why, size_t n, const char *what) {
  size_t used = strlen(why);
  if (used + 3 < n)
    snprintf(why + used, n - used, "%s%s", used ? "; " : "", what);
}

static int pinned_node(amd_node *out, uint32_t cap, uint32_t *n, const char *path) {
  *n = 1;
  if (cap > 0) {
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
  }
  return RIG_EDGE_OK;
}

int node_list(amd_node *out, uint32_t cap, uint32_t *n, rig_edge_error *err) {
  const char *pinned = secure_getenv("RIG_AMDGPU_NODE");
  if (pinned && *pinned)
    return pinned_node(out, cap, n, pinned);
  drmDevicePtr devs[NODES_MAX];
  int count = drm.drmGetDevices2(0, devs, (int)NODES_MAX);
  if (count == -ENOENT) /* the folder is missing: no DRM driver is loaded */
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "amdgpu: no device: no /dev/dri (no DRM kernel driver is loaded)");
  if (count < 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: no device: drmGetDevices2: %s",
                         strerror(-count));
  char why[RIG_EDGE_MESSAGE_BYTES - 64] = "";
  uint32_t found = 0;
  for (int i = 0; i < count; i++) {
    char one[128];
    if (!gfx_is_amd_node(devs[i], one, sizeof one)) {
      add_reason(why, sizeof why, one);
      continue;
    }
    if (found < cap) {
      amd_node *a = &out[found];
      memset(a, 0, sizeof *a);
      snprintf(a->path, sizeof a->path, "%s", devs[i]->nodes[DRM_NODE_RENDER]);
      bus_of(devs[i], a->bus, sizeof a->bus);
      a->device_id = devs[i]->deviceinfo.pci->device_id;
      a->revision = devs[i]->deviceinfo.pci->revision_id;
    }
    found++;
  }
  if (count > 0)
    drm.drmFreeDevices(devs, count);
  *n = found;
  if (found == 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: no device: %s",
                         count == 0 ? "drmGetDevices2 lists no DRM device (no /dev/dri)" : why);
  qsort(out, found < cap ? found : cap, sizeof *out, by_bus);
  return RIG_EDGE_OK;
}

/* The checks before libdrm_amdgpu: a DRM device, driven by amdgpu, AMD's. */
static int check_node(const amd_node *node, int fd, rig_edge_error *err) {
  drmVersionPtr v = drm.drmGetVersion(fd);
  if (!v)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "amdgpu: %s is not a DRM device (DRM_IOCTL_VERSION: %s)", node->path,
                         strerror(errno ? errno : ENOTTY));
  bool amdgpu = v->name && strcmp(v->name, "amdgpu") == 0;
  char kernel[32];
  snprintf(kernel, sizeof kernel, "%s", v->name ? v->name : "?");
  drm.drmFreeVersion(v);
  if (!amdgpu)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "amdgpu: %s is driven by the kernel's %s driver, not amdgpu", node->path,
                         kernel);
  drmDevicePtr d = NULL;
  char why[128];
  int r = drm.drmGetDevice2(fd, 0, &d);
  if (r != 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: %s: drmGetDevice2: %s", node->path,
                         strerror(-r));
  int amd = gfx_is_amd_node(d, why, sizeof why);
  drm.drmFreeDevice(&d);
  if (!amd)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: %s", why);
  return RIG_EDGE_OK;
}

static int read_info(const amd_node *node, node_info *out, rig_edge_error *err) {
  struct amdgpu_heap_info vram = {0}, gtt = {0};
  int r = drm.amdgpu_query_gpu_info(out->dev, &out->gpu);
  if (r == 0)
    r = drm.amdgpu_query_heap_info(out->dev, AMDGPU_GEM_DOMAIN_VRAM, 0, &vram);
  if (r == 0)
    r = drm.amdgpu_query_heap_info(out->dev, AMDGPU_GEM_DOMAIN_GTT, 0, &gtt);
  if (r != 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: %s: amdgpu_query_gpu_info: %s",
                         node->path, strerror(-r));
  out->vram = vram.heap_size;
  out->gtt = gtt.heap_size;
  const char *gfx = gfx_name(out->gpu.family_id, out->gpu.chip_external_rev);
  if (!gfx)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE,
                         "amdgpu: %s: family %u revision 0x%x has no gfx name this driver "
                         "knows (it drives GFX9, GFX10 and GFX11)",
                         node->path, out->gpu.family_id, out->gpu.chip_external_rev);
  snprintf(out->arch, sizeof out->arch, "%s", gfx);
  const char *market = drm.amdgpu_get_marketing_name(out->dev);
  snprintf(out->name, sizeof out->name, "%s", market ? market : gfx);
  return RIG_EDGE_OK;
}

int node_open(const amd_node *node, node_info *out, rig_edge_error *err) {
  memset(out, 0, sizeof *out);
  out->fd = open(node->path, O_RDWR | O_CLOEXEC);
  if (out->fd < 0)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: %s: %s", node->path, strerror(errno));
  int r = check_node(node, out->fd, err);
  if (r == RIG_EDGE_OK) {
    int e = drm.amdgpu_device_initialize(out->fd, &out->drm_major, &out->drm_minor, &out->dev);
    if (e != 0) {
      out->dev = NULL;
      r = rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "amdgpu: %s: amdgpu_device_initialize: %s",
                        node->path, strerror(-e));
    }
  }
  if (r == RIG_EDGE_OK)
    r = read_info(node, out, err);
  if (r != RIG_EDGE_OK)
    node_close(out);
  return r;
}

/* libdrm_amdgpu keeps its own duplicate of the file (one per GPU, shared
 * by every initialise of it); ours is closed after it lets go. */
void node_close(node_info *info) {
  if (info->dev)
    drm.amdgpu_device_deinitialize(info->dev);
  info->dev = NULL;
  if (info->fd >= 0)
    close(info->fd);
  info->fd = -1;
}
