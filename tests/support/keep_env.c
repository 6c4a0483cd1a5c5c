/* keep_env.c: the environment and working folder put back after a test
 * (keep_env.h). */
#include "keep_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[] = {"RIG_DRIVER_PATH", "RIG_DRIVER_PATH_ONLY", "RIG_CGROUP_ROOT"};
#define NAMES (sizeof names / sizeof names[0])

static char *values[NAMES]; /* strdup'ed, NULL where unset */
static char cwd[4096];

int keep_env_setup(void **state) {
  (void)state;
  for (size_t i = 0; i < NAMES; i++) {
    const char *v = getenv(names[i]);
    free(values[i]);
    values[i] = v ? strdup(v) : NULL;
  }
  return getcwd(cwd, sizeof cwd) ? 0 : -1;
}

int keep_env_teardown(void **state) {
  (void)state;
  int rc = 0;
  for (size_t i = 0; i < NAMES; i++) {
    rc |= values[i] ? setenv(names[i], values[i], 1) : unsetenv(names[i]);
    free(values[i]);
    values[i] = NULL;
  }
  if (chdir(cwd) != 0) {
    fprintf(stderr, "keep_env: cannot go back to %s\n", cwd);
    rc = -1;
  }
  return rc ? -1 : 0;
}
