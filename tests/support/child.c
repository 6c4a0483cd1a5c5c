/* child.c: forked children of the tests (child.h). */
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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
    execv("/proc/self/exe", argv);
    _exit(127); /* as a shell says of a program it could not run */
  }
  return child_wait(pid);
}
