/* collector.c: a collector hook, as a garbage-collected language's binding
 * installs one.
 *
 * Such a binding does not release a buffer when the program lets it go: its
 * own collector finds that out later. rig asks it to run when memory is
 * short. Here the "program" drops buffers onto a list of garbage, and the
 * hook releases what is on the list. Under a budget of 1 MiB the program
 * makes 100 buffers of 256 KiB, keeping none: each allocation the budget
 * refuses runs reclamation, whose second round runs the collector, and the
 * memory it frees is then reused. Four buffers kept alive fill the budget,
 * and a fifth is refused with RIG_OUT_OF_MEMORY: no collector can free what
 * the program still uses. */
#include <string.h>

#include "check.h"

#define KIB 1024
#define GARBAGE_MAX 128

/* The binding's garbage: handles the program no longer reaches. */
static rig_buffer *garbage[GARBAGE_MAX];
static int ngarbage, collections;

static void drop(rig_buffer *b) {
  if (ngarbage == GARBAGE_MAX) {
    fprintf(stderr, "collector: more garbage than the list holds\n");
    exit(1);
  }
  garbage[ngarbage++] = b;
}

/* The hook. It runs inside a lock of rig's: it may release handles, and
 * must not make calls that may lock (they would return RIG_INVALID). */
static void collect(void *ctx) {
  int *count = ctx;
  (*count)++;
  while (ngarbage > 0)
    rig_buffer_release(garbage[--ngarbage]);
}

int main(void) {
  rig_device *d;
  CHECK(rig_device_open_memory("collected", &d));
  CHECK(rig_device_set_budget(d, 1024 * KIB));
  rig_runtime_set_collector(collect, &collections);

  /* 100 buffers let go: 25 MiB over the program's life in a 1 MiB budget. */
  for (int i = 0; i < 100; i++) {
    rig_buffer *b;
    CHECK(rig_buffer_create(d, 256 * KIB, &b));
    drop(b);
  }
  printf("collector: 100 buffers of 256 KiB allocated, none kept; the collector ran %d times\n",
         collections);

  /* Four kept alive fill the budget; the fifth cannot fit. */
  rig_buffer *live[4], *fifth = NULL;
  for (int i = 0; i < 4; i++)
    CHECK(rig_buffer_create(d, 256 * KIB, &live[i]));
  rig_status st = rig_buffer_create(d, 256 * KIB, &fifth);
  printf("collector: a fifth live buffer: %s, %llu KiB asked (%s)\n", rig_status_name(st),
         (unsigned long long)rig_error_last()->bytes / KIB, rig_error_last()->message);

  for (int i = 0; i < 4; i++)
    rig_buffer_release(live[i]);
  rig_runtime_set_collector(NULL, NULL);
  collect(&collections); /* what is left on the list */
  CHECK(rig_device_close(d));
  rig_device_release(d);
  return collections > 0 && st == RIG_OUT_OF_MEMORY ? 0 : 1;
}
