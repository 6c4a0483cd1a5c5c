/* test_auth.c: the handshake is mutual (docs/remote.md, "Authentication"):
 * a server without the key cannot pass itself off to a client. The server
 * here is a fake, in a thread of this test: it speaks the protocol and
 * accepts whatever a client sends, answering HELLO with a nonce and a
 * proof it cannot make (it lacks the key), AUTH with success and OPEN with
 * a host's facts, as an impostor that wants the client's work would. The
 * client must refuse it at its proof: the open is RIG_UNAVAILABLE saying
 * the server does not hold the key, and the client never sends it AUTH
 * nor any request. */
#include <arpa/inet.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <rig/rig.h>

#include "server.h"
#include "ucx.h"
#include "wire.h"

typedef struct impostor {
  ucp_context_h ctx;
  ucp_worker_h worker;
  ucp_listener_h listener;
  ucp_ep_h ep;
  char address[64];
  volatile bool stop;
  unsigned requests_after_hello; /* AUTH, OPEN, ...: what a refusing client never sends */
} impostor;

static void on_connect(ucp_conn_request_h req, void *arg) {
  impostor *f = arg;
  ucp_ep_params_t p = {.field_mask =
                           UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE,
                       .err_mode = UCP_ERR_HANDLING_MODE_PEER,
                       .conn_request = req};
  if (f->ep || ucp_ep_create(f->worker, &p, &f->ep) != UCS_OK)
    ucp_listener_reject(f->listener, req);
}

/* Receives n bytes, or false once the test stops it. */
static bool take(impostor *f, void *p, size_t n) {
  size_t got = 0;
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS,
                             .cb.recv_stream = rig_ucx_received,
                             .flags = UCP_STREAM_RECV_FLAG_WAITALL};
  if (n == 0)
    return true;
  return rig_ucx_wait(f->worker, ucp_stream_recv_nbx(f->ep, p, n, &got, &prm),
                      rig_ucx_now_ms() + 20000, &f->stop) == UCS_OK;
}

/* Answers request h with a success and body. */
static void answer(impostor *f, const rig_wire_header *h, const void *body, size_t n) {
  uint8_t out[RIG_WIRE_HEADER + 128];
  rig_wire_header r = {RIG_WIRE_MAGIC, RIG_WIRE_VERSION, h->type | RIG_WIRE_REPLY, h->seq, 0, n};
  rig_wire_header_put(out, &r);
  memcpy(out + RIG_WIRE_HEADER, body, n);
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = rig_ucx_sent};
  (void)rig_ucx_wait(f->worker, ucp_stream_send_nbx(f->ep, out, RIG_WIRE_HEADER + n, &prm),
                     rig_ucx_now_ms() + 5000, NULL);
}

static void *serve_as_impostor(void *arg) {
  impostor *f = arg;
  uint8_t head[RIG_WIRE_HEADER], body[4096], facts[96] = {1};
  facts[8] = 64; /* alignment 64 */
  facts[27] = 0x40; /* a budget of 1 GiB */
  memcpy(facts + 32, "x86_64", 6); /* its arch */
  uint8_t hello[RIG_WIRE_NONCE + 32];
  memset(hello, 0x42, sizeof hello); /* a nonce, and a proof made without the key */
  while (!f->stop && !f->ep)
    ucp_worker_progress(f->worker);
  rig_wire_header h;
  char why[200];
  while (!f->stop && take(f, head, sizeof head) && rig_wire_header_get(head, &h, why, sizeof why) &&
         h.length <= sizeof body && take(f, body, h.length)) {
    if (h.type == RIG_WIRE_HELLO)
      answer(f, &h, hello, sizeof hello);
    else {
      f->requests_after_hello++;
      answer(f, &h, facts, h.type == RIG_WIRE_OPEN ? sizeof facts : 0); /* "yes" to all */
    }
  }
  return NULL;
}

static void start_impostor(impostor *f) {
  struct sockaddr_storage sa;
  socklen_t len;
  char why[200];
  assert_true(rig_ucx_address("127.0.0.1:0", &sa, &len, why, sizeof why));
  assert_true(rig_ucx_start(&f->ctx, &f->worker, false, why, sizeof why));
  ucp_listener_params_t p = {.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
                                           UCP_LISTENER_PARAM_FIELD_CONN_HANDLER,
                             .sockaddr = {(struct sockaddr *)&sa, len},
                             .conn_handler = {on_connect, f}};
  assert_int_equal(ucp_listener_create(f->worker, &p, &f->listener), UCS_OK);
  ucp_listener_attr_t a = {.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR};
  assert_int_equal(ucp_listener_query(f->listener, &a), UCS_OK);
  snprintf(f->address, sizeof f->address, "127.0.0.1:%u",
           ntohs(((struct sockaddr_in *)&a.sockaddr)->sin_port));
}

static void stop_impostor(impostor *f) {
  if (f->ep) {
    ucp_request_param_t cp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = UCP_EP_CLOSE_FLAG_FORCE};
    (void)rig_ucx_wait(f->worker, ucp_ep_close_nbx(f->ep, &cp), rig_ucx_now_ms() + 1000, NULL);
  }
  ucp_listener_destroy(f->listener);
  rig_ucx_stop(f->ctx, f->worker);
}

static void test_impostor_refused(void **state) {
  (void)state;
  static impostor f;
  start_impostor(&f);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, serve_as_impostor, &f), 0);
  rig_host_opener o = {.address = f.address,
                       .key_file = test_key_file("the key the impostor does not hold"),
                       .hang_ms = 10000};
  rig_device *h = NULL;
  rig_status st = rig_device_open_host("m-impostor", &o, &h);
  const char *why = rig_error_last()->message;
  f.stop = true;
  assert_int_equal(pthread_join(t, NULL), 0);
  print_message("open: %s\n", why);
  assert_int_equal(st, RIG_UNAVAILABLE);
  assert_non_null(strstr(why, "does not hold the key"));
  assert_int_equal(f.requests_after_hello, 0); /* no proof of the client's, no work */
  stop_impostor(&f);
}

int main(int argc, char **argv) {
  (void)argc;
  test_ucx_hooks_off(argv); /* this test links UCX: its impostor */
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_impostor_refused)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
