#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *conf_name(void) {
  const char *n = getenv("RIG_CONF_DEVICE");
  return n && *n ? n : "memory:conformance";
}

bool conf_is_host(void) { return strcmp(conf_name(), "CPU") == 0; }

bool conf_queue_waits(void) {
  const char *n = conf_name();
  return (strncmp(n, "test:", 5) == 0 && !strstr(n, "waits=0")) || strncmp(n, "sample:", 7) == 0;
}

/* Devices this machine may lack: a GPU driver's, which skip where they
 * do not open for want of a plugin, library or device (RIG_UNAVAILABLE).
 * Every other device must open: the memory device, the host and the test
 * device always exist, so their failure to open fails the test. */
static bool may_be_absent(const char *name) { return strncmp(name, "vulkan:", 7) == 0; }

rig_device *conf_open(void) {
  rig_device *d = NULL;
  if (rig_device_open(conf_name(), &d) != RIG_OK) {
    const rig_error *e = rig_error_last();
    if (e->status == RIG_UNAVAILABLE && may_be_absent(conf_name())) {
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

/* The parameters of tests/kernels/copy_bytes.c and fill_bytes.c. */
struct copy_bytes {
  const uint8_t *src;
  uint8_t *dst;
  int64_t n;
};
struct fill_bytes {
  uint8_t *dst;
  int64_t n;
  uint32_t pattern, size;
};
enum { THREADS = 256 }; /* of a group: a thread per byte */

/* Loads kernel NAME from $RIG_KERNELS onto d and resolves its function of
 * the same name; NULL with a message when it does not load. */
static rig_image *load_kernel(rig_device *d, const char *name, rig_function **f) {
  char path[512];
  const char *dir = getenv("RIG_KERNELS");
  snprintf(path, sizeof path, "%s/%s.o", dir ? dir : ".", name);
  FILE *file = fopen(path, "rb");
  if (!file) {
    print_error("no kernel %s: build the tests (RIG_KERNELS=%s)\n", path, dir ? dir : "");
    return NULL;
  }
  fseek(file, 0, SEEK_END);
  long n = ftell(file);
  fseek(file, 0, SEEK_SET);
  void *bytes = malloc(n > 0 ? (size_t)n : 1);
  rig_image *im = NULL;
  if (bytes && n > 0 && fread(bytes, 1, (size_t)n, file) == (size_t)n &&
      rig_image_load(d, bytes, (size_t)n, &im) == RIG_OK &&
      (rig_image_resolve(im, name, f) != RIG_OK || !*f)) {
    rig_image_release(im);
    im = NULL;
  }
  if (!im)
    print_error("kernel %s does not load: %s\n", path, rig_error_last()->message);
  free(bytes);
  fclose(file);
  return im;
}

rig_status conf_submission_make(rig_device *d, const rig_part *parts, size_t n,
                                rig_submission **out) {
  if (!d || !rig_device_equal(d, rig_device_host()) || !parts || n == 0)
    return rig_submission_make(d, parts, n, out);
  rig_function *copy = NULL, *fill = NULL;
  rig_image *copy_im = load_kernel(d, "copy_bytes", &copy);
  rig_image *fill_im = load_kernel(d, "fill_bytes", &fill);
  assert_non_null(copy_im);
  assert_non_null(fill_im);
  rig_part *launches = calloc(n, sizeof *launches);
  rig_ref *refs = calloc(2 * n, sizeof *refs);
  assert_non_null(launches);
  assert_non_null(refs);
  for (size_t i = 0; i < n; i++) {
    const rig_part *p = &parts[i];
    rig_ref *r = &refs[2 * i];
    if (p->kind == RIG_PART_COPY) {
      r[0] = rig_ref_read(p->src, offsetof(struct copy_bytes, src));
      r[1] = rig_ref_write(p->dst, offsetof(struct copy_bytes, dst));
      launches[i] = rig_part_launch(copy, r, 2, sizeof(struct copy_bytes));
    } else if (p->kind == RIG_PART_FILL) {
      r[0] = rig_ref_write(p->dst, offsetof(struct fill_bytes, dst));
      launches[i] = rig_part_launch(fill, r, 1, sizeof(struct fill_bytes));
    } else {
      launches[i] = *p;
      continue;
    }
    launches[i].flags = p->flags;
  }
  rig_status st = rig_submission_make(d, launches, n, out);
  free(refs);
  free(launches);
  rig_image_release(copy_im); /* the submission holds its code (RUN-8) */
  rig_image_release(fill_im);
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
      struct copy_bytes c = {NULL, NULL, (int64_t)n};
      conf_ok(rig_run_bytes(r, k, 0, &c, sizeof c));
    } else {
      struct fill_bytes f = {NULL, (int64_t)n, p->pattern, p->pattern_bytes};
      conf_ok(rig_run_bytes(r, k, 0, &f, sizeof f));
    }
    conf_ok(rig_run_groups(r, k, n / THREADS + 1, 1, 1));
    conf_ok(rig_run_threads(r, k, THREADS, 1, 1));
  }
}

rig_status conf_submit(rig_run *r, const rig_part *parts, size_t nparts, rig_buffer *const *bufs,
                       size_t nbufs, const rig_point *waits, size_t nwaits, rig_point *out) {
  conf_run_set(r, parts, nparts, bufs, nbufs);
  return rig_run_submit(r, bufs, nbufs, waits, nwaits, out);
}
