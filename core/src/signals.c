/* signals.c: signals across calls into drivers (ERR-9..16, ERR-19).
 *
 * Across each call rig makes into a driver, the calling thread blocks
 * every signal but those a fault raises (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGABRT, SIGSYS), so that a handler, Ctrl-C's included, never
 * ends a driver's call half-way (ERR-12); a signal that comes meanwhile is
 * delivered once the call returns. Waits are left unblocked: a driver's
 * wait is where its signals arrive (ERR-11, ERR-13). Reads of a word and
 * the peer check wait for nothing and are not wrapped (ERR-10).
 * Reclamation that gives memory back region by region blocks once, from
 * its first region on, and gives the thread its mask back every 64
 * regions and at its end (ERR-14, ERR-15).
 */
#include <signal.h>

#include "internal.h"

static sigset_t blocked;
static pthread_once_t once = PTHREAD_ONCE_INIT;

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

void rig__batch_step(rig__batch *b) {
  if (!b->on) {
    rig__signals_block(&b->old);                    /* ERR-14 */
    b->on = true;
  } else if (++b->regions % 64 == 0) {
    rig__signals_restore(&b->old);                  /* ERR-15: a pending one runs */
    rig__signals_block(&b->old);
  }
}

void rig__batch_end(rig__batch *b) {
  if (b->on)
    rig__signals_restore(&b->old);
  b->on = false;
}
