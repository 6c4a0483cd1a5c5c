/* SPDX-License-Identifier: MIT */
/* ucx.c: UCP set-up and waits shared by the remote driver and rig serve. */
#include "ucx.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

uint64_t rig_ucx_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

void rig_ucx_cause(ucs_status_t st, const char *who, bool answered, char *out, size_t n) {
  bool broke = st == UCS_ERR_NOT_CONNECTED || st == UCS_ERR_UNREACHABLE || st == UCS_ERR_REJECTED ||
               st == UCS_ERR_CONNECTION_RESET || st == UCS_ERR_ENDPOINT_TIMEOUT ||
               st == UCS_ERR_IO_ERROR || st == UCS_ERR_CANCELED;
  if (broke && !answered)
    snprintf(out, n,
             "connection refused (no %s listens at that address, or the network "
             "drops the connection)",
             who);
  else if (broke)
    snprintf(out, n,
             "connection closed by the %s (it exited or was killed, or the network "
             "between broke)",
             who);
  else
    snprintf(out, n, "connection failed: UCX: %s", ucs_status_string(st));
}

void rig_ucx_sent(void *request, ucs_status_t status, void *user_data) {
  (void)request, (void)status, (void)user_data;
}

void rig_ucx_received(void *request, ucs_status_t status, size_t length, void *user_data) {
  (void)request, (void)status, (void)length, (void)user_data;
}

bool rig_ucx_start(ucp_context_h *ctx, ucp_worker_h *worker, bool wakeup, char *why,
                   size_t why_n) {
  return rig_ucx_start_on(ctx, worker, wakeup, NULL, why, why_n);
}

static bool same_address(const struct sockaddr *a, const struct sockaddr *b) {
  if (a->sa_family != b->sa_family)
    return false;
  if (a->sa_family == AF_INET)
    return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
           ((const struct sockaddr_in *)b)->sin_addr.s_addr;
  return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

bool rig_ucx_device_of(const struct sockaddr *sa, char *name, size_t n) {
  bool v4 = sa->sa_family == AF_INET;
  if (!v4 && sa->sa_family != AF_INET6)
    return false;
  const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  uint32_t a4 = v4 ? ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) : 0;
  if ((v4 && a4 == INADDR_ANY) || (!v4 && IN6_IS_ADDR_UNSPECIFIED(a6)))
    return false;
  bool loopback = v4 ? (a4 >> 24) == 127 : IN6_IS_ADDR_LOOPBACK(a6);
  struct ifaddrs *all = NULL;
  if (getifaddrs(&all) != 0)
    return false;
  bool found = false;
  for (struct ifaddrs *i = all; i && !found; i = i->ifa_next)
    if (i->ifa_addr &&
        ((loopback && (i->ifa_flags & IFF_LOOPBACK)) || same_address(i->ifa_addr, sa))) {
      snprintf(name, n, "%s", i->ifa_name);
      found = true;
    }
  freeifaddrs(all);
  return found;
}

bool rig_ucx_start_on(ucp_context_h *ctx, ucp_worker_h *worker, bool wakeup, const char *devices,
                      char *why, size_t why_n) {
  ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                    .features = UCP_FEATURE_STREAM | UCP_FEATURE_RMA |
                                (wakeup ? UCP_FEATURE_WAKEUP : 0)};
  ucp_config_t *config = NULL;
  ucs_status_t st = ucp_config_read(NULL, NULL, &config);
  if (st == UCS_OK && devices && !getenv("UCX_NET_DEVICES"))
    st = ucp_config_modify(config, "NET_DEVICES", devices);
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

/* Ends req early: where ep is given, closes *ep by force, which ends every
 * request on it at once with an error (a put or send that UCX cannot
 * cancel included, so none keeps the caller waiting, or reading its
 * memory, after the bound), and leaves *ep NULL; else cancels req. */
static void stop(ucp_worker_h worker, void *req, ucp_ep_h *ep) {
  if (!ep || !*ep) {
    ucp_request_cancel(worker, req);
    return;
  }
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
  void *closing = ucp_ep_close_nbx(*ep, &prm);
  *ep = NULL;
  uint64_t until = rig_ucx_now_ms() + 1000;
  while (closing && !UCS_PTR_IS_ERR(closing) &&
         ucp_request_check_status(closing) == UCS_INPROGRESS && rig_ucx_now_ms() < until)
    ucp_worker_progress(worker);
  if (closing && !UCS_PTR_IS_ERR(closing) && ucp_request_check_status(closing) != UCS_INPROGRESS)
    ucp_request_free(closing);
}

static ucs_status_t wait_for(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                             const volatile bool *broken, bool rests, ucp_ep_h *ep) {
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
      stop(worker, req, ep); /* then progress until it ends */
    } else if (rests)
      rest(worker, &fd, &since, deadline_ms);
  }
  ucp_request_free(req);
  return why != UCS_OK ? why : st;
}

ucs_status_t rig_ucx_wait(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                          const volatile bool *broken) {
  return wait_for(worker, req, deadline_ms, broken, false, NULL);
}

ucs_status_t rig_ucx_wait_resting(ucp_worker_h worker, void *req, uint64_t deadline_ms,
                                  const volatile bool *broken) {
  return wait_for(worker, req, deadline_ms, broken, true, NULL);
}

ucs_status_t rig_ucx_wait_or_close(ucp_worker_h worker, ucp_ep_h *ep, void *req,
                                   uint64_t deadline_ms, const volatile bool *broken, bool rests) {
  return wait_for(worker, req, deadline_ms, broken, rests, ep);
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
