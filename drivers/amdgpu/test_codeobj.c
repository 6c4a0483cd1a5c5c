/* test_codeobj.c: the code object reader on the committed objects
 * (drivers/amdgpu/kernels, suite driver-amdgpu).
 *
 *   test-amdgpu-codeobj dump FILE   prints what the reader found, one fact
 *                                   a line, for check-codeobj.py to compare
 *                                   with llvm-readobj and llvm-readelf
 *   test-amdgpu-codeobj DIR         reads every NAME-TARGET[-v5].co of DIR
 *                                   for its own target; scratch-* refused
 *                                   naming its kernel; an object read for
 *                                   another target refused naming both; and
 *                                   a fuzz: every truncation and a bit flip
 *                                   at every byte of three objects, each
 *                                   read to an answer, never past its bytes
 *                                   (the ASan build checks that)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "test_check.h"

static int dump(const char *path) {
  size_t n;
  char why[256];
  codeobj c;
  unsigned char *b = slurp(path, &n);
  if (!b || codeobj_read(b, n, NULL, &c, why, sizeof why) != 0) {
    printf("error %s\n", b ? why : "unreadable");
    free(b);
    return 1;
  }
  printf("target %s\nversion %u\n", c.target, c.version);
  for (uint32_t i = 0; i < c.nkernels; i++) {
    const co_kernel *k = &c.kernels[i];
    printf("kernel %s kd 0x%llx entry 0x%llx kernarg %u align %u private %u group %u wave %u\n",
           k->name, (unsigned long long)k->kd, (unsigned long long)k->entry, k->kernarg_bytes,
           k->kernarg_align, k->private_bytes, k->group_bytes, k->wavefront);
    for (uint32_t a = 0; a < k->nargs; a++)
      printf("arg %s %u %u %s\n", k->name, k->args[a].offset, k->args[a].size, k->args[a].kind);
  }
  codeobj_free(&c);
  free(b);
  return 0;
}

/* "add-gfx1030-v5.co": target gfx1030. */
static void target_of(const char *file, char *out, size_t cap) {
  const char *dash = strchr(file, '-');
  snprintf(out, cap, "%s", dash ? dash + 1 : "");
  out[strcspn(out, "-.")] = 0;
}

static void read_one(const char *dir, const char *file) {
  char path[512], gfx[32], why[256];
  size_t n;
  codeobj c;
  snprintf(path, sizeof path, "%s/%s", dir, file);
  target_of(file, gfx, sizeof gfx);
  unsigned char *b = slurp(path, &n);
  CHECK(b != NULL, "%s unreadable", path);
  if (!b)
    return;
  int rc = codeobj_read(b, n, gfx, &c, why, sizeof why);
  if (strncmp(file, "scratch-", 8) == 0) {
    CHECK(rc != 0 && strstr(why, "kernel sum_private uses") && strstr(why, "scratch"), "%s: %s",
          file, rc ? why : "read");
  } else {
    CHECK(rc == 0, "%s: %s", file, why);
    if (rc == 0) {
      CHECK(c.image_bytes % 4096 == 0 && c.nkernels > 0, "%s", file);
      codeobj_relocate(&c, 0x100000000ull);
      codeobj_free(&c);
    }
    /* Another target is refused, naming both. */
    const char *other = strcmp(gfx, "gfx1030") == 0 ? "gfx900" : "gfx1030";
    rc = codeobj_read(b, n, other, &c, why, sizeof why);
    char want[96];
    snprintf(want, sizeof want, "built for %s, not for this device's %s", gfx, other);
    CHECK(rc != 0 && strstr(why, want), "%s for %s: %s", file, other, rc ? why : "read");
  }
  free(b);
}

/* Every truncation and a flip of one bit at every byte: each read ends in
 * an answer (read or refused with a reason). */
static void fuzz(const char *dir, const char *file) {
  char path[512], why[256];
  size_t n, refused = 0, read = 0;
  codeobj c;
  snprintf(path, sizeof path, "%s/%s", dir, file);
  unsigned char *b = slurp(path, &n);
  if (!b)
    return;
  for (size_t len = 0; len < n; len++) {
    unsigned char *t = malloc(len ? len : 1); /* exact size: ASan sees a read past it */
    memcpy(t, b, len);
    if (codeobj_read(t, len, NULL, &c, why, sizeof why) == 0) {
      read++;
      codeobj_free(&c);
    } else {
      CHECK(why[0] != 0, "%s truncated to %zu: no reason", file, len);
      refused++;
    }
    free(t);
  }
  unsigned seed = 12345;
  for (size_t at = 0; at < n; at++) {
    seed = seed * 1103515245u + 12345u;
    b[at] ^= (unsigned char)(1u << ((seed >> 16) & 7));
    if (codeobj_read(b, n, NULL, &c, why, sizeof why) == 0) {
      read++;
      codeobj_free(&c);
    } else {
      refused++;
    }
    b[at] ^= (unsigned char)(1u << ((seed >> 16) & 7));
  }
  printf("fuzz %s: %zu bytes, %zu read, %zu refused\n", file, n, read, refused);
  free(b);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "dump") == 0)
    return dump(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR | dump FILE\n", argv[0]);
    return 2;
  }
  DIR *d = opendir(argv[1]);
  struct dirent *e;
  int objects = 0;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len > 3 && strcmp(e->d_name + len - 3, ".co") == 0) {
      read_one(argv[1], e->d_name);
      objects++;
    }
  }
  if (d)
    closedir(d);
  CHECK(objects >= 18, "%d objects in %s", objects, argv[1]);
  fuzz(argv[1], "add-gfx900.co");
  fuzz(argv[1], "params-gfx1030.co");
  fuzz(argv[1], "spin-gfx90a.co");
  printf("%d objects; %s: %d failure%s\n", objects, failures ? "FAIL" : "ok", failures,
         failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
