/* test_wx.c: every call the linker makes to map memory, recorded (the
 * linker's objects are linked with -Wl,--wrap=mmap,--wrap=mmap64,
 * --wrap=mprotect,--wrap=munmap,--wrap=madvise,--wrap=fallocate). LINK-14:
 * the image is written first, then made executable; LINK-15 and PLAT-3: it
 * is never writable and executable at once, and never writable again. A
 * small image (pages.c) is never mapped writable at all, even on the pages
 * of a freed image while other images run, and a forked child keeps its
 * code while its parent reuses those pages; a refused load unmaps or gives
 * back what it took; a freed image's memory returns to the system. */
#define _GNU_SOURCE
#include "common.h"
#include "../src/internal.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <math.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void *__real_mmap(void *, size_t, int, int, int, off_t);
void *__real_mmap64(void *, size_t, int, int, int, off_t);
int __real_mprotect(void *, size_t, int);
int __real_munmap(void *, size_t);

int __real_madvise(void *, size_t, int);
int __real_fallocate(int, int, off_t, off_t);
int __real_fallocate64(int, int, off_t, off_t);

typedef void kernel_fn(const void *params, int64_t first, int64_t end); /* LAUNCH-4 */

typedef struct call {
  char what; /* 'm'map, 'p'rotect, 'u'nmap, 'a'dvise, 'f'allocate (len: its length) */
  void *addr;
  size_t len;
  int prot; /* the advice, for 'a' */
} call;

#define MAX_CALLS 4096
static call calls[MAX_CALLS];
static int ncalls;
static int recording;
static int refuse_mmap; /* mmap fails with ENOMEM while set */

static void record(char what, void *addr, size_t len, int prot) {
  if (recording && ncalls < MAX_CALLS)
    calls[ncalls++] = (call){what, addr, len, prot};
}

/* Whether an mmap fails (ENOMEM), as refuse_mmap asks. */
static bool mmap_refused(void) {
  if (refuse_mmap)
    errno = ENOMEM;
  return refuse_mmap;
}

/* r, what an mmap gave, recorded. */
static void *mapped(void *r, size_t len, int prot) {
  record('m', r, len, prot);
  return r;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap_refused() ? MAP_FAILED
                        : mapped(__real_mmap(addr, len, prot, flags, fd, off), len, prot);
}

/* mmap as it is called where off_t has 64 bits on a 32-bit ABI's terms
 * (_FILE_OFFSET_BITS=64, which meson sets). */
void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  return mmap_refused() ? MAP_FAILED
                        : mapped(__real_mmap64(addr, len, prot, flags, fd, off), len, prot);
}

int __wrap_mprotect(void *addr, size_t len, int prot) {
  record('p', addr, len, prot);
  return __real_mprotect(addr, len, prot);
}

int __wrap_munmap(void *addr, size_t len) {
  record('u', addr, len, 0);
  return __real_munmap(addr, len);
}

int __wrap_madvise(void *addr, size_t len, int advice) {
  record('a', addr, len, advice);
  return __real_madvise(addr, len, advice);
}

int __wrap_fallocate(int fd, int mode, off_t off, off_t len) {
  record('f', NULL, (size_t)len, mode);
  return __real_fallocate(fd, mode, off, len);
}

/* fallocate as it is called where off_t has 64 bits on a 32-bit ABI's
 * terms. */
int __wrap_fallocate64(int fd, int mode, off_t off, off_t len) {
  record('f', NULL, (size_t)len, mode);
  return __real_fallocate64(fd, mode, off, len);
}

/* A small image loaded and freed before the calls a test counts: the pool
 * then has a chunk, whose making (a probe of its file mapped executable and
 * unmapped) is no load's. */
static void warm(void) {
  rig_link_image *im = load_kernel("many", NULL);
  CHECK(im);
  rig_link_free(im);
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

/* Whether call c sets a protection (advice and fallocate modes are not). */
static bool protects(const call *c) { return c->what != 'a' && c->what != 'f'; }

static bool never_wx(void) {
  for (int i = 0; i < ncalls; i++)
    if (protects(&calls[i]) && (calls[i].prot & PROT_WRITE) && (calls[i].prot & PROT_EXEC))
      return false;
  return true;
}

/* Whether no call made anything executable. */
static bool never_x(void) {
  for (int i = 0; i < ncalls; i++)
    if (protects(&calls[i]) && (calls[i].prot & PROT_EXEC))
      return false;
  return true;
}

static bool overlaps(const call *c, const void *p, size_t n) {
  const char *a = c->addr, *b = p;
  return a < b + n && b < a + c->len;
}

/* LINK-14, LINK-15, PLAT-3 for a small image (pages.c): it is written
 * elsewhere, then its pages are mapped read-execute in one call, the last
 * and the only one that makes anything executable; no call maps or makes
 * any page of it writable, before or after. */
static void link_14_15_sequence(void) {
  rig_link_image *im = NULL;
  warm();
  CHECK(load("libm", &im) == RIG_LINK_OK);
  CHECK(never_wx());
  CHECK(ncalls >= 1);
  const call *last = &calls[ncalls - 1];
  for (int i = 0; i < ncalls - 1; i++)
    CHECK(!protects(&calls[i]) || !(calls[i].prot & PROT_EXEC));
  for (int i = 0; i < ncalls; i++)
    CHECK(!protects(&calls[i]) || !(calls[i].prot & PROT_WRITE) ||
          !overlaps(&calls[i], rig_link_code(im), rig_link_code_bytes(im)));
  CHECK(last->what == 'm' && last->prot == (PROT_READ | PROT_EXEC));
  CHECK(last->addr == rig_link_code(im) && last->len == rig_link_code_bytes(im));
  rig_link_free(im);
}

/* The same with a section aligned past a page: the image takes a mapping of
 * its own, larger and trimmed to an aligned base, still never executable
 * until written. */
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

/* Where the system refuses the image's mapping, the load is
 * RIG_LINK_NO_MEMORY, and its message counts all it asked for: the slack
 * to align a 64 KiB-aligned image too, not the image's pages alone. */
static void no_memory_counts_the_alignment(void) {
  rig_link_image *im = NULL;
  size_t n;
  unsigned char *b = kernel("rodata", &n);
  CHECK(b);
  char err[RIG_LINK_ERROR_BYTES] = "";
  refuse_mmap = 1;
  rig_link_status st = rig_link_load(b, n, NULL, &im, err, sizeof err);
  refuse_mmap = 0;
  free(b);
  printf("  %s\n", err);
  CHECK(st == RIG_LINK_NO_MEMORY && !im);
  char want[64];
  snprintf(want, sizeof want, "and %zu more to align it at 65536 bytes",
           65536 - (size_t)sysconf(_SC_PAGESIZE));
  CHECK_MSG(strstr(err, want), "%s", err);
}

/* An object whose one relocation overflows (LINK-9), found only while
 * relocating, after the image has its memory; text aligned at align. */
static unsigned char *far_object(uint64_t align, size_t *n) {
  eg_obj *o = eg_new(host_machine());
  unsigned text = eg_section(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, align,
                             host_code, host_code_bytes);
  unsigned u = eg_symbol(o, "far_data", GELF_ST_INFO(STB_GLOBAL, STT_NOTYPE), SHN_UNDEF, 0, 0);
  eg_reloc(o, text, host_code_patch, u, host_pc_type(), 0);
  return eg_build(o, n);
}

static rig_link_status load_far(uint64_t align) {
  size_t n;
  unsigned char *b = far_object(align, &n);
  lookup_table t = {.names = {"far_data"}, .addrs = {(void *)(uintptr_t)(UINT64_C(1) << 62)}};
  rig_link_options opt = {.lookup = table_lookup, .lookup_ctx = &t};
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  ncalls = 0;
  recording = 1;
  rig_link_status st = rig_link_load(b, n, &opt, &im, err, sizeof err);
  recording = 0;
  free(b);
  if (st != RIG_LINK_REFUSED || !strstr(err, "LINK-9") || im)
    printf("  %s\n", err);
  return st == RIG_LINK_REFUSED && strstr(err, "LINK-9") && !im ? RIG_LINK_REFUSED : RIG_LINK_OK;
}

/* A load refused after mapping (LINK-9 here, found while relocating)
 * unmaps all it mapped and never made anything executable: an image with a
 * mapping of its own (aligned past a page). */
static void link_9_refusal_unmaps(void) {
  CHECK(load_far(65536) == RIG_LINK_REFUSED);
  CHECK(ncalls >= 2 && calls[0].what == 'm');
  size_t unmapped = 0;
  for (int i = 1; i < ncalls; i++) {
    CHECK(calls[i].what == 'u' && overlaps(&calls[0], calls[i].addr, calls[i].len));
    CHECK((char *)calls[i].addr >= (char *)calls[0].addr &&
          (char *)calls[i].addr + calls[i].len <= (char *)calls[0].addr + calls[0].len);
    unmapped += calls[i].len;
  }
  CHECK(unmapped == calls[0].len);
  CHECK(never_wx());
}

/* The same for a small image, whose pages are pages.c's: they go back
 * without ever having been executable. */
static void link_9_refusal_pooled(void) {
  warm();
  CHECK(load_far(16) == RIG_LINK_REFUSED);
  CHECK(never_wx());
  CHECK(never_x());
}

#define MANY 100

/* LINK-15, PLAT-3 with reuse: while image a runs, a hundred images come and
 * go on freed pages; no call makes a page of a writable, or any page
 * writable and executable at once, and a still runs. */
static void link_15_reuse_keeps_live(void) {
  rig_link_image *a = NULL, *im[MANY];
  CHECK(load("add", &a) == RIG_LINK_OK);
  const void *code = rig_link_code(a);
  size_t bytes = rig_link_code_bytes(a);
  ncalls = 0;
  recording = 1;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < MANY; i++)
      im[i] = load_kernel("many", NULL);
    for (int i = 0; i < MANY; i++) {
      CHECK(im[i]);
      rig_link_free(im[i]);
    }
  }
  recording = 0;
  CHECK(ncalls < MAX_CALLS);
  CHECK(never_wx());
  for (int i = 0; i < ncalls; i++)
    CHECK(calls[i].what == 'a' || !(calls[i].prot & PROT_WRITE) ||
          !overlaps(&calls[i], code, bytes));
  CHECK(add_runs(a));
  rig_link_free(a);
}

/* A freed image's memory returns to the system, in batches: of a hundred
 * images freed, all but at most RIG__LINK_PENDING_BYTES of their code has
 * been unmapped (its address reserved again, PROT_NONE) and as much freed
 * from the pool's files (FALLOC_FL_PUNCH_HOLE). */
static void release_returns_memory(void) {
  rig_link_image *im[MANY];
  const char *code[MANY];
  size_t bytes[MANY];
  for (int i = 0; i < MANY; i++) {
    im[i] = load_kernel("many", NULL);
    CHECK(im[i]);
    code[i] = rig_link_code(im[i]);
    bytes[i] = rig_link_code_bytes(im[i]);
  }
  ncalls = 0;
  recording = 1;
  for (int i = 0; i < MANY; i++)
    rig_link_free(im[i]);
  recording = 0;
  size_t kept = 0, all = 0, punched = 0;
  for (int i = 0; i < MANY; i++) {
    size_t given = 0;
    for (int k = 0; k < ncalls; k++)
      if (calls[k].what == 'm' && calls[k].prot == PROT_NONE && (char *)calls[k].addr <= code[i] &&
          (char *)calls[k].addr + calls[k].len >= code[i] + bytes[i])
        given = bytes[i];
    kept += bytes[i] - given;
    all += bytes[i];
  }
  for (int k = 0; k < ncalls; k++)
    if (calls[k].what == 'f' && calls[k].prot == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
      punched += calls[k].len;
  CHECK_MSG(kept <= RIG__LINK_PENDING_BYTES, "%zu bytes of code not given back", kept);
  CHECK_MSG(punched + RIG__LINK_PENDING_BYTES >= all, "%zu of %zu bytes freed", punched, all);
}

/* Pages of freed images are written over: what the new image does not
 * write, its padding and its SHT_NOBITS sections, reads as zero, as in a
 * new mapping. */
static void pooled_pages_zeroed(void) {
  rig_link_image *im[MANY];
  for (int i = 0; i < MANY; i++) {
    im[i] = NULL;
    CHECK(load("many", &im[i]) == RIG_LINK_OK);
  }
  for (int i = 0; i < MANY; i++)
    rig_link_free(im[i]);
  /* Code, then an executable SHT_NOBITS section: zeros a function can read. */
  for (int i = 0; i < MANY; i++) {
    eg_obj *o = eg_new(host_machine());
    unsigned text = eg_section(o, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 16,
                               host_code, host_code_bytes);
    unsigned z = eg_section(o, ".zeros", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 4096, NULL, 8192);
    eg_symbol(o, "f", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), (uint16_t)text, 0, host_code_bytes);
    eg_symbol(o, "zeros", GELF_ST_INFO(STB_GLOBAL, STT_FUNC), (uint16_t)z, 0, 8192);
    size_t n;
    unsigned char *b = eg_build(o, &n);
    char err[RIG_LINK_ERROR_BYTES];
    rig_link_image *e = NULL;
    CHECK_MSG(rig_link_load(b, n, NULL, &e, err, sizeof err) == RIG_LINK_OK, "%s", err);
    free(b);
    const unsigned char *zeros = rig_link_resolve(e, "zeros"), *c = rig_link_code(e);
    CHECK(zeros);
    for (size_t k = 0; k < 8192; k++)
      CHECK(zeros[k] == 0);
    for (size_t k = host_code_bytes; c + k < zeros; k++) /* the padding */
      CHECK(c[k] == 0);
    rig_link_free(e);
  }
}

/* A forked child runs an image its parent frees: the parent's loads that
 * follow never write the pages the child maps (pages.c retires the shared
 * chunks at a fork), so the child's code is still its own. */
static void fork_child_keeps_its_code(void) {
  rig_link_image *a = load_kernel("add", NULL), *im[MANY];
  int go[2];
  CHECK(a && pipe(go) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char c;
    bool ok = read(go[0], &c, 1) == 1 && add_runs(a);
    _exit(ok ? 0 : 1);
  }
  CHECK(pid > 0);
  rig_link_free(a);
  for (int round = 0; round < 2; round++) { /* past a flush: the freed pages go back */
    for (int i = 0; i < MANY; i++)
      CHECK((im[i] = load_kernel("many", NULL)));
    for (int i = 0; i < MANY; i++)
      rig_link_free(im[i]);
  }
  CHECK(write(go[1], "g", 1) == 1);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's add: status %#x", status);
  close(go[0]);
  close(go[1]);
}

int main(int argc, char **argv) {
  static const check_test tests[] = {
      TEST(link_14_15_sequence),
      TEST(link_13_15_aligned),
      TEST(no_memory_counts_the_alignment),
      TEST(link_9_refusal_unmaps),
      TEST(link_9_refusal_pooled),
      TEST(link_15_reuse_keeps_live),
      TEST(release_returns_memory),
      TEST(pooled_pages_zeroed),
      TEST(fork_child_keeps_its_code),
  };
  return check_main(tests, sizeof tests / sizeof tests[0], argc, argv);
}
