/* SPDX-License-Identifier: MIT */
/* gfx.h: pure facts of AMD GPUs that need no device (gfx.c): the gfx name
 * of a family and revision, the generation of a gfx name, and why a DRM
 * device is or is not an AMD render node. The tests call them directly. */
#ifndef RIG_AMDGPU_GFX_H
#define RIG_AMDGPU_GFX_H

#include <stddef.h>
#include <stdint.h>

#include <xf86drm.h>

/* The gfx name ("gfx90a") of the kernel's family id and external revision
 * (amdgpu_gpu_info's family_id and chip_external_rev), or NULL for a chip
 * this driver has no name for (older than GFX9, or newer than it knows). */
const char *gfx_name(uint32_t family, uint32_t external_rev);

/* 9, 10 or 11: the generation of a gfx name ("gfx1030": 10), which picks
 * the packet and register layout; 0 for a name that is none of them. */
int gfx_generation(const char *gfx);

/* Whether d is an AMD render node on PCI: 1, with nothing written; else 0
 * with why it is not one in why[0..n) ("vendor 0x10de (not AMD)", "not on
 * PCI", "no render node"). */
int gfx_is_amd_node(const drmDevice *d, char *why, size_t n);

#endif
