/* fuzz_link.c: the libFuzzer target of the host linker.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ihost-linker/include \
 *     host-linker/src/[a-z]*.c host-linker/tests/fuzz/fuzz_link.c -lelf -ldl -lpthread
 *
 * (the build makes it as host-linker/tests/fuzz-link where clang has
 * libFuzzer). Seed it with the kernels (*.o of the build folder). Any input
 * must give a status and never a crash, a leak or undefined behaviour; a
 * linked image is freed, never run. Built with -DFUZZ_STANDALONE it is a
 * program that loads each file named on its command line once: the
 * regression runner for inputs the fuzzer found (fuzz/regressions/, the
 * test link-fuzz-regressions). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig/link.h"

static void target(void) {}

/* Every name is defined but those starting with 'z' (for LINK-10). */
static void *lookup(void *ctx, const char *name) {
  (void)ctx;
  return name[0] == 'z' ? NULL : (void *)target;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rig_link_options opt = {.lookup = lookup};
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  rig_link_status st = rig_link_load(data, size, &opt, &im, err, sizeof err);
  if (st == RIG_LINK_OK) {
    (void)rig_link_resolve(im, "add");
    rig_link_free(im);
  } else if (st == RIG_LINK_REFUSED && size > 0 && !strstr(err, "(LINK-")) {
    fprintf(stderr, "a refusal that names no rule: %s\n", err);
    abort();
  }
  return 0;
}

#ifdef FUZZ_STANDALONE
#include <dirent.h>

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
  size_t got = fread(b, 1, n > 0 ? (size_t)n : 0, f);
  fclose(f);
  LLVMFuzzerTestOneInput(b, got);
  free(b);
  printf("ok   %s\n", path);
  return 0;
}

/* Each argument: an input, or a folder of inputs (the regressions). */
int main(int argc, char **argv) {
  int rc = 0;
  for (int i = 1; i < argc; i++) {
    DIR *d = opendir(argv[i]);
    if (!d) {
      rc |= run_file(argv[i]);
      continue;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
      char path[4096];
      if (e->d_name[0] == '.')
        continue;
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      rc |= run_file(path);
    }
    closedir(d);
  }
  return rc;
}
#endif
