/* SPDX-License-Identifier: MIT */
/* args.c: the one parser of drivers' arguments, "HEAD[,key=value]..."
 * (edge.h, rig_edge_args_parse). Strict, so that a typo is an error and
 * not a silent default: k=abc is no k=1, validate=yes no validate=0. */
#include <stdio.h>
#include <string.h>

#include <rig/edge.h>

RIG_EDGE_API bool rig_edge_args_number(const char *s, size_t n, uint64_t min, uint64_t max,
                                       uint64_t *out) {
  uint64_t v = 0;
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
      return false;
  }
  if (v < min || v > max)
    return false;
  *out = v;
  return true;
}

/* Whether s[0..n) is one of words ("0|1|count"); *index: which. */
static bool is_word(const char *s, size_t n, const char *words, uint64_t *index) {
  uint64_t i = 0;
  for (const char *w = words; w; i++) {
    const char *bar = strchr(w, '|');
    size_t len = bar ? (size_t)(bar - w) : strlen(w);
    if (len == n && memcmp(w, s, n) == 0) {
      *index = i;
      return true;
    }
    w = bar ? bar + 1 : NULL;
  }
  return false;
}

/* The key of keys named s[0..n), or nkeys. */
static size_t key_of(const rig_edge_arg *keys, size_t nkeys, const char *s, size_t n) {
  for (size_t i = 0; i < nkeys; i++)
    if (strlen(keys[i].key) == n && memcmp(keys[i].key, s, n) == 0)
      return i;
  return nkeys;
}

/* An unknown key's message: the key and the keys there are. */
static int unknown(const char *driver, const char *s, size_t n, const rig_edge_arg *keys,
                   size_t nkeys, rig_edge_error *err) {
  char known[160] = "";
  size_t at = 0;
  for (size_t i = 0; i < nkeys && at < sizeof known; i++) {
    int w = snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "", keys[i].key);
    at += w > 0 ? (size_t)w : 0;
  }
  return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: unknown key '%.*s' (%s%s)", driver,
                       (int)(n > 40 ? 40 : n), s, nkeys ? "keys: " : "it takes none", known);
}

/* The value s[0..n) of key k, into *out, or an error naming the key. */
static int value_of(const char *driver, const rig_edge_arg *k, const char *s, size_t n,
                    uint64_t *out, rig_edge_error *err) {
  int shown = (int)(n > 40 ? 40 : n);
  if (n == 0)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: empty value", driver, k->key);
  switch (k->type) {
  case RIG_EDGE_ARG_NUMBER: {
    uint64_t any;
    if (!rig_edge_args_number(s, n, 0, UINT64_MAX, &any))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED,
                           "%s: %s: '%.*s' is not a decimal number (digits only)", driver, k->key,
                           shown, s);
    if (!rig_edge_args_number(s, n, k->min, k->max, out))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: %.*s is out of range [%llu, %llu]",
                           driver, k->key, shown, s, (unsigned long long)k->min,
                           (unsigned long long)k->max);
    return RIG_EDGE_OK;
  }
  case RIG_EDGE_ARG_BOOL:
    if (!is_word(s, n, "0|1", out))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: '%.*s' is not 0 or 1", driver,
                           k->key, shown, s);
    return RIG_EDGE_OK;
  case RIG_EDGE_ARG_WORD:
    if (!k->words || !is_word(s, n, k->words, out))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: '%.*s' is not one of %s", driver,
                           k->key, shown, s, k->words ? k->words : "(none)");
    return RIG_EDGE_OK;
  }
  return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: a key of unknown type %u", driver,
                       k->key, k->type);
}

RIG_EDGE_API int rig_edge_args_parse(const char *driver, const char *args, rig_edge_arg *keys,
                                     size_t nkeys, size_t *out_head_len, rig_edge_error *err) {
  uint64_t values[RIG_EDGE_ARGS_MAX];
  uint64_t given = 0; /* bit i: keys[i] was given */
  if (!driver)
    driver = "driver";
  if (!args || (nkeys && !keys) || nkeys > RIG_EDGE_ARGS_MAX)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s", driver,
                         !args ? "no arguments" : "more keys than rig_edge_args_parse takes");
  const char *comma = strchr(args, ',');
  size_t head = comma ? (size_t)(comma - args) : strlen(args);
  for (const char *p = comma; p; p = strchr(p + 1, ',')) {
    const char *e = p + 1, *next = strchr(e, ',');
    size_t n = next ? (size_t)(next - e) : strlen(e);
    const char *eq = memchr(e, '=', n);
    if (n == 0)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: an empty argument after ','", driver);
    if (!eq)
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: '%.*s' is not key=value", driver,
                           (int)(n > 40 ? 40 : n), e);
    size_t klen = (size_t)(eq - e);
    size_t i = key_of(keys, nkeys, e, klen);
    if (i == nkeys)
      return unknown(driver, e, klen, keys, nkeys, err);
    if (given & (UINT64_C(1) << i))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: %s: given twice", driver, keys[i].key);
    int r = value_of(driver, &keys[i], eq + 1, n - klen - 1, &values[i], err);
    if (r != RIG_EDGE_OK)
      return r;
    given |= UINT64_C(1) << i;
  }
  /* Only once every entry is good: a refusal changes no key. */
  for (size_t i = 0; i < nkeys; i++) {
    keys[i].given = given & (UINT64_C(1) << i);
    if (keys[i].given)
      keys[i].value = values[i];
  }
  if (out_head_len)
    *out_head_len = head;
  return RIG_EDGE_OK;
}
