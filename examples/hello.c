/* hello.c: bytes to a device and back.
 *
 *   hello [DEVICE]     DEVICE as rig_device_open names it: "memory:hello"
 *                      (the default), "CPU", "vulkan:0", ...
 *
 * The host writes "hello, device" into a host buffer, copies it into a
 * buffer of DEVICE's own memory and back into a second host buffer, and
 * prints what came back. No call names an event or a fence: each copy
 * follows the last write of the memory it reads. Exits 77 when DEVICE does
 * not open here (a GPU driver without a GPU). */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  const char *name = argc > 1 ? argv[1] : "memory:hello";
  const char text[] = "hello, device";
  char back[sizeof text] = "";

  /* "CPU" is the host device itself, which is always open; any other name
   * opens through its driver plugin (librig-driver-NAME.so). */
  rig_device *d;
  if (strcmp(name, "CPU") == 0)
    d = rig_device_retain(rig_device_host());
  else if (rig_device_open(name, &d) != RIG_OK) {
    printf("hello: %s does not open here: %s\n", name, rig_error_last()->message);
    return rig_error_last()->status == RIG_UNAVAILABLE ? 77 : 1;
  }
  printf("hello: on %s (arch %s)\n", rig_device_name(d), rig_device_arch(d));

  /* Two host buffers and one of d's memory. The host may not address d's
   * memory (a discrete GPU's): rig_buffer_copy then goes through staging. */
  rig_buffer *out, *on_device, *in;
  CHECK(rig_buffer_create(rig_device_host(), sizeof text, &out));
  CHECK(rig_buffer_create(d, sizeof text, &on_device));
  CHECK(rig_buffer_create(rig_device_host(), sizeof text, &in));

  /* put is a write of `out`; the first copy reads `out`, so it follows the
   * put; the second reads `on_device`, so it follows the first copy's
   * write; get reads `in` after the second copy. Each call returns once its
   * bytes are where it put them. */
  CHECK(rig_buffer_put(out, 0, text, sizeof text));
  CHECK(rig_buffer_copy(out, on_device));
  CHECK(rig_buffer_copy(on_device, in));
  CHECK(rig_buffer_get(in, 0, back, sizeof back));
  printf("hello: came back: \"%s\"\n", back);

  /* A mistake gets a status and a message, never a crash: this get asks
   * for bytes past the buffer's end. */
  rig_status st = rig_buffer_get(in, 8, back, sizeof back);
  printf("hello: a get past the end: %s (%s)\n", rig_status_name(st),
         rig_error_last()->message);

  /* Releasing a buffer hands its memory back to d's cache once the work
   * that uses it is done. Close waits for d's work and stops d; release
   * then drops our reference. */
  rig_buffer_release(in);
  rig_buffer_release(on_device);
  rig_buffer_release(out);
  if (d != rig_device_host())
    CHECK(rig_device_close(d));
  rig_device_release(d);
  return strcmp(back, text) == 0 && st == RIG_INVALID ? 0 : 1;
}
