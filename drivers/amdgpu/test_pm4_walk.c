/* test_pm4_walk.c: test_pm4.c's framing walker and dispatch parts: the
 * walker on every kind of buffer the encoder makes and on broken ones, and
 * the dispatch inputs of the committed code objects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "test_check.h"
#include "dispatch.h"
#include "pm4.h"

static uint32_t mem[1 << 16];
static const char *const targets[] = {"gfx900", "gfx90a", "gfx1030", "gfx1100"};

static int walk(const pm4_buf *b, const pm4_target *t, char *why) {
  return pm4_walk(b->dw, b->n, t, why, 200);
}

/* A random sequence of every packet the encoder writes: the walker takes it. */
static void random_buffers(void) {
  unsigned seed = 7;
  char why[200];
  for (int round = 0; round < 1000; round++) {
    pm4_target t;
    pm4_target_of(targets[round % 4], &t);
    pm4_buf b = {.dw = mem, .cap = sizeof mem / sizeof mem[0]};
    for (int k = 0; k < 12; k++) {
      seed = seed * 1103515245u + 12345u;
      uint32_t r = seed >> 8;
      pm4_dispatch d = {.code = (uint64_t)r << 8,
                        .rsrc2 = (r % 17) << 1,
                        .threads = {1 + r % 1024, 1, 1},
                        .groups = {1 + r % 999, 1 + r % 3, 1},
                        .wave32 = r & 1};
      switch (r % 5) {
      case 0:
        pm4_dispatch_emit(&b, &t, &d);
        break;
      case 1:
        pm4_barrier(&b, &t, r & 2);
        break;
      case 2:
        pm4_copy(&b, &t, (uint64_t)r << 12, 0x1000, 1 + (uint64_t)r * 97 % (200u << 20));
        break;
      case 3:
        pm4_fill_any(&b, &t, ((uint64_t)r << 12) + r % 4, r, 1 + (uint64_t)r % (30u << 20), 64);
        break;
      default:
        pm4_release(&b, &t, (uint64_t)r << 3, r, r & 4);
        break;
      }
    }
    pm4_pad(&b);
    CHECK(!b.overflow && walk(&b, &t, why) == 0, "%s round %d: %s", targets[round % 4], round, why);
  }
}

/* One broken buffer: the walker says why, naming the dword. */
static void broken(const char *what, const uint32_t *dw, uint32_t n, const char *want) {
  pm4_target t;
  char why[200] = "";
  pm4_target_of("gfx1030", &t);
  int rc = pm4_walk(dw, n, &t, why, sizeof why);
  CHECK(rc != 0 && strstr(why, want), "%s: %s", what, rc ? why : "accepted");
}

int test_walker(void);
int test_walker(void) {
  static const uint32_t P = 0xffff1000u; /* one-dword NOP */
  random_buffers();
  uint32_t odd[] = {P, P, P};
  broken("7 dwords", odd, 3, "not a multiple of 8");
  uint32_t t2[] = {0x80000000u, P, P, P, P, P, P, P};
  broken("type-2", t2, 8, "not a type-3");
  uint32_t unknown[] = {PM4_HEADER(0x11, 0), 0, P, P, P, P, P, P};
  broken("opcode 0x11", unknown, 8, "opcode 0x11 is not one");
  uint32_t shortd[] = {PM4_HEADER(PM4_OP_DISPATCH_DIRECT, 2), 1, 1, 1, P, P, P, P};
  broken("short dispatch", shortd, 8, "3 body dwords, not 4");
  uint32_t reg[] = {PM4_HEADER(PM4_OP_SET_SH_REG, 1), 0x100, 7, P, P, P, P, P};
  broken("SET_SH_REG 0x2d00", reg, 8, "register 0x2d00");
  uint32_t big[] = {PM4_HEADER(PM4_OP_DMA_DATA, 5), 0, 0, 0, 0, 0, (1u << 26) - 1, P};
  broken("DMA past the limit", big, 8, "DMA_DATA of 67108863 bytes");
  uint32_t past[] = {P, P, P, P, P, PM4_HEADER(PM4_OP_RELEASE_MEM, 6), 0, 0};
  broken("past the end", past, 8, "runs past");
  uint32_t addr[] = {PM4_HEADER(PM4_OP_RELEASE_MEM, 6), 0, 0, 0x1004, 0, 0, 0, 0};
  broken("unaligned release", addr, 8, "not 8-aligned");
  uint32_t nogroup[] = {PM4_HEADER(PM4_OP_DISPATCH_DIRECT, 3), 0, 1, 1, 1, P, P, P};
  broken("no group", nogroup, 8, "of no group");
  return failures;
}

static void one_object(const char *dir, const char *file, const char *gfx, const char *kernel) {
  char path[512], why[256];
  size_t n;
  codeobj c;
  pm4_target t;
  snprintf(path, sizeof path, "%s/%s", dir, file);
  unsigned char *bytes = slurp(path, &n);
  pm4_target_of(gfx, &t);
  if (codeobj_read(bytes, n, gfx, &c, why, sizeof why) != 0) {
    CHECK(0, "%s: %s", file, why);
    free(bytes);
    return;
  }
  const co_kernel *k = codeobj_kernel(&c, kernel);
  CHECK(k && dispatch_check(k, &t, 0, why, sizeof why) == 0, "%s %s: %s", file, kernel, why);
  if (k) {
    launch l = {.groups = {4, 1, 1},
                .threads = {64, 1, 1},
                .code_base = 0x7f0000000000ull,
                .packet = 0x7f0000100000ull,
                .kernargs = 0x7f0000100040ull,
                .zeros = 0x7f0000200000ull};
    uint8_t packet[64], args[4096] = {0};
    uint64_t params[4] = {1, 2, 3, 4};
    dispatch_packet(packet, k, &l);
    CHECK(packet[4] == 64 && packet[12] == 0 && packet[13] == 1, "%s: packet sizes",
          file); /* 256 */
    uint64_t kd;
    memcpy(&kd, packet + 32, 8);
    CHECK(kd == l.code_base + k->kd, "%s: kernel object 0x%llx", file, (unsigned long long)kd);
    CHECK(dispatch_kernargs(args, k, params, k->kernarg_bytes < 32 ? k->kernarg_bytes : 32, &l, why,
                            sizeof why) == 0 &&
              (k->kernarg_bytes < 8 || args[0] == 1),
          "%s: %s", file, why);
    CHECK(dispatch_kernargs(args, k, params, k->kernarg_bytes + 1, &l, why, sizeof why) != 0 &&
              strstr(why, "given"),
          "%s: too many argument bytes taken", file);
    pm4_dispatch d;
    dispatch_registers(&d, k, &t, &l);
    uint32_t at = k->properties & KCP_PRIVATE_SEGMENT_BUFFER ? 4 : 0;
    if (k->properties & KCP_DISPATCH_PTR)
      CHECK(d.user[at] == 0x100000 && d.user[at + 1] == 0x7f00, "%s: dispatch ptr in SGPR %u", file,
            at);
    CHECK(d.code == l.code_base + k->entry && d.wave32 == (k->wavefront == 32), "%s: %u", file,
          k->wavefront);
    pm4_buf b = {.dw = mem, .cap = 4096};
    pm4_barrier(&b, &t, true);
    pm4_release(&b, &t, 0x1000, 0, true);
    pm4_dispatch_emit(&b, &t, &d);
    pm4_barrier(&b, &t, false);
    pm4_release(&b, &t, 0x1008, 0, true);
    pm4_release(&b, &t, 0x1010, 42, false);
    pm4_pad(&b);
    CHECK(pm4_walk(b.dw, b.n, &t, why, sizeof why) == 0, "%s: %s", file, why);
    printf("%s %s: properties 0x%x, %u user SGPRs, wave%u, %u argument bytes, IB %u dwords\n", file,
           kernel, k->properties, (k->rsrc2 >> 1) & 31, k->wavefront, k->kernarg_bytes, b.n);
  }
  codeobj_free(&c);
  free(bytes);
}

int test_dispatch(const char *dir);
int test_dispatch(const char *dir) {
  one_object(dir, "add-gfx900.co", "gfx900", "add");
  one_object(dir, "add-gfx90a.co", "gfx90a", "add");
  one_object(dir, "add-gfx1030.co", "gfx1030", "add");
  one_object(dir, "params-gfx1030.co", "gfx1030", "sum");
  one_object(dir, "empty-gfx90a.co", "gfx90a", "empty");
  one_object(dir, "add-gfx1100.co", "gfx1100", "add");
  /* wave32 code on GFX9 is refused */
  co_kernel k = {.name = "w32", .properties = KCP_WAVEFRONT_SIZE32};
  pm4_target t;
  char why[200] = "";
  pm4_target_of("gfx900", &t);
  CHECK(dispatch_check(&k, &t, 0, why, sizeof why) != 0 && strstr(why, "wave64 only"), "%s", why);
  k.properties = KCP_DISPATCH_PTR; /* 2 SGPRs, RSRC2 says 0 */
  CHECK(dispatch_check(&k, &t, 0, why, sizeof why) != 0 && strstr(why, "RSRC2 says 0"), "%s", why);
  return failures;
}
