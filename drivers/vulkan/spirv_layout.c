/* SPDX-License-Identifier: MIT */
/* spirv_layout.c: what a SPIR-V module asks of its pipeline
 * (spirv_layout.h): bindings, push constants, specialization constants,
 * built-ins, shared memory. Every walk steps as spirv_reader.c's does and
 * every look-up is bounded, so corrupt words give an answer, not a fault. */
#include <stdio.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#include "spirv_layout.h"

#define HEADER_WORDS 5u
#define MAX_DEPTH 16 /* nesting of types and constant expressions it follows */
#define MAX_STEPS                                                                                  \
  4096 /* look-ups of one evaluation: a module of types that
                          branch at every level takes no longer than this */

static uint32_t op_of(uint32_t first) {
  return first & SpvOpCodeMask;
}
static uint32_t count_of(uint32_t first) {
  return first >> SpvWordCountShift;
}

static size_t next(const uint32_t *w, size_t n, size_t i) {
  uint32_t c = count_of(w[i]);
  return c == 0 || c > n - i ? n : i + c;
}

/* Where an instruction keeps its result id: word 1 for types, word 2 for
 * constants and variables, 0 for what rig does not look up. */
static uint32_t result_word(uint32_t op) {
  if (op >= SpvOpTypeVoid && op < SpvOpTypeForwardPointer) /* a forward pointer defines none */
    return 1;
  if ((op >= SpvOpConstantTrue && op <= SpvOpSpecConstantOp) || op == SpvOpVariable)
    return 2;
  return op == SpvOpTypeAccelerationStructureKHR ? 1 : 0;
}

/* The instruction that defines id, and its word count, or NULL. */
static const uint32_t *def(const uint32_t *w, size_t n, uint32_t id, uint32_t *count) {
  for (size_t i = HEADER_WORDS; i < n; i = next(w, n, i)) {
    uint32_t c = count_of(w[i]), r = result_word(op_of(w[i]));
    if (r && c > r && c <= n - i && w[i + r] == id) {
      *count = c;
      return w + i;
    }
  }
  return NULL;
}

/* Whether id carries decoration dec (of member m, or the id's own where m
 * is UINT32_MAX); its first literal in *val where it has one. */
static bool decorated(const uint32_t *w, size_t n, uint32_t id, uint32_t m, uint32_t dec,
                      uint32_t *val) {
  uint32_t op = m == UINT32_MAX ? SpvOpDecorate : SpvOpMemberDecorate;
  uint32_t at = m == UINT32_MAX ? 2 : 3; /* the decoration's word */
  for (size_t i = HEADER_WORDS; i < n; i = next(w, n, i)) {
    uint32_t c = count_of(w[i]);
    if (op_of(w[i]) != op || c <= at || c > n - i || w[i + 1] != id || w[i + at] != dec ||
        (m != UINT32_MAX && w[i + 2] != m))
      continue;
    if (val)
      *val = c > at + 1 ? w[i + at + 1] : 0;
    return true;
  }
  return false;
}

/* id's OpName, or "" (a name the words end inside of reads as ""). */
static const char *name_of(const uint32_t *w, size_t n, uint32_t id) {
  for (size_t i = HEADER_WORDS; i < n; i = next(w, n, i)) {
    uint32_t c = count_of(w[i]);
    if (op_of(w[i]) == SpvOpName && c >= 3 && c <= n - i && w[i + 1] == id) {
      const char *s = (const char *)(w + i + 2);
      return strnlen(s, (c - 2) * 4) < (c - 2) * 4 ? s : "";
    }
  }
  return "";
}

typedef struct eval_ctx {
  const uint32_t *w;
  size_t n;
  const rvk_spirv_value *vals;
  uint32_t nvals;
  uint32_t bad; /* the id it could not evaluate */
  uint32_t steps; /* look-ups so far */
} eval_ctx;

static bool eval(eval_ctx *e, uint32_t id, uint64_t *out, int depth);

static bool spec_value(eval_ctx *e, uint32_t id, uint64_t def_value, uint64_t *out) {
  uint32_t sid;
  *out = def_value;
  if (decorated(e->w, e->n, id, UINT32_MAX, SpvDecorationSpecId, &sid))
    for (uint32_t k = 0; k < e->nvals; k++)
      if (e->vals[k].spec_id == sid)
        *out = e->vals[k].value;
  return true;
}

/* OpSpecConstantOp's CompositeExtract: of a composite constant, one index. */
static bool fold_extract(eval_ctx *e, const uint32_t *x, uint32_t c, uint64_t *out, int depth) {
  uint32_t cc;
  const uint32_t *y = c >= 6 ? def(e->w, e->n, x[4], &cc) : NULL;
  if (!y || (op_of(y[0]) != SpvOpConstantComposite && op_of(y[0]) != SpvOpSpecConstantComposite) ||
      x[5] + 3 >= cc)
    return false;
  return eval(e, y[3 + x[5]], out, depth + 1);
}

/* OpSpecConstantOp's integer operations, as a driver folds them. */
static bool fold(eval_ctx *e, const uint32_t *x, uint32_t c, uint64_t *out, int depth) {
  uint32_t op = x[3];
  uint64_t a = 0, b = 0;
  if (op == SpvOpCompositeExtract)
    return fold_extract(e, x, c, out, depth);
  if (c < 5 || !eval(e, x[4], &a, depth + 1) || (c >= 6 && !eval(e, x[5], &b, depth + 1)))
    return false;
  switch (op) {
  case SpvOpIAdd:
    *out = a + b;
    return true;
  case SpvOpISub:
    *out = a - b;
    return true;
  case SpvOpIMul:
    *out = a * b;
    return true;
  case SpvOpUDiv:
  case SpvOpSDiv:
    if (!b)
      return false;
    *out = a / b;
    return true;
  case SpvOpUMod:
  case SpvOpSMod:
  case SpvOpSRem:
    if (!b)
      return false;
    *out = a % b;
    return true;
  case SpvOpShiftLeftLogical:
    *out = b < 64 ? a << b : 0;
    return true;
  case SpvOpShiftRightLogical:
  case SpvOpShiftRightArithmetic:
    *out = b < 64 ? a >> b : 0;
    return true;
  case SpvOpBitwiseAnd:
    *out = a & b;
    return true;
  case SpvOpBitwiseOr:
    *out = a | b;
    return true;
  case SpvOpBitwiseXor:
    *out = a ^ b;
    return true;
  case SpvOpUConvert:
  case SpvOpSConvert:
    *out = a;
    return true;
  default:
    return false;
  }
}

/* An integer constant's value: a constant, a specialization constant (set
 * in vals or its default) or an operation on them. */
static bool eval(eval_ctx *e, uint32_t id, uint64_t *out, int depth) {
  uint32_t c;
  const uint32_t *x = depth < MAX_DEPTH && ++e->steps < MAX_STEPS ? def(e->w, e->n, id, &c) : NULL;
  bool ok = false;
  if (x && (op_of(x[0]) == SpvOpConstant || op_of(x[0]) == SpvOpSpecConstant) && c >= 4) {
    uint64_t v = x[3] | (c >= 5 ? (uint64_t)x[4] << 32 : 0);
    ok = op_of(x[0]) == SpvOpConstant ? (*out = v, true) : spec_value(e, id, v, out);
  } else if (x && op_of(x[0]) == SpvOpSpecConstantOp && c >= 5)
    ok = fold(e, x, c, out, depth);
  if (!ok && !e->bad)
    e->bad = id;
  return ok;
}

/* The bytes of type id: in an explicit layout (a push-constant block, by
 * its Offset and ArrayStride decorations) or packed (shared memory). */
static bool type_bytes(eval_ctx *e, uint32_t id, bool expl, uint64_t *out, int depth) {
  uint32_t c;
  const uint32_t *x = depth < MAX_DEPTH && ++e->steps < MAX_STEPS ? def(e->w, e->n, id, &c) : NULL;
  uint64_t len = 0, elem = 0, stride;
  if (!x)
    return false;
  switch (op_of(x[0])) {
  case SpvOpTypeBool:
    *out = 4;
    return true;
  case SpvOpTypeInt:
  case SpvOpTypeFloat:
    *out = c >= 3 ? x[2] / 8 : 0;
    return c >= 3;
  case SpvOpTypePointer:
    *out = 8;
    return true; /* a buffer reference */
  case SpvOpTypeVector:
  case SpvOpTypeMatrix:
    if (c < 4 || !type_bytes(e, x[2], expl, &elem, depth + 1))
      return false;
    *out = elem * x[3];
    return true;
  case SpvOpTypeArray:
    if (c < 4 || !eval(e, x[3], &len, depth + 1) || !type_bytes(e, x[2], expl, &elem, depth + 1))
      return false;
    uint32_t s32;
    stride =
        expl && decorated(e->w, e->n, id, UINT32_MAX, SpvDecorationArrayStride, &s32) ? s32 : elem;
    *out = len * stride;
    return true;
  case SpvOpTypeStruct: {
    uint64_t end = 0;
    for (uint32_t m = 0; m + 2 < c; m++) {
      uint32_t off = 0;
      if (!type_bytes(e, x[2 + m], expl, &elem, depth + 1))
        return false;
      if (expl && !decorated(e->w, e->n, id, m, SpvDecorationOffset, &off))
        return false;
      uint64_t at = expl ? off : end;
      end = at + elem > end ? at + elem : end;
    }
    *out = end;
    return true;
  }
  default:
    return false;
  }
}

/* " 'name'" for a message, or "" where the module names nothing. */
static const char *quoted(const char *name, char *buf, size_t n) {
  if (*name)
    snprintf(buf, n, " '%.60s'", name);
  else if (n)
    buf[0] = 0;
  return buf;
}

#define FAIL(...) (snprintf(why, whyn, __VA_ARGS__), -1)

/* What kind of descriptor a UniformConstant variable's type t is. */
static const char *opaque_kind(const uint32_t *w, size_t n, uint32_t t) {
  uint32_t c;
  const uint32_t *x = def(w, n, t, &c);
  uint32_t op = x ? op_of(x[0]) : 0;
  if (op == SpvOpTypeImage)
    return c >= 8 && x[3] == SpvDimBuffer ? "a texel buffer"
           : c >= 8 && x[7] == 2          ? "a storage image"
                                          : "a sampled image";
  return op == SpvOpTypeSampler                    ? "a sampler"
         : op == SpvOpTypeSampledImage             ? "a combined image sampler"
         : op == SpvOpTypeAccelerationStructureKHR ? "an acceleration structure"
                                                   : "a descriptor of a kind rig does not bind";
}

/* Adds the buffer variable x (an OpVariable of count c) to out, or says
 * why rig cannot bind it. */
static int add_binding(const uint32_t *w, size_t n, const uint32_t *x, rvk_spirv_layout *out,
                       char *why, size_t whyn) {
  uint32_t var = x[2], sc = x[3], set = 0, binding = 0, pc, tc;
  const uint32_t *p = def(w, n, x[1], &pc);
  const uint32_t *t = p && pc >= 4 ? def(w, n, p[3], &tc) : NULL;
  char q[72];
  const char *named = name_of(w, n, var); /* a block without an instance: its type's name */
  const char *name = quoted(*named || !t ? named : name_of(w, n, p[3]), q, sizeof q);
  if (!decorated(w, n, var, UINT32_MAX, SpvDecorationDescriptorSet, &set) ||
      !decorated(w, n, var, UINT32_MAX, SpvDecorationBinding, &binding))
    return FAIL("the resource%s has no set and binding", name);
  if (!t)
    return FAIL("the resource%s (binding %u) has a type rig does not read", name, binding);
  if (op_of(t[0]) == SpvOpTypeArray || op_of(t[0]) == SpvOpTypeRuntimeArray)
    return FAIL("binding %u of set %u%s is an array of descriptors; rig binds one buffer a "
                "binding",
                binding, set, name);
  if (sc == SpvStorageClassUniformConstant)
    return FAIL("binding %u of set %u%s is %s; rig binds storage and uniform buffers only", binding,
                set, name, opaque_kind(w, n, p[3]));
  if (set != 0)
    return FAIL("binding %u of set %u%s: rig binds descriptor set 0 only", binding, set, name);
  uint32_t kind = sc == SpvStorageClassStorageBuffer ||
                          decorated(w, n, p[3], UINT32_MAX, SpvDecorationBufferBlock, NULL)
                      ? RVK_BIND_STORAGE
                      : RVK_BIND_UNIFORM;
  uint32_t at = 0;
  while (at < out->nbind && out->bind[at].binding < binding)
    at++;
  if (at < out->nbind && out->bind[at].binding == binding) { /* aliased, as ggml's are */
    if (out->bind[at].kind != kind)
      return FAIL("binding %u%s is both a storage and a uniform buffer", binding, name);
    return 0;
  }
  if (out->nbind == RVK_SPIRV_MAX_BINDINGS)
    return FAIL("binding %u%s: more than %u bindings", binding, name, RVK_SPIRV_MAX_BINDINGS);
  memmove(out->bind + at + 1, out->bind + at, (out->nbind - at) * sizeof *out->bind);
  out->bind[at] = (rvk_spirv_binding){set, binding, kind, var};
  out->nbind++;
  return 0;
}

/* A specialization constant x (count c) with its SpecId, into out. */
static int add_spec(const uint32_t *w, size_t n, const uint32_t *x, uint32_t c,
                    rvk_spirv_layout *out, char *why, size_t whyn) {
  uint32_t sid, tc;
  if (!decorated(w, n, x[2], UINT32_MAX, SpvDecorationSpecId, &sid))
    return 0; /* no SpecId: nothing can set it */
  for (uint32_t k = 0; k < out->nspec; k++)
    if (out->spec[k].spec_id == sid)
      return 0; /* glslang's second constant of a SpecId (local_size_x_id's) */
  char q[72];
  if (out->nspec == RVK_SPIRV_MAX_SPECS)
    return FAIL("specialization constant %u%s: more than %u", sid,
                quoted(name_of(w, n, x[2]), q, sizeof q), RVK_SPIRV_MAX_SPECS);
  const uint32_t *t = def(w, n, x[1], &tc);
  rvk_spirv_spec *s = &out->spec[out->nspec++];
  *s = (rvk_spirv_spec){.spec_id = sid, .id = x[2], .kind = 'b', .width = 32};
  if (op_of(x[0]) == SpvOpSpecConstant) {
    s->def = x[3] | (c >= 5 ? (uint64_t)x[4] << 32 : 0);
    s->kind = t && op_of(t[0]) == SpvOpTypeFloat ? 'f' : t && tc >= 4 && t[3] ? 'i' : 'u';
    s->width = t && tc >= 3 ? t[2] : 32;
  } else
    s->def = op_of(x[0]) == SpvOpSpecConstantTrue;
  return 0;
}

/* The push-constant block x's bytes into out. */
static int add_push(const uint32_t *w, size_t n, const uint32_t *x, rvk_spirv_layout *out,
                    char *why, size_t whyn) {
  uint32_t pc;
  const uint32_t *p = def(w, n, x[1], &pc);
  eval_ctx e = {w, n, NULL, 0, 0, 0};
  uint64_t bytes;
  char q[72];
  if (!p || pc < 4 || !type_bytes(&e, p[3], true, &bytes, 0) || bytes > UINT32_MAX)
    return FAIL("the push-constant block%s has a layout rig does not read",
                quoted(name_of(w, n, x[2]), q, sizeof q));
  out->push_bytes = (uint32_t)bytes;
  return 0;
}

static int read_instruction(const uint32_t *w, size_t n, const uint32_t *x, uint32_t c,
                            rvk_spirv_layout *out, char *why, size_t whyn) {
  uint32_t op = op_of(x[0]);
  if (op == SpvOpDecorate && c >= 4 && x[2] == SpvDecorationBuiltIn &&
      x[3] == SpvBuiltInNumWorkgroups)
    out->num_groups = true;
  if ((op == SpvOpSpecConstant && c >= 4) || op == SpvOpSpecConstantTrue ||
      op == SpvOpSpecConstantFalse)
    return c >= 3 ? add_spec(w, n, x, c, out, why, whyn) : 0;
  if (op != SpvOpVariable || c < 4)
    return 0;
  switch (x[3]) {
  case SpvStorageClassStorageBuffer:
  case SpvStorageClassUniform:
  case SpvStorageClassUniformConstant:
    return add_binding(w, n, x, out, why, whyn);
  case SpvStorageClassPushConstant:
    return add_push(w, n, x, out, why, whyn);
  default:
    return 0;
  }
}

int rvk_spirv_read_layout(const uint32_t *w, size_t n, rvk_spirv_layout *out, char *why,
                          size_t whyn) {
  memset(out, 0, sizeof *out);
  for (size_t i = HEADER_WORDS; i < n; i = next(w, n, i)) {
    uint32_t c = count_of(w[i]);
    if (c == 0 || c > n - i)
      break;
    if (read_instruction(w, n, w + i, c, out, why, whyn))
      return -1;
  }
  char ignored[8];
  out->shared_fixed =
      rvk_spirv_shared(w, n, NULL, 0, &out->shared_bytes, ignored, sizeof ignored) == 0;
  /* A size that depends on a specialization constant is evaluated per
   * pipeline: only a size of constants alone is fixed. */
  if (out->shared_fixed)
    for (uint32_t k = 0; k < out->nspec && out->shared_fixed; k++) {
      rvk_spirv_value probe = {out->spec[k].spec_id, out->spec[k].def + 1};
      uint64_t other;
      out->shared_fixed = rvk_spirv_shared(w, n, &probe, 1, &other, ignored, sizeof ignored) == 0 &&
                          other == out->shared_bytes;
    }
  return 0;
}

int rvk_spirv_shared(const uint32_t *w, size_t n, const rvk_spirv_value *vals, uint32_t nvals,
                     uint64_t *out, char *why, size_t whyn) {
  eval_ctx e = {w, n, vals, nvals, 0, 0};
  uint64_t total = 0;
  for (size_t i = HEADER_WORDS; i < n; i = next(w, n, i)) {
    uint32_t c = count_of(w[i]), pc;
    const uint32_t *x = w + i;
    if (c > n - i || op_of(x[0]) != SpvOpVariable || c < 4 || x[3] != SpvStorageClassWorkgroup)
      continue;
    const uint32_t *p = def(w, n, x[1], &pc);
    uint64_t bytes;
    if (!p || pc < 4 || !type_bytes(&e, p[3], false, &bytes, 0)) {
      snprintf(why, whyn,
               "the shared variable '%s' is sized by an expression rig does not "
               "evaluate (id %u)",
               name_of(w, n, x[2]), e.bad);
      return -1;
    }
    total += bytes;
  }
  *out = total;
  return 0;
}
