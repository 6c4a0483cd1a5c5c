/* SPDX-License-Identifier: MIT */
/* lock.c: the inside-a-lock check (DOM-12..16) and the wait hook (DOM-9).
 *
 * A thread counts the locks of rig's it holds, and the callbacks it runs for
 * rig or a driver, in a thread-local integer: the check costs one load. A
 * call that may lock returns RIG_INVALID at once when the count is not zero,
 * even where it needs none of the locks held, since the count does not say
 * which they are (DOM-16).
 */
#include <time.h>

#include "device.h"

/* initial-exec: a load, not a call to __tls_get_addr, on every call of rig's */
_Thread_local int rig__held __attribute__((tls_model("initial-exec")));
#define held rig__held
_Thread_local bool rig__assigned __attribute__((tls_model("initial-exec")));

void rig__lock(pthread_mutex_t *m) {
  pthread_mutex_lock(m);
  held++;
}

bool rig__trylock(pthread_mutex_t *m) {
  if (pthread_mutex_trylock(m) != 0)
    return false;
  held++;
  return true;
}

void rig__unlock(pthread_mutex_t *m) {
  held--;
  pthread_mutex_unlock(m);
}

bool rig__inside_lock(void) { return held != 0; }

/* Objects' short locks, which a thread holds for a few list operations
 * (a submission's run pool): one of a table, by the object's address, so
 * that a fork can take every one (docs/fork.md), and records need no
 * mutex of their own. No thread holds two. Eight: a thread holds one for
 * a handful of stores, and a fork holds them all at once (TSan's checker
 * follows at most 64 locks held by one thread). */
#define OBJECT_LOCKS 8
static pthread_mutex_t objects[OBJECT_LOCKS] = {
    [0 ... OBJECT_LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER};

pthread_mutex_t *rig__object_lock(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
  return &objects[(x >> 32) % OBJECT_LOCKS];
}

void rig__objects_fork(rig__fork_phase ph) {
  for (unsigned i = 0; i < OBJECT_LOCKS; i++)
    rig__fork_mutex(&objects[i], ph);
}

void rig__enter_callback(void) { held++; }
void rig__leave_callback(void) { held--; }

rig_status rig__inside_lock_fail(const char *fn) {
  return rig__fail(RIG_INVALID, NULL, 0, "%s: called inside a lock", fn);
}

static _Atomic(rig_wait_hook) hook;
static _Atomic(void *) hook_ctx;

RIG_API void rig_runtime_set_wait_hook(rig_wait_hook h, void *ctx) {
  atomic_store(&hook_ctx, ctx);
  atomic_store(&hook, h);
}

/* A call that has assigned a value waits for its own work to the end: an
 * interrupted call assigns no value and leaves no work behind (DOM-10).
 * Its wait still ends at a loss, and the hang clock bounds it. */
bool rig__interrupted(void) {
  if (rig__assigned)
    return false;
  rig_wait_hook h = atomic_load(&hook);
  return h && h(atomic_load(&hook_ctx)) != 0;
}
