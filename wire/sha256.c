/* sha256.c: SHA-256 (FIPS 180-4 §6.2) and HMAC-SHA256 (RFC 2104). */
#include "sha256.h"

#include <string.h>

typedef struct sha {
  uint32_t h[8];
  uint64_t total;
  uint8_t block[64];
  size_t used;
} sha;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* One 64-byte block into the state (§6.2.2). */
static void compress(uint32_t h[8], const uint8_t *p) {
  uint32_t w[64], v[8];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  memcpy(v, h, sizeof v);
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = v[7] + (rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25)) +
                  ((v[4] & v[5]) ^ (~v[4] & v[6])) + K[i] + w[i];
    uint32_t t2 = (rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22)) +
                  ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
    memmove(v + 1, v, 7 * sizeof v[0]);
    v[4] += t1;
    v[0] = t1 + t2;
  }
  for (int i = 0; i < 8; i++)
    h[i] += v[i];
}

static void start(sha *s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, iv, sizeof iv);
  s->total = 0;
  s->used = 0;
}

static void add(sha *s, const void *data, size_t n) {
  const uint8_t *p = data;
  s->total += n;
  while (n > 0) {
    size_t take = 64 - s->used < n ? 64 - s->used : n;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    n -= take;
    if (s->used == 64) {
      compress(s->h, s->block);
      s->used = 0;
    }
  }
}

/* Pads with 0x80, zeros and the bit length (§5.1.1), and writes the digest. */
static void finish(sha *s, uint8_t out[RIG_SHA256_BYTES]) {
  uint64_t bits = s->total * 8;
  uint8_t pad = 0x80, zero = 0, len[8];
  add(s, &pad, 1);
  while (s->used != 56)
    add(s, &zero, 1);
  for (int i = 0; i < 8; i++)
    len[i] = (uint8_t)(bits >> (56 - 8 * i));
  add(s, len, 8);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

void rig_remote_sha256(const void *data, size_t n, uint8_t out[RIG_SHA256_BYTES]) {
  sha s;
  start(&s);
  add(&s, data, n);
  finish(&s, out);
}

void rig_remote_hmac(const void *key, size_t key_n, const void *msg, size_t msg_n,
                     uint8_t out[RIG_SHA256_BYTES]) {
  uint8_t k[64] = {0}, ipad[64], opad[64], inner[RIG_SHA256_BYTES];
  if (key_n > 64)
    rig_remote_sha256(key, key_n, k);
  else
    memcpy(k, key, key_n);
  for (int i = 0; i < 64; i++) {
    ipad[i] = k[i] ^ 0x36;
    opad[i] = k[i] ^ 0x5c;
  }
  sha s;
  start(&s);
  add(&s, ipad, 64);
  add(&s, msg, msg_n);
  finish(&s, inner);
  start(&s);
  add(&s, opad, 64);
  add(&s, inner, sizeof inner);
  finish(&s, out);
}

int rig_remote_equal(const uint8_t *a, const uint8_t *b, size_t n) {
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < n; i++)
    diff |= a[i] ^ b[i];
  return diff == 0;
}
