/* SPDX-License-Identifier: MIT */
/* spirv_reader.c: the Vulkan driver's reader of SPIR-V modules
 * (spirv_reader.h): load's checks and resolve's entry points. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#include "spirv_reader.h"

#define HEADER_WORDS 5u

static uint32_t opcode(uint32_t first) { return first & SpvOpCodeMask; }
static uint32_t word_count(uint32_t first) { return first >> SpvWordCountShift; }

/* The word after instruction i, or n where i has no words or runs past
 * the end: every walk stops there, so corrupt words are never overread. */
static size_t step(const uint32_t *w, size_t n, size_t i) {
  uint32_t count = word_count(w[i]);
  return count == 0 || count > n - i ? n : i + count;
}

static rvk_spirv_status fail_at(rvk_spirv_fault *fault, rvk_spirv_status s, size_t word) {
  if (fault)
    fault->word = word;
  return s;
}

static rvk_spirv_status check_header(const uint32_t *w, size_t n) {
  if (n < HEADER_WORDS)
    return RVK_SPIRV_SHORT;
  if (w[0] == SpvMagicNumber)
    return RVK_SPIRV_OK;
  return w[0] == __builtin_bswap32(SpvMagicNumber) ? RVK_SPIRV_BYTE_ORDER : RVK_SPIRV_MAGIC;
}

rvk_spirv_status rvk_spirv_check(const uint32_t *w, size_t n, rvk_spirv_refuse_fn refuse,
                                 const void *ctx, rvk_spirv_fault *fault) {
  rvk_spirv_status s = check_header(w, n);
  if (s != RVK_SPIRV_OK)
    return fail_at(fault, s, 0);
  bool model = false, entries = false;
  for (size_t i = HEADER_WORDS; i < n; i += word_count(w[i])) {
    uint32_t count = word_count(w[i]), op = opcode(w[i]);
    if (count == 0 || count > n - i)
      return fail_at(fault, RVK_SPIRV_OVERRUN, i);
    const char *f = op == SpvOpCapability && count >= 2 && refuse ? refuse(ctx, w[i + 1]) : NULL;
    if (f) {
      if (fault) {
        fault->capability = w[i + 1];
        fault->feature = f;
      }
      return fail_at(fault, RVK_SPIRV_REFUSED, i);
    }
    model |= op == SpvOpMemoryModel;
    entries |= op == SpvOpEntryPoint;
  }
  if (!model)
    return fail_at(fault, RVK_SPIRV_NO_MEMORY_MODEL, n);
  return entries ? RVK_SPIRV_OK : fail_at(fault, RVK_SPIRV_NO_ENTRY_POINT, n);
}

const char *rvk_spirv_why(rvk_spirv_status s, const rvk_spirv_fault *fault, char *why,
                          size_t whyn) {
  static const char *const text[] = {
      [RVK_SPIRV_OK] = "a SPIR-V module",
      [RVK_SPIRV_SHORT] = "not a SPIR-V module (shorter than its header)",
      [RVK_SPIRV_BYTE_ORDER] = "not a SPIR-V module (words of the other byte order)",
      [RVK_SPIRV_MAGIC] = "not a SPIR-V module (magic is not 0x07230203)",
      [RVK_SPIRV_NO_MEMORY_MODEL] = "malformed SPIR-V: no OpMemoryModel",
      [RVK_SPIRV_NO_ENTRY_POINT] = "malformed SPIR-V: no OpEntryPoint",
  };
  if (s == RVK_SPIRV_OVERRUN)
    snprintf(why, whyn, "malformed SPIR-V: instruction at word %zu runs past the module",
             fault ? fault->word : 0);
  else if (s == RVK_SPIRV_REFUSED)
    snprintf(why, whyn, "the module needs capability %u (%s)", fault ? fault->capability : 0,
             fault && fault->feature ? fault->feature : "refused");
  else
    snprintf(why, whyn, "%s", (unsigned)s < sizeof text / sizeof *text && text[s] ? text[s]
                                                                              : "not SPIR-V");
  return why;
}

/* The instruction that defines id (a constant or a composite), or NULL. */
static const uint32_t *definition(const uint32_t *w, size_t n, uint32_t id) {
  for (size_t i = HEADER_WORDS; i < n; i = step(w, n, i)) {
    uint32_t count = word_count(w[i]), op = opcode(w[i]);
    if ((op == SpvOpConstant || op == SpvOpSpecConstant || op == SpvOpConstantComposite ||
         op == SpvOpSpecConstantComposite) && count >= 4 && count <= n - i && w[i + 2] == id)
      return w + i;
  }
  return NULL;
}

/* The SpecId that decorates id, or UINT32_MAX. */
static uint32_t spec_id_of(const uint32_t *w, size_t n, uint32_t id) {
  for (size_t i = HEADER_WORDS; i < n; i = step(w, n, i))
    if (opcode(w[i]) == SpvOpDecorate && word_count(w[i]) >= 4 && word_count(w[i]) <= n - i &&
        w[i + 1] == id && w[i + 2] == SpvDecorationSpecId)
      return w[i + 3];
  return UINT32_MAX;
}

/* Axis a of g from the 32-bit constant id: a specialization constant with
 * a SpecId, or a fixed value. */
static bool axis_from(const uint32_t *w, size_t n, uint32_t id, rvk_spirv_group *g, int a) {
  const uint32_t *x = definition(w, n, id);
  if (!x || (opcode(x[0]) != SpvOpConstant && opcode(x[0]) != SpvOpSpecConstant))
    return false;
  uint32_t spec = opcode(x[0]) == SpvOpSpecConstant ? spec_id_of(w, n, id) : UINT32_MAX;
  g->spec[a] = spec;
  g->fixed[a] = spec == UINT32_MAX ? x[3] : 0;
  return true;
}

/* What resolve reads of a module for one entry point. */
typedef struct entry_scan {
  uint32_t entry, wgs;      /* the entry's id, the WorkgroupSize built-in's */
  uint32_t ids[3], literal[3];
  bool has_ids, has_literal;
} entry_scan;

/* The id of the GLCompute entry point name, and of the WorkgroupSize
 * built-in (each UINT32_MAX where none). */
static void find_entry(const uint32_t *w, size_t n, const char *name, entry_scan *s) {
  for (size_t i = HEADER_WORDS; i < n; i = step(w, n, i)) {
    uint32_t count = word_count(w[i]), op = opcode(w[i]);
    const uint32_t *x = w + i;
    if (count > n - i)
      break;
    if (op == SpvOpEntryPoint && count >= 4 && x[1] == SpvExecutionModelGLCompute) {
      const char *str = (const char *)(x + 3);
      size_t room = (count - 3) * 4;
      if (strnlen(str, room) < room && strcmp(str, name) == 0)
        s->entry = x[2];
    } else if (op == SpvOpDecorate && count >= 4 && x[2] == SpvDecorationBuiltIn &&
               x[3] == SpvBuiltInWorkgroupSize)
      s->wgs = x[1];
  }
}

/* The entry's LocalSize and LocalSizeId execution modes, where it has them. */
static void find_modes(const uint32_t *w, size_t n, entry_scan *s) {
  for (size_t i = HEADER_WORDS; i < n; i = step(w, n, i)) {
    uint32_t count = word_count(w[i]), op = opcode(w[i]);
    const uint32_t *x = w + i;
    if (count < 6 || count > n - i || x[1] != s->entry)
      continue;
    if (op == SpvOpExecutionMode && x[2] == SpvExecutionModeLocalSize) {
      memcpy(s->literal, x + 3, sizeof s->literal);
      s->has_literal = true;
    } else if (op == SpvOpExecutionModeId && x[2] == SpvExecutionModeLocalSizeId) {
      memcpy(s->ids, x + 3, sizeof s->ids);
      s->has_ids = true;
    }
  }
}

/* glslang's local_size_x_id = 0 makes the WorkgroupSize built-in a
 * composite of specialization constants: its parts override the modes. */
static void find_builtin(const uint32_t *w, size_t n, entry_scan *s) {
  const uint32_t *c = s->wgs != UINT32_MAX ? definition(w, n, s->wgs) : NULL;
  if (c && word_count(c[0]) >= 6 &&
      (opcode(c[0]) == SpvOpConstantComposite || opcode(c[0]) == SpvOpSpecConstantComposite)) {
    memcpy(s->ids, c + 3, sizeof s->ids);
    s->has_ids = true;
  }
}

int rvk_spirv_entry(const uint32_t *w, size_t n, const char *name, rvk_spirv_group *g) {
  entry_scan s = {.entry = UINT32_MAX, .wgs = UINT32_MAX};
  find_entry(w, n, name, &s);
  if (s.entry == UINT32_MAX)
    return 0; /* None */
  find_modes(w, n, &s);
  find_builtin(w, n, &s);
  if (s.has_ids) {
    for (int a = 0; a < 3; a++)
      if (!axis_from(w, n, s.ids[a], g, a))
        return -1;
    return 1;
  }
  if (!s.has_literal)
    return -1;
  for (int a = 0; a < 3; a++) {
    g->fixed[a] = s.literal[a];
    g->spec[a] = UINT32_MAX;
  }
  return 1;
}
