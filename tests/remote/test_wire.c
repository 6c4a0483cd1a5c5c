/* test_wire.c: the remote protocol's parsers (wire/wire.c) and
 * its proofs (key.c, nettle's HMAC-SHA256): RFC 4231's vectors, a round trip
 * of every request, and a million random and mutated messages, each of
 * which must be refused with a reason or decoded within its bytes (run
 * under ASan, a read past a message is an error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "key.h"
#include "wire.h"

static void hex(const uint8_t *d, char *out) {
  for (int i = 0; i < 32; i++)
    sprintf(out + 2 * i, "%02x", d[i]);
}

/* rig_key_mac is HMAC-SHA256 over label || a || b: RFC 4231's vectors,
 * each message split over the three parts. */
static void test_hmac_vectors(void **state) {
  (void)state;
  uint8_t d[32];
  char h[65];
  uint8_t key[20];
  memset(key, 0x0b, sizeof key); /* test case 1 */
  rig_key_mac(key, sizeof key, "Hi ", (const uint8_t *)"The", 3, (const uint8_t *)"re", 2, d);
  hex(d, h);
  assert_string_equal(h, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  uint8_t big[131]; /* test case 6: a key longer than a block */
  memset(big, 0xaa, sizeof big);
  const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  rig_key_mac(big, sizeof big, "Test Using ", (const uint8_t *)m6 + 11, 20,
              (const uint8_t *)m6 + 31, strlen(m6) - 31, d);
  hex(d, h);
  assert_string_equal(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  uint8_t other[32];
  memcpy(other, d, 32);
  assert_true(rig_key_equal(d, other));
  other[31] ^= 1;
  assert_false(rig_key_equal(d, other));
}

/* Every request encodes and decodes to itself. */
static void test_round_trip(void **state) {
  (void)state;
  uint8_t body[256];
  char why[200];
  rig_wire_msg in = {.type = RIG_WIRE_FILL, .buf = 7, .offset = 1ull << 40, .bytes = 12,
                     .pattern = 0xdeadbeef, .pattern_bytes = 4}, out;
  size_t n = rig_wire_request_put(&in, body);
  assert_true(rig_wire_request_get(RIG_WIRE_FILL, body, n, &out, why, sizeof why));
  assert_int_equal(out.buf, 7);
  assert_int_equal(out.offset, 1ull << 40);
  assert_int_equal(out.pattern, 0xdeadbeef);
  assert_int_equal(out.pattern_bytes, 4);
  rig_wire_msg copy = {.type = RIG_WIRE_COPY, .buf = 1, .offset = 2, .dst = 3, .dst_offset = 4,
                       .bytes = 5};
  n = rig_wire_request_put(&copy, body);
  assert_true(rig_wire_request_get(RIG_WIRE_COPY, body, n, &out, why, sizeof why));
  assert_int_equal(out.dst, 3);
  assert_int_equal(out.dst_offset, 4);
  rig_wire_msg alloc = {.type = RIG_WIRE_ALLOC, .dev = 9, .bytes = 100};
  n = rig_wire_request_put(&alloc, body);
  assert_true(rig_wire_request_get(RIG_WIRE_ALLOC, body, n, &out, why, sizeof why));
  assert_int_equal(out.dev, 9);
  assert_int_equal(out.bytes, 100);
  assert_false(rig_wire_request_get(RIG_WIRE_ALLOC, body, n - 1, &out, why, sizeof why));
  assert_non_null(strstr(why, "too short"));
  rig_wire_header h = {RIG_WIRE_MAGIC, RIG_WIRE_VERSION, RIG_WIRE_PUT, 3, 0, 99}, g;
  uint8_t head[RIG_WIRE_HEADER];
  rig_wire_header_put(head, &h);
  assert_true(rig_wire_header_get(head, &g, why, sizeof why));
  assert_int_equal(g.length, 99);
  head[0] ^= 1;
  assert_false(rig_wire_header_get(head, &g, why, sizeof why));
  assert_non_null(strstr(why, "not a rig message"));
}

/* PUSH (50): the fixed fields round-trip; the peer address and key are
 * checked: a body that names no address, one over 63 bytes, one with a
 * NUL, or no key is refused with a reason. */
static void test_push(void **state) {
  (void)state;
  uint8_t body[256];
  char why[200];
  rig_wire_msg in = {.type = RIG_WIRE_PUSH, .buf = 2, .offset = 3, .dst = 1ull << 44,
                     .dst_offset = 5, .bytes = 6}, out;
  size_t n = rig_wire_request_put(&in, body);
  const char peer[] = "127.0.0.1:13370";
  body[n] = sizeof peer - 1;
  memcpy(body + n + 1, peer, sizeof peer - 1);
  size_t key_at = n + 1 + sizeof peer - 1;
  memset(body + key_at, 0xab, 20);
  assert_true(rig_wire_request_get(RIG_WIRE_PUSH, body, key_at + 20, &out, why, sizeof why));
  assert_int_equal(out.dst, 1ull << 44);
  assert_int_equal(out.bytes, 6);
  assert_int_equal(out.data[0], sizeof peer - 1);
  assert_int_equal(out.data_n, 1 + sizeof peer - 1 + 20);
  assert_false(rig_wire_request_get(RIG_WIRE_PUSH, body, key_at, &out, why, sizeof why));
  assert_non_null(strstr(why, "PUSH"));
  body[n] = 0;
  assert_false(rig_wire_request_get(RIG_WIRE_PUSH, body, key_at + 20, &out, why, sizeof why));
  body[n] = 64;
  assert_false(rig_wire_request_get(RIG_WIRE_PUSH, body, n + 1 + 64 + 20, &out, why, sizeof why));
  body[n] = sizeof peer - 1;
  body[n + 3] = 0;
  assert_false(rig_wire_request_get(RIG_WIRE_PUSH, body, key_at + 20, &out, why, sizeof why));
  assert_non_null(strstr(why, "NUL"));
}

/* Random headers and bodies, and valid ones with bytes flipped: each is
 * refused with a reason or decoded into fields that lie in its body. */
static void test_random_messages(void **state) {
  (void)state;
  char why[200];
  srand(12345);
  for (int i = 0; i < 1000000; i++) {
    size_t n = (size_t)rand() % 300;
    uint8_t *body = malloc(n ? n : 1); /* exactly n bytes, for ASan */
    for (size_t k = 0; k < n; k++)
      body[k] = (uint8_t)rand();
    if (i % 2 && n >= RIG_WIRE_HEADER) { /* a valid header, mutated */
      rig_wire_header h = {RIG_WIRE_MAGIC, RIG_WIRE_VERSION, (uint16_t)(1 + rand() % 11), 1, 0,
                           (uint64_t)rand() % 64};
      rig_wire_header_put(body, &h);
      body[rand() % RIG_WIRE_HEADER] ^= (uint8_t)(1u << (rand() % 8));
    }
    rig_wire_header h;
    why[0] = 0;
    if (n >= RIG_WIRE_HEADER && !rig_wire_header_get(body, &h, why, sizeof why))
      assert_true(why[0] != 0);
    rig_wire_msg m;
    uint16_t type = (uint16_t)(rand() % (RIG_WIRE_TYPES + 1)); /* every type, the gaps, one past */
    why[0] = 0;
    if (rig_wire_request_get(type, body, n, &m, why, sizeof why))
      assert_true(m.data_n <= n && (m.data_n == 0 || (m.data >= body && m.data + m.data_n <= body + n)));
    else
      assert_true(why[0] != 0);
    free(body);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hmac_vectors),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_random_messages),
      cmocka_unit_test(test_push),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
