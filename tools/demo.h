/* demo.h: the steps of `rig demo` that live beside tools/rig.c. */
#ifndef RIG_TOOLS_DEMO_H
#define RIG_TOOLS_DEMO_H

/* The seed's add example on the host, from the add.o the program carries;
 * 0 when z = x + y. */
int rig_demo_add_host(void);

#endif
