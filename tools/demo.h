/* demo.h: the steps of `rig demo` that live beside tools/rig.c. */
#ifndef RIG_TOOLS_DEMO_H
#define RIG_TOOLS_DEMO_H

/* The seed's add example on the host, from kernel_dir/add.o; 0 when right. */
int rig_demo_add_host(const char *kernel_dir);

#endif
