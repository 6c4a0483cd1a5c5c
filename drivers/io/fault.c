/* SPDX-License-Identifier: MIT */
/* fault.c: pages of a file that another process cut short, or whose disk
 * failed, under a mapping of the io library (docs/io.md, "Pages").
 *
 * A touch of a page of a MAP_SHARED mapping past the file's end raises
 * SIGBUS, whose default ends the program. The library watches its own
 * mappings: at its first mapping it installs a SIGBUS handler that, for an
 * address in a watched mapping, puts a page of zeros of the process's own
 * in its place (mmap MAP_FIXED) and records the file offset in the device's
 * fault word, so that the access completes and the device reports the
 * loss at its next call. Every other SIGBUS goes to the handler that was
 * there before, or ends the program as it would have.
 *
 * The handler reads the watch table with atomic loads only: a slot is
 * published by its device pointer, stored last, and withdrawn by clearing
 * it before the munmap. Tables are added, never freed, so a handler never
 * reads freed memory.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rig/edge.h>

#include "fault.h"

#define SLOTS 128

typedef struct slot {
  _Atomic(_Atomic uint64_t *) word; /* the device's fault word; NULL: free */
  _Atomic uintptr_t start;
  _Atomic size_t bytes;
  _Atomic uint64_t offset;          /* the file offset of start */
  _Atomic int prot;
  atomic_flag taken;                /* claimed by a watch */
} slot;

typedef struct table {
  slot s[SLOTS];
  _Atomic(struct table *) next;
} table;

static table first;
static struct sigaction previous;
static uintptr_t page_bytes; /* sysconf is not for a handler: read once */
static pthread_mutex_t installing = PTHREAD_MUTEX_INITIALIZER;

/* The earlier handler's turn: its function, or the default action. A
 * fault that returns with SIG_DFL in place faults again and ends the
 * program as it would have; a SIGBUS another process sent is raised again. */
static void chain(int sig, siginfo_t *si, void *uc) {
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
    previous.sa_sigaction(sig, si, uc);
    return;
  }
  if (previous.sa_handler == SIG_IGN && si->si_code <= 0)
    return;
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  signal(SIGBUS, SIG_DFL);
  if (si->si_code <= 0)
    raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
  uintptr_t a = (uintptr_t)si->si_addr, page = page_bytes;
  if (si->si_code > 0) /* a fault, not a signal another process sent */
    for (table *t = &first; t; t = atomic_load(&t->next))
      for (int i = 0; i < SLOTS; i++) {
        slot *s = &t->s[i];
        _Atomic uint64_t *word = atomic_load(&s->word);
        uintptr_t start = atomic_load(&s->start);
        if (!word || a < start || a - start >= atomic_load(&s->bytes))
          continue;
        uintptr_t at = a & ~(page - 1);
        if (mmap((void *)at, page, atomic_load(&s->prot), MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0) == MAP_FAILED)
          break; /* the default action, then */
        uint64_t off = atomic_load(&s->offset) + (at - start), none = 0;
        atomic_compare_exchange_strong(word, &none, off + 1); /* the first one */
        return;
      }
  chain(sig, si, uc);
}

static bool ours(void) {
  struct sigaction cur;
  return sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
         cur.sa_sigaction == on_sigbus;
}

/* The handler in place, at each watch: a program (a test framework) that
 * put its own in place since, or back, gets it chained behind ours. */
static bool install(void) {
  struct sigaction sa = {0};
  bool ok = true;
  if (ours())
    return true;
  page_bytes = (uintptr_t)sysconf(_SC_PAGESIZE);
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  pthread_mutex_lock(&installing);
  if (!ours())
    ok = sigaction(SIGBUS, &sa, &previous) == 0;
  pthread_mutex_unlock(&installing);
  return ok;
}

void io_fault_fork(uint32_t phase) {
  if (phase == RIG_EDGE_FORK_PREPARE)
    pthread_mutex_lock(&installing);
  else
    pthread_mutex_unlock(&installing);
}

/* A free slot, claimed; a new table where all are taken. */
static slot *claim(void) {
  for (table *t = &first;; t = atomic_load(&t->next)) {
    for (int i = 0; i < SLOTS; i++)
      if (!atomic_flag_test_and_set(&t->s[i].taken))
        return &t->s[i];
    table *next = atomic_load(&t->next);
    if (next)
      continue;
    table *n = calloc(1, sizeof *n);
    if (!n)
      return NULL;
    if (!atomic_compare_exchange_strong(&t->next, &next, n))
      free(n); /* another watch added one: use it */
  }
}

bool io_fault_watch(_Atomic uint64_t *word, void *host, size_t bytes, uint64_t offset, int prot) {
  slot *s = install() ? claim() : NULL;
  if (!s)
    return false;
  atomic_store(&s->start, (uintptr_t)host);
  atomic_store(&s->bytes, bytes);
  atomic_store(&s->offset, offset);
  atomic_store(&s->prot, prot);
  atomic_store(&s->word, word); /* published */
  return true;
}

void io_fault_unwatch(void *host) {
  for (table *t = &first; t; t = atomic_load(&t->next))
    for (int i = 0; i < SLOTS; i++) {
      slot *s = &t->s[i];
      if (atomic_load(&s->word) && atomic_load(&s->start) == (uintptr_t)host) {
        atomic_store(&s->word, NULL);
        atomic_flag_clear(&s->taken);
        return;
      }
    }
}
