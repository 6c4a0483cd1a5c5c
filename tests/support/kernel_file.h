/* kernel_file.h: the kernels the tests build (tests/kernels, and SPIR-V
 * under kernels/vulkan), read from the folder $RIG_KERNELS names (the
 * tests' build folder; "." where it is unset) and loaded onto a device.
 * Needs libc and <rig/rig.h> only, not cmocka: the stress engine, which
 * `rig bench stress` runs too, uses it. */
#ifndef RIG_TEST_KERNEL_FILE_H
#define RIG_TEST_KERNEL_FILE_H

#include <stddef.h>

#include <rig/rig.h>

/* Writes $RIG_KERNELS/file into path (size bytes) and returns path. */
char *kernel_file_path(const char *file, char *path, size_t size);
/* The bytes of $RIG_KERNELS/file (file: "add.o", "kernels/vulkan/fill.spv"),
 * n of them, which the caller owns and frees; NULL where the file cannot
 * be read. Blocks on the file system. */
void *kernel_file_read(const char *file, size_t *n);
/* Loads $RIG_KERNELS/file onto d and resolves entry in it: RIG_OK with the
 * image (*im, the caller's reference) and *f set, or the failing status,
 * *im NULL, and a line on stderr saying which kernel and why (a file not
 * built: RIG_UNAVAILABLE). */
rig_status kernel_file_load(rig_device *d, const char *file, const char *entry, rig_image **im,
                            rig_function **f);

#endif
