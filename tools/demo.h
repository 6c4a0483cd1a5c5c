/* SPDX-License-Identifier: MIT */
/* demo.h: the steps of `rig demo` (demo.c, demo_add.c). */
#ifndef RIG_TOOLS_DEMO_H
#define RIG_TOOLS_DEMO_H

/* The seed's add example on the host, from the add.o the program carries;
 * 0 when z = x + y. */
int rig_demo_add_host(void);

#endif
