/* child.h: tests that run part of themselves in a forked child: checks of
 * what a fork does to rig, and of rig_runtime_fail, which fails the whole
 * process. These need libc only; check.h has the asserting forms. */
#ifndef RIG_TEST_CHILD_H
#define RIG_TEST_CHILD_H

#include <sys/types.h>

/* fork(), after flushing stdio so that the child does not print again
 * what the parent had buffered. Returns as fork does. */
pid_t child_fork(void);
/* Waits for child pid, through signals: its wait status, or -1 where
 * waitpid fails. Blocks. */
int child_wait(pid_t pid);
/* Runs this program again (/proc/self/exe) as argv in a child, with
 * variable unset (NULL: none) removed from its environment: its wait
 * status, or -1 where it did not start. Blocks. */
int child_exec_self(char *const argv[], const char *unset);
/* Replaces this process with this program again as argv: /proc/self/exe,
 * or, in a cross build's test run, the program under meson's exe wrapper
 * (MESON_EXE_WRAPPER, qemu-aarch64 for cross/aarch64-linux-gnu.ini),
 * where the kernel cannot run it itself. Returns only where neither
 * starts, with errno set. */
void child_exec_again(char *const argv[]);
/* The emulator this test runs under: meson's exe wrapper (MESON_EXE_WRAPPER,
 * qemu-aarch64 in the arm64 cross build's run), or NULL where it runs
 * natively. Tests that cannot run under emulation skip with it named
 * (docs/arm64.md). The string is the environment's. */
const char *child_emulator(void);

#endif
