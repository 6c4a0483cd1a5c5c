/* host_launch.h: copies and fills as launches on the host. The host's
 * queue runs only launches, so a host submission with a copy or fill part
 * lacks a queue for it and make refuses it (HOST-4). The tests that run
 * copies and fills in host submissions launch copy_bytes and fill_bytes
 * (tests/kernels) over the same slots instead: the conformance suite on
 * the host, and the stress engine. */
#ifndef RIG_TEST_HOST_LAUNCH_H
#define RIG_TEST_HOST_LAUNCH_H

#include <stdint.h>

#include <rig/rig.h>

typedef struct host_kernels {
  rig_image *copy_image, *fill_image;
  rig_function *copy, *fill;
} host_kernels;

/* Loads copy_bytes and fill_bytes from $RIG_KERNELS onto the host: RIG_OK,
 * or the failing status with k zeroed and a line on stderr. The caller
 * owns the images: host_kernels_release. */
rig_status host_kernels_load(host_kernels *k);
/* Drops the images; submissions made of their launches keep the code. */
void host_kernels_release(host_kernels *k);

/* The part that stands for p on the host: a copy becomes a launch of
 * copy_bytes that reads slot src and writes slot dst, a fill one of
 * fill_bytes that writes slot dst, flags kept; refs (room for 2) holds its
 * refs and must live until the submission is made. Other parts as they
 * are. */
rig_part host_launch_of(const host_kernels *k, const rig_part *p, rig_ref refs[2]);

/* Sets block `block` of r, the launch that host_launch_of made of p, for
 * n bytes: its parameters, and a thread per byte. Returns the first
 * failing status of the run's setters, else RIG_OK. */
rig_status host_launch_set(rig_run *r, uint32_t block, const rig_part *p, uint64_t n);

#endif
