/* test_check.h: what the amdgpu driver's direct tests share: CHECK, which
 * counts a failure in the file's `failures` and says where and why, and
 * slurp, a whole file into memory of its exact size (so that ASan sees a
 * read past it). */
#ifndef RIG_AMDGPU_TEST_CHECK_H
#define RIG_AMDGPU_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                       \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static inline unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  *n = 0;
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(size > 0 ? (size_t)size : 1);
  *n = b && size > 0 ? fread(b, 1, (size_t)size, f) : 0;
  fclose(f);
  return b;
}

#endif
