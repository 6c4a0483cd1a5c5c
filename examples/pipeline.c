/* pipeline.c: a pipeline across the host, a GPU and a file.
 *
 *   pipeline [DEVICE [PATH]]   DEVICE stands for the GPU: vulkan:0 where it
 *                              opens, else a memory device; PATH is the file
 *                              (default: a new file in $TMPDIR or /tmp).
 *
 * Host memory -> the GPU -> a file -> host memory, each step submitted
 * without waiting, and no step naming another: every submit follows the
 * points of the memory it uses (its stamps). Only the last read waits. */
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 4096 /* bytes through the pipeline */

static rig_device *open_gpu(const char *name) {
  rig_device *d;
  if (name)
    CHECK(rig_device_open(name, &d));
  else if (rig_device_open("vulkan:0", &d) != RIG_OK)
    CHECK(rig_device_open("memory:gpu", &d)); /* stands for a GPU */
  return d;
}

/* The file, as an io device: its memory is the file's bytes. */
static rig_device *open_file(const char *path) {
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_CREATE, .size = N};
  rig_device *f;
  CHECK(rig_device_open_io(&o, &f));
  return f;
}

static void show(const char *step, rig_point p) {
  char s[64];
  rig_point_format(p, s, sizeof s);
  printf("  %-40s %s\n", step, p ? s : "(ran on the host: no value)");
}

int main(int argc, char **argv) {
  char path[256];
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(path, sizeof path, "%s/rig-pipeline-%d", tmp, (int)getpid());
  rig_device *gpu = open_gpu(argc > 1 ? argv[1] : NULL);
  rig_device *file = open_file(argc > 2 ? argv[2] : path);
  printf("pipeline: host -> %s -> %s -> host\n", rig_device_name(gpu), rig_device_name(file));

  /* The data, and the buffers along the way. */
  unsigned char data[N], back[N];
  for (int i = 0; i < N; i++)
    data[i] = (unsigned char)(i * 7);
  rig_buffer *src, *a, *b, *on_disk, *dst;
  CHECK(rig_buffer_create(rig_device_host(), N, &src));
  CHECK(rig_buffer_create(gpu, N, &a));
  CHECK(rig_buffer_create(gpu, N, &b));
  CHECK(rig_buffer_create(file, N, &on_disk));
  CHECK(rig_buffer_create(rig_device_host(), N, &dst));
  CHECK(rig_buffer_put(src, 0, data, N));

  /* 1. host -> a: the copy follows the put, which wrote src. */
  rig_point p;
  CHECK(rig_buffer_submit_copy(src, a, &p));
  show("copy host -> a", p);

  /* 2. On the GPU, one submission of two parts: copy a into b, then clear
   * a. The fill writes what the copy reads, so rig runs it after the copy
   * (a part follows each earlier part it shares memory with where one of
   * the two writes); parts that share nothing may run at once. */
  rig_part parts[2] = {rig_part_copy(0, 1), rig_part_fill(0, 0, 4)};
  rig_submission *s;
  rig_run *run;
  CHECK(rig_submission_make(gpu, parts, 2, &s));
  CHECK(rig_submission_take(s, &run));
  rig_buffer *slots[2] = {a, b};
  CHECK(rig_run_submit(run, slots, 2, NULL, 0, &p)); /* follows step 1's write of a */
  show("copy a -> b, then fill a with 0", p);

  /* 3. b -> the file: follows step 2's write of b. */
  CHECK(rig_buffer_submit_copy(b, on_disk, &p));
  show("copy b -> file", p);

  /* 4. file -> host, and the host reads it: the get waits for the copy. */
  CHECK(rig_buffer_submit_copy(on_disk, dst, &p));
  show("copy file -> host", p);
  CHECK(rig_buffer_get(dst, 0, back, N));
  unsigned char cleared[N];
  CHECK(rig_buffer_get(a, 0, cleared, N));

  int bad = memcmp(back, data, N) != 0;
  for (int i = 0; i < N; i++)
    bad |= cleared[i] != 0;
  printf("pipeline: %s\n", bad ? "WRONG" : "the bytes came back through the file; a is cleared");

  rig_submission_release(s);
  rig_buffer *all[] = {src, a, b, on_disk, dst};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    rig_buffer_release(all[i]);
  CHECK(rig_device_close(file));
  CHECK(rig_device_close(gpu));
  rig_device_release(file);
  rig_device_release(gpu);
  if (argc <= 2)
    unlink(path);
  return bad;
}
