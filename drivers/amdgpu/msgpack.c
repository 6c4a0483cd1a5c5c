/* SPDX-License-Identifier: MIT */
/* msgpack.c: MessagePack (the format the AMDGPU metadata note is written
 * in, code object v3 and later), read as the format's specification lays
 * it out: one type byte, then a fixed or counted length. Only what a
 * reader of the note needs: items in order, and skipping a whole one. */
#include <string.h>

#include "msgpack.h"

static bool take(mp_reader *r, size_t n, const uint8_t **out) {
  if ((size_t)(r->end - r->p) < n)
    return false;
  *out = r->p;
  r->p += n;
  return true;
}

static bool be(mp_reader *r, size_t n, uint64_t *v) {
  const uint8_t *b;
  if (!take(r, n, &b))
    return false;
  *v = 0;
  for (size_t i = 0; i < n; i++)
    *v = *v << 8 | b[i];
  return true;
}

/* A string, binary or extension of n bytes (ext: a type byte first). */
static bool bytes(mp_reader *r, mp_item *it, int type, uint64_t n) {
  const uint8_t *b;
  if (type == MP_EXT && !take(r, 1, &b))
    return false;
  if (!take(r, (size_t)n, &b))
    return false;
  it->type = type;
  it->s = (const char *)b;
  it->n = (uint32_t)n;
  return true;
}

static bool sized(mp_reader *r, mp_item *it, int type, size_t width) {
  uint64_t n;
  if (!be(r, width, &n))
    return false;
  if (type == MP_ARRAY || type == MP_MAP) {
    it->type = type;
    it->n = (uint32_t)n;
    return true;
  }
  return bytes(r, it, type, n);
}

static bool number(mp_reader *r, mp_item *it, int type, size_t width) {
  uint64_t v;
  if (!be(r, width, &v))
    return false;
  if (type == MP_INT) /* sign-extend */
    v = width == 8 ? v : (uint64_t)((int64_t)(v << (64 - 8 * width)) >> (64 - 8 * width));
  it->type = type;
  it->u = v;
  return true;
}

/* The types whose head is more than one byte (0xc0..0xdf). */
static bool long_head(mp_reader *r, mp_item *it, uint8_t t) {
  static const uint8_t fixext[] = {1, 2, 4, 8, 16};
  switch (t) {
  case 0xc0:
    it->type = MP_NIL;
    return true;
  case 0xc2:
  case 0xc3:
    it->type = MP_BOOL;
    it->u = t == 0xc3;
    return true;
  case 0xc4:
  case 0xc5:
  case 0xc6:
    return sized(r, it, MP_BIN, (size_t)1 << (t - 0xc4));
  case 0xc7:
  case 0xc8:
  case 0xc9:
    return sized(r, it, MP_EXT, (size_t)1 << (t - 0xc7));
  case 0xca:
    return number(r, it, MP_FLOAT, 4);
  case 0xcb:
    return number(r, it, MP_FLOAT, 8);
  case 0xcc:
  case 0xcd:
  case 0xce:
  case 0xcf:
    return number(r, it, MP_UINT, (size_t)1 << (t - 0xcc));
  case 0xd0:
  case 0xd1:
  case 0xd2:
  case 0xd3:
    return number(r, it, MP_INT, (size_t)1 << (t - 0xd0));
  case 0xd4:
  case 0xd5:
  case 0xd6:
  case 0xd7:
  case 0xd8:
    return bytes(r, it, MP_EXT, fixext[t - 0xd4]);
  case 0xd9:
  case 0xda:
  case 0xdb:
    return sized(r, it, MP_STR, (size_t)1 << (t - 0xd9));
  case 0xdc:
  case 0xdd:
    return sized(r, it, MP_ARRAY, t == 0xdc ? 2 : 4);
  case 0xde:
  case 0xdf:
    return sized(r, it, MP_MAP, t == 0xde ? 2 : 4);
  default:
    return false; /* 0xc1: never used */
  }
}

bool mp_next(mp_reader *r, mp_item *it) {
  const uint8_t *b;
  if (!take(r, 1, &b))
    return false;
  uint8_t t = *b;
  memset(it, 0, sizeof *it);
  if (t <= 0x7f) {
    it->type = MP_UINT;
    it->u = t;
  } else if (t <= 0x8f) {
    it->type = MP_MAP;
    it->n = t & 0x0f;
  } else if (t <= 0x9f) {
    it->type = MP_ARRAY;
    it->n = t & 0x0f;
  } else if (t <= 0xbf) {
    return bytes(r, it, MP_STR, t & 0x1f);
  } else if (t >= 0xe0) {
    it->type = MP_INT;
    it->u = (uint64_t)(int64_t)(int8_t)t;
  } else {
    return long_head(r, it, t);
  }
  return true;
}

bool mp_skip(mp_reader *r) {
  mp_item it;
  if (!mp_next(r, &it))
    return false;
  if (it.type != MP_ARRAY && it.type != MP_MAP)
    return true;
  if (++r->depth > 32)
    return false;
  uint64_t items = it.type == MP_MAP ? 2ull * it.n : it.n;
  /* each element is at least one byte: a count past the bytes left is bad */
  if (items > (uint64_t)(r->end - r->p))
    return false;
  for (uint64_t i = 0; i < items; i++)
    if (!mp_skip(r))
      return false;
  r->depth--;
  return true;
}

bool mp_is(const mp_item *it, const char *s) {
  size_t n = strlen(s);
  return it->type == MP_STR && it->n == n && memcmp(it->s, s, n) == 0;
}

bool mp_uint(const mp_item *it, uint64_t *out) {
  if (it->type == MP_UINT || (it->type == MP_INT && (int64_t)it->u >= 0)) {
    *out = it->u;
    return true;
  }
  return false;
}
