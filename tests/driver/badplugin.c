/* badplugin.c: plugins that fail to load or open, one per -D flag, for the
 * loader's error tests (tests/unit/test_loader.c). Each fails in exactly
 * one way; everything else in it is a working memory-like driver. */
#include <stdlib.h>
#include <string.h>

#include <rig/edge.h>

#include "driver_memory.h"

/* How often stop ran, for OPEN-29; read by the test through dlsym. */
RIG_EDGE_PLUGIN_EXPORT int rig_test_stops;

#ifdef NOVENDOR
int rig_absent_vendor_init(void); /* in a library that is not on the path */
#endif

static int bad_open(const char *args, void **out, rig_edge_error *err) {
#ifdef NOVENDOR
  rig_absent_vendor_init();
#endif
#ifdef OPENERR
  return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "openerr: no device %s", args);
#endif
  *out = calloc(1, 16);
  return *out ? RIG_EDGE_OK : rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "no memory");
}

static int bad_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
#ifdef FAULTFACTS
  return rig_edge_fail(err, RIG_EDGE_FAULT, "no firmware");
#endif
  strcpy(f->arch, "bad");
  f->alignment = 64;
#ifdef BADFACTS
  f->alignment = 48; /* not a power of two (OPEN-35) */
#endif
  f->budget = 1 << 20;
  f->flags = RIG_EDGE_HOST_ADDRESSES;
  for (int k = 0; k < RIG_EDGE_PART_KINDS; k++)
    f->part_queue[k] = RIG_EDGE_NO_QUEUE;
  return RIG_EDGE_OK;
}

static int bad_stop(void *h, rig_edge_error *err) {
  rig_test_stops++;
  return RIG_EDGE_OK;
}

static void bad_destroy(void *h) { free(h); }

static const rig_edge_driver table = {
#ifdef ABI2 /* a major this core refuses: the fields spelled out */
    .abi_major = 2,
    .abi_minor = RIG_EDGE_ABI_MINOR,
    .size = sizeof(rig_edge_driver),
    .name = "bad",
#else
    RIG_EDGE_DRIVER_INIT("bad"),
#endif
    .open = bad_open,
    .facts = bad_facts,
    .stop = bad_stop,
    .destroy = bad_destroy,
    .allocate = driver_memory_allocate,
    .release = driver_memory_release,
};

#ifndef NOENTRY
RIG_EDGE_DRIVER(table)
#else
RIG_EDGE_PLUGIN_EXPORT const void *rig_edge_entry_v0(void) { return &table; }
#endif
