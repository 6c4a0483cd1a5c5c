/* test_mutate.c: the linker never crashes on bad input (LINK-1): thousands
 * of objects mutated from the kernels, deterministically (a fixed seed), each
 * loaded: every one gives a status, OK or RIG_LINK_REFUSED with a message
 * naming its rule (or RIG_LINK_NO_MEMORY for a mutated size too large to
 * map), never a crash; under ASan and UBSan (build-link-asan, build-sanitize)
 * never a bad access, a leak or undefined behaviour. An image that links is
 * freed, never run. The libFuzzer target (fuzz/fuzz_link.c) goes further.
 *
 * Mutations aim where the linker reads: the ELF header, the section
 * headers, the symbol table and the relocations (found with libelf in the
 * good object), besides random bytes and truncations.
 *
 * usage: test-link-mutate KERNEL_DIR [ROUNDS]   (default 4000) */
#define _GNU_SOURCE
#include "common.h"

#include <elf.h>
#include <gelf.h>

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

typedef struct region {
  size_t at, len;
} region;

/* The regions of bytes the linker reads: header, section headers, and each
 * symbol or relocation table. */
static size_t regions_of(const unsigned char *b, size_t n, region *r, size_t max) {
  size_t k = 0, shnum = 0;
  char *copy = malloc(n);
  memcpy(copy, b, n);
  elf_version(EV_CURRENT);
  Elf *e = elf_memory(copy, n);
  GElf_Ehdr eh;
  if (e && gelf_getehdr(e, &eh) && elf_getshdrnum(e, &shnum) == 0) {
    r[k++] = (region){0, sizeof(Elf64_Ehdr)};
    r[k++] = (region){eh.e_shoff, shnum * sizeof(Elf64_Shdr)};
    for (size_t i = 1; i < shnum && k < max; i++) {
      GElf_Shdr sh;
      gelf_getshdr(elf_getscn(e, i), &sh);
      if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_RELA || sh.sh_type == SHT_STRTAB)
        r[k++] = (region){sh.sh_offset, sh.sh_size};
    }
  }
  if (e)
    elf_end(e);
  free(copy);
  return k;
}

static const uint64_t specials[] = {
    0,          1,          2,          3,          4,      7,        8,          0x7f,
    0x80,       0xff,       0x100,      0xffff,     0xfff1, 0xfff2,   0x7fffffff, 0x80000000,
    0xffffffff, 1ull << 32, 1ull << 62, 1ull << 63, ~0ull,  ~0ull - 1};

static void mutate(unsigned char *b, size_t *n, const region *rs, size_t nr) {
  unsigned kind = (unsigned)(next() % 8);
  size_t len = *n;
  if (kind == 0) { /* truncate */
    *n = (size_t)(next() % len) + 1;
    return;
  }
  if (kind <= 2 || nr == 0) { /* flip a few random bytes anywhere */
    unsigned k = 1 + (unsigned)(next() % 4);
    for (unsigned i = 0; i < k; i++)
      b[next() % len] ^= (unsigned char)(1u << (next() % 8));
    return;
  }
  /* A field in a region the linker reads: a special or random value of 1,
   * 2, 4 or 8 bytes at an aligned place. */
  const region *r = &rs[next() % nr];
  unsigned w = 1u << (next() % 4);
  if (r->at >= len || r->len < w)
    return;
  size_t end = r->len < len - r->at ? r->len : len - r->at;
  if (end < w)
    return;
  size_t at = r->at + ((next() % (end - w + 1)) & ~(size_t)(w - 1));
  uint64_t v = kind <= 5 ? specials[next() % (sizeof specials / sizeof specials[0])] : next();
  if (kind == 7) { /* small changes of what is there */
    uint64_t old = 0;
    memcpy(&old, b + at, w);
    v = old + (next() % 9) - 4;
  }
  memcpy(b + at, &v, w);
}

static void target(void) {}
static void *lookup(void *ctx, const char *name) {
  (void)ctx;
  return name[0] == 'z' ? NULL : (void *)target;
}

static int rounds = 4000;

/* LINK-1: mutated kernels each give a status, never a crash. */
static void link_1_mutated_kernels(void) {
  static const char *names[] = {"add", "libm", "rodata", "helpers", "many", "bad_global"};
  const size_t nnames = sizeof names / sizeof names[0];
  int ok = 0, refusedn = 0, nomem = 0;
  rig_link_options opt = {.lookup = lookup};
  for (size_t k = 0; k < nnames; k++) {
    size_t n0;
    unsigned char *good = kernel(names[k], &n0);
    CHECK(good);
    region rs[64];
    size_t nr = regions_of(good, n0, rs, 64);
    unsigned char *b = malloc(n0);
    for (int i = 0; i < rounds / (int)nnames; i++) {
      size_t n = n0;
      memcpy(b, good, n0);
      unsigned m = 1 + (unsigned)(next() % 3);
      for (unsigned j = 0; j < m; j++)
        mutate(b, &n, rs, nr);
      /* Into a buffer of exactly n bytes, so that ASan sees a read past it. */
      unsigned char *exact = malloc(n);
      memcpy(exact, b, n);
      rig_link_image *im = NULL;
      char err[RIG_LINK_ERROR_BYTES];
      rig_link_status st = rig_link_load(exact, n, (i & 7) ? &opt : NULL, &im, err, sizeof err);
      free(exact);
      if (st == RIG_LINK_OK) {
        /* An object mutated into one with nothing to lay out links to an
         * empty image, without pages. */
        CHECK(im && (rig_link_code(im) != NULL) == (rig_link_code_bytes(im) != 0));
        rig_link_free(im);
        ok++;
      } else if (st == RIG_LINK_REFUSED) {
        CHECK_MSG(strstr(err, "(LINK-"), "a refusal naming no rule: %s", err);
        refusedn++;
      } else {
        CHECK_MSG(st == RIG_LINK_NO_MEMORY, "status %d: %s", st, err);
        printf("  out of memory: %s\n", err);
        nomem++;
      }
    }
    free(b);
    free(good);
  }
  printf("  %d linked, %d refused, %d out of memory\n", ok, refusedn, nomem);
  CHECK(refusedn > 0 && ok > 0);
}

int main(int argc, char **argv) {
  static const check_test tests[] = {TEST(link_1_mutated_kernels)};
  if (argc > 2 && atoi(argv[2]) > 0) {
    rounds = atoi(argv[2]);
    argc = 2;
  }
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
