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

static const uint32_t words[3] = {0xc0de0001u, 2, 3};

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
  } else {
    conf_status(st, RIG_INVALID);
    assert_null(s);
    const char *m = rig_error_last()->message;
    print_message("%s: %s\n", conf_name(), m);
    assert_non_null(strstr(m, rig_device_name(d)));
    assert_non_null(strstr(m, "takes no words"));
    assert_non_null(strstr(m, "the driver \""));
  }
  rig_device_release(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(words_run_or_are_refused_by_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
