/* server.h: `rig serve` processes for the remote tests, each a "machine"
 * on a loopback port of its own (docs/remote.md). */
#ifndef RIG_TEST_REMOTE_SERVER_H
#define RIG_TEST_REMOTE_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rig/rig.h>

typedef struct test_server {
  pid_t pid;
  char address[64]; /* "ADDR:PORT", as it said it listens */
  char log[256];    /* its stderr, a file */
} test_server;

/* Writes a key file of the given text; returns its path (static storage
 * per call: two calls, two files). */
const char *test_key_file(const char *text);
/* Starts `$RIG_EXE serve --listen 127.0.0.1:0 --key key` and waits up to
 * 20 s for the port it prints. Asserts it started. */
void test_server_start(test_server *s, const char *key);
/* The same, listening on listen ("10.77.1.2:0") inside the network
 * namespace netns (a name `ip netns add` gave; NULL: this process's), with
 * UCX_NET_DEVICES set to devices (NULL: as the test's environment has it). */
void test_server_start_in(test_server *s, const char *key, const char *netns,
                          const char *listen, const char *devices);
/* SIGTERM, then SIGKILL after 5 s; reaps it and removes its log.
 * Idempotent. A server also dies with the test process (PR_SET_PDEATHSIG). */
void test_server_stop(test_server *s);
/* SIGKILL now; reaps it and removes its log. */
void test_server_kill(test_server *s);
/* Sends sig (SIGSTOP, SIGCONT) to the server, if it runs. */
void test_server_signal(const test_server *s, int sig);
/* For a test that links UCX itself (raw UCX peers: test_remote.c,
 * test_auth.c): UCX installs its memory hooks as it loads, which crash a
 * sanitizer's interceptors, and nothing after the load turns them off. So
 * under a sanitizer, where UCX_MEM_* are not set, this sets them and
 * executes the test again with argv, as the rig program does
 * (tools/serve.h); returns where nothing needs doing. The remote driver
 * needs none of this: it loads UCX itself, with the hooks off. */
void test_ucx_hooks_off(char **argv);
/* Whether its log holds text (waits up to 5 s for it to appear). */
bool test_server_logged(const test_server *s, const char *text);

/* ---- what the remote tests open and check (test_jobs.c, test_loss.c) ---- */
#include <stddef.h>

#include <rig/rig.h>

/* The host of machine `machine` on server s, through key file key, with
 * the hang bound hang_ms (0: 10 s). Asserts it opened. */
rig_device *test_remote_host(const char *machine, const test_server *s, const char *key,
                             uint32_t hang_ms);
/* Device name of host's machine. Asserts it opened. */
rig_device *test_remote_on(rig_device *host, const char *name);
/* A pattern no two offsets of a short run share, from seed. */
void test_pattern(unsigned char *p, size_t n, unsigned seed);

#endif
