/* SPDX-License-Identifier: MIT */
/* gfx.c: the gfx name of an AMD GPU from what the kernel reports of it.
 *
 * The amdgpu kernel driver reports a family id and an external revision
 * (AMDGPU_INFO_DEV_INFO); the compiler's targets are gfx names. Within a
 * family, chips take consecutive ranges of the external revision: the
 * ranges below are those AMD's address library (addrlib's
 * amdgpu_asic_addr.h, in Mesa and PAL) gives. A chip outside every range
 * has no name here, and the open says so rather than guess one: its code
 * would be built for another target.
 */
#include <stdio.h>
#include <string.h>

#include "gfx.h"

typedef struct chip {
  uint32_t family;
  uint32_t first, end; /* external revisions [first, end) */
  const char *gfx;
} chip;

/* Families (amdgpu_drm.h's AMDGPU_FAMILY_*): 141 AI, 142 RV, 143 NV,
 * 144 VGH, 145 GC_11_0_0, 146 YC, 148 GC_11_0_1, 149 GC_10_3_6,
 * 151 GC_10_3_7. */
static const chip chips[] = {
    {141, 0x01, 0x14, "gfx900"}, /* Vega10 */
    {141, 0x14, 0x28, "gfx904"}, /* Vega12 */
    {141, 0x28, 0x32, "gfx906"}, /* Vega20 */
    {141, 0x32, 0x3c, "gfx908"}, /* Arcturus */
    {141, 0x3c, 0x46, "gfx90a"}, /* Aldebaran */
    {142, 0x01, 0x81, "gfx902"}, /* Raven */
    {142, 0x81, 0x91, "gfx909"}, /* Raven2 */
    {142, 0x91, 0x100, "gfx90c"}, /* Renoir */
    {143, 0x01, 0x0a, "gfx1010"}, /* Navi10 */
    {143, 0x0a, 0x14, "gfx1011"}, /* Navi12 */
    {143, 0x14, 0x28, "gfx1012"}, /* Navi14 */
    {143, 0x28, 0x32, "gfx1030"}, /* Navi21 */
    {143, 0x32, 0x3c, "gfx1031"}, /* Navi22 */
    {143, 0x3c, 0x46, "gfx1032"}, /* Navi23 */
    {143, 0x46, 0x50, "gfx1034"}, /* Navi24 */
    {144, 0x01, 0x100, "gfx1033"}, /* Van Gogh */
    {146, 0x01, 0x100, "gfx1035"}, /* Rembrandt */
    {149, 0x01, 0x100, "gfx1036"}, /* Raphael */
    {151, 0x01, 0x100, "gfx1037"}, /* Mendocino */
    {145, 0x01, 0x10, "gfx1100"}, /* Navi31 */
    {145, 0x10, 0x20, "gfx1102"}, /* Navi33 */
    {145, 0x20, 0x100, "gfx1101"}, /* Navi32 */
    {148, 0x01, 0x100, "gfx1103"}, /* Phoenix */
};

const char *gfx_name(uint32_t family, uint32_t external_rev) {
  for (size_t i = 0; i < sizeof chips / sizeof chips[0]; i++)
    if (chips[i].family == family && external_rev >= chips[i].first && external_rev < chips[i].end)
      return chips[i].gfx;
  return NULL;
}

int gfx_generation(const char *gfx) {
  if (!gfx || strncmp(gfx, "gfx", 3) != 0)
    return 0;
  size_t n = strlen(gfx + 3);
  if (n == 3 && gfx[3] == '9')
    return 9;
  if (n == 4 && gfx[3] == '1' && (gfx[4] == '0' || gfx[4] == '1'))
    return gfx[4] == '0' ? 10 : 11;
  return 0;
}

int gfx_is_amd_node(const drmDevice *d, char *why, size_t n) {
  if (!(d->available_nodes & (1 << DRM_NODE_RENDER))) {
    snprintf(why, n, "no render node");
    return 0;
  }
  if (d->bustype != DRM_BUS_PCI || !d->deviceinfo.pci || !d->businfo.pci) {
    snprintf(why, n, "%s: not on PCI", d->nodes[DRM_NODE_RENDER]);
    return 0;
  }
  if (d->deviceinfo.pci->vendor_id != 0x1002) {
    snprintf(why, n, "%s: vendor 0x%04x (not AMD)", d->nodes[DRM_NODE_RENDER],
             d->deviceinfo.pci->vendor_id);
    return 0;
  }
  return 1;
}
