/* add.c: z = x + y with the add kernel, on the best device here.
 *
 *   add [DEVICE]    "vulkan:0" or "CPU"; without it, the first GPU that
 *                   opens, else the host's performance cores.
 *
 * The kernel comes in two builds, both made by meson and carried in this
 * program (tools/embed.py): tests/kernels/vulkan/add.comp compiled to SPIR-V for Vulkan,
 * and tests/kernels/add.c compiled by clang into a relocatable ELF object
 * for the host, which rig links itself (docs/linker.md). Both take the same
 * parameter block, struct { const float *x, *y; float *z; int64_t n; }. */
#include <string.h>

#include "check.h"

#define N 1000
#define GROUP 64 /* threads of a group */

extern const unsigned char example_add_host[];
extern const unsigned long example_add_host_bytes;
#ifdef EXAMPLE_HAVE_SPIRV
extern const unsigned char example_add_spirv[];
extern const unsigned long example_add_spirv_bytes;
#endif

/* Opens `name`, or the best device, with the kernel's code for it. */
static rig_device *open_device(const char *name, const void **code, size_t *bytes) {
  rig_device *d = NULL;
#ifdef EXAMPLE_HAVE_SPIRV
  if ((!name || strncmp(name, "vulkan:", 7) == 0) &&
      rig_device_open(name ? name : "vulkan:0", &d) == RIG_OK) {
    *code = example_add_spirv;
    *bytes = example_add_spirv_bytes;
    return d;
  }
#endif
  if (name && strcmp(name, "CPU") != 0) {
    printf("add: %s does not open here (%s)\n", name, rig_error_last()->message);
    exit(77);
  }
  *code = example_add_host;
  *bytes = example_add_host_bytes;
  return rig_device_retain(rig_device_host());
}

int main(int argc, char **argv) {
  const void *code;
  size_t code_bytes;
  rig_device *d = open_device(argc > 1 ? argv[1] : NULL, &code, &code_bytes);
  printf("add: on %s (arch %s)\n", rig_device_name(d), rig_device_arch(d));

  /* Load the code once and find the kernel in it. The image's code counts
   * in d's budget while the image or a submission holds it. */
  rig_image *image;
  rig_function *add;
  CHECK(rig_image_load(d, code, code_bytes, &image));
  CHECK(rig_image_resolve(image, "add", &add));
  if (!add) {
    printf("add: no function add in the code\n");
    return 1;
  }

  /* The operands, in d's own memory. */
  float xs[N], ys[N], zs[N];
  for (int i = 0; i < N; i++) {
    xs[i] = (float)i;
    ys[i] = 2.0f * (float)i;
  }
  rig_buffer *x, *y, *z;
  CHECK(rig_buffer_create(d, sizeof xs, &x));
  CHECK(rig_buffer_create(d, sizeof ys, &y));
  CHECK(rig_buffer_create(d, sizeof zs, &z));
  CHECK(rig_buffer_put(x, 0, xs, sizeof xs));
  CHECK(rig_buffer_put(y, 0, ys, sizeof ys));

  /* A submission is described once: one launch of add whose refs store
   * the device addresses of slots 0, 1 and 2 at bytes 0, 8 and 16 of its
   * 32-byte parameter block. The refs also tell rig what the launch reads
   * and writes, which is all it needs to order it. */
  rig_ref refs[3] = {rig_ref_read(0, 0), rig_ref_read(1, 8), rig_ref_write(2, 16)};
  rig_part launch = rig_part_launch(add, refs, 3, 32);
  rig_submission *s;
  CHECK(rig_submission_make(d, &launch, 1, &s));

  /* Each submit takes a run, sets its grid and parameters, and passes the
   * buffers for the slots. The launch follows the puts of x and y. */
  rig_run *run;
  uint32_t k;
  rig_point done;
  CHECK(rig_submission_take(s, &run));
  CHECK(rig_submission_block(s, 0, &k));
  CHECK(rig_run_groups(run, k, (N + GROUP - 1) / GROUP, 1, 1));
  CHECK(rig_run_threads(run, k, GROUP, 1, 1));
  CHECK(rig_run_int64(run, k, 24, N));
  rig_buffer *slots[3] = {x, y, z};
  CHECK(rig_run_submit(run, slots, 3, NULL, 0, &done));

  /* The get reads z, so it waits for the launch's write by itself. */
  CHECK(rig_buffer_get(z, 0, zs, sizeof zs));
  char point[64];
  rig_point_format(done, point, sizeof point);
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += zs[i] != 3.0f * (float)i;
  printf("add: launch %s, z[%d] = %g: %s\n", done ? point : "(host, no value)", N - 1,
         zs[N - 1], bad ? "WRONG" : "z = x + y");

  rig_submission_release(s);
  rig_image_release(image);
  rig_buffer_release(x);
  rig_buffer_release(y);
  rig_buffer_release(z);
  if (d != rig_device_host())
    CHECK(rig_device_close(d));
  rig_device_release(d);
  return bad != 0;
}
