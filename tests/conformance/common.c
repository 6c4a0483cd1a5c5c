#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_launch.h"
#include "../remote/server.h"

const char *conf_name(void) {
  const char *n = getenv("RIG_CONF_DEVICE");
  return n && *n ? n : "memory:conformance";
}

bool conf_is_host(void) { return strcmp(conf_name(), "CPU") == 0; }

bool conf_is_remote(void) { return strchr(conf_name(), '@') != NULL; }

/* What the device's driver states in its facts (QUEUE_WAITS), so that a
 * driver outside rig's tree runs the suite with no name of its own here. */
bool conf_queue_waits(void) {
  rig_device *d = conf_open();
  bool waits = rig_device_queue_waits(d);
  rig_device_release(d);
  return waits;
}

/* Whether the device under test may be absent here: its driver's own open
 * said so (RIG_UNAVAILABLE: no vendor library, no such device), or the
 * library it links is missing. Not where no plugin was found (a test run
 * that lacks the driver is set up wrong), nor for the devices that always
 * exist here: the memory device, the host and the test and sample
 * devices, whose failure to open fails the test. */
static bool may_be_absent(const char *name, const char *message) {
  static const char *const always[] = {"memory:", "CPU", "test:", "sample:"};
  for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
    if (strncmp(name, always[i], strlen(always[i])) == 0)
      return false;
  return strncmp(message, "no driver '", 11) != 0;
}

/* ---- a device of another machine (docs/remote.md) -------------------------- */

static test_server server;
static const char *server_key;
static rig_device *machine_host; /* the machine's host, held for the run */
static unsigned generation;

static void stop_server(void) { test_server_stop(&server); }

/* The open host of machine, on a `rig serve` this run starts. A test that
 * closes the device under test, where that is the host, closes the
 * machine for good (MACH-6), so the next open reaches the same server under
 * a new machine name, which is another machine (MACH-3). */
static rig_device *machine_open(const char *machine) {
  if (machine_host && !rig_device_lost(machine_host))
    return machine_host;
  if (!server_key) {
    server_key = test_key_file("the conformance suite's key for its rig serve");
    test_server_start(&server, server_key);
    atexit(stop_server);
  }
  char name[64];
  if (generation++ == 0)
    snprintf(name, sizeof name, "%s", machine);
  else
    snprintf(name, sizeof name, "%s-%u", machine, generation);
  if (machine_host)
    rig_device_release(machine_host);
  rig_host_opener o = {.address = server.address, .key_file = server_key, .hang_ms = 20000};
  if (rig_device_open_host(name, &o, &machine_host) != RIG_OK) {
    printf("error: the host of %s at %s does not open: %s\n", name, server.address,
           rig_error_last()->message);
    exit(1);
  }
  return machine_host;
}

/* name is "NAME@MACHINE": NAME on that machine's host. */
static rig_status open_remote(const char *name, const char *at, rig_device **d) {
  char local[64];
  snprintf(local, sizeof local, "%.*s", (int)(at - name), name);
  return rig_device_open_on(machine_open(at + 1), local, d);
}

rig_device *conf_open(void) {
  rig_device *d = NULL;
  const char *at = strchr(conf_name(), '@');
  rig_status st = at ? open_remote(conf_name(), at, &d) : rig_device_open(conf_name(), &d);
  if (st != RIG_OK) {
    const rig_error *e = rig_error_last();
    if (e->status == RIG_UNAVAILABLE && may_be_absent(conf_name(), e->message)) {
      printf("skip: %s does not open here: %s\n", conf_name(), e->message);
      exit(77);
    }
    printf("error: %s does not open: %s: %s\n", conf_name(), rig_status_name(e->status),
           e->message);
    exit(1);
  }
  return d;
}

/* ---- copies and fills as host launches (HOST-4) ---------------------------- */

rig_status conf_submission_make(rig_device *d, const rig_part *parts, size_t n,
                                rig_submission **out) {
  if (!d || !rig_device_equal(d, rig_device_host()) || !parts || n == 0)
    return rig_submission_make(d, parts, n, out);
  host_kernels k;
  conf_ok(host_kernels_load(&k));
  rig_part *launches = calloc(n, sizeof *launches);
  rig_ref *refs = calloc(2 * n, sizeof *refs);
  assert_non_null(launches);
  assert_non_null(refs);
  for (size_t i = 0; i < n; i++)
    launches[i] = host_launch_of(&k, &parts[i], &refs[2 * i]);
  rig_status st = rig_submission_make(d, launches, n, out);
  free(refs);
  free(launches);
  host_kernels_release(&k); /* the submission holds its code (RUN-8) */
  return st;
}

static uint64_t length_of(rig_buffer *const *bufs, size_t nbufs, uint32_t slot) {
  return slot < nbufs && bufs && bufs[slot] ? rig_buffer_length(bufs[slot]) : 0;
}

void conf_run_set(rig_run *r, const rig_part *parts, size_t nparts, rig_buffer *const *bufs,
                  size_t nbufs) {
  if (!conf_is_host() || !r)
    return;
  rig_submission *s = rig_run_submission(r);
  for (size_t i = 0; i < nparts; i++) {
    const rig_part *p = &parts[i];
    uint32_t k;
    if ((p->kind != RIG_PART_COPY && p->kind != RIG_PART_FILL) ||
        rig_submission_block(s, (uint32_t)i, &k) != RIG_OK)
      continue;
    uint64_t n = length_of(bufs, nbufs, p->dst);
    if (p->kind == RIG_PART_COPY) {
      uint64_t m = length_of(bufs, nbufs, p->src);
      n = m < n ? m : n; /* a copy of unequal lengths is refused (VALID-17) */
    }
    conf_ok(host_launch_set(r, k, p, n));
  }
}

rig_status conf_submit(rig_run *r, const rig_part *parts, size_t nparts, rig_buffer *const *bufs,
                       size_t nbufs, const rig_point *waits, size_t nwaits, rig_point *out) {
  conf_run_set(r, parts, nparts, bufs, nbufs);
  return rig_run_submit(r, bufs, nbufs, waits, nwaits, out);
}
