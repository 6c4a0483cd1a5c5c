/* common.h: what the conformance suite's files share. The suite is written
 * once against <rig/rig.h> and run on every device that opens here:
 * RIG_CONF_DEVICE names the device under test ("memory:conformance", "CPU",
 * later "vulkan:0"). A device that does not open skips (exit 77). */
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

/* Asserts a status, printing the last error's message when it differs. */
#define conf_status(expr, want)                                                   \
  do {                                                                            \
    rig_status conf_st_ = (expr);                                                 \
    if (conf_st_ != (want))                                                       \
      print_error("%s: got %s, want %s: %s\n", #expr, rig_status_name(conf_st_),  \
                  rig_status_name(want), rig_last_error()->message);              \
    assert_int_equal(conf_st_, (want));                                           \
  } while (0)
#define conf_ok(expr) conf_status((expr), RIG_OK)

#endif
