/* SPDX-License-Identifier: MIT */
/* msgpack.h: the small MessagePack reader the code object's metadata note
 * needs (msgpack.c). It reads in place, allocates nothing, and checks every
 * length against the bytes it has: a bad note is an error, never a read
 * past its end. */
#ifndef RIG_AMDGPU_MSGPACK_H
#define RIG_AMDGPU_MSGPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mp_type {
  MP_NIL,
  MP_BOOL,
  MP_UINT,
  MP_INT,
  MP_FLOAT,
  MP_STR,
  MP_BIN,
  MP_ARRAY,
  MP_MAP,
  MP_EXT
};

/* One item: a scalar's value, a string's bytes (not NUL-terminated), or
 * an array's or map's count (a map's count is of pairs). */
typedef struct mp_item {
  int type;
  uint64_t u; /* MP_UINT, MP_BOOL; MP_INT's value as int64_t */
  const char *s; /* MP_STR, MP_BIN, MP_EXT */
  uint32_t n; /* bytes of s, or the count */
} mp_item;

typedef struct mp_reader {
  const uint8_t *p, *end;
  int depth; /* nesting while skipping, bounded */
} mp_reader;

/* Reads the next item's head into it (an array's or map's elements follow
 * in r). false at the end or on bytes that are not MessagePack. */
bool mp_next(mp_reader *r, mp_item *it);
/* Skips one whole item, nested arrays and maps included (at most 32
 * deep). false where the bytes end first or are not MessagePack. */
bool mp_skip(mp_reader *r);
/* Whether it is the string s. */
bool mp_is(const mp_item *it, const char *s);
/* The item's value as an unsigned number (MP_UINT, or a non-negative
 * MP_INT): true with *out set, else false. */
bool mp_uint(const mp_item *it, uint64_t *out);

#endif
