/* sysfs_tree.c: prepared sysfs and cgroup trees of the tests (sysfs_tree.h). */
#define _GNU_SOURCE
#include "sysfs_tree.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tree_make(char *root, size_t n, const char *tag) {
  const char *t = getenv("TMPDIR");
  snprintf(root, n, "%s/rig-%s-%d", t && *t ? t : "/tmp", tag, (int)getpid());
  return mkdir(root, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

int tree_write(const char *root, const char *rel, const char *text) {
  char path[1024];
  int len = snprintf(path, sizeof path, "%s/%s", root, rel);
  if (len < 0 || (size_t)len >= sizeof path)
    return -1;
  /* Each folder on the way, from the first below root. */
  for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
    *p = 0;
    int made = mkdir(path, 0700) == 0 || errno == EEXIST;
    *p = '/';
    if (!made)
      return -1;
  }
  FILE *f = fopen(path, "w");
  if (!f)
    return -1;
  int ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok ? 0 : -1;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  return remove(path);
}

int tree_remove(const char *root) {
  return nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
