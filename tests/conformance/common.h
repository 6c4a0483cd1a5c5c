/* common.h: what the conformance suite's files share. The suite is written
 * once against <rig/rig.h> and run on every device that opens here:
 * RIG_CONF_DEVICE names the device under test ("memory:conformance", "CPU",
 * "vulkan:0", "memory:a@m1"). A device that does not open skips (exit 77). */
#ifndef RIG_CONF_COMMON_H
#define RIG_CONF_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <rig/rig.h>

/* Opens the device under test, or exits 77 saying why it did not open. */
rig_device *conf_open(void);
/* The name of the device under test. */
const char *conf_name(void);
/* Whether the device under test is the host. */
bool conf_is_host(void);
/* Whether the device under test is another machine's ("memory:a@m1",
 * "CPU@m1"): the run starts a `rig serve` for it (tests/remote/server.c,
 * $RIG_EXE) and opens that machine's host first (docs/remote.md). */
bool conf_is_remote(void);
/* Whether the device under test's queue waits on other devices' words
 * itself (SUBMIT-2), as its driver's facts state (QUEUE_WAITS,
 * rig_device_queue_waits): the test device but with waits=0, the sample
 * device, a CUDA GPU with stream memory operations. The others wait on
 * the host before their submit returns (SUBMIT-3). */
bool conf_queue_waits(void);

/* Asserts a status, printing the last error's message when it differs. */
#define conf_status(expr, want)                                                   \
  do {                                                                            \
    rig_status conf_st_ = (expr);                                                 \
    if (conf_st_ != (want))                                                       \
      print_error("%s: got %s, want %s: %s\n", #expr, rig_status_name(conf_st_),  \
                  rig_status_name(want), rig_error_last()->message);              \
    assert_int_equal(conf_st_, (want));                                           \
  } while (0)
#define conf_ok(expr) conf_status((expr), RIG_OK)

/* Copies and fills in submissions on the host. The host's queue runs only
 * launches, so a host submission with a copy or fill part lacks a queue for
 * it and make refuses it (HOST-4, VALID-2). Tests of order and of
 * submissions in general run on the host through launches that do the same
 * work: copy_bytes and fill_bytes (tests/kernels), loaded from $RIG_KERNELS.
 *
 * conf_submission_make makes a submission of parts on d as
 * rig_submission_make does; on the host it first turns each copy part into
 * a launch of copy_bytes that reads slot src and writes slot dst, and each
 * fill part into one of fill_bytes that writes slot dst, flags (unordered)
 * kept. Other parts go as they are. */
rig_status conf_submission_make(rig_device *d, const rig_part *parts, size_t n,
                                rig_submission **out);
/* Fills in the launch blocks of r, a run of a submission that
 * conf_submission_make made of parts on the device under test, for a
 * submit with bufs (nbufs of them): each launch's grid and parameters,
 * from the lengths of its buffers (a slot past nbufs or NULL counts 0
 * bytes). Nothing to do where the device under test is not the host. */
void conf_run_set(rig_run *r, const rig_part *parts, size_t nparts, rig_buffer *const *bufs,
                  size_t nbufs);
/* conf_run_set, then rig_run_submit. */
rig_status conf_submit(rig_run *r, const rig_part *parts, size_t nparts, rig_buffer *const *bufs,
                       size_t nbufs, const rig_point *waits, size_t nwaits, rig_point *out);

#endif
