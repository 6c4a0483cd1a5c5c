/* SPDX-License-Identifier: MIT */
/* version.c: rig_version(), the version of the library a program runs
 * with, which may be newer than the <rig/version.h> it was built against. */
#include <rig/rig.h>

const char *rig_version(void) { return RIG_VERSION_STRING; }

unsigned rig_version_number(void) { return RIG_VERSION_NUMBER; }
