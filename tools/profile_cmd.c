/* SPDX-License-Identifier: MIT */
/* profile_cmd.c: `rig profile [-o FILE] -- PROGRAM [ARGS...]`: runs a
 * program that uses rig with RIG_PROFILE=FILE, so that librig-core
 * profiles the whole run and writes FILE, a Chrome trace, at its exit
 * (docs/profiling.md); then says where the trace is and how to look at
 * it. Exits with the program's status. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile_cmd.h"

#define DEFAULT_FILE "rig-profile.json"

static int help(FILE *f, int status) {
  fprintf(f, "usage: rig profile [-o FILE] -- PROGRAM [ARGS...]\n"
             "Runs PROGRAM, which uses rig, timing the work of every device it submits to\n"
             "(the host's launches and copies by the clock, Vulkan by timestamp queries,\n"
             "CUDA by events), and writes FILE (default " DEFAULT_FILE "), a Chrome\n"
             "trace: open it at https://ui.perfetto.dev or chrome://tracing, where each\n"
             "device is a process and each of its queues a thread. The same as running\n"
             "PROGRAM with RIG_PROFILE=FILE. Exits with PROGRAM's status.\n");
  return status;
}

/* The program's exit status as a shell reports it. */
static int status_of(int ws) {
  if (WIFEXITED(ws))
    return WEXITSTATUS(ws);
  return WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
}

/* Runs argv with RIG_PROFILE=path; its status, or -1 with errno where it
 * could not start. A failed exec sends its errno through a pipe that a
 * successful one closes (O_CLOEXEC), so that the caller says why once
 * rather than guessing from the missing profile. *signal: the signal that
 * ended it, 0 where it exited. */
static int run(char **argv, const char *path, int *signal) {
  int fds[2], e = 0;
  if (pipe(fds) != 0)
    return -1;
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    e = errno;
    close(fds[0]);
    close(fds[1]);
    errno = e;
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    setenv("RIG_PROFILE", path, 1);
    execvp(argv[0], argv);
    e = errno;
    ssize_t w = write(fds[1], &e, sizeof e);
    (void)w; /* the parent then reads no errno: it reports status 127 */
    _exit(127);
  }
  close(fds[1]);
  ssize_t got;
  while ((got = read(fds[0], &e, sizeof e)) < 0 && errno == EINTR)
    ;
  close(fds[0]);
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR)
      return -1;
  if (got == (ssize_t)sizeof e) {
    errno = e;
    return -1;
  }
  *signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
  return status_of(ws);
}

/* FILE as an absolute path, so that a program that changes its folder
 * still writes where the user asked. */
static const char *absolute(const char *file, char *buf, size_t n) {
  char cwd[PATH_MAX];
  if (file[0] == '/' || !getcwd(cwd, sizeof cwd))
    return file;
  snprintf(buf, n, "%s/%s", cwd, file);
  return buf;
}

int rig_profile_command(int argc, char **argv) {
  const char *file = DEFAULT_FILE;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return help(stdout, 0);
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && argv[i + 1][0]) {
      file = argv[++i];
      continue;
    }
    fprintf(stderr, "rig profile: %s: expected -o FILE, then -- PROGRAM [ARGS...]\n",
            strcmp(argv[i], "-o") == 0 ? "-o needs a file" : argv[i]);
    return help(stderr, 2);
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "rig profile: no program: give it after --\n");
    return help(stderr, 2);
  }
  char buf[PATH_MAX + 256];
  const char *path = absolute(file, buf, sizeof buf);
  unlink(path); /* a file left from an earlier run would pass for this one's */
  int sig = 0, st = run(argv + i + 1, path, &sig);
  if (st < 0) {
    fprintf(stderr, "rig profile: cannot run %s: %s\n", argv[i + 1], strerror(errno));
    return 127; /* as a shell answers a program it cannot run */
  }
  struct stat sb;
  if (stat(path, &sb) != 0 && sig) { /* the profile is written at exit */
    fprintf(stderr,
            "rig profile: %s was ended by signal %d (%s) and wrote no profile: rig "
            "writes it at the program's exit\n",
            argv[i + 1], sig, strsignal(sig));
    return st;
  }
  if (stat(path, &sb) != 0) {
    fprintf(stderr, "rig profile: %s wrote no profile to %s: does it use librig-core, and "
                    "is it not setuid?\n", argv[i + 1], path);
    return st ? st : 1;
  }
  fprintf(stderr, "rig profile: %s exited %d; its trace is %s (%lld bytes): open it at "
                  "https://ui.perfetto.dev or chrome://tracing\n",
          argv[i + 1], st, path, (long long)sb.st_size);
  return st;
}
