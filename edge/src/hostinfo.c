/* SPDX-License-Identifier: MIT */
/* hostinfo.c: what librig-edge says about the host's processor and memory.
 *
 * Drivers that run on the host (the memory driver, host codegen) state their
 * arch, cache and memory from here, so that every such driver names the host
 * the same way (PROP-13..18, PROP-36).
 *
 * Each answer is computed once. The results are pure functions of the machine,
 * so racing first callers may each compute one; they compute the same value,
 * and a C11 atomic publishes it. That needs no lock, no pthread and no malloc.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <rig/edge.h>

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

/* ---- arch ----------------------------------------------------------------- */

#if defined(__x86_64__)

/* XCR0 state components the psABI levels need the OS to save (Intel SDM
 * vol. 1 §13.1): a CPU may have AVX while the kernel does not enable its
 * registers, and then AVX code faults. */
#define XCR0_SSE (1u << 1)
#define XCR0_AVX (1u << 2)
#define XCR0_OPMASK (1u << 5)
#define XCR0_ZMM_HI256 (1u << 6)
#define XCR0_HI16_ZMM (1u << 7)

/* The CPUID words that hold every feature the levels name. */
struct cpu_words {
  unsigned ecx1;  /* leaf 1, ECX */
  unsigned ebx7;  /* leaf 7 subleaf 0, EBX */
  unsigned ecx81; /* leaf 0x80000001, ECX */
  uint64_t xcr0;  /* 0 unless OSXSAVE says xgetbv may run */
};

/* xgetbv faults (#UD) unless CR4.OSXSAVE is set, hence the caller's check.
 * Written as asm so the file needs no -mxsave. */
static uint64_t read_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static struct cpu_words read_cpu_words(void) {
  struct cpu_words w = {0};
  unsigned a, b, c, d;
  /* __get_cpuid_count checks the maximum (extended) leaf itself and leaves
   * the word 0 when the leaf is absent. */
  if (__get_cpuid_count(1, 0, &a, &b, &c, &d))
    w.ecx1 = c;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d))
    w.ebx7 = b;
  if (__get_cpuid_count(0x80000001u, 0, &a, &b, &c, &d))
    w.ecx81 = c;
  if (w.ecx1 & bit_OSXSAVE)
    w.xcr0 = read_xcr0();
  return w;
}

static bool has_all(unsigned word, unsigned bits) { return (word & bits) == bits; }

/* psABI x86-64-v2: CMPXCHG16B, LAHF-SAHF, POPCNT, SSE3, SSE4_1, SSE4_2, SSSE3. */
static bool is_v2(const struct cpu_words *w) {
  return has_all(w->ecx1, bit_CMPXCHG16B | bit_POPCNT | bit_SSE3 | bit_SSSE3 |
                              bit_SSE4_1 | bit_SSE4_2) &&
         has_all(w->ecx81, bit_LAHF_LM);
}

/* psABI x86-64-v3: AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, OSXSAVE,
 * with the SSE and AVX state enabled by the OS. bit_ABM is LZCNT's CPUID bit
 * under the name both GCC's and clang's <cpuid.h> define. */
static bool is_v3(const struct cpu_words *w) {
  return has_all(w->ecx1, bit_AVX | bit_F16C | bit_FMA | bit_MOVBE | bit_OSXSAVE) &&
         has_all(w->ebx7, bit_AVX2 | bit_BMI | bit_BMI2) &&
         has_all(w->ecx81, bit_ABM) &&
         (w->xcr0 & (XCR0_SSE | XCR0_AVX)) == (XCR0_SSE | XCR0_AVX);
}

/* psABI x86-64-v4: AVX512F, AVX512BW, AVX512CD, AVX512DQ, AVX512VL, with the
 * opmask and both ZMM state components enabled as well. */
static bool is_v4(const struct cpu_words *w) {
  const uint64_t zmm = XCR0_OPMASK | XCR0_ZMM_HI256 | XCR0_HI16_ZMM;
  return has_all(w->ebx7, bit_AVX512F | bit_AVX512BW | bit_AVX512CD |
                              bit_AVX512DQ | bit_AVX512VL) &&
         (w->xcr0 & zmm) == zmm;
}

/* The levels nest: a level counts only when every lower one does. */
static const char *detect_arch(void) {
  struct cpu_words w = read_cpu_words();
  if (!is_v2(&w))
    return "x86-64";
  if (!is_v3(&w))
    return "x86-64-v2";
  if (!is_v4(&w))
    return "x86-64-v3";
  return "x86-64-v4";
}

#elif defined(__aarch64__) || defined(__arm64__)

/* Linux states arm64 features through HWCAP, which rig does not read: the
 * arch it names there is plain "arm64". Only macOS's sysctl adds fp16. */
static const char *detect_arch(void) {
#if defined(__APPLE__)
  int v = 0;
  size_t len = sizeof v;
  if (sysctlbyname("hw.optional.arm.FEAT_FP16", &v, &len, NULL, 0) == 0 && v)
    return "arm64+fp16";
#endif
  return "arm64";
}

#else

static const char *detect_arch(void) { return "unknown"; }

#endif

static _Atomic(const char *) host_arch;

/* The name is always a string literal, so publishing its pointer is enough. */
static const char *arch_name(void) {
  const char *name = atomic_load_explicit(&host_arch, memory_order_acquire);
  if (!name) {
    name = detect_arch();
    atomic_store_explicit(&host_arch, name, memory_order_release);
  }
  return name;
}

size_t rig_edge_host_arch(char *out, size_t n) {
  const char *name = arch_name();
  if (out && n)
    snprintf(out, n, "%s", name);
  return strlen(name);
}

/* ---- cache ---------------------------------------------------------------- */

/* UINT64_MAX marks "not computed yet": no cache is that large. */
static _Atomic uint64_t host_cache = UINT64_MAX;

/* Read a small file into buf as a NUL-terminated string; false if absent. */
static bool read_small_file(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t got;
  do
    got = read(fd, buf, n - 1);
  while (got < 0 && errno == EINTR);
  close(fd);
  if (got <= 0)
    return false;
  buf[got] = '\0';
  return true;
}

/* sysfs states sizes as "32K", "1024K" or "32M"; a bare number is bytes. */
static uint64_t parse_size(const char *s) {
  uint64_t v = 0;
  bool digits = false;
  for (; *s >= '0' && *s <= '9'; s++, digits = true)
    v = v * 10 + (uint64_t)(*s - '0');
  if (!digits)
    return 0;
  switch (*s) {
  case 'K': case 'k': return v << 10;
  case 'M': case 'm': return v << 20;
  case 'G': case 'g': return v << 30;
  default: return v;
  }
}

/* Where sysfs is: RIG_SYSFS_ROOT where set to an absolute path (the
 * tests' prepared trees), else /sys; a setuid program ignores it. */
static const char *sysfs_root(void) {
#if defined(__linux__)
  const char *env = secure_getenv("RIG_SYSFS_ROOT");
  if (env && env[0] == '/')
    return env;
#endif
  return "/sys";
}

/* The largest cache of every CPU in sysfs: CPUs of one system may differ
 * (an arm64 system's little cpu0 may have a smaller L2 than its big cores
 * and no shared L3). The cpuN and indexN folders are numbered from 0
 * without gaps, so counting up until one is missing lists them all
 * without opendir (which allocates). */
static bool sysfs_cache_bytes(uint64_t *out) {
  bool any = false;
  uint64_t best = 0;
  const char *root = sysfs_root();
  for (int cpu = 0; cpu < 4096; cpu++) {
    char path[512], buf[64];
    snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d", root, cpu);
    if (access(path, F_OK) != 0)
      break;
    for (int i = 0; i < 64; i++) {
      snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/size", root, cpu, i);
      if (!read_small_file(path, buf, sizeof buf))
        break;
      any = true;
      uint64_t v = parse_size(buf);
      if (v > best)
        best = v;
    }
  }
  *out = best;
  return any;
}

/* Where sysfs is absent (containers without /sys, other systems): glibc's
 * sysconf names cache levels; macOS's sysctl does. */
static uint64_t fallback_cache_bytes(void) {
  uint64_t best = 0;
#if defined(__APPLE__)
  static const char *const names[] = {"hw.l3cachesize", "hw.l2cachesize",
                                      "hw.perflevel0.l2cachesize", "hw.l1dcachesize"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    uint64_t v = 0;
    size_t len = sizeof v;
    if (sysctlbyname(names[i], &v, &len, NULL, 0) == 0 && len == sizeof v && v > best)
      best = v;
  }
#else
  static const int names[] = {
#ifdef _SC_LEVEL4_CACHE_SIZE
      _SC_LEVEL4_CACHE_SIZE,
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
      _SC_LEVEL3_CACHE_SIZE,
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
      _SC_LEVEL2_CACHE_SIZE,
#endif
#ifdef _SC_LEVEL1_DCACHE_SIZE
      _SC_LEVEL1_DCACHE_SIZE,
#endif
      -1};
  /* Each level may answer 0 or -1 where unknown; take the largest stated. */
  for (size_t i = 0; names[i] != -1; i++) {
    long v = sysconf(names[i]);
    if (v > 0 && (uint64_t)v > best)
      best = (uint64_t)v;
  }
#endif
  return best;
}

uint64_t rig_edge_host_cache_bytes(void) {
  uint64_t v = atomic_load_explicit(&host_cache, memory_order_relaxed);
  if (v != UINT64_MAX)
    return v;
  if (!sysfs_cache_bytes(&v))
    v = fallback_cache_bytes();
  atomic_store_explicit(&host_cache, v, memory_order_relaxed);
  return v;
}

/* ---- memory --------------------------------------------------------------- */

uint64_t rig_edge_host_memory_bytes(void) {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0)
    return 0;
  return (uint64_t)pages * (uint64_t)page;
}
