/* child.c: forked children of the tests (child.h). */
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t child_fork(void) {
  fflush(stdout);
  fflush(stderr);
  return fork();
}

int child_wait(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    ;
  return r == pid ? status : -1;
}

int child_exec_self(char *const argv[], const char *unset) {
  pid_t pid = child_fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    if (unset)
      unsetenv(unset);
    child_exec_again(argv);
    _exit(127); /* as a shell says of a program it could not run */
  }
  return child_wait(pid);
}

/* Under qemu-user with no binfmt_misc entry for arm64 (a cross build's
 * test run), execv of an arm64 program fails with ENOEXEC: the wrapper
 * that meson ran this program with runs it again. The wrapper is one
 * word (the cross file's exe_wrapper), and /proc/self/exe names this
 * program, not qemu, there. */
void child_exec_again(char *const argv[]) {
  execv("/proc/self/exe", argv);
  const char *wrapper = child_emulator();
  if (errno != ENOEXEC || !wrapper || strchr(wrapper, ' '))
    return;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return;
  self[n] = 0;
  size_t argc = 0;
  while (argv[argc])
    argc++;
  char *args[argc + 3];
  args[0] = (char *)wrapper;
  args[1] = self;
  size_t i = 1;
  for (; i < argc; i++)
    args[i + 1] = argv[i];
  args[i + 1] = NULL;
  execvp(wrapper, args);
}

const char *child_emulator(void) {
  const char *wrapper = getenv("MESON_EXE_WRAPPER");
  return wrapper && *wrapper ? wrapper : NULL;
}
