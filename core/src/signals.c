/* SPDX-License-Identifier: MIT */
/* signals.c: signals across calls into drivers (ERR-9..16, ERR-19).
 *
 * Across each call rig makes into a driver, the calling thread blocks
 * every signal but those a fault raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGABRT, SIGSYS), so that a handler, Ctrl-C's included, never
 * ends a driver's call half-way (ERR-12); a signal that comes meanwhile is
 * delivered once the call returns. Waits are left unblocked: a driver's
 * wait is where its signals arrive (ERR-11, ERR-13). Reads of a word and
 * the peer check wait for nothing and are not wrapped (ERR-10).
 *
 * The mask is held, not set per call: a thread's first hold blocks and
 * keeps its mask, nested holds only count, and the last drop gives the mask
 * back. A public call that enters a driver several times (a submit's
 * check, room and submit) holds it once around them all, two system calls
 * in place of two per driver call; a host wait inside gives the thread its
 * own mask for the time it waits (rig__mask_open). The host's, the memory
 * driver's and the io driver's calls are rig's own code and are not
 * wrapped (RIG__DRIVER_OF, docs/decisions.md).
 *
 * Reclamation that gives memory back region by region holds the mask from
 * its first region on, and gives the thread its own mask every 64 regions
 * and at its end (ERR-14, ERR-15).
 */
#include <signal.h>

#include "internal.h"

static sigset_t blocked;
static pthread_once_t once = PTHREAD_ONCE_INIT;

_Thread_local unsigned rig__mask_depth __attribute__((tls_model("initial-exec")));
static _Thread_local sigset_t own; /* the thread's mask before its first hold */

static void init(void) {
  static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS};
  sigfillset(&blocked);
  for (unsigned i = 0; i < sizeof faults / sizeof faults[0]; i++)
    sigdelset(&blocked, faults[i]);
}

void rig__signals_block(sigset_t *old) {
  pthread_once(&once, init);
  pthread_sigmask(SIG_BLOCK, &blocked, old);
}

void rig__signals_restore(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

void rig__mask_block_own(void) { rig__signals_block(&own); }

void rig__mask_restore_own(void) { rig__signals_restore(&own); }

unsigned rig__mask_open(void) {
  unsigned depth = rig__mask_depth;
  if (depth) {
    rig__mask_depth = 0;
    rig__signals_restore(&own);
  }
  return depth;
}

void rig__mask_close(unsigned depth) {
  if (depth) {
    rig__signals_block(&own);
    rig__mask_depth = depth;
  }
}

void rig__batch_step(rig__batch *b) {
  if (!b->on) {
    rig__mask_hold();                               /* ERR-14 */
    b->on = true;
  } else if (++b->regions % 64 == 0)
    rig__mask_close(rig__mask_open());              /* ERR-15: a pending one runs */
}

void rig__batch_end(rig__batch *b) {
  if (b->on)
    rig__mask_drop();
  b->on = false;
}
