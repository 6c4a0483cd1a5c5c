/* ucx.c: UCP set-up and waits shared by the remote driver and rig serve. */
#include "ucx.h"

#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t rig_ucx_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

void rig_ucx_sent(void *request, ucs_status_t status, void *user_data) {
  (void)request, (void)status, (void)user_data;
}

void rig_ucx_received(void *request, ucs_status_t status, size_t length, void *user_data) {
  (void)request, (void)status, (void)length, (void)user_data;
}

bool rig_ucx_start(ucp_context_h *ctx, ucp_worker_h *worker, bool wakeup, char *why,
                   size_t why_n) {
  ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                    .features = UCP_FEATURE_STREAM | UCP_FEATURE_RMA |
                                (wakeup ? UCP_FEATURE_WAKEUP : 0)};
  ucp_config_t *config = NULL;
  ucs_status_t st = ucp_config_read(NULL, NULL, &config);
  if (st == UCS_OK) {
    st = ucp_init(&p, config, ctx);
    ucp_config_release(config);
  }
  if (st != UCS_OK) {
    snprintf(why, why_n, "UCX: ucp_init: %s", ucs_status_string(st));
    return false;
  }
  /* Serialized, not single: a link's worker is used by whichever thread
   * holds the link's lock, and the server's by its loop or, while a
   * request works, its beat thread (serve_beat.c), never two at once. */
  ucp_worker_params_t w = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                           .thread_mode = UCS_THREAD_MODE_SERIALIZED};
  st = ucp_worker_create(*ctx, &w, worker);
  if (st != UCS_OK) {
    ucp_cleanup(*ctx);
    snprintf(why, why_n, "UCX: ucp_worker_create: %s", ucs_status_string(st));
    return false;
  }
  return true;
}

void rig_ucx_stop(ucp_context_h ctx, ucp_worker_h worker) {
  ucp_worker_destroy(worker);
  ucp_cleanup(ctx);
}

bool rig_ucx_address(const char *text, struct sockaddr_storage *out, socklen_t *len,
                     char *why, size_t why_n) {
  char host[256];
  const char *colon = strrchr(text, ':');
  size_t n = colon ? (size_t)(colon - text) : 0;
  if (!colon || n == 0 || n >= sizeof host || !colon[1]) {
    snprintf(why, why_n, "address '%s' is not HOST:PORT", text);
    return false;
  }
  memcpy(host, text, n);
  host[n] = 0;
  if (host[0] == '[' && host[n - 1] == ']') { /* [::1]:7000 */
    memmove(host, host + 1, n - 2);
    host[n - 2] = 0;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICSERV}, *res = NULL;
  int r = getaddrinfo(host, colon + 1, &hints, &res);
  if (r != 0 || !res) {
    snprintf(why, why_n, "address '%s': %s", text, gai_strerror(r));
    return false;
  }
  memcpy(out, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return true;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sleeps on worker's event fd, once nothing has moved for RIG_UCX_SPIN_NS,
 * until it has something or deadline_ms (at most 100 ms, so that a broken
 * flag set by another thread is seen). A wait for the reply to a long
 * request (a PUSH of 256 MiB between two other machines) that spun for
 * good took a CPU from the two servers moving the bytes: on 2 CPUs that
 * halved their bandwidth. *fd is -2 until first asked; -1 where the worker
 * has none (made without wakeup): then the wait only spins. */
static void rest(ucp_worker_h worker, int *fd, uint64_t *since, uint64_t deadline_ms) {
  uint64_t now = now_ns();
  if (*since == 0 || now - *since < RIG_UCX_SPIN_NS) {
    if (*since == 0)
      *since = now;
    return;
  }
  if (*fd == -2 && ucp_worker_get_efd(worker, fd) != UCS_OK)
    *fd = -1;
  uint64_t left = deadline_ms > now / 1000000u ? deadline_ms - now / 1000000u : 0;
  if (*fd < 0 || left == 0 || ucp_worker_arm(worker) != UCS_OK)
    return; /* BUSY: events came since the last progress */
  struct pollfd pf = {*fd, POLLIN, 0};
  (void)poll(&pf, 1, left < 100 ? (int)left : 100);
}

static ucs_status_t wait_for(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                             const volatile bool *broken, bool rests) {
  if (req == NULL)
    return UCS_OK;
  if (UCS_PTR_IS_ERR(req))
    return UCS_PTR_STATUS(req);
  ucs_status_t st;
  ucs_status_t why = UCS_OK;
  int fd = -2;
  uint64_t since = 0;
  while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
    if (ucp_worker_progress(worker) != 0) {
      since = 0;
      continue;
    }
    uint64_t now = rig_ucx_now_ms();
    if (why != UCS_OK && now >= deadline_ms + 1000)
      return why; /* a cancel that never ends: the request is left to UCX */
    if (why != UCS_OK)
      continue;
    if (broken && *broken)
      why = UCS_ERR_CONNECTION_RESET;
    else if (now >= deadline_ms)
      why = UCS_ERR_TIMED_OUT;
    if (why != UCS_OK) {
      deadline_ms = now;
      ucp_request_cancel(worker, req); /* then progress until it ends */
    } else if (rests)
      rest(worker, &fd, &since, deadline_ms);
  }
  ucp_request_free(req);
  return why != UCS_OK ? why : st;
}

ucs_status_t rig_ucx_wait(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                          const volatile bool *broken) {
  return wait_for(worker, req, deadline_ms, broken, false);
}

ucs_status_t rig_ucx_wait_resting(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                                  const volatile bool *broken) {
  return wait_for(worker, req, deadline_ms, broken, true);
}

void rig_ucx_idle_start(rig_ucx_idle *i, ucp_worker_h worker) {
  i->since = 0;
  if (ucp_worker_get_efd(worker, &i->fd) != UCS_OK)
    i->fd = -1;
}

void rig_ucx_idle_pass(rig_ucx_idle *i, ucp_worker_h worker, bool moved, int sleep_ms) {
  if (moved || i->since == 0) {
    i->since = moved ? 0 : now_ns();
    return;
  }
  if (now_ns() - i->since < RIG_UCX_SPIN_NS || i->fd < 0)
    return;
  /* BUSY: events came since the last progress; the loop progresses again. */
  if (ucp_worker_arm(worker) == UCS_OK) {
    struct pollfd pf = {i->fd, POLLIN, 0};
    (void)poll(&pf, 1, sleep_ms);
  }
}
