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

#endif
