/* sysfs_tree.h: prepared trees that stand for /sys (RIG_SYSFS_ROOT) or a
 * cgroup mount (RIG_CGROUP_ROOT), so that a test states the machine it
 * checks rig against: a big.LITTLE arm64 system's capacities and caches
 * on any machine. libc only. */
#ifndef RIG_TEST_SYSFS_TREE_H
#define RIG_TEST_SYSFS_TREE_H

#include <stddef.h>

/* Names a fresh folder for a tree, unique to this process and tag, under
 * $TMPDIR (else /tmp), and makes it: 0 when made. */
int tree_make(char *root, size_t n, const char *tag);
/* Writes text into root/rel, making the folders rel names: 0 when written. */
int tree_write(const char *root, const char *rel, const char *text);
/* Removes the tree at root and all it holds; 0 when removed. */
int tree_remove(const char *root);

#endif
