/* SPDX-License-Identifier: MIT */
/* metadata.c: the code object's metadata note (NT_AMDGPU_METADATA, in
 * MessagePack since code object v3): a map whose "amdhsa.target" names the
 * target and whose "amdhsa.kernels" is an array of one map per kernel. Of
 * each kernel the driver needs what the descriptor does not say: the
 * argument layout (.args: .offset, .size, .value_kind), the kernel
 * argument segment's alignment and the wavefront size; and it checks what
 * both say (.kernarg_segment_size, .private_segment_fixed_size). Keys it
 * does not use are skipped whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeobj.h"
#include "msgpack.h"

#define BAD(...) co_fail(why, m, __VA_ARGS__)

static bool number(mp_reader *r, uint64_t max, uint64_t *out) {
  mp_item it;
  return mp_next(r, &it) && mp_uint(&it, out) && *out <= max;
}

static bool string(mp_reader *r, char *out, size_t cap) {
  mp_item it;
  if (!mp_next(r, &it) || it.type != MP_STR || it.n >= cap || memchr(it.s, 0, it.n))
    return false;
  memcpy(out, it.s, it.n);
  out[it.n] = 0;
  return true;
}

static int one_arg(mp_reader *r, co_arg *a, char *why, size_t m) {
  mp_item it;
  uint64_t v;
  if (!mp_next(r, &it) || it.type != MP_MAP)
    return BAD("metadata: an argument is not a map");
  for (uint32_t i = 0; i < it.n; i++) {
    mp_item key;
    if (!mp_next(r, &key) || key.type != MP_STR)
      return BAD("metadata: an argument's key is not a string");
    bool ok = true;
    if (mp_is(&key, ".offset"))
      ok = number(r, UINT32_MAX, &v) && ((a->offset = (uint32_t)v), true);
    else if (mp_is(&key, ".size"))
      ok = number(r, UINT32_MAX, &v) && ((a->size = (uint32_t)v), true);
    else if (mp_is(&key, ".value_kind"))
      ok = string(r, a->kind, sizeof a->kind);
    else
      ok = mp_skip(r);
    if (!ok)
      return BAD("metadata: an argument's %.*s is bad", (int)key.n, key.s);
  }
  return 0;
}

static int args(mp_reader *r, co_kernel *k, char *why, size_t m) {
  mp_item it;
  if (!mp_next(r, &it) || it.type != MP_ARRAY || it.n > CO_ARGS_MAX)
    return BAD("metadata: .args is not an array of at most %u", CO_ARGS_MAX);
  free(k->args);
  k->args = calloc(it.n ? it.n : 1, sizeof *k->args);
  if (!k->args)
    return BAD("out of memory");
  k->nargs = it.n;
  for (uint32_t i = 0; i < it.n; i++)
    if (one_arg(r, &k->args[i], why, m) != 0)
      return -1;
  return 0;
}

/* What one kernel's map says, before it is matched to a descriptor. */
typedef struct said {
  char symbol[140];
  uint64_t kernarg, align, private_bytes, wavefront;
  co_kernel scratch; /* the args, moved into the kernel matched */
} said;

static int kernel_key(mp_reader *r, const mp_item *key, said *s, char *why, size_t m) {
  bool ok = true;
  if (mp_is(key, ".symbol"))
    ok = string(r, s->symbol, sizeof s->symbol);
  else if (mp_is(key, ".kernarg_segment_size"))
    ok = number(r, UINT32_MAX, &s->kernarg);
  else if (mp_is(key, ".kernarg_segment_align"))
    ok = number(r, 4096, &s->align);
  else if (mp_is(key, ".private_segment_fixed_size"))
    ok = number(r, UINT32_MAX, &s->private_bytes);
  else if (mp_is(key, ".wavefront_size"))
    ok = number(r, 64, &s->wavefront);
  else if (mp_is(key, ".args"))
    return args(r, &s->scratch, why, m);
  else
    ok = mp_skip(r);
  return ok ? 0 : BAD("metadata: a kernel's %.*s is bad", (int)key->n, key->s);
}

static int match(codeobj *c, said *s, char *why, size_t m) {
  size_t len = strlen(s->symbol);
  co_kernel *k = NULL;
  for (uint32_t i = 0; i < c->nkernels && len > 3; i++)
    if (strlen(c->kernels[i].name) == len - 3 &&
        memcmp(c->kernels[i].name, s->symbol, len - 3) == 0)
      k = &c->kernels[i];
  if (!k || strcmp(s->symbol + len - 3, ".kd") != 0)
    return BAD("metadata: kernel symbol '%s' has no descriptor", s->symbol);
  if (s->kernarg != k->kernarg_bytes)
    return BAD("kernel %s: the metadata's %llu argument bytes are not its descriptor's %u", k->name,
               (unsigned long long)s->kernarg, k->kernarg_bytes);
  if (s->wavefront != 32 && s->wavefront != 64)
    return BAD("kernel %s: wavefront size %llu (not 32 or 64)", k->name,
               (unsigned long long)s->wavefront);
  if (s->private_bytes > k->private_bytes)
    k->private_bytes = (uint32_t)s->private_bytes;
  k->kernarg_align = (uint32_t)(s->align ? s->align : 8);
  k->wavefront = (uint32_t)s->wavefront;
  for (uint32_t i = 0; i < s->scratch.nargs; i++) {
    const co_arg *a = &s->scratch.args[i];
    if (a->offset > k->kernarg_bytes || a->size > k->kernarg_bytes - a->offset)
      return BAD("kernel %s: argument %u lies past its %u argument bytes", k->name, i,
                 k->kernarg_bytes);
  }
  free(k->args);
  k->args = s->scratch.args;
  k->nargs = s->scratch.nargs;
  s->scratch.args = NULL;
  return 0;
}

static int kernel(mp_reader *r, codeobj *c, char *why, size_t m) {
  mp_item it;
  said s = {0};
  int rc = 0;
  if (!mp_next(r, &it) || it.type != MP_MAP)
    return BAD("metadata: a kernel is not a map");
  for (uint32_t i = 0; i < it.n && rc == 0; i++) {
    mp_item key;
    if (!mp_next(r, &key) || key.type != MP_STR)
      rc = BAD("metadata: a kernel's key is not a string");
    else
      rc = kernel_key(r, &key, &s, why, m);
  }
  if (rc == 0)
    rc = match(c, &s, why, m);
  free(s.scratch.args);
  return rc;
}

static int kernels(mp_reader *r, codeobj *c, char *why, size_t m) {
  mp_item it;
  if (!mp_next(r, &it) || it.type != MP_ARRAY)
    return BAD("metadata: amdhsa.kernels is not an array");
  if (it.n != c->nkernels)
    return BAD("metadata: %u kernels, but %u descriptors", it.n, c->nkernels);
  for (uint32_t i = 0; i < it.n; i++)
    if (kernel(r, c, why, m) != 0)
      return -1;
  return 0;
}

/* "amdgcn-amd-amdhsa--gfx1030" with ":xnack-" and the like after it. */
static int target(mp_reader *r, const codeobj *c, char *why, size_t m) {
  char t[96], want[64];
  if (!string(r, t, sizeof t))
    return BAD("metadata: amdhsa.target is not a string");
  size_t n = (size_t)snprintf(want, sizeof want, "amdgcn-amd-amdhsa--%s", c->target);
  if (strncmp(t, want, n) != 0 || (t[n] != 0 && t[n] != ':'))
    return BAD("metadata: target %s is not the ELF header's %s", t, c->target);
  return 0;
}

int codeobj_metadata(codeobj *c, const void *note, size_t n, char *why, size_t m) {
  mp_reader r = {.p = note, .end = (const uint8_t *)note + n};
  mp_item root;
  bool seen_kernels = false;
  if (!mp_next(&r, &root) || root.type != MP_MAP)
    return BAD("metadata: not a MessagePack map");
  for (uint32_t i = 0; i < root.n; i++) {
    mp_item key;
    int rc = 0;
    if (!mp_next(&r, &key) || key.type != MP_STR)
      return BAD("metadata: a key is not a string");
    if (mp_is(&key, "amdhsa.kernels")) {
      rc = kernels(&r, c, why, m);
      seen_kernels = true;
    } else if (mp_is(&key, "amdhsa.target")) {
      rc = target(&r, c, why, m);
    } else if (!mp_skip(&r)) {
      rc = BAD("metadata: %.*s is bad", (int)key.n, key.s);
    }
    if (rc != 0)
      return rc;
  }
  for (uint32_t i = 0; i < c->nkernels; i++)
    if (c->kernels[i].wavefront == 0)
      return BAD("metadata: kernel %s is not described", c->kernels[i].name);
  return seen_kernels ? 0 : BAD("metadata: no amdhsa.kernels");
}
