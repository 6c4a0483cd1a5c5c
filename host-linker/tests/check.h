/* check.h: the host linker's tests' harness, with nothing but libc, so that
 * the same tests run here and, cross-compiled, under qemu-aarch64 (arm64.sh).
 *
 * A test is a void function; CHECK ends it on the first failure. main runs
 * the tests named on its command line after the kernel folder (all when
 * none) and exits 1 if any failed. */
#ifndef RIG_LINK_CHECK_H
#define RIG_LINK_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int check_failed;

#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c);                        \
      check_failed = 1;                                                                            \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

#define CHECK_MSG(c, ...)                                                                          \
  do {                                                                                             \
    if (!(c)) {                                                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #c);                        \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      check_failed = 1;                                                                            \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

typedef struct check_test {
  const char *name;
  void (*fn)(void);
} check_test;

#define TEST(f)                                                                                    \
  { #f, f }

/* Runs tests[0..n) as main's argv asks: argv[1] is the kernel folder, which
 * it stores for kernel(); argv[2..] the tests to run. */
int check_main(const check_test *tests, size_t n, int argc, char **argv);

#endif
