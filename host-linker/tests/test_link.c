/* test_link.c: the host linker on the kernels of tests/kernels, built at
 * build time with clang -c -O2 -fPIC -ffreestanding for this host (OBJ-1:
 * --target=x86_64-none-unknown-elf; OBJ-2: --target=aarch64-none-unknown-elf
 * -ffixed-x18). The same file runs on x86_64 and, cross-compiled, under
 * qemu-aarch64 (arm64.sh), where it runs the arm64 relocations RELOC-4..10.
 *
 * Linked functions are called directly, by the convention their object was
 * built for (CALL-1, CALL-2): System V AMD64 on x86_64, AAPCS64 on arm64; the
 * math library's functions they call follow the platform's (CALL-4). */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <elf.h>
#include <gelf.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void kernel_fn(const void *params, int64_t first, int64_t end); /* LAUNCH-4 */

static bool within(const rig_link_image *im, const void *p) {
  const unsigned char *c = rig_link_code(im);
  return (const unsigned char *)p >= c && (const unsigned char *)p < c + rig_link_code_bytes(im);
}

/* OBJ-3, HOST-1, HOST-2, LAUNCH-4: the seed's add runs as written and gives
 * z = x + y. Its parameter block is the example's 32 bytes: x at 0, y at 8,
 * z at 16 (the addresses its refs would put there) and n at 24. It runs
 * over n floats in 64 groups of (n + 63) / 64 threads, one direct call per
 * group, threads [g * t, (g + 1) * t), in reverse order, as a launch could;
 * launches themselves are core's (Submission.launch). */
static void obj_3_add(void) {
  rig_link_image *im = load_kernel("add", NULL);
  CHECK(im);
  kernel_fn *add = (kernel_fn *)rig_link_resolve(im, "add");
  CHECK(add && within(im, (void *)add));
  enum { N = 1000 };
  static float x[N], y[N], z[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)i * 0.25f;
    y[i] = 1000.0f - (float)i;
    z[i] = -1.0f;
  }
  unsigned char params[32];
  const float *px = x, *py = y;
  float *pz = z;
  int64_t n = N;
  memcpy(params + 0, &px, 8);
  memcpy(params + 8, &py, 8);
  memcpy(params + 16, &pz, 8);
  memcpy(params + 24, &n, 8);
  int64_t t = (N + 63) / 64;
  for (int64_t g = 63; g >= 0; g--)
    add(params, g * t, (g + 1) * t);
  for (int i = 0; i < N; i++)
    CHECK_MSG(z[i] == x[i] + y[i], "z[%d] = %g", i, z[i]);
  rig_link_free(im);
}

/* The same add, built with -g: the relocations of its debugging sections,
 * which are not allocated and so not in the image, are not applied
 * (docs/linker.md); it links and runs (LINK-12, RELOC-1). */
static void reloc_1_debug_info(void) {
  rig_link_image *im = load_kernel("add_g", NULL);
  CHECK(im);
  kernel_fn *add = (kernel_fn *)rig_link_resolve(im, "add");
  CHECK(add);
  float x[3] = {1, 2, 3}, y[3] = {10, 20, 30}, z[3] = {0};
  struct {
    const float *x, *y;
    float *z;
    int64_t n;
  } p = {x, y, z, 3};
  add(&p, 0, 3);
  CHECK(z[0] == 11 && z[1] == 22 && z[2] == 33);
  rig_link_free(im);
}

/* The address a call or jump at place goes to: x86_64 e8/e9 rel32 (place
 * is the rel32 field), arm64 bl/b imm26 (place is the instruction). */
static const unsigned char *branch_target(const unsigned char *place) {
  if (host_machine() == EM_X86_64) {
    int32_t rel;
    memcpy(&rel, place, 4);
    return place + 4 + rel;
  }
  uint32_t insn;
  memcpy(&insn, place, 4);
  int32_t imm = (int32_t)(insn << 6) >> 6;
  return place + (int64_t)imm * 4;
}

/* Reads kernel bytes with libelf (the test's own reading, to find the
 * calls in it): the offsets in .text of the relocations against `name`
 * (up to max), and, where fn is not NULL, fn's offset in .text in *fn_off. */
static size_t reloc_offsets(const unsigned char *bytes, size_t n, const char *name, uint64_t *offs,
                            size_t max, const char *fn, uint64_t *fn_off) {
  size_t found = 0, shnum = 0, shstrndx = 0, strndx = 0, nsyms = 0;
  elf_version(EV_CURRENT);
  char *copy = malloc(n);
  memcpy(copy, bytes, n);
  Elf *e = elf_memory(copy, n);
  elf_getshdrnum(e, &shnum);
  elf_getshdrstrndx(e, &shstrndx);
  Elf_Data *syms = NULL;
  for (size_t i = 1; i < shnum; i++) {
    GElf_Shdr sh;
    gelf_getshdr(elf_getscn(e, i), &sh);
    if (sh.sh_type == SHT_SYMTAB) {
      syms = elf_getdata(elf_getscn(e, i), NULL);
      strndx = sh.sh_link;
      nsyms = sh.sh_size / sizeof(Elf64_Sym);
    }
  }
  for (size_t i = 0; fn && i < nsyms; i++) {
    GElf_Sym s;
    gelf_getsym(syms, (int)i, &s);
    const char *sn = elf_strptr(e, strndx, s.st_name);
    if (sn && strcmp(sn, fn) == 0)
      *fn_off = s.st_value;
  }
  for (size_t i = 1; i < shnum; i++) {
    GElf_Shdr sh, target;
    Elf_Scn *scn = elf_getscn(e, i);
    gelf_getshdr(scn, &sh);
    if (sh.sh_type != SHT_RELA)
      continue;
    gelf_getshdr(elf_getscn(e, sh.sh_info), &target);
    const char *tn = elf_strptr(e, shstrndx, target.sh_name);
    if (!tn || strcmp(tn, ".text") != 0)
      continue;
    Elf_Data *d = elf_getdata(scn, NULL);
    for (size_t j = 0; j < sh.sh_size / sizeof(Elf64_Rela); j++) {
      GElf_Rela r;
      GElf_Sym s;
      gelf_getrela(d, (int)j, &r);
      gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s);
      const char *sn = elf_strptr(e, strndx, s.st_name);
      if (sn && strcmp(sn, name) == 0 && found < max)
        offs[found++] = r.r_offset;
    }
  }
  elf_end(e);
  free(copy);
  return found;
}

/* Runs libm's sin_exp, f, over x[0..n) into y: its parameters are x, y
 * and n. */
static void run_sin_exp(kernel_fn *f, const float *x, float *y, int64_t n) {
  struct {
    const float *x;
    float *y;
    int64_t n;
  } p = {x, y, n};
  f(&p, 0, n);
}

/* SYM-1, RELOC-3, RELOC-7, RELOC-8, CALL-4: the math library through the
 * process's global scope. sinf and expf get one stub each, after the image. */
static void sym_1_libm(void) {
  void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL); /* in the global scope */
  CHECK(h);
  rig_link_image *im = load_kernel("libm", NULL);
  CHECK(im);
  kernel_fn *f = (kernel_fn *)rig_link_resolve(im, "sin_exp");
  float (*tail)(float) = (float (*)(float))rig_link_resolve(im, "tail_exp");
  CHECK(f && tail);
  float x[64], y[64];
  for (int i = 0; i < 64; i++)
    x[i] = (float)i / 16.0f - 2.0f;
  run_sin_exp(f, x, y, 64);
  for (int i = 0; i < 64; i++) {
    float want = sinf(x[i]) + expf(x[i]);
    CHECK_MSG(fabsf(y[i] - want) <= 1e-6f * fabsf(want) + 1e-6f, "y[%d] = %g, want %g", i, y[i],
              want);
  }
  CHECK(tail(1.5f) == expf(3.0f));
  /* RELOC-8: one stub per undefined symbol, after the image's sections,
   * each with a slot at +8 holding the symbol's address. */
  unsigned char *ss = rig_link_stub(im, "sinf"), *se = rig_link_stub(im, "expf");
  CHECK(ss && se && ss != se);
  CHECK(within(im, ss) && within(im, se));
  CHECK(ss > (unsigned char *)f && ss > (unsigned char *)tail);
  CHECK(rig_link_stub(im, "sin_exp") == NULL && rig_link_stub(im, "cosf") == NULL);
  void *slot;
  memcpy(&slot, ss + 8, 8);
  CHECK(slot == dlsym(RTLD_DEFAULT, "sinf"));
  memcpy(&slot, se + 8, 8);
  CHECK(slot == dlsym(RTLD_DEFAULT, "expf"));
  rig_link_free(im);
  dlclose(h);
}

/* RELOC-9, RELOC-10: a stub is a function that jumps through its slot.
 * x86_64: jmp *2(%rip) (ff 25 02 00 00 00), an indirect jump through memory
 * that reads and writes no register. arm64: ldr x17, .+8; br x17. Calling a
 * stub is calling its symbol. */
static void reloc_9_10_stub_code(void) {
  void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);
  CHECK(h);
  rig_link_image *im = load_kernel("libm", NULL);
  CHECK(im);
  const unsigned char *s = rig_link_stub(im, "sinf");
  CHECK(s && ((uintptr_t)s & 15) == 0);
  if (host_machine() == EM_X86_64) {
    static const unsigned char jmp[6] = {0xff, 0x25, 0x02, 0x00, 0x00, 0x00}; /* RELOC-9 */
    CHECK(memcmp(s, jmp, 6) == 0);
  } else {
    uint32_t i0, i1; /* RELOC-10 */
    memcpy(&i0, s, 4);
    memcpy(&i1, s + 4, 4);
    CHECK(i0 == 0x58000051u); /* ldr x17, #8 */
    CHECK(i1 == 0xd61f0220u); /* br x17 */
  }
  float (*stub_sinf)(float) = (float (*)(float))(uintptr_t)s;
  float (*stub_expf)(float) = (float (*)(float))rig_link_stub(im, "expf");
  CHECK(stub_sinf(0.5f) == sinf(0.5f));
  CHECK(stub_expf(-1.25f) == expf(-1.25f));
  rig_link_free(im);
  dlclose(h);
}

/* ---- calls out of reach go through the stubs; calls in reach do not ------- */

/* A page of trampolines far from any image: each jumps to a function of
 * libm. Placed 64 GiB below where mmap puts new memory now, so that the
 * image (mapped there next) is out of reach of x86_64's 2 GiB and arm64's
 * 128 MiB. */
typedef struct far_page {
  unsigned char *page;
  size_t bytes;
} far_page;

static void *far_tramp(far_page *fp, int i, void *target) {
  unsigned char *t = fp->page + 16 * i;
  uint64_t a = (uint64_t)(uintptr_t)target;
  if (host_machine() == EM_X86_64) {
    static const unsigned char jmp[8] = {0xff, 0x25, 0x02, 0, 0, 0, 0xcc, 0xcc};
    memcpy(t, jmp, 8);
  } else {
    uint32_t ldr = 0x58000051u, br = 0xd61f0220u;
    memcpy(t, &ldr, 4);
    memcpy(t + 4, &br, 4);
  }
  memcpy(t + 8, &a, 8);
  return t;
}

static bool far_map(far_page *fp) {
  fp->bytes = (size_t)sysconf(_SC_PAGESIZE);
  void *probe = mmap(NULL, fp->bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED)
    return false;
  munmap(probe, fp->bytes);
  uintptr_t want = (uintptr_t)probe > (UINT64_C(1) << 37) ? (uintptr_t)probe - (UINT64_C(1) << 36)
                                                          : (uintptr_t)probe + (UINT64_C(1) << 36);
  want &= ~(uintptr_t)(fp->bytes - 1);
  void *m =
      mmap((void *)want, fp->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return false;
  fp->page = m;
  return true;
}

static void far_seal(far_page *fp) {
  __builtin___clear_cache((char *)fp->page, (char *)fp->page + fp->bytes);
  mprotect(fp->page, fp->bytes, PROT_READ | PROT_EXEC);
}

static uint64_t distance(const void *a, const void *b) {
  return a > b ? (uint64_t)((const char *)a - (const char *)b)
               : (uint64_t)((const char *)b - (const char *)a);
}

/* Links libm with the lookup t: the image in *im (NULL where refused), the
 * object's bytes in *obj and *n, for reloc_offsets. */
static void load_libm(lookup_table *t, unsigned char **obj, size_t *n, rig_link_image **im) {
  rig_link_options o = {.lookup = table_lookup, .lookup_ctx = t};
  char err[RIG_LINK_ERROR_BYTES];
  *im = NULL;
  *obj = kernel("libm", n);
  CHECK(*obj);
  CHECK_MSG(rig_link_load(*obj, *n, &o, im, err, sizeof err) == RIG_LINK_OK, "%s", err);
}

/* RELOC-3 (x86_64, PLT32) and RELOC-7 (arm64, CALL26 and JUMP26): calls and
 * the tail jump to symbols out of reach go to their stubs, which reach them
 * through their slots. */
static void reloc_3_7_out_of_reach(void) {
  far_page fp;
  CHECK(far_map(&fp));
  lookup_table t = {.names = {"sinf", "expf"}};
  t.addrs[0] = far_tramp(&fp, 0, (void *)sinf);
  t.addrs[1] = far_tramp(&fp, 1, (void *)expf);
  far_seal(&fp);
  size_t n;
  unsigned char *obj;
  rig_link_image *im;
  load_libm(&t, &obj, &n, &im);
  CHECK(im);
  CHECK_MSG(distance(rig_link_code(im), fp.page) > (UINT64_C(1) << 32),
            "the image %p is not far from %p", rig_link_code(im), (void *)fp.page);
  /* Every call of sinf and expf in .text goes to its stub. */
  uint64_t offs[8], fn_off = 0;
  size_t k = reloc_offsets(obj, n, "sinf", offs, 8, "sin_exp", &fn_off);
  const unsigned char *text = (const unsigned char *)rig_link_resolve(im, "sin_exp") - fn_off;
  CHECK(k >= 1);
  for (size_t i = 0; i < k; i++)
    CHECK(branch_target(text + offs[i]) == (unsigned char *)rig_link_stub(im, "sinf"));
  k = reloc_offsets(obj, n, "expf", offs, 8, NULL, NULL);
  CHECK(k >= 2); /* a call and the tail jump */
  for (size_t i = 0; i < k; i++)
    CHECK(branch_target(text + offs[i]) == (unsigned char *)rig_link_stub(im, "expf"));
  void *slot;
  memcpy(&slot, (unsigned char *)rig_link_stub(im, "sinf") + 8, 8);
  CHECK(slot == t.addrs[0]);
  /* And they run. */
  kernel_fn *f = (kernel_fn *)rig_link_resolve(im, "sin_exp");
  float (*tail)(float) = (float (*)(float))rig_link_resolve(im, "tail_exp");
  float x[4] = {0.1f, 0.2f, 0.3f, 0.4f}, y[4];
  run_sin_exp(f, x, y, 4);
  for (int i = 0; i < 4; i++)
    CHECK(fabsf(y[i] - (sinf(x[i]) + expf(x[i]))) < 1e-5f);
  CHECK(tail(0.75f) == expf(1.5f));
  rig_link_free(im);
  free(obj);
  munmap(fp.page, fp.bytes);
}

/* RELOC-3, RELOC-7: a call to a symbol in reach goes straight to it, not
 * through the stub. The symbol is a function of another image, mapped next
 * to this one (a test's lookup; rig itself links no image to another by
 * name, SYM-2). */
static void reloc_3_7_in_reach(void) {
  rig_link_image *a = load_kernel("helpers", NULL);
  CHECK(a);
  void *own_exp = rig_link_resolve(a, "expf"); /* helpers' own expf: x + 42 */
  CHECK(own_exp);
  lookup_table t = {.names = {"sinf", "expf"}, .addrs = {own_exp, own_exp}};
  size_t n;
  unsigned char *obj;
  rig_link_image *im;
  load_libm(&t, &obj, &n, &im);
  CHECK(im);
  uint64_t reach = host_machine() == EM_X86_64 ? (UINT64_C(1) << 31) - (UINT64_C(1) << 20)
                                               : (UINT64_C(1) << 27) - (UINT64_C(1) << 20);
  float (*tail)(float) = (float (*)(float))rig_link_resolve(im, "tail_exp");
  CHECK(tail(1.0f) == 44.0f); /* expf(2x) is helpers' 2x + 42 */
  if (distance(rig_link_code(im), own_exp) < reach) {
    uint64_t offs[8], fn_off = 0;
    size_t k = reloc_offsets(obj, n, "expf", offs, 8, "sin_exp", &fn_off);
    const unsigned char *text = (const unsigned char *)rig_link_resolve(im, "sin_exp") - fn_off;
    CHECK(k >= 2);
    for (size_t i = 0; i < k; i++)
      CHECK(branch_target(text + offs[i]) == (unsigned char *)own_exp);
  } else {
    printf("  (the two images lie %llu bytes apart: not in reach here)\n",
           (unsigned long long)distance(rig_link_code(im), own_exp));
  }
  rig_link_free(im);
  rig_link_free(a);
  free(obj);
}

/* RELOC-2 (x86_64) and RELOC-4..6 (arm64: ADR_PREL_PG_HI21 with
 * ADD_ABS_LO12_NC, LDST8, LDST16, LDST32, LDST64 and LDST128): read-only
 * tables, in the image with the code (LINK-12), each at its section's
 * alignment, here 64 KiB, more than a page (LINK-13). */
static void reloc_2_4_5_6_rodata(void) {
  rig_link_image *im = load_kernel("rodata", NULL);
  CHECK(im);
  kernel_fn *table = (kernel_fn *)rig_link_resolve(im, "table");
  uint64_t (*widths)(void) = (uint64_t(*)(void))rig_link_resolve(im, "widths");
  float (*wide)(void) = (float (*)(void))rig_link_resolve(im, "wide");
  const float *(*aligned)(void) = (const float *(*)(void))rig_link_resolve(im, "aligned");
  const char *(*message)(void) = (const char *(*)(void))rig_link_resolve(im, "message");
  CHECK(table && widths && wide && aligned && message);
  static const float poly[8] = {1.0f,    0.5f,     0.25f,     0.125f,
                                0.0625f, 0.03125f, 0.015625f, 0.0078125f};
  static const int32_t perm[16] = {3, 1, 4, 15, 9, 2, 6, 5, 14, 8, 7, 0, 13, 12, 10, 11};
  float in[16], out[40];
  int32_t k[40];
  for (int i = 0; i < 16; i++)
    in[i] = (float)(i + 1);
  for (int i = 0; i < 40; i++)
    k[i] = i * 3;
  struct {
    const float *in;
    const int32_t *k;
    float *out;
    int64_t n;
  } p = {in, k, out, 40};
  table(&p, 0, 40);
  for (int i = 0; i < 40; i++)
    CHECK(out[i] == poly[k[i] & 7] * in[perm[i & 15]]);
  CHECK(widths() == 4444); /* LDST8 + LDST16 + LDST32 + LDST64 on arm64 */
  CHECK(wide() == 26.0f);  /* LDST128 on arm64 */
  const float *a = aligned();
  CHECK(((uintptr_t)a & 0xffff) == 0); /* LINK-13 */
  CHECK(a[0] == 1 && a[3] == 4);
  CHECK(strcmp(message(), "rig links") == 0);
  CHECK(within(im, a) && within(im, message()) && within(im, (void *)table)); /* LINK-12 */
  rig_link_free(im);
}

/* One object with 200 kernels and a call between them (RELOC-3, RELOC-7 to
 * symbols the object defines), every one found by name (HOST-3). */
static void many_functions(void) {
  rig_link_image *im = load_kernel("many", NULL);
  CHECK(im);
  int64_t in[10], out[10];
  for (int j = 0; j < 10; j++)
    in[j] = j - 3;
  struct {
    const int64_t *in;
    int64_t *out;
    int64_t n;
  } p = {in, out, 10};
  for (int i = 0; i < 200; i++) {
    char name[16];
    snprintf(name, sizeof name, "k%d", i);
    kernel_fn *f = (kernel_fn *)rig_link_resolve(im, name);
    CHECK_MSG(f, "%s", name);
    memset(out, 0, sizeof out);
    f(&p, 0, 10);
    for (int j = 0; j < 10; j++)
      CHECK_MSG(out[j] == in[j] * (i + 1) + i, "%s[%d]", name, j);
  }
  kernel_fn *last = (kernel_fn *)rig_link_resolve(im, "k_last");
  CHECK(last);
  last(&p, 2, 10);
  CHECK(out[2] == in[2] * 200 + 199);
  CHECK(rig_link_resolve(im, "scale"));
  CHECK(rig_link_resolve(im, "k200") == NULL);
  rig_link_free(im);
}

/* SYM-1: the object's own definition comes first: helpers defines expf,
 * which is never looked up. SYM-3: memcpy, which the compiler calls for a
 * copy, comes from the process. The lookup is asked for memcpy only. */
static void sym_1_3_helpers(void) {
  lookup_table t = {.fallback = true};
  rig_link_options o = {.lookup = table_lookup, .lookup_ctx = &t};
  rig_link_image *im = load_kernel("helpers", &o);
  CHECK(im);
  CHECK(t.calls == 1);
  CHECK(rig_link_stub(im, "memcpy") && !rig_link_stub(im, "expf"));
  float (*own)(float) = (float (*)(float))rig_link_resolve(im, "own_exp");
  CHECK(own && own(1.0f) == 43.0f);
  char src[1000], dst[1000];
  for (int i = 0; i < 1000; i++)
    src[i] = (char)(i * 7);
  memset(dst, 0, sizeof dst);
  struct {
    const char *src;
    char *dst;
    int64_t n;
  } p = {src, dst, 1000};
  ((kernel_fn *)rig_link_resolve(im, "copy"))(&p, 0, 1);
  CHECK(memcmp(src, dst, 1000) == 0);
  rig_link_free(im);
}

/* HOST-3: a host image's functions are the named symbols of its executable
 * sections: a static function is one; a table, an undefined symbol and a
 * section are not. */
static void host_3_names(void) {
  rig_link_image *im = load_kernel("helpers", NULL);
  CHECK(im);
  int (*(*keep)(void))(int) = (int (*(*)(void))(int))rig_link_resolve(im, "keep_local");
  CHECK(keep);
  void *local = rig_link_resolve(im, "local_twice");
  CHECK(local && (void *)keep() == local);
  CHECK(((int (*)(int))local)(21) == 42);
  CHECK(rig_link_resolve(im, "memcpy") == NULL); /* undefined here */
  CHECK(rig_link_resolve(im, ".text") == NULL);
  CHECK(rig_link_resolve(im, "") == NULL);
  CHECK(rig_link_resolve(im, NULL) == NULL);
  CHECK(rig_link_resolve(NULL, "copy") == NULL);
  rig_link_free(im);
  im = load_kernel("rodata", NULL);
  CHECK(im);
  CHECK(rig_link_resolve(im, "poly") == NULL); /* a table in .rodata */
  CHECK(rig_link_resolve(im, "aligned_table") == NULL);
  rig_link_free(im);
}

/* HOST-3: only functions and untyped labels of the executable sections are
 * functions. A data object, a common-typed or thread-local symbol, or one
 * of a processor's or an OS's types, though it lies in .text, is no code to
 * launch, and neither is a label at the end of .text: resolving them fails,
 * where each gave an address to call. */
static void host_3_only_functions(void) {
  static const struct {
    const char *name;
    unsigned char type;
    bool function, at_end;
  } syms[] = {
      {"fn", STT_FUNC, true, false},          {"label", STT_NOTYPE, true, false},
      {"table", STT_OBJECT, false, false},    {"shared", STT_COMMON, false, false},
      {"per_thread", STT_TLS, false, false},  {"os_type", STT_LOOS + 1, false, false},
      {"proc_type", STT_LOPROC, false, false}, {"text_end", STT_NOTYPE, false, true},
      {"fn_end", STT_FUNC, false, true},
  };
  eg_obj *o = eg_new(host_machine());
  unsigned text = eg_section(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, host_code,
                             host_code_bytes);
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    eg_symbol(o, syms[i].name, GELF_ST_INFO(STB_GLOBAL, syms[i].type), (uint16_t)text,
              syms[i].at_end ? host_code_bytes : 0, syms[i].at_end ? 0 : 4);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  rig_link_status st = rig_link_load(b, n, NULL, &im, err, sizeof err);
  free(b);
  CHECK_MSG(st == RIG_LINK_OK, "%s", err);
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    CHECK_MSG(!rig_link_resolve(im, syms[i].name) == !syms[i].function, "%s", syms[i].name);
  rig_link_free(im);
}

/* LINK-14, LINK-15, PLAT-3: once loaded, the image is read-only and
 * executable; never writable (test_wx checks every mapping call). */
static void link_15_protection(void) {
  rig_link_image *im = load_kernel("add", NULL);
  CHECK(im);
  uintptr_t c = (uintptr_t)rig_link_code(im);
  FILE *f = fopen("/proc/self/maps", "r");
  CHECK(f);
  char line[512], perms[8] = "";
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char p[8];
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 && c >= lo && c < hi) {
      memcpy(perms, p, sizeof perms);
      break;
    }
  }
  fclose(f);
  CHECK_MSG(strncmp(perms, "r-x", 3) == 0, "the image's mapping is %s", perms);
  CHECK(rig_link_code_bytes(im) % (size_t)sysconf(_SC_PAGESIZE) == 0);
  rig_link_free(im);
}

/* HOST-2: each load is its own link; images are independent and may be
 * freed in any order. */
static void host_2_independent(void) {
  rig_link_image *a = load_kernel("add", NULL), *b = load_kernel("add", NULL);
  CHECK(a && b && rig_link_code(a) != rig_link_code(b));
  kernel_fn *fa = (kernel_fn *)rig_link_resolve(a, "add"),
            *fb = (kernel_fn *)rig_link_resolve(b, "add");
  CHECK(fa && fb && fa != fb);
  rig_link_free(a);
  CHECK(add_runs(b));
  rig_link_free(b);
  rig_link_free(NULL);
  CHECK(rig_link_code(NULL) == NULL && rig_link_code_bytes(NULL) == 0);
}

/* The caller's bytes are only read: libelf works on them in place, with no
 * copy (bench P5), so a load from read-only pages links, and a refused
 * object (the other machine's, and a big-endian header) leaves them as
 * they were. A write faults here. */
static void read_only_input(void) {
  const char *names[2] = {"add", "many"};
  for (int k = 0; k < 3; k++) {
    size_t n;
    unsigned char *b = k < 2 ? kernel(names[k], &n) : kernel_arch("add", other_arch(), &n);
    CHECK(b);
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (n + page - 1) / page * page;
    unsigned char *ro = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED);
    memcpy(ro, b, n);
    if (k == 1)
      ro[EI_DATA] = ELFDATA2MSB; /* "many" as a big-endian object */
    CHECK(mprotect(ro, len, PROT_READ) == 0);
    rig_link_image *im = NULL;
    char err[RIG_LINK_ERROR_BYTES];
    rig_link_status st = rig_link_load(ro, n, NULL, &im, err, sizeof err);
    CHECK(k == 0 ? st == RIG_LINK_OK && add_runs(im) : st == RIG_LINK_REFUSED);
    CHECK(memcmp(ro + (k == 1 ? EI_DATA + 1 : 0), b + (k == 1 ? EI_DATA + 1 : 0),
                 n - (k == 1 ? EI_DATA + 1 : 0)) == 0);
    rig_link_free(im);
    munmap(ro, len);
    free(b);
  }
}

/* An object with nothing to lay out and no symbol table links to an empty
 * image: no pages, no functions. Not "out of memory", as a mapping of 0
 * bytes was. The compiler's empty object stripped (kernels/meson.build),
 * and an ELF header with no sections at all. */
static void empty_objects_link(void) {
  size_t n;
  unsigned char *b = kernel("nothing", &n);
  CHECK(b);
  Elf64_Ehdr bare = {.e_type = ET_REL,
                     .e_machine = (uint16_t)host_machine(),
                     .e_version = EV_CURRENT,
                     .e_ehsize = sizeof bare};
  memcpy(bare.e_ident, ELFMAG, SELFMAG);
  bare.e_ident[EI_CLASS] = ELFCLASS64;
  bare.e_ident[EI_DATA] = ELFDATA2LSB;
  bare.e_ident[EI_VERSION] = EV_CURRENT;
  for (int k = 0; k < 2; k++) {
    rig_link_image *im = NULL;
    char err[RIG_LINK_ERROR_BYTES] = "";
    rig_link_status st = k == 0 ? rig_link_load(b, n, NULL, &im, err, sizeof err)
                                : rig_link_load(&bare, sizeof bare, NULL, &im, err, sizeof err);
    CHECK_MSG(st == RIG_LINK_OK && im, "object %d: status %d: %s", k, st, err);
    CHECK(rig_link_code_bytes(im) == 0 && rig_link_code(im) == NULL);
    CHECK(rig_link_resolve(im, "add") == NULL && rig_link_stub(im, "memcpy") == NULL);
    rig_link_free(im);
  }
  free(b);
}

/* Misuse is RIG_LINK_INVALID, not a refusal of the object. */
static void invalid_arguments(void) {
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  unsigned char b[4] = {0};
  CHECK(rig_link_load(NULL, 4, NULL, &im, err, sizeof err) == RIG_LINK_INVALID);
  CHECK(rig_link_load(b, 0, NULL, &im, err, sizeof err) == RIG_LINK_INVALID);
  CHECK(rig_link_load(b, 4, NULL, NULL, err, sizeof err) == RIG_LINK_INVALID);
  CHECK(rig_link_load(b, 4, NULL, &im, NULL, 0) == RIG_LINK_REFUSED); /* no message asked */
  CHECK(im == NULL);
}

int main(int argc, char **argv) {
  static const check_test tests[] = {
      TEST(obj_3_add),
      TEST(reloc_1_debug_info),
      TEST(sym_1_libm),
      TEST(reloc_9_10_stub_code),
      TEST(reloc_3_7_out_of_reach),
      TEST(reloc_3_7_in_reach),
      TEST(reloc_2_4_5_6_rodata),
      TEST(many_functions),
      TEST(sym_1_3_helpers),
      TEST(host_3_names),
      TEST(host_3_only_functions),
      TEST(link_15_protection),
      TEST(host_2_independent),
      TEST(invalid_arguments),
      TEST(read_only_input),
      TEST(empty_objects_link),
  };
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
