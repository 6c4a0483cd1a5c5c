/* test_perf_cores.c: the performance cores of rig_host_cores against
 * prepared sysfs trees (RIG_SYSFS_ROOT), which state what a big.LITTLE
 * arm64 system states: capacities, or only cpufreq's maximum frequencies,
 * or neither. test-launch checks the count against this machine's own
 * sysfs (perf_1_4_capacity_decides).
 *
 * The count is taken once per process (PERF-2), so each tree is read by a
 * fresh process, this program again as "test-perf-cores CASE", which
 * builds its tree for the CPUs of its affinity mask, with no cgroup quota
 * (an empty RIG_CGROUP_ROOT), and exits 0 where the count is right.
 *
 * Rules: PERF-3 PERF-4
 */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "sysfs_tree.h"

/* What a CPU of the tree states: its capacity and its cpufreq maximum,
 * each left out where 0. */
typedef struct {
  long capacity, max_freq;
} cpu_says;

/* Writes cpuN's files for every CPU of mask: the first CPU of the mask
 * says first, every other says rest. */
static int write_cpus(const char *root, const cpu_set_t *mask, cpu_says first, cpu_says rest) {
  bool seen = false;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, mask))
      continue;
    cpu_says s = seen ? rest : first;
    seen = true;
    char rel[128], text[32];
    snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/uevent", c); /* the folder, always */
    if (tree_write(root, rel, "") != 0)
      return -1;
    if (s.capacity) {
      snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cpu_capacity", c);
      snprintf(text, sizeof text, "%ld\n", s.capacity);
      if (tree_write(root, rel, text) != 0)
        return -1;
    }
    if (s.max_freq) {
      snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", c);
      snprintf(text, sizeof text, "%ld\n", s.max_freq);
      if (tree_write(root, rel, text) != 0)
        return -1;
    }
  }
  return 0;
}

/* The case run in a fresh process: its exit status (0: the count is want). */
static int count_case(const char *name) {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0)
    return 10;
  unsigned all = (unsigned)CPU_COUNT(&mask), want;
  cpu_says first, rest;
  if (strcmp(name, "capacity") == 0) {
    /* Capacities decide, the frequencies saying otherwise: 1024 and 400. */
    first = (cpu_says){1024, 1000000}, rest = (cpu_says){400, 2400000}, want = 1;
  } else if (strcmp(name, "half") == 0) {
    /* Exactly half the largest is not over half. */
    first = (cpu_says){1024, 0}, rest = (cpu_says){512, 0}, want = 1;
  } else if (strcmp(name, "cpufreq") == 0) {
    /* No capacity: cpufreq's maximum, 2.4 GHz and 1 GHz. */
    first = (cpu_says){0, 2400000}, rest = (cpu_says){0, 1000000}, want = 1;
  } else if (strcmp(name, "equal") == 0) {
    first = rest = (cpu_says){0, 2000000}, want = all;
  } else if (strcmp(name, "neither") == 0) {
    first = rest = (cpu_says){0, 0}, want = all; /* PERF-4 */
  } else {
    return 11;
  }
  char sys[512], cgroup[512];
  if (tree_make(sys, sizeof sys, "sysfs") != 0 || tree_make(cgroup, sizeof cgroup, "nocg") != 0)
    return 12;
  int rc = write_cpus(sys, &mask, first, rest) != 0 ? 13 : 0;
  setenv("RIG_SYSFS_ROOT", sys, 1);
  setenv("RIG_CGROUP_ROOT", cgroup, 1);
  unsigned got = rc ? 0 : rig_host_cores();
  if (!rc && got != want) {
    fprintf(stderr, "%s: %u performance cores of %u, expected %u\n", name, got, all, want);
    rc = 14;
  }
  tree_remove(sys);
  tree_remove(cgroup);
  return rc;
}

/* Runs case name in a fresh process; skips where the mask has one CPU,
 * whose count is 1 whatever the tree says. */
static void in_fresh_process(const char *name) {
  cpu_set_t mask;
  assert_int_equal(sched_getaffinity(0, sizeof mask, &mask), 0);
  if (CPU_COUNT(&mask) < 2)
    skip();
  char *argv[] = {"test-perf-cores", (char *)name, NULL};
  assert_int_equal(run_self(argv, NULL), 0);
}

/* PERF-3: capacities over half the largest; cpufreq is not read. */
static void perf_3_capacity_over_half(void **state) {
  in_fresh_process("capacity");
}
static void perf_3_half_is_not_over_half(void **state) {
  in_fresh_process("half");
}
/* PERF-3 where the kernel states no capacity: cpufreq's maximum. */
static void perf_3_cpufreq_maximum_without_capacity(void **state) {
  in_fresh_process("cpufreq");
}
static void perf_3_equal_frequencies_are_all_fast(void **state) {
  in_fresh_process("equal");
}
/* PERF-4: neither stated: every CPU of the mask. */
static void perf_4_every_cpu_where_nothing_is_stated(void **state) {
  in_fresh_process("neither");
}

int main(int argc, char **argv) {
  if (argc == 2)
    return count_case(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(perf_3_capacity_over_half),
      cmocka_unit_test(perf_3_half_is_not_over_half),
      cmocka_unit_test(perf_3_cpufreq_maximum_without_capacity),
      cmocka_unit_test(perf_3_equal_frequencies_are_all_fast),
      cmocka_unit_test(perf_4_every_cpu_where_nothing_is_stated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
