/* test_lazy.c: a program that never opens another machine never loads UCX
 * (drivers/remote/shim.c): listing every device, which loads every plugin
 * on the path, the remote one included, maps no UCX library; the first
 * open of another machine's host loads it, and that machine works. This
 * test links no UCX itself (its server is a rig serve process). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "server.h"

/* Whether a library whose file name holds name is mapped in this process. */
static bool mapped(const char *name) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  bool found = false;
  assert_non_null(f);
  while (!found && fgets(line, sizeof line, f))
    found = strstr(line, name) != NULL;
  fclose(f);
  return found;
}

static void test_ucx_at_first_machine(void **state) {
  (void)state;
  rig_device_entry entries[64];
  size_t n = 0;
  ok(rig_device_list(entries, 64, &n));
  assert_true(mapped("librig-driver-remote.so")); /* the plugin loaded, */
  assert_false(mapped("libucp.so")); /* and UCX did not */
  assert_false(mapped("libucs.so"));
  assert_false(mapped("librig-remote-ucx.so"));
  test_server s;
  const char *key = test_key_file("the lazy test's shared secret");
  test_server_start(&s, key);
  rig_device *h = test_remote_host("m-lazy", &s, key, 0);
  assert_true(mapped("libucp.so"));
  rig_buffer *b = create_ok(h, 4096);
  ok(rig_buffer_fill(b, 0x5a, 1));
  unsigned char back[4096];
  ok(rig_buffer_get(b, 0, back, sizeof back));
  for (size_t i = 0; i < sizeof back; i++)
    assert_int_equal(back[i], 0x5a);
  rig_buffer_release(b);
  close_release(h);
  test_server_stop(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ucx_at_first_machine)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
