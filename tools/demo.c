/* SPDX-License-Identifier: MIT */
/* demo.c: `rig demo`, the memory guide's quick start on the best device
 * present: floats copied to the device, doubled there (a Vulkan or CUDA
 * kernel, else host code after the copy), copied back and checked; then
 * through a file on an io device. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include "cli.h"
#include "demo.h"

/* The device the demo runs on: a GPU driver's first device when one opens,
 * else a memory device standing for one. */
static rig_device *best_device(void) {
  const char *order[] = {"cuda:0", "vulkan:0", "amdgpu:0", "memory:demo"};
  rig_device *d = NULL;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (rig_device_open(order[i], &d) == RIG_OK)
      return d;
  return NULL;
}

static void show(const char *step, rig_point p) {
  char s[96];
  rig_point_format(p, s, sizeof s);
  printf("  %-42s point %s\n", step, p ? s : "none (host work takes no value)");
}

/* tests/kernels/vulkan/double.comp, x[i] *= 2 for i < n with parameters
 * { float *x; int64_t n; }, as SPIR-V: `glslangValidator -g0 --target-env
 * vulkan1.2 -e double --source-entrypoint main`. The test vulkan-demo-kernel
 * checks that these are its words; tests/kernels/vulkan/embedded.py --print
 * writes them anew. */
static const uint32_t demo_spv[] = {
    0x07230203, 0x00010500, 0x0008000b, 0x00000036, 0x00000000, 0x00020011,
    0x00000001, 0x00020011, 0x0000000b, 0x00020011, 0x000014e3, 0x0006000b,
    0x00000001, 0x4c534c47, 0x6474732e, 0x3035342e, 0x00000000, 0x0003000e,
    0x000014e4, 0x00000001, 0x0007000f, 0x00000005, 0x00000004, 0x62756f64,
    0x0000656c, 0x0000000c, 0x0000001b, 0x00060010, 0x00000004, 0x00000011,
    0x00000001, 0x00000001, 0x00000001, 0x00040047, 0x0000000c, 0x0000000b,
    0x0000001c, 0x00050048, 0x00000016, 0x00000000, 0x00000023, 0x00000000,
    0x00050048, 0x00000016, 0x00000001, 0x00000023, 0x00000008, 0x00030047,
    0x00000016, 0x00000002, 0x00040047, 0x00000018, 0x00000006, 0x00000004,
    0x00050048, 0x00000019, 0x00000000, 0x00000023, 0x00000000, 0x00030047,
    0x00000019, 0x00000002, 0x00040047, 0x00000032, 0x00000001, 0x00000000,
    0x00040047, 0x00000033, 0x00000001, 0x00000001, 0x00040047, 0x00000034,
    0x00000001, 0x00000002, 0x00040047, 0x00000035, 0x0000000b, 0x00000019,
    0x00020013, 0x00000002, 0x00030021, 0x00000003, 0x00000002, 0x00040015,
    0x00000006, 0x00000040, 0x00000001, 0x00040020, 0x00000007, 0x00000007,
    0x00000006, 0x00040015, 0x00000009, 0x00000020, 0x00000000, 0x00040017,
    0x0000000a, 0x00000009, 0x00000003, 0x00040020, 0x0000000b, 0x00000001,
    0x0000000a, 0x0004003b, 0x0000000b, 0x0000000c, 0x00000001, 0x0004002b,
    0x00000009, 0x0000000d, 0x00000000, 0x00040020, 0x0000000e, 0x00000001,
    0x00000009, 0x00040015, 0x00000011, 0x00000040, 0x00000000, 0x00030027,
    0x00000015, 0x000014e5, 0x0004001e, 0x00000016, 0x00000015, 0x00000006,
    0x00030016, 0x00000017, 0x00000020, 0x0003001d, 0x00000018, 0x00000017,
    0x0003001e, 0x00000019, 0x00000018, 0x00040020, 0x00000015, 0x000014e5,
    0x00000019, 0x00040020, 0x0000001a, 0x00000009, 0x00000016, 0x0004003b,
    0x0000001a, 0x0000001b, 0x00000009, 0x00040015, 0x0000001c, 0x00000020,
    0x00000001, 0x0004002b, 0x0000001c, 0x0000001d, 0x00000001, 0x00040020,
    0x0000001e, 0x00000009, 0x00000006, 0x00020014, 0x00000021, 0x0004002b,
    0x0000001c, 0x00000025, 0x00000000, 0x00040020, 0x00000026, 0x00000009,
    0x00000015, 0x0004002b, 0x00000017, 0x0000002c, 0x40000000, 0x00040020,
    0x0000002d, 0x000014e5, 0x00000017, 0x00040032, 0x00000009, 0x00000032,
    0x00000001, 0x00040032, 0x00000009, 0x00000033, 0x00000001, 0x00040032,
    0x00000009, 0x00000034, 0x00000001, 0x00060033, 0x0000000a, 0x00000035,
    0x00000032, 0x00000033, 0x00000034, 0x00050036, 0x00000002, 0x00000004,
    0x00000000, 0x00000003, 0x000200f8, 0x00000005, 0x0004003b, 0x00000007,
    0x00000008, 0x00000007, 0x00050041, 0x0000000e, 0x0000000f, 0x0000000c,
    0x0000000d, 0x0004003d, 0x00000009, 0x00000010, 0x0000000f, 0x00040071,
    0x00000011, 0x00000012, 0x00000010, 0x0004007c, 0x00000006, 0x00000013,
    0x00000012, 0x0003003e, 0x00000008, 0x00000013, 0x0004003d, 0x00000006,
    0x00000014, 0x00000008, 0x00050041, 0x0000001e, 0x0000001f, 0x0000001b,
    0x0000001d, 0x0004003d, 0x00000006, 0x00000020, 0x0000001f, 0x000500b1,
    0x00000021, 0x00000022, 0x00000014, 0x00000020, 0x000300f7, 0x00000024,
    0x00000000, 0x000400fa, 0x00000022, 0x00000023, 0x00000024, 0x000200f8,
    0x00000023, 0x00050041, 0x00000026, 0x00000027, 0x0000001b, 0x00000025,
    0x0004003d, 0x00000015, 0x00000028, 0x00000027, 0x0004003d, 0x00000006,
    0x00000029, 0x00000008, 0x00040072, 0x0000001c, 0x0000002a, 0x00000029,
    0x0004007c, 0x00000009, 0x0000002b, 0x0000002a, 0x00060041, 0x0000002d,
    0x0000002e, 0x00000028, 0x00000025, 0x0000002b, 0x0006003d, 0x00000017,
    0x0000002f, 0x0000002e, 0x00000002, 0x00000004, 0x00050085, 0x00000017,
    0x00000030, 0x0000002f, 0x0000002c, 0x00060041, 0x0000002d, 0x00000031,
    0x00000028, 0x00000025, 0x0000002b, 0x0005003e, 0x00000031, 0x00000030,
    0x00000002, 0x00000004, 0x000200f9, 0x00000024, 0x000200f8, 0x00000024,
    0x000100fd, 0x00010038,
};

/* Doubles x's n floats with double.comp on d, a Vulkan device, or double.ptx
 * on a cuda device, in groups
 * of 64: *p is the launch's point. Another device, or a Vulkan device that
 * runs no code, returns non-zero and the caller doubles x on the host. */
/* On a cuda device: drivers/cuda/kernels/double.ptx, whose entry is twice. */
extern const unsigned char rig_demo_cuda_ptx[];
extern const unsigned long rig_demo_cuda_ptx_bytes;

static rig_status double_on_device(rig_device *d, rig_buffer *x, size_t n, rig_point *p) {
  rig_image *im;
  rig_function *f = NULL;
  rig_submission *s;
  rig_run *run;
  *p = 0;
  bool cuda = strncmp(rig_device_name(d), "cuda:", 5) == 0;
  if (strncmp(rig_device_name(d), "vulkan:", 7) != 0 && !cuda)
    return RIG_UNAVAILABLE;
  if ((cuda ? rig_image_load(d, rig_demo_cuda_ptx, rig_demo_cuda_ptx_bytes, &im)
            : rig_image_load(d, demo_spv, sizeof demo_spv, &im)) != RIG_OK) {
    printf("  (no kernel: %s)\n", rig_error_last()->message);
    return RIG_UNAVAILABLE;
  }
  rig_ref ref = rig_ref_read_write(0, 0);
  rig_part launch = rig_part_launch(NULL, &ref, 1, 16);
  rig_status st = rig_image_resolve(im, cuda ? "twice" : "double", &f);
  if (st == RIG_OK && !f)
    st = RIG_UNAVAILABLE;
  launch.function = f;
  if (st == RIG_OK)
    st = rig_submission_make(d, &launch, 1, &s);
  rig_image_release(im); /* the submission holds the code */
  if (st != RIG_OK)
    return st;
  if ((st = rig_submission_take(s, &run)) == RIG_OK) {
    st = rig_run_groups(run, 0, (n + 63) / 64, 1, 1);
    if (st == RIG_OK)
      st = rig_run_threads(run, 0, 64, 1, 1);
    if (st == RIG_OK)
      st = rig_run_int64(run, 0, 8, (int64_t)n);
    /* A run is given back by its submit, also one refused for a bad grid. */
    rig_status sub = rig_run_submit(run, &x, 1, NULL, 0, p);
    st = st ? st : sub;
  }
  rig_submission_release(s);
  return st;
}

static void twice(void *bytes, size_t n, void *ctx) {
  float *f = bytes;
  for (size_t i = 0; i < n / sizeof *f; i++)
    f[i] *= 2;
}

#define CHECK(call)                                                         \
  do {                                                                      \
    if ((call) != RIG_OK) {                                                 \
      printf("rig demo: %s: %s\n", #call, rig_error_last()->message);       \
      return 1;                                                             \
    }                                                                       \
  } while (0)

/* The io step: the host's floats go into a file through an io device,
 * and come back from the file into d's memory. */
static int demo_io(rig_device *d, rig_buffer *host) {
  char path[256];
  rig_device *io;
  rig_buffer *f, *y;
  rig_point p;
  size_t n = rig_buffer_length(host);
  CHECK(rig_cli_open_scratch(path, sizeof path, &io));
  CHECK(rig_buffer_create(io, n, &f));
  CHECK(rig_buffer_copy(host, f));
  show("copy host -> file (io device)", 0);
  CHECK(rig_buffer_create(d, n, &y));
  CHECK(rig_buffer_submit_copy(f, y, &p));
  show("copy file -> y on the device", p);
  float first[4];
  CHECK(rig_buffer_get(y, 0, first, sizeof first));
  printf("  y reads %g %g %g %g from %s\n", first[0], first[1], first[2], first[3], path);
  rig_buffer_release(y);
  rig_buffer_release(f);
  CHECK(rig_device_close(io));
  rig_device_release(io);
  unlink(path);
  return first[1] != 2.f;
}

/* The quick start: copy floats to the device, double them, copy back. */
static int demo(void) {
  enum { N = 1024 };
  float in[N], out[N];
  rig_device *d = best_device();
  rig_buffer *host, *x;
  rig_point p;
  if (!d) {
    printf("rig demo: no device opens: %s\n", rig_error_last()->message);
    return 1;
  }
  printf("rig demo on %s (arch %s)%s\n", rig_device_name(d), rig_device_arch(d),
         rig_device_runs_on_host(d) || strcmp(rig_device_arch(d), "memory") == 0
             ? ": no GPU driver opens, so a memory device stands for the GPU"
             : "");
  for (int i = 0; i < N; i++)
    in[i] = i == 0 ? 65535.f : (float)i;
  CHECK(rig_buffer_create(rig_device_host(), sizeof in, &host));
  CHECK(rig_buffer_create(d, sizeof in, &x));
  CHECK(rig_buffer_put(host, 0, in, sizeof in));
  show("host writes its buffer", 0);
  CHECK(rig_buffer_submit_copy(host, x, &p));
  show("copy host -> x", p);
  /* On a Vulkan device a kernel doubles x, after the copy that wrote it;
   * elsewhere host code does, after x's uses. */
  if (double_on_device(d, x, N, &p) == RIG_OK)
    show(strncmp(rig_device_name(d), "cuda:", 5) == 0 ? "double x (CUDA kernel double.ptx)"
                                                        : "double x (Vulkan kernel double.comp)",
         p);
  else {
    CHECK(rig_buffer_write(x, twice, NULL));
    show("double x (host code after x's uses)", 0);
  }
  CHECK(rig_buffer_submit_copy(x, host, &p));
  show("copy x -> host", p);
  CHECK(rig_point_wait(p));
  CHECK(rig_buffer_get(host, 0, out, sizeof out));
  int bad = 0;
  for (int i = 0; i < N; i++)
    bad += out[i] != 2 * in[i];
  printf("  host reads %g %g %g ... %g: %s\n", out[0], out[1], out[2], out[N - 1],
         bad ? "WRONG" : "each float doubled");
  bad += demo_io(d, host);
  rig_buffer_release(x);
  rig_buffer_release(host);
  CHECK(rig_device_close(d));
  printf("  closed %s: %s\n", rig_device_name(d), rig_device_lost(d));
  rig_device_release(d);
  return bad != 0;
}

int rig_cli_demo(int argc, char **argv) {
  if (argc > 0)
    return rig_cli_bad("demo", "takes no argument, not '%s'", argv[0]);
  return demo() | rig_demo_add_host(); /* then the seed's add example on the host */
}
