/* SPDX-License-Identifier: MIT */
/* serve_beat.c: liveness while a request works (docs/remote.md,
 * "Liveness"). A client's hang bound is to count the server's silence,
 * not its work: a launch that sleeps, or a first touch of 256 MiB on a
 * loaded machine, takes longer than a bound set for a dead peer. So while
 * the loop's thread runs a request, it hands the UCP worker to a second
 * thread, which every BEAT_MS sends an empty BUSY reply to the client
 * whose request runs and to every other client whose next request has
 * arrived and waits; each BUSY starts that client's bound again. A
 * stopped or dead server sends none, and its clients lose it after the
 * bound as before.
 *
 * The worker is used by one thread at a time (UCS_THREAD_MODE_SERIALIZED):
 * the loop's thread holds `worker` always but while a request runs; the
 * beat thread takes it only then. The client list, which the beat thread
 * walks, changes only under it (a connection made meanwhile waits in the
 * server's incoming list).
 */
#include "serve_private.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Between two BUSY replies: a client's hang bound above a few of these
 * outlasts any request that still works (tests use 2 s and more). */
#define BEAT_MS 250u
/* How long a BUSY may take to leave before its client counts as broken,
 * as a reply's REPLY_MS in serve.c. */
#define SEND_MS 10000u

struct serve_beat {
  pthread_t thread;
  pthread_mutex_t worker; /* the UCP worker's, and the client list's */
  pthread_mutex_t m;      /* the fields below */
  pthread_cond_t cv;
  ucp_worker_h ucp;
  serve_client *const *clients;
  const serve_client *working; /* whose request runs now; NULL between requests */
  uint32_t seq;                /* its number */
  uint64_t last;               /* when the request began or the last BUSY went */
  bool stop;
  bool handed; /* the loop's thread's own: whether it handed the worker over */
};

/* Sends c an empty BUSY reply for request seq (0: a request that has
 * arrived but not yet begun). A client that does not take it is broken. */
static void send_busy(serve_beat *b, serve_client *c, uint32_t seq) {
  uint8_t head[RIG_WIRE_HEADER];
  rig_wire_header h = {RIG_WIRE_MAGIC, RIG_WIRE_VERSION, RIG_WIRE_BUSY | RIG_WIRE_REPLY, seq, 0,
                       0};
  rig_wire_header_put(head, &h);
  ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = rig_ucx_sent};
  ucs_status_t st = rig_ucx_wait(b->ucp, ucp_stream_send_nbx(c->ep, head, sizeof head, &prm),
                                 rig_ucx_now_ms() + SEND_MS, &c->broken);
  if (st != UCS_OK && !c->broken) {
    snprintf(c->why, sizeof c->why, "busy: %s", ucs_status_string(st));
    c->broken = true;
  }
}

/* Whether c's next request has arrived, whole or in part, and waits. */
static bool waits(const serve_client *c) {
  if (c->recv_body || c->recv == c)
    return true;
  return c->recv && !UCS_PTR_IS_ERR(c->recv) &&
         ucp_request_check_status(c->recv) != UCS_INPROGRESS;
}

/* One beat: BUSY to the working client and to each that waits for it. */
static void beat_all(serve_beat *b, const serve_client *working, uint32_t seq) {
  while (ucp_worker_progress(b->ucp) != 0) /* what arrived since, first */
    ;
  for (serve_client *c = *b->clients; c; c = c->next) {
    if (c->broken || c->phase != SERVE_READY)
      continue;
    if (c == working)
      send_busy(b, c, seq);
    else if (waits(c))
      send_busy(b, c, 0);
  }
}

static uint64_t now_ms(void) { return rig_ucx_now_ms(); }

/* Waits on b->cv until ms (CLOCK_REALTIME, as the condition's clock). */
static void wait_until(serve_beat *b, uint64_t due_ms) {
  uint64_t left = due_ms > now_ms() ? due_ms - now_ms() : 0;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += (time_t)(left / 1000);
  t.tv_nsec += (long)(left % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  (void)pthread_cond_timedwait(&b->cv, &b->m, &t);
}

/* The beat thread: looks every BEAT_MS; during a request that has run
 * for BEAT_MS, beats with the worker, which the loop's thread has handed
 * over. It is never woken for a request: a wake-up per request cost the
 * round trip of `rig bench remote` three context switches on the server
 * and 1.5 times its time, for requests that nearly all end in
 * microseconds. A BUSY so comes between BEAT_MS and twice that after a
 * request begins, well within any hang bound of a few beats. */
static void *beat_main(void *arg) {
  serve_beat *b = arg;
  pthread_mutex_lock(&b->m);
  while (!b->stop) {
    if (!b->working) {
      wait_until(b, now_ms() + BEAT_MS);
      continue;
    }
    if (now_ms() < b->last + BEAT_MS) {
      wait_until(b, b->last + BEAT_MS);
      continue;
    }
    pthread_mutex_unlock(&b->m);
    pthread_mutex_lock(&b->worker);
    pthread_mutex_lock(&b->m); /* the request now, which cannot change while we hold the worker */
    const serve_client *working = b->working;
    uint32_t seq = b->seq;
    bool stop = b->stop;
    pthread_mutex_unlock(&b->m);
    if (working && !stop)
      beat_all(b, working, seq);
    pthread_mutex_unlock(&b->worker);
    pthread_mutex_lock(&b->m);
    b->last = now_ms();
  }
  pthread_mutex_unlock(&b->m);
  return NULL;
}

serve_beat *serve_beat_start(ucp_worker_h worker, serve_client *const *clients) {
  serve_beat *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->ucp = worker;
  b->clients = clients;
  pthread_mutex_init(&b->worker, NULL);
  pthread_mutex_init(&b->m, NULL);
  pthread_cond_init(&b->cv, NULL);
  pthread_mutex_lock(&b->worker); /* the loop's, from now on */
  sigset_t all, old; /* SIGTERM and SIGINT are the loop's to take */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int r = pthread_create(&b->thread, NULL, beat_main, b);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (r != 0) {
    pthread_mutex_unlock(&b->worker);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->m);
    pthread_mutex_destroy(&b->worker);
    free(b);
    return NULL;
  }
  return b;
}

/* EXPOSE and RELEASE register and unregister memory with UCX: they keep
 * the worker (and are short). A PUSH moves its bytes through a link of its
 * own, with its own worker (serve_push.c), so it gets beats like any
 * request that works long. */
static bool uses_ucx(uint16_t type) { return type == RIG_WIRE_EXPOSE || type == RIG_WIRE_RELEASE; }

void serve_beat_work(serve_beat *b, const serve_client *c, uint16_t type) {
  if (!b || uses_ucx(type))
    return;
  pthread_mutex_lock(&b->m);
  b->working = c;
  b->seq = c->h.seq;
  b->last = now_ms();
  pthread_mutex_unlock(&b->m); /* no signal: the beat thread looks by itself */
  b->handed = true;
  pthread_mutex_unlock(&b->worker);
}

void serve_beat_rest(serve_beat *b) {
  if (!b || !b->handed)
    return;
  pthread_mutex_lock(&b->worker); /* waits for a beat that is being sent */
  pthread_mutex_lock(&b->m);
  b->working = NULL;
  pthread_mutex_unlock(&b->m);
  b->handed = false;
}

void serve_beat_stop(serve_beat *b) {
  if (!b)
    return;
  pthread_mutex_lock(&b->m);
  b->stop = true;
  pthread_cond_signal(&b->cv);
  pthread_mutex_unlock(&b->m);
  pthread_mutex_unlock(&b->worker); /* a beat thread waiting for it sees stop */
  pthread_join(b->thread, NULL);
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->m);
  pthread_mutex_destroy(&b->worker);
  free(b);
}
