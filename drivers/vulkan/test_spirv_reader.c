/* test_spirv_reader.c: the Vulkan driver's SPIR-V reader (spirv_reader.c)
 * on its own: no Vulkan, no device. It reads the test kernels glslang
 * compiled at build time ($RIG_KERNELS/kernels/vulkan, skipped where the
 * build had no glslang) and modules written here word by word, and checks
 * what load and resolve take of them: the checks' statuses, the entry
 * points, each axis of their groups. Then truncations and bit flips of a
 * kernel: every one gives a status, and never a read past the words (the
 * words of each try are a heap block of their own, so ASan sees any).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <spirv/unified1/spirv.h>

#include "spirv_layout.h"
#include "spirv_reader.h"

#define NONE UINT32_MAX

/* A module being written word by word. */
typedef struct module {
  uint32_t w[256];
  size_t n;
} module;

static void header(module *m) {
  uint32_t h[5] = {SpvMagicNumber, 0x00010500, 0, 100, 0};
  memcpy(m->w, h, sizeof h);
  m->n = 5;
}

/* Appends instruction op with its operands (words). */
static void inst(module *m, uint32_t op, size_t nops, const uint32_t *ops) {
  m->w[m->n++] = (uint32_t)(nops + 1) << SpvWordCountShift | op;
  memcpy(m->w + m->n, ops, nops * sizeof *ops);
  m->n += nops;
}

#define INST(m, op, ...)                                                  \
  do {                                                                    \
    const uint32_t ops_[] = {__VA_ARGS__};                                \
    inst(m, op, sizeof ops_ / sizeof *ops_, ops_);                        \
  } while (0)

/* OpEntryPoint model id "name": the name in words, NUL-padded. */
static void entry_point(module *m, uint32_t model, uint32_t id, const char *name) {
  uint32_t ops[16] = {model, id};
  size_t len = strlen(name) + 1, words = (len + 3) / 4;
  memcpy(ops + 2, name, len);
  inst(m, SpvOpEntryPoint, 2 + words, ops);
}

/* A compute module whose entry "k" (id 1) has its group given by body. */
static void compute_module(module *m) {
  header(m);
  INST(m, SpvOpCapability, SpvCapabilityShader);
  INST(m, SpvOpMemoryModel, SpvAddressingModelLogical, SpvMemoryModelGLSL450);
  entry_point(m, SpvExecutionModelGLCompute, 1, "k");
}

static const char *refuse_int64(const void *ctx, uint32_t cap) {
  (void)ctx;
  return cap == SpvCapabilityInt64 ? "shaderInt64" : NULL;
}

/* A kernel of the build, or NULL (the test skips) where glslang was not
 * there to compile it. *n: its words. */
static uint32_t *kernel(const char *name, size_t *n) {
  const char *dir = getenv("RIG_KERNELS");
  char path[512];
  snprintf(path, sizeof path, "%s/kernels/vulkan/%s.spv", dir ? dir : ".", name);
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  uint32_t *w = malloc(1 << 20);
  size_t bytes = w ? fread(w, 1, 1 << 20, f) : 0;
  fclose(f);
  assert_int_equal(bytes % 4, 0);
  *n = bytes / 4;
  return w;
}

static void assert_group(const rvk_spirv_group *g, uint32_t f0, uint32_t f1, uint32_t f2,
                         uint32_t s0, uint32_t s1, uint32_t s2) {
  uint32_t fixed[3] = {f0, f1, f2}, spec[3] = {s0, s1, s2};
  for (int a = 0; a < 3; a++) {
    assert_int_equal(g->fixed[a], fixed[a]);
    assert_int_equal(g->spec[a], spec[a]);
  }
}

/* glslang's local_size_x_id = 0..2: the WorkgroupSize built-in, a
 * composite of specialization constants with SpecIds 0, 1 and 2. */
static void add_kernel_specializes_each_axis(void **st) {
  (void)st;
  size_t n;
  uint32_t *w = kernel("add", &n);
  if (!w)
    skip();
  rvk_spirv_group g;
  rvk_spirv_fault fault;
  assert_int_equal(rvk_spirv_check(w, n, NULL, NULL, &fault), RVK_SPIRV_OK);
  assert_int_equal(rvk_spirv_entry(w, n, "add", &g), 1);
  assert_group(&g, 0, 0, 0, 0, 1, 2);
  assert_int_equal(rvk_spirv_entry(w, n, "main", &g), 0); /* glslang's main is named add */
  assert_int_equal(rvk_spirv_entry(w, n, "ad", &g), 0);
  /* add declares Int64 (its n): a device without it refuses the module. */
  assert_int_equal(rvk_spirv_check(w, n, refuse_int64, NULL, &fault), RVK_SPIRV_REFUSED);
  assert_int_equal(fault.capability, SpvCapabilityInt64);
  assert_string_equal(fault.feature, "shaderInt64");
  free(w);
}

static void fixed_kernel_has_a_fixed_local_size(void **st) {
  (void)st;
  size_t n;
  uint32_t *w = kernel("fixed", &n);
  if (!w)
    skip();
  rvk_spirv_group g;
  assert_int_equal(rvk_spirv_check(w, n, refuse_int64, NULL, NULL), RVK_SPIRV_OK);
  assert_int_equal(rvk_spirv_entry(w, n, "fixed", &g), 1);
  assert_group(&g, 64, 1, 1, NONE, NONE, NONE);
  free(w);
}

/* Every test kernel of the build: checked, with its entry point named as
 * the kernel and a group the driver can specialize or run fixed. */
static void every_test_kernel_reads(void **st) {
  (void)st;
  const char *names[] = {"add", "fill", "spin", "ids", "sum", "fixed", "double", "empty"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    size_t n;
    uint32_t *w = kernel(names[k], &n);
    if (!w)
      skip();
    rvk_spirv_group g;
    assert_int_equal(rvk_spirv_check(w, n, NULL, NULL, NULL), RVK_SPIRV_OK);
    assert_int_equal(rvk_spirv_entry(w, n, names[k], &g), 1);
    for (int a = 0; a < 3; a++)
      assert_true(g.spec[a] != NONE || g.fixed[a] >= 1);
    free(w);
  }
}

/* LocalSizeId (which glslang does not write for Vulkan 1.2): each axis a
 * specialization constant with its SpecId, or a constant, fixed. */
static void local_size_id_mixes_spec_and_fixed_axes(void **st) {
  (void)st;
  module m;
  compute_module(&m);
  INST(&m, SpvOpExecutionModeId, 1, SpvExecutionModeLocalSizeId, 10, 11, 12);
  INST(&m, SpvOpDecorate, 10, SpvDecorationSpecId, 7);
  INST(&m, SpvOpDecorate, 12, SpvDecorationSpecId, 9);
  INST(&m, SpvOpTypeInt, 20, 32, 0);
  INST(&m, SpvOpSpecConstant, 20, 10, 32);
  INST(&m, SpvOpConstant, 20, 11, 4);
  INST(&m, SpvOpSpecConstant, 20, 12, 1);
  rvk_spirv_group g;
  assert_int_equal(rvk_spirv_check(m.w, m.n, NULL, NULL, NULL), RVK_SPIRV_OK);
  assert_int_equal(rvk_spirv_entry(m.w, m.n, "k", &g), 1);
  assert_group(&g, 0, 4, 0, 7, NONE, 9);
}

/* The WorkgroupSize built-in overrides the entry's LocalSize. */
static void workgroup_size_overrides_local_size(void **st) {
  (void)st;
  module m;
  compute_module(&m);
  INST(&m, SpvOpExecutionMode, 1, SpvExecutionModeLocalSize, 8, 8, 1);
  INST(&m, SpvOpDecorate, 30, SpvDecorationBuiltIn, SpvBuiltInWorkgroupSize);
  INST(&m, SpvOpTypeInt, 20, 32, 0);
  INST(&m, SpvOpConstant, 20, 10, 16);
  INST(&m, SpvOpConstant, 20, 11, 2);
  INST(&m, SpvOpConstant, 20, 12, 1);
  INST(&m, SpvOpConstantComposite, 21, 30, 10, 11, 12);
  rvk_spirv_group g;
  assert_int_equal(rvk_spirv_entry(m.w, m.n, "k", &g), 1);
  assert_group(&g, 16, 2, 1, NONE, NONE, NONE);
}

/* Only a GLCompute entry is found; one without a group size it can read
 * is -1, as is one whose size names no constant. */
static void entries_without_a_readable_group(void **st) {
  (void)st;
  module m;
  rvk_spirv_group g;
  compute_module(&m);
  entry_point(&m, SpvExecutionModelVertex, 2, "v");
  assert_int_equal(rvk_spirv_entry(m.w, m.n, "v", &g), 0);
  assert_int_equal(rvk_spirv_entry(m.w, m.n, "k", &g), -1); /* no size at all */
  INST(&m, SpvOpExecutionModeId, 1, SpvExecutionModeLocalSizeId, 10, 11, 12);
  assert_int_equal(rvk_spirv_entry(m.w, m.n, "k", &g), -1); /* ids of nothing */
}

static rvk_spirv_status check_of(const uint32_t *w, size_t n, rvk_spirv_fault *fault) {
  return rvk_spirv_check(w, n, NULL, NULL, fault);
}

/* Each kind of corrupt module: its status, where, and the driver's text. */
static void corrupt_modules_have_a_status(void **st) {
  (void)st;
  module m;
  rvk_spirv_fault fault;
  char why[200];
  compute_module(&m);
  assert_int_equal(check_of(m.w, 4, &fault), RVK_SPIRV_SHORT);
  assert_string_equal(rvk_spirv_why(RVK_SPIRV_SHORT, &fault, why, sizeof why),
                      "not a SPIR-V module (shorter than its header)");
  uint32_t swapped = m.w[0];
  m.w[0] = __builtin_bswap32(swapped);
  assert_int_equal(check_of(m.w, m.n, &fault), RVK_SPIRV_BYTE_ORDER);
  m.w[0] = 0x12345678;
  assert_int_equal(check_of(m.w, m.n, &fault), RVK_SPIRV_MAGIC);
  m.w[0] = swapped;
  uint32_t first = m.w[5];
  m.w[5] = SpvOpNop; /* no words */
  assert_int_equal(check_of(m.w, m.n, &fault), RVK_SPIRV_OVERRUN);
  assert_int_equal(fault.word, 5);
  m.w[5] = first;
  /* words 5-6 OpCapability, 7-9 OpMemoryModel, 10-13 OpEntryPoint */
  assert_int_equal(check_of(m.w, m.n - 1, &fault), RVK_SPIRV_OVERRUN); /* the entry cut */
  assert_string_equal(rvk_spirv_why(RVK_SPIRV_OVERRUN, &fault, why, sizeof why),
                      "malformed SPIR-V: instruction at word 10 runs past the module");
  assert_int_equal(check_of(m.w, 10, &fault), RVK_SPIRV_NO_ENTRY_POINT);
  assert_string_equal(rvk_spirv_why(RVK_SPIRV_NO_ENTRY_POINT, &fault, why, sizeof why),
                      "malformed SPIR-V: no OpEntryPoint");
  assert_int_equal(check_of(m.w, 7, &fault), RVK_SPIRV_NO_MEMORY_MODEL);
}

/* A capability is refused where it comes, before a fault further on. */
static void a_refused_capability_names_its_feature(void **st) {
  (void)st;
  module m;
  rvk_spirv_fault fault;
  header(&m);
  INST(&m, SpvOpCapability, SpvCapabilityInt64);
  m.w[m.n++] = 9u << SpvWordCountShift; /* runs past the end */
  assert_int_equal(rvk_spirv_check(m.w, m.n, refuse_int64, NULL, &fault), RVK_SPIRV_REFUSED);
  assert_int_equal(fault.word, 5);
  assert_int_equal(rvk_spirv_check(m.w, m.n, NULL, NULL, &fault), RVK_SPIRV_OVERRUN);
  assert_int_equal(fault.word, 7);
}

/* Both readers on words: a status, no read outside them. */
static void read_all(const uint32_t *src, size_t n, const char *name) {
  uint32_t *w = malloc(n ? n * sizeof *w : 1); /* exactly n words: ASan sees an overread */
  assert_non_null(w);
  memcpy(w, src, n * sizeof *w);
  rvk_spirv_fault fault;
  rvk_spirv_group g;
  rvk_spirv_status s = rvk_spirv_check(w, n, refuse_int64, NULL, &fault);
  assert_true(s <= RVK_SPIRV_NO_ENTRY_POINT);
  int found = rvk_spirv_entry(w, n, name, &g); /* even on words check refuses */
  assert_true(found >= -1 && found <= 1);
  if (s == RVK_SPIRV_OK) { /* resolve reads layouts of modules load took */
    static rvk_spirv_layout l;
    char why[256];
    uint64_t bytes;
    rvk_spirv_value v = {0, 64};
    int r = rvk_spirv_read_layout(w, n, &l, why, sizeof why);
    assert_true(r == 0 || (r == -1 && why[0]));
    assert_true(l.nbind <= RVK_SPIRV_MAX_BINDINGS && l.nspec <= RVK_SPIRV_MAX_SPECS);
    r = rvk_spirv_shared(w, n, &v, 1, &bytes, why, sizeof why);
    assert_true(r == 0 || r == -1);
  }
  free(w);
}

static uint32_t xorshift(uint32_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 17;
  *x ^= *x << 5;
  return *x;
}

/* Every truncation of a module, and 4000 modules with one to three bits
 * flipped (a fixed seed: the same every run). */
static void flips_of(const char *file, const char *name);

static void truncations_and_bit_flips_never_crash(void **st) {
  (void)st;
  flips_of("add", "add");
  flips_of("public/matmul", "main"); /* bindings, push constants, spec-sized shared */
  flips_of("public/reduce", "main");
}

static void flips_of(const char *file, const char *name) {
  size_t n;
  module m;
  uint32_t *w = kernel(file, &n);
  if (!w) { /* no glslang: a module of this file */
    compute_module(&m);
    INST(&m, SpvOpExecutionMode, 1, SpvExecutionModeLocalSize, 8, 8, 1);
    w = malloc(m.n * sizeof *w);
    assert_non_null(w);
    memcpy(w, m.w, m.n * sizeof *w);
    n = m.n;
    name = "k";
  }
  for (size_t cut = 0; cut <= n; cut++)
    read_all(w, cut, name);
  uint32_t *flipped = malloc(n * sizeof *flipped), seed = 2463534242u;
  assert_non_null(flipped);
  for (int run = 0; run < 4000; run++) {
    memcpy(flipped, w, n * sizeof *w);
    for (uint32_t k = 0, flips = 1 + xorshift(&seed) % 3; k < flips; k++) {
      uint32_t bit = xorshift(&seed) % (uint32_t)(n * 32);
      flipped[bit / 32] ^= 1u << (bit % 32);
    }
    read_all(flipped, n, name);
  }
  free(flipped);
  free(w);
}

/* What resolve reads of the public-style shaders' layouts
 * (tests/kernels/vulkan/public). */
static void layouts_of_public_shaders(void **st) {
  (void)st;
  size_t n;
  static rvk_spirv_layout l;
  char why[256];
  uint32_t *w = kernel("public/matmul", &n);
  if (!w)
    skip(); /* no glslang here */
  assert_int_equal(rvk_spirv_read_layout(w, n, &l, why, sizeof why), 0);
  assert_int_equal(l.nbind, 3);
  for (uint32_t i = 0; i < 3; i++) {
    assert_int_equal(l.bind[i].binding, i);
    assert_int_equal(l.bind[i].kind, RVK_BIND_STORAGE);
  }
  assert_int_equal(l.push_bytes, 12); /* M, N, K */
  assert_int_equal(l.nspec, 3);
  assert_false(l.shared_fixed); /* sized by all three constants */
  assert_false(l.num_groups);
  uint64_t bytes;
  rvk_spirv_value v[3] = {{0, 16}, {1, 4}, {2, 32}}; /* (4*32 + 32*16) floats */
  assert_int_equal(rvk_spirv_shared(w, n, v, 3, &bytes, why, sizeof why), 0);
  assert_int_equal(bytes, 4 * (4 * 32 + 32 * 16));
  free(w);
  w = kernel("public/reduce", &n);
  assert_non_null(w);
  assert_int_equal(rvk_spirv_read_layout(w, n, &l, why, sizeof why), 0);
  assert_true(l.num_groups);
  rvk_spirv_value t = {0, 128}; /* gl_WorkGroupSize.x = 128: sdata[128] */
  assert_int_equal(rvk_spirv_shared(w, n, &t, 1, &bytes, why, sizeof why), 0);
  assert_int_equal(bytes, 512);
  free(w);
  w = kernel("public/saxpy", &n);
  assert_non_null(w);
  assert_int_equal(rvk_spirv_read_layout(w, n, &l, why, sizeof why), 0);
  assert_int_equal(l.nbind, 3);
  assert_int_equal(l.bind[0].kind, RVK_BIND_UNIFORM);
  assert_int_equal(l.push_bytes, 4);
  free(w);
  w = kernel("public/scale", &n); /* binding 0 declared twice (aliased) */
  assert_non_null(w);
  assert_int_equal(rvk_spirv_read_layout(w, n, &l, why, sizeof why), 0);
  assert_int_equal(l.nbind, 2);
  assert_int_equal(l.nspec, 1);
  assert_int_equal(l.spec[0].kind, 'b');
  assert_true(l.shared_fixed);
  assert_int_equal(l.shared_bytes, 0);
  free(w);
  w = kernel("public/refused_sampler", &n);
  assert_non_null(w);
  assert_int_equal(rvk_spirv_read_layout(w, n, &l, why, sizeof why), -1);
  assert_non_null(strstr(why, "binding 1 of set 0 'tex' is a combined image sampler"));
  free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_kernel_specializes_each_axis),
      cmocka_unit_test(fixed_kernel_has_a_fixed_local_size),
      cmocka_unit_test(every_test_kernel_reads),
      cmocka_unit_test(local_size_id_mixes_spec_and_fixed_axes),
      cmocka_unit_test(workgroup_size_overrides_local_size),
      cmocka_unit_test(entries_without_a_readable_group),
      cmocka_unit_test(corrupt_modules_have_a_status),
      cmocka_unit_test(a_refused_capability_names_its_feature),
      cmocka_unit_test(layouts_of_public_shaders),
      cmocka_unit_test(truncations_and_bit_flips_never_crash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
