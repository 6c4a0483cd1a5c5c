/* test_cuda_fork.c: a child of fork and CUDA (suite driver-cuda).
 *
 * CUDA cannot be used in a child of a process that initialised it. The
 * driver's fork hook marks that in the child: every GPU the parent had is
 * lost ("forked") and is never called again, and the child's own opens of
 * cuda: are RIG_UNAVAILABLE, saying it is a child of fork.
 *
 * `test-cuda-fork` (a GPU: else 77 with the reason): the parent opens
 * cuda:0 and uses it, borrowing a host buffer; a child of a fork finds
 * the device lost with "forked", releases and closes it, and is refused
 * its own open of cuda:0; the parent then goes on using the device.
 *
 * `test-cuda-fork stub` (RIG_CUDA_LIBRARY the toolkit's stub libcuda,
 * which runs here): the parent's open of cuda:0 calls cuInit, which the
 * stub answers with no device; in a child of a fork the hook has marked
 * the child, and its open says so instead; the parent still says "no
 * device".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include "check.h"

#define CHILD_SAYS "a child of fork"

/* The open of name (cuda:0, or another name for it), refused with want in
 * its message. */
static int refused_named(const char *name, const char *want) {
  rig_device *d = NULL;
  rig_status s = rig_device_open(name, &d);
  printf("pid %d: %s: %s: %s\n", (int)getpid(), name, rig_status_name(s),
         rig_error_last()->message);
  fflush(stdout); /* a child ends with _exit */
  if (s == RIG_OK) {
    rig_status c = rig_device_close(d);
    rig_device_release(d);
    return c == RIG_OK ? 1 : 2;
  }
  return s == RIG_UNAVAILABLE && strstr(rig_error_last()->message, want) ? 0 : 3;
}

static int refused(const char *want) { return refused_named("cuda:0", want); }

static int child_of_stub(void) { return refused(CHILD_SAYS); }

static void a_child_is_refused_cuda_after_the_parents_cuinit(void **st) {
  (void)st;
  assert_int_equal(refused("cuda: no device"), 0); /* the parent's cuInit */
  in_child(child_of_stub);
  assert_int_equal(refused("cuda: no device"), 0); /* the parent is unchanged */
}

/* ---- on a GPU -------------------------------------------------------------------- */

static rig_device *gpu;

/* The inherited device is lost "forked" (STOP-18); its buffers and its
 * close end without a call into the parent's context (STOP-20), and the
 * child's own open is refused. */
static int child_of_gpu(void) {
  const char *lost = rig_device_lost(gpu);
  printf("child: %s: %s\n", rig_device_name(gpu), lost ? lost : "(not lost)");
  if (!lost || !strstr(lost, "forked"))
    return 10;
  rig_buffer *b = NULL;
  if (rig_buffer_create(gpu, 4096, &b) == RIG_OK)
    return 11;
  rig_status c = rig_device_close(gpu);
  printf("child: close: %s\n", rig_status_name(c));
  /* a name the parent never opened: the driver's own open, not core's
   * reopening of an inherited one */
  return refused_named("cuda:0,stream=5", CHILD_SAYS);
}

/* One round of use: a fill on the GPU read back, and a copy through a
 * borrow of a host buffer (a registration of its pages). */
static void use(rig_device *d, uint8_t v) {
  rig_buffer *b = create_ok(d, 1 << 16), *h = create_ok(rig_device_host(), 1 << 16), *hb;
  uint8_t got[1 << 16];
  ok(rig_buffer_fill(b, v, 1));
  ok(rig_buffer_borrow(d, h, &hb));
  ok(rig_buffer_copy(b, hb));
  ok(rig_buffer_get(h, 0, got, sizeof got));
  for (size_t i = 0; i < sizeof got; i++)
    assert_int_equal(got[i], v);
  rig_buffer_release(hb);
  rig_buffer_release(h);
  rig_buffer_release(b);
}

static void a_child_loses_the_parents_gpu_and_the_parent_goes_on(void **st) {
  (void)st;
  gpu = open_ok("cuda:0");
  use(gpu, 0x3c);
  in_child(child_of_gpu);
  assert_null(rig_device_lost(gpu));
  use(gpu, 0xa5);
  close_release(gpu);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "stub") == 0) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_child_is_refused_cuda_after_the_parents_cuinit)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  rig_device *d = NULL;
  if (rig_device_open("cuda:0", &d) != RIG_OK) {
    printf("skip: cuda:0 does not open here: %s\n", rig_error_last()->message);
    return 77;
  }
  close_release(d);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_child_loses_the_parents_gpu_and_the_parent_goes_on)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
