/* test_words.c: the words part (Submission.words) on the device under
 * test. Words are a driver's own queue entries, as they are, so only a
 * driver whose queue takes raw words has a meaning for them: there a words
 * part runs, with the order the other parts get (test_order.c checks it
 * across queues); every other driver refuses it at make, with
 * RIG_INVALID and a message that names the device and its driver. Part of
 * the conformance suite (RIG_CONF_DEVICE). */
#include <string.h>

#include "common.h"
#include "../driver/testdev.h"
#if __has_include(<rig/drivers/rig-vulkan.h>)
#include <rig/drivers/rig-vulkan.h>
#endif

static const uint32_t test_words[3] = {0xc0de0001u, 2, 3};
static const uint32_t *words = test_words;

/* A Vulkan device takes rig-vulkan.h's packets: its words are one that
 * does nothing, of the same three words. */
static bool takes_vulkan_packets(rig_device *d) {
#ifdef RIG_VULKAN_H
  static const uint32_t nop[3] = {RIG_VULKAN_PACKET(RIG_VULKAN_NOP, 3), 2, 3};
  if (rig_device_capability(d, RIG_VULKAN_DEVICE)) {
    words = nop;
    return true;
  }
#endif
  (void)d;
  return false;
}

#ifdef RIG_VULKAN_H
/* The part's packets run, in their place among the parts: after a fill of
 * the whole buffer a fill packet and an update packet write its first 40
 * bytes; a later fill of a view writes bytes 32..63. */
static void vulkan_packets_run_in_order(rig_device *d) {
  rig_buffer *b, *tail;
  conf_ok(rig_buffer_create(d, 64, &b));
  conf_ok(rig_buffer_view(b, 32, 32, RIG_READ_WRITE, &tail));
  rig_part fill = rig_part_fill(0, 0, 1);
  rig_submission *probe;
  conf_ok(rig_submission_make(d, &fill, 1, &probe));
  uint64_t a;
  conf_ok(rig_submission_address(probe, b, &a));
  rig_submission_release(probe);
  const uint32_t lo = (uint32_t)a, hi = (uint32_t)(a >> 32);
  const uint32_t packets[6 + 5] = {
      RIG_VULKAN_PACKET(RIG_VULKAN_FILL, 6),   lo, hi, 40,          0,          0x77777777u,
      RIG_VULKAN_PACKET(RIG_VULKAN_UPDATE, 5), lo, hi, 0x04030201u, 0x08070605u};
  rig_part parts[3] = {rig_part_fill(0, 0x11, 1), rig_part_words(packets, 11),
                       rig_part_fill(1, 0x5a, 1)};
  rig_submission *s;
  conf_ok(rig_submission_make(d, parts, 3, &s));
  rig_run *r;
  conf_ok(rig_submission_take(s, &r));
  rig_buffer *bufs[2] = {b, tail};
  rig_point p;
  conf_ok(rig_run_submit(r, bufs, 2, NULL, 0, &p));
  conf_ok(rig_point_wait(p));
  uint8_t got[64];
  conf_ok(rig_buffer_get(b, 0, got, sizeof got));
  for (int i = 0; i < 64; i++)
    assert_int_equal(got[i], i < 8 ? i + 1 : i < 32 ? 0x77 : 0x5a);
  rig_submission_release(s);
  /* a packet that names no buffer of the device: refused at the submit */
  const uint32_t stray[6] = {RIG_VULKAN_PACKET(RIG_VULKAN_FILL, 6), 64, 0, 4, 0, 0};
  rig_part bad = rig_part_words(stray, 6);
  conf_ok(rig_submission_make(d, &bad, 1, &s));
  conf_ok(rig_submission_take(s, &r));
  conf_status(rig_run_submit(r, bufs, 0, NULL, 0, &p), RIG_INVALID);
  assert_non_null(strstr(rig_error_last()->message, "in no buffer of this device"));
  rig_submission_release(s);
  rig_buffer_release(tail);
  rig_buffer_release(b);
}
#endif

/* Where the driver takes words: a submit of them runs them on its queue,
 * in order with a fill around them (the trace of the test device shows
 * the words as they were given). */
static void run_words(rig_device *d, rig_submission *s) {
  rig_buffer *b;
  conf_ok(rig_buffer_create(d, 64, &b));
  rig_run *r;
  conf_ok(rig_submission_take(s, &r));
  rig_point p;
  conf_ok(rig_run_submit(r, &b, 1, NULL, 0, &p));
  conf_ok(rig_point_wait(p));
  uint8_t got[64];
  conf_ok(rig_buffer_get(b, 0, got, sizeof got));
  for (int i = 0; i < 64; i++)
    assert_int_equal(got[i], 0x5a);
  const rig_test_trace *t = rig_device_capability(d, "test.trace");
  if (t) {
    rig_test_trace_entry e[8];
    size_t n = t->read(t->h, e, 8);
    bool seen = false;
    for (size_t i = 0; i < n; i++)
      seen = seen || (e[i].kind == RIG_EDGE_PART_WORDS && e[i].word0 == words[0]);
    assert_true(seen);
  }
  rig_buffer_release(b);
}

static void words_run_or_are_refused_by_name(void **state) {
  rig_device *d = conf_open();
  bool vulkan = takes_vulkan_packets(d);
  rig_part parts[3] = {rig_part_fill(0, 0x11, 1), rig_part_words(words, 3),
                       rig_part_fill(0, 0x5a, 1)};
  rig_part *p = conf_is_host() ? &parts[1] : parts; /* the host runs only launches */
  size_t n = conf_is_host() ? 1 : 3;
  rig_submission *s = NULL;
  rig_status st = rig_submission_make(d, p, n, &s);
  if (st == RIG_OK) {
    run_words(d, s);
    rig_submission_release(s);
    /* and the words' own checks: none, or too many, are refused */
    rig_part none = rig_part_words(words, 0), null = rig_part_words(NULL, 1);
    conf_status(rig_submission_make(d, &none, 1, &s), RIG_INVALID);
    conf_status(rig_submission_make(d, &null, 1, &s), RIG_INVALID);
#ifdef RIG_VULKAN_H
    if (vulkan)
      vulkan_packets_run_in_order(d);
#endif
  } else {
    conf_status(st, RIG_INVALID);
    assert_null(s);
    const char *m = rig_error_last()->message;
    print_message("%s: %s\n", conf_name(), m);
    assert_non_null(strstr(m, rig_device_name(d)));
    assert_non_null(strstr(m, "takes no words"));
    assert_non_null(strstr(m, "the driver \""));
  }
  (void)vulkan;
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(words_run_or_are_refused_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
