/* test_wx.c: every call the linker makes to map memory, recorded (the
 * linker's objects are linked with -Wl,--wrap=mmap,--wrap=mmap64,
 * --wrap=mprotect,--wrap=munmap). LINK-14: the image is mapped read-write, written, then
 * made executable; LINK-15 and PLAT-3: it is never writable and executable
 * at once, and never writable again; a refused load unmaps what it
 * mapped. */
#define _GNU_SOURCE
#include "common.h"

#include <elf.h>
#include <gelf.h>
#include <math.h>
#include <sys/mman.h>

void *__real_mmap(void *, size_t, int, int, int, off_t);
void *__real_mmap64(void *, size_t, int, int, int, off_t);
int __real_mprotect(void *, size_t, int);
int __real_munmap(void *, size_t);

typedef struct call {
  char what; /* 'm'map, 'p'rotect, 'u'nmap */
  void *addr;
  size_t len;
  int prot;
} call;

static call calls[64];
static int ncalls;
static int recording;

static void record(char what, void *addr, size_t len, int prot) {
  if (recording && ncalls < 64)
    calls[ncalls++] = (call){what, addr, len, prot};
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  void *r = __real_mmap(addr, len, prot, flags, fd, off);
  record('m', r, len, prot);
  return r;
}

/* mmap as it is called where off_t has 64 bits on a 32-bit ABI's terms
 * (_FILE_OFFSET_BITS=64, which meson sets). */
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  void *r = __real_mmap64(addr, len, prot, flags, fd, off);
  record('m', r, len, prot);
  return r;
}

int __wrap_mprotect(void *addr, size_t len, int prot) {
  record('p', addr, len, prot);
  return __real_mprotect(addr, len, prot);
}

int __wrap_munmap(void *addr, size_t len) {
  record('u', addr, len, 0);
  return __real_munmap(addr, len);
}

static rig_link_status load(const char *name, rig_link_image **im) {
  size_t n;
  char err[RIG_LINK_ERROR_BYTES];
  unsigned char *b = kernel(name, &n);
  if (!b)
    return RIG_LINK_INVALID;
  lookup_table t = {.names = {"sinf", "expf"}, .addrs = {(void *)sinf, (void *)expf}};
  rig_link_options opt = {.lookup = table_lookup, .lookup_ctx = &t};
  ncalls = 0;
  recording = 1;
  rig_link_status st = rig_link_load(b, n, &opt, im, err, sizeof err);
  recording = 0;
  free(b);
  if (st != RIG_LINK_OK)
    printf("  %s: %s\n", name, err);
  return st;
}

static bool never_wx(void) {
  for (int i = 0; i < ncalls; i++)
    if ((calls[i].prot & PROT_WRITE) && (calls[i].prot & PROT_EXEC))
      return false;
  return true;
}

/* LINK-14, LINK-15, PLAT-3: one mapping, read-write; then one mprotect of
 * all of it to read-execute, the last call. */
static void link_14_15_sequence(void) {
  rig_link_image *im = NULL;
  CHECK(load("libm", &im) == RIG_LINK_OK);
  CHECK(never_wx());
  CHECK(ncalls == 2);
  CHECK(calls[0].what == 'm' && calls[0].prot == (PROT_READ | PROT_WRITE));
  CHECK(calls[1].what == 'p' && calls[1].prot == (PROT_READ | PROT_EXEC));
  CHECK(calls[1].addr == rig_link_code(im) && calls[1].len == rig_link_code_bytes(im));
  rig_link_free(im);
}

/* The same with a section aligned past a page: the mapping is made larger
 * and trimmed to an aligned base, still never executable until written. */
static void link_13_15_aligned(void) {
  rig_link_image *im = NULL;
  CHECK(load("rodata", &im) == RIG_LINK_OK);
  CHECK(never_wx());
  CHECK(calls[0].what == 'm' && calls[0].prot == (PROT_READ | PROT_WRITE));
  CHECK(calls[ncalls - 1].what == 'p' && calls[ncalls - 1].prot == (PROT_READ | PROT_EXEC));
  for (int i = 1; i < ncalls - 1; i++)
    CHECK(calls[i].what == 'u');
  CHECK(((uintptr_t)rig_link_code(im) & 0xffff) == 0);
  rig_link_free(im);
}

/* A load refused after mapping (LINK-9 here, found while relocating)
 * unmaps all it mapped and never made anything executable. */
static void link_9_refusal_unmaps(void) {
  unsigned text;
  eg_obj *o = eg_new(host_machine());
  text = eg_section(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16, host_code,
                    host_code_bytes);
  unsigned u = eg_symbol(o, "far_data", GELF_ST_INFO(STB_GLOBAL, STT_NOTYPE), SHN_UNDEF, 0, 0);
  eg_reloc(o, text, host_code_patch, u, host_pc_type(), 0);
  size_t n;
  unsigned char *b = eg_build(o, &n);
  lookup_table t = {.names = {"far_data"}, .addrs = {(void *)(uintptr_t)(UINT64_C(1) << 62)}};
  rig_link_options opt = {.lookup = table_lookup, .lookup_ctx = &t};
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  ncalls = 0;
  recording = 1;
  rig_link_status st = rig_link_load(b, n, &opt, &im, err, sizeof err);
  recording = 0;
  free(b);
  CHECK(st == RIG_LINK_REFUSED && strstr(err, "LINK-9"));
  CHECK(ncalls == 2 && calls[0].what == 'm' && calls[1].what == 'u');
  CHECK(calls[1].addr == calls[0].addr && calls[1].len == calls[0].len);
  CHECK(never_wx());
}

int main(int argc, char **argv) {
  static const check_test tests[] = {
      TEST(link_14_15_sequence),
      TEST(link_13_15_aligned),
      TEST(link_9_refusal_unmaps),
  };
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
