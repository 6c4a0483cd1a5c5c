/* test_libm_unlinked.c: a kernel's math functions resolve whether or not
 * the program links libm (SYM-1: the math library is one of the process's
 * libraries). This program does not link libm, and checks that the process
 * indeed lacks expf before the load; the default lookup must find sinf and
 * expf in libm, and the kernel's results must be libm's own, which the
 * test takes from libm through dlopen only after the run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(undefined_behavior_sanitizer)
#define SANITIZED 1
#endif
#endif

static void libm_resolves_without_linking_it(void) {
#ifdef SANITIZED
  /* A sanitizer's runtime links libm itself: the process has it. */
  if (dlsym(RTLD_DEFAULT, "expf")) {
    printf("skip: a sanitizer's runtime brought libm into the process\n");
    exit(77);
  }
#endif
  CHECK_MSG(!dlsym(RTLD_DEFAULT, "expf") && !dlsym(RTLD_DEFAULT, "sinf"),
            "this program was linked with libm: it cannot test the lookup without it");
  rig_link_image *im = load_kernel("libm", NULL);
  CHECK(im);
  struct {
    const float *x;
    float *y;
    int64_t n;
  } p;
  float x[4] = {0.0f, 0.5f, -1.25f, 3.0f}, y[4] = {0};
  p.x = x, p.y = y, p.n = 4;
  void (*f)(const void *, int64_t, int64_t) =
      (void (*)(const void *, int64_t, int64_t))rig_link_resolve(im, "sin_exp");
  CHECK(f);
  f(&p, 0, 4);
  void *libm = dlopen("libm.so.6", RTLD_LAZY | RTLD_LOCAL);
  CHECK(libm);
  float (*sinf_)(float) = (float (*)(float))dlsym(libm, "sinf");
  float (*expf_)(float) = (float (*)(float))dlsym(libm, "expf");
  CHECK(sinf_ && expf_);
  for (int i = 0; i < 4; i++) {
    float want = sinf_(x[i]) + expf_(x[i]);
    CHECK_MSG(memcmp(&want, &y[i], sizeof want) == 0, "x=%g: %a, libm's %a", x[i], y[i], want);
  }
  /* The process's own scope is unchanged: libm was opened RTLD_LOCAL. */
  CHECK(!dlsym(RTLD_DEFAULT, "expf"));
  dlclose(libm);
  rig_link_free(im);
}

int main(int argc, char **argv) {
  static const check_test tests[] = {TEST(libm_resolves_without_linking_it)};
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
