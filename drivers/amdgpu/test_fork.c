/* test_fork.c: a child of fork and the amdgpu driver (suite driver-amdgpu).
 *
 * libdrm_amdgpu keeps one device per GPU for the process, so a child's
 * open would be handed its parent's file. The driver's fork hook marks the
 * child: every open the parent had is lost ("forked") and none of its
 * files, contexts or buffer objects is called again, and the child's own
 * opens of amdgpu: are RIG_UNAVAILABLE, saying it is a child of fork.
 *
 * `test-amdgpu-fork` (an AMD GPU: else 77 with the reason): the parent
 * opens amdgpu:0 and fills a buffer; a child of a fork finds the device
 * lost with "forked", releases and closes it, and is refused its own open
 * of amdgpu:0; the parent then goes on using the device.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rig/rig.h>

static int child(rig_device *d, rig_buffer *b) {
  const char *lost = rig_device_lost(d);
  rig_point p;
  rig_status st = rig_buffer_submit_fill(b, 7, 1, &p);
  if (st == RIG_OK)
    st = rig_point_wait(p);
  lost = rig_device_lost(d);
  printf("child: fill %s; lost: %s\n", rig_status_name(st), lost ? lost : "(no)");
  if (st == RIG_OK || !lost || !strstr(lost, "forked"))
    return 1;
  rig_buffer_release(b);
  if (rig_device_close(d) != RIG_OK) /* a lost device's close says why */
    printf("child: close: %s\n", rig_error_last()->message);
  rig_device_release(d);
  rig_device *mine = NULL;
  st = rig_device_open("amdgpu:0", &mine);
  printf("child: its own amdgpu:0: %s: %s\n", rig_status_name(st), rig_error_last()->message);
  return st == RIG_UNAVAILABLE && strstr(rig_error_last()->message, "child of fork") ? 0 : 1;
}

int main(void) {
  rig_device *d = NULL;
  if (rig_device_open("amdgpu:0", &d) != RIG_OK) {
    printf("skip: amdgpu:0 does not open here: %s\n", rig_error_last()->message);
    return 77;
  }
  rig_buffer *b = NULL;
  if (rig_buffer_create(d, 4096, &b) != RIG_OK || rig_buffer_fill(b, 1, 1) != RIG_OK)
    return 1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0)
    _exit(child(d, b));
  int status = 0;
  waitpid(pid, &status, 0);
  rig_status st = rig_buffer_fill(b, 2, 1);
  printf("parent: child %d, fill after it %s\n", WEXITSTATUS(status), rig_status_name(st));
  rig_buffer_release(b);
  if (rig_device_close(d) != RIG_OK)
    st = RIG_LOST;
  rig_device_release(d);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && st == RIG_OK ? 0 : 1;
}
