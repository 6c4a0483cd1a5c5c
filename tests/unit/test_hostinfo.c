/* test_hostinfo.c: librig-edge's host facts (edge/src/hostinfo.c) against
 * what other parts of the system say about the same machine.
 *
 * The cache is checked against this machine's sysfs and against prepared
 * trees (RIG_SYSFS_ROOT), read by a fresh process, this program again as
 * "test-hostinfo cache TREE", since the value is computed once.
 *
 * Rules: PROP-13 PROP-14 PROP-18 PROP-36
 */
#include <rig/edge.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "check.h"
#include "sysfs_tree.h"

static const char *host_arch(void) {
  static char buf[64];
  size_t n = rig_edge_host_arch(buf, sizeof buf);
  assert_true(n > 0 && n < sizeof buf);
  return buf;
}

#if defined(__x86_64__)

/* "x86-64" is level 1, "x86-64-vN" is level N; 0 for anything else. */
static int level_of(const char *arch) {
  if (strcmp(arch, "x86-64") == 0)
    return 1;
  if (strncmp(arch, "x86-64-v", 8) == 0 && arch[8] >= '2' && arch[8] <= '4' &&
      arch[9] == '\0')
    return arch[8] - '0';
  return 0;
}

/* XCR0 read independently of hostinfo.c, 0 when the OS has not set OSXSAVE
 * (xgetbv would fault). */
static uint64_t test_xcr0(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(1, 0, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* Whether the OS enables the register state that level needs (psABI: v3
 * needs XCR0 bits 1-2, v4 also bits 5-7). */
static bool xcr0_allows(int level) {
  uint64_t x = test_xcr0();
  if (level >= 3 && (x & 0x6) != 0x6)
    return false;
  if (level >= 4 && (x & 0xe0) != 0xe0)
    return false;
  return true;
}

#endif

/* ---- PROP-13: the arch is the x86-64 psABI level -------------------------- */

/* GCC 12's __builtin_cpu_supports knows the psABI level names; clang 14 rejects
 * them, so clang builds rely on the ld.so check below. */
static void prop_13_host_arch_is_psabi_level(void **state) {
  (void)state;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  int gcc = __builtin_cpu_supports("x86-64-v4")   ? 4
            : __builtin_cpu_supports("x86-64-v3") ? 3
            : __builtin_cpu_supports("x86-64-v2") ? 2
                                                  : 1;
  const char *arch = host_arch();
  int ours = level_of(arch);
  assert_int_not_equal(ours, 0);
  if (ours != gcc) {
    /* libgcc tests XCR0 for AVX and AVX-512 as a whole, not for each state
     * bit the psABI names, so it may claim a level whose registers the OS
     * does not save. Only that disagreement is allowed: ours lower, and
     * XCR0 indeed refusing the next level up. */
    print_message("host arch %s, __builtin_cpu_supports says level %d, XCR0 %#" PRIx64 "\n",
                  arch, gcc, test_xcr0());
    assert_true(ours < gcc);
    assert_false(xcr0_allows(ours + 1));
  }
#else
  skip();
#endif
}

#if defined(__x86_64__) && defined(__linux__)
/* glibc's ld.so chooses glibc-hwcaps/x86-64-vN directories by the same psABI
 * levels, counting only state the OS enables, and lists those it supports in
 * --help. It must agree with us exactly. */
static int ld_so_level(void) {
  static const char ld_so[] = "/lib64/ld-linux-x86-64.so.2";
  if (access(ld_so, X_OK) != 0)
    return -1;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "%s --help 2>/dev/null", ld_so);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  char line[256];
  bool in_hwcaps = false;
  int best = 1, seen = 0;
  while (fgets(line, sizeof line, p)) {
    if (strstr(line, "glibc-hwcaps directories")) {
      in_hwcaps = true;
      continue;
    }
    if (in_hwcaps && line[0] != ' ')
      break;
    int n;
    if (in_hwcaps && sscanf(line, " x86-64-v%d", &n) == 1) {
      seen++;
      if (strstr(line, "(supported") && n > best)
        best = n;
    }
  }
  pclose(p);
  return seen ? best : -1; /* glibc older than 2.33 lists no levels */
}
#endif

static void prop_13_host_arch_matches_ld_so_hwcaps(void **state) {
  (void)state;
#if defined(__x86_64__) && defined(__linux__)
  if (getenv("GLIBC_TUNABLES"))
    skip(); /* glibc.cpu.hwcaps may mask features from ld.so's view */
  int ld = ld_so_level();
  if (ld < 0)
    skip();
  const char *arch = host_arch();
  if (level_of(arch) != ld)
    print_message("host arch %s, ld.so --help says level %d\n", arch, ld);
  assert_int_equal(level_of(arch), ld);
#else
  skip();
#endif
}

/* ---- PROP-14: only register state the OS enables counts ------------------- */

static void prop_14_host_arch_needs_os_enabled_state(void **state) {
  (void)state;
#if defined(__x86_64__)
  int ours = level_of(host_arch());
  assert_int_not_equal(ours, 0);
  assert_true(xcr0_allows(ours));
#else
  skip();
#endif
}

/* ---- PROP-18: arm64 names features only where the system states them ----- */

static void prop_18_host_arch_arm64_on_linux_is_plain(void **state) {
  (void)state;
#if (defined(__aarch64__) || defined(__arm64__)) && !defined(__APPLE__)
  assert_string_equal(host_arch(), "arm64");
#elif defined(__aarch64__) || defined(__arm64__)
  const char *arch = host_arch();
  assert_true(strcmp(arch, "arm64") == 0 || strcmp(arch, "arm64+fp16") == 0);
#else
  skip();
#endif
}

/* The copy follows snprintf: truncated, NUL-terminated, full length back. */
static void host_arch_copies_like_snprintf(void **state) {
  (void)state;
  const char *arch = host_arch();
  size_t len = strlen(arch);
  assert_int_equal(rig_edge_host_arch(NULL, 0), len);

  char small[4] = {'x', 'x', 'x', 'x'};
  assert_int_equal(rig_edge_host_arch(small, 0), len);
  assert_int_equal(small[0], 'x');
  assert_int_equal(rig_edge_host_arch(small, sizeof small), len);
  assert_int_equal(small[3], '\0');
  assert_memory_equal(small, arch, 3);

  char exact[64];
  assert_int_equal(rig_edge_host_arch(exact, len + 1), len);
  assert_string_equal(exact, arch);
}

/* ---- PROP-36: the cache is the largest the system states ----------------- */

/* sysfs read another way than hostinfo.c does: glob and stdio. */
static int sysfs_largest_cache(uint64_t *out) {
  glob_t g;
  if (glob("/sys/devices/system/cpu/cpu*/cache/index*/size", 0, NULL, &g) != 0)
    return 0;
  uint64_t best = 0;
  for (size_t i = 0; i < g.gl_pathc; i++) {
    FILE *f = fopen(g.gl_pathv[i], "r");
    if (!f)
      continue;
    uint64_t v = 0;
    char unit = '\0';
    int got = fscanf(f, "%" SCNu64 "%c", &v, &unit);
    fclose(f);
    if (got < 1)
      continue;
    if (unit == 'K')
      v *= 1024;
    else if (unit == 'M')
      v *= 1024 * 1024;
    else if (unit == 'G')
      v *= 1024 * 1024 * 1024;
    if (v > best)
      best = v;
  }
  size_t n = g.gl_pathc;
  globfree(&g);
  *out = best;
  return n > 0;
}

static void prop_36_cache_bytes_is_largest_sysfs_cache(void **state) {
  (void)state;
  uint64_t expect;
  if (!sysfs_largest_cache(&expect))
    skip(); /* no sysfs: hostinfo.c falls back to sysconf, nothing to compare */
  uint64_t got = rig_edge_host_cache_bytes();
  print_message("host cache %" PRIu64 " bytes\n", got);
  assert_int_equal(got, expect);
  assert_int_equal(rig_edge_host_cache_bytes(), got); /* computed once */
}

/* The caches of a prepared tree, by name: "biglittle", an arm64 system
 * whose cpu0 is a little core with a 4 MiB L2 and whose big cores have
 * 12 MiB L2 caches and no shared L3 (as Apple's M1 states under Linux);
 * "l3", one 8 MiB cache that four cores share, beside their 1 MiB L2s.
 * Writes it under root; the largest cache it states, 0 where it failed. */
static uint64_t cache_tree(const char *root, const char *name) {
  static const char *const sizes[2][4][3] = {
      {{"128K", "64K", "4096K"},
       {"128K", "64K", "4096K"},
       {"192K", "128K", "12288K"},
       {"192K", "128K", "12288K"}},
      {{"32K", "1024K", "8M"},
       {"32K", "1024K", "8M"},
       {"32K", "1024K", "8M"},
       {"32K", "1024K", "8M"}},
  };
  int which = strcmp(name, "l3") == 0;
  for (int cpu = 0; cpu < 4; cpu++)
    for (int i = 0; i < 3; i++) {
      char rel[128];
      snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cache/index%d/size", cpu, i);
      if (tree_write(root, rel, sizes[which][cpu][i]) != 0)
        return 0;
    }
  return which ? 8u << 20 : 12u << 20;
}

/* In a fresh process: the cache that rig_edge_host_cache_bytes finds in
 * tree name, against the largest the tree states; its exit status. */
static int cache_case(const char *name) {
  char root[512];
  if (tree_make(root, sizeof root, "sysfs-cache") != 0)
    return 10;
  uint64_t want = cache_tree(root, name);
  setenv("RIG_SYSFS_ROOT", root, 1);
  uint64_t got = rig_edge_host_cache_bytes();
  tree_remove(root);
  if (want == 0)
    return 11;
  if (got != want) {
    fprintf(stderr, "%s: cache %" PRIu64 " bytes, expected %" PRIu64 "\n", name, got, want);
    return 12;
  }
  return 0;
}

/* PROP-36: the largest cache of any CPU, not only of cpu0: a big.LITTLE
 * arm64 system's cpu0 may be a little core with the smaller cache. */
static void prop_36_largest_cache_of_every_cpu(void **state) {
  (void)state;
  char *argv[] = {"test-hostinfo", "cache", "biglittle", NULL};
  assert_int_equal(run_self(argv, NULL), 0);
}

/* PROP-36: a cache shared by every core (an L3) is the largest there. */
static void prop_36_a_shared_l3_is_the_largest(void **state) {
  (void)state;
  char *argv[] = {"test-hostinfo", "cache", "l3", NULL};
  assert_int_equal(run_self(argv, NULL), 0);
}

/* ---- memory ---------------------------------------------------------------- */

static void host_memory_bytes_is_sysconf(void **state) {
  (void)state;
  uint64_t got = rig_edge_host_memory_bytes();
  assert_true(got > 0);
  assert_int_equal(got, (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE));
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "cache") == 0)
    return cache_case(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(prop_13_host_arch_is_psabi_level),
      cmocka_unit_test(prop_13_host_arch_matches_ld_so_hwcaps),
      cmocka_unit_test(prop_14_host_arch_needs_os_enabled_state),
      cmocka_unit_test(prop_18_host_arch_arm64_on_linux_is_plain),
      cmocka_unit_test(host_arch_copies_like_snprintf),
      cmocka_unit_test(prop_36_cache_bytes_is_largest_sysfs_cache),
      cmocka_unit_test(prop_36_largest_cache_of_every_cpu),
      cmocka_unit_test(prop_36_a_shared_l3_is_the_largest),
      cmocka_unit_test(host_memory_bytes_is_sysconf),
  };
  char arch[64];
  rig_edge_host_arch(arch, sizeof arch);
  print_message("host arch %s\n", arch);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
