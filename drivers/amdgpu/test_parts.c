/* test_parts.c: the parts of the amdgpu driver that need no device, called
 * directly (suite driver-amdgpu): gfx names of families and revisions,
 * generations, and the render-node filter on DRM devices as libdrm
 * describes them (another vendor, not on PCI, no render node, AMD's). */
#include <stdio.h>
#include <string.h>

#include <amdgpu_drm.h>

#include "gfx.h"

static int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                                       \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static int same(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

static void names(void) {
  /* The families are the kernel header's numbers. */
  CHECK(AMDGPU_FAMILY_AI == 141 && AMDGPU_FAMILY_RV == 142 && AMDGPU_FAMILY_NV == 143);
  CHECK(same(gfx_name(AMDGPU_FAMILY_AI, 0x01), "gfx900"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_AI, 0x13), "gfx900"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_AI, 0x28), "gfx906"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_AI, 0x3c), "gfx90a"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_RV, 0x91), "gfx90c"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_NV, 0x28), "gfx1030"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_NV, 0x31), "gfx1030"));
  CHECK(same(gfx_name(AMDGPU_FAMILY_NV, 0x46), "gfx1034"));
  CHECK(same(gfx_name(145, 0x01), "gfx1100"));
  CHECK(same(gfx_name(145, 0x10), "gfx1102"));
  CHECK(gfx_name(AMDGPU_FAMILY_VI, 0x50) == NULL); /* Polaris: before GFX9 */
  CHECK(gfx_name(AMDGPU_FAMILY_AI, 0x00) == NULL); /* no chip at revision 0 */
  CHECK(gfx_name(AMDGPU_FAMILY_AI, 0x46) == NULL); /* past Aldebaran: unknown */
  CHECK(gfx_name(AMDGPU_FAMILY_NV, 0x50) == NULL);
  CHECK(gfx_name(0, 0) == NULL);
}

static void generations(void) {
  CHECK(gfx_generation("gfx900") == 9);
  CHECK(gfx_generation("gfx90a") == 9);
  CHECK(gfx_generation("gfx1030") == 10);
  CHECK(gfx_generation("gfx1100") == 11);
  CHECK(gfx_generation("gfx1200") == 0);
  CHECK(gfx_generation("gfx803") == 0);
  CHECK(gfx_generation("sm_89") == 0);
  CHECK(gfx_generation("gfx") == 0);
  CHECK(gfx_generation(NULL) == 0);
}

static void filter(void) {
  drmPciBusInfo bus = {.domain = 0, .bus = 3, .dev = 0, .func = 0};
  drmPciDeviceInfo pci = {.vendor_id = 0x1002, .device_id = 0x73bf};
  char *nodes[DRM_NODE_MAX] = {[DRM_NODE_RENDER] = "/dev/dri/renderD128"};
  drmDevice d = {.nodes = nodes,
                 .available_nodes = 1 << DRM_NODE_RENDER,
                 .bustype = DRM_BUS_PCI,
                 .businfo.pci = &bus,
                 .deviceinfo.pci = &pci};
  char why[128] = "";
  CHECK(gfx_is_amd_node(&d, why, sizeof why) == 1);
  pci.vendor_id = 0x10de;
  CHECK(gfx_is_amd_node(&d, why, sizeof why) == 0);
  CHECK(same(why, "/dev/dri/renderD128: vendor 0x10de (not AMD)"));
  pci.vendor_id = 0x1002;
  d.bustype = DRM_BUS_PLATFORM;
  CHECK(gfx_is_amd_node(&d, why, sizeof why) == 0);
  CHECK(same(why, "/dev/dri/renderD128: not on PCI"));
  d.bustype = DRM_BUS_PCI;
  d.available_nodes = 1 << DRM_NODE_PRIMARY;
  CHECK(gfx_is_amd_node(&d, why, sizeof why) == 0);
  CHECK(same(why, "no render node"));
}

int main(void) {
  names();
  generations();
  filter();
  printf("%s: %d failure%s\n", failures ? "FAIL" : "ok", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
