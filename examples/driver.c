/* driver.c: a driver linked into the program, opened with
 * rig_device_open_driver and a table, as a test or a binding brings its own.
 *
 * "tally" keeps its memory in host memory and runs copies and fills on the
 * calling thread before submit returns, as a memory device does, and
 * counts the bytes each kind of part moved. A driver includes only
 * <rig/edge.h> and links librig-edge; docs/writing-a-driver.md and
 * docs/edge.md say what each function of the table owes core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rig/edge.h>
#include <rig/rig.h>

#include "check.h"

typedef struct tally {
  volatile uint64_t *word; /* the timeline word core gives the driver */
} tally;

/* Bytes each kind of part moved, over every tally device. Only submit
 * writes them, and core never runs two submits of a device at once. */
static uint64_t copied, filled;

/* open: the argument after "tally:" takes no key; rig_edge_args_parse
 * refuses any, with a message naming it. */
static int tally_open(const char *args, void **out, rig_edge_error *err) {
  int r = rig_edge_args_parse("tally", args, NULL, 0, NULL, err);
  if (r != RIG_EDGE_OK)
    return r;
  tally *t = calloc(1, sizeof *t);
  if (!t)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "tally: out of memory");
  *out = t;
  return RIG_EDGE_OK;
}

/* facts: what the device is, stated once at open. One queue takes copies
 * and fills; no queue for launches (it loads no code) or words. */
static int tally_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  strcpy(f->arch, "tally");
  f->alignment = 64;
  f->budget = 64u << 20;
  f->flags = RIG_EDGE_HOST_ADDRESSES | RIG_EDGE_MAPS_HOST | RIG_EDGE_RUNS_ON_HOST |
             RIG_EDGE_COMPUTES | RIG_EDGE_SYNCHRONOUS;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->part_queue[RIG_EDGE_PART_LAUNCH] = RIG_EDGE_NO_QUEUE;
  f->part_queue[RIG_EDGE_PART_WORDS] = RIG_EDGE_NO_QUEUE;
  f->commit_k = 1;
  return RIG_EDGE_OK;
}

/* stop: nothing runs after submit returns, so nothing is left to end. */
static int tally_stop(void *h, rig_edge_error *err) { return RIG_EDGE_OK; }

static int tally_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  ((tally *)h)->word = word;
  return RIG_EDGE_OK;
}

/* allocate: NO_ROOM makes core reclaim its caches and ask again. */
static int tally_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                          rig_edge_error *err) {
  void *p = NULL;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "tally: only its own memory");
  if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "tally: no %llu bytes",
                         (unsigned long long)bytes);
  *out = (rig_edge_alloc){.handle = p, .host = p, .address = (uintptr_t)p, .bytes = bytes};
  return RIG_EDGE_OK;
}

static int tally_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  free(a->handle);
  return RIG_EDGE_OK;
}

/* submit: core has ordered the work already (its waits are reached, since
 * the device states no QUEUE_WAITS); run each part, count it, then store
 * the work's value in the word, which tells core the work is done. */
static int tally_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  tally *t = h; /* its word */
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    int r = rig_edge_run_on_host(p, err);
    if (r != RIG_EDGE_OK)
      return r;
    if (p->kind == RIG_EDGE_PART_COPY)
      copied += p->u.copy.dst.bytes;
    else
      filled += p->u.fill.dst.bytes;
  }
  rig_edge_word_store(t->word, w->value);
  return RIG_EDGE_OK;
}

/* destroy: core calls it once every allocation is back; the handle goes. */
static void tally_destroy(void *h) { free(h); }

static const rig_edge_driver tally_driver = {
    .abi_major = RIG_EDGE_ABI_MAJOR,
    .abi_minor = RIG_EDGE_ABI_MINOR,
    .size = sizeof(rig_edge_driver),
    .name = "tally",
    .open = tally_open,
    .facts = tally_facts,
    .stop = tally_stop,
    .destroy = tally_destroy,
    .bind_word = tally_bind_word,
    .submit = tally_submit,
    .allocate = tally_allocate,
    .release = tally_release,
};

int main(void) {
  rig_device *d;
  CHECK(rig_device_open_driver("tally:example", &tally_driver, "example", &d));
  printf("driver: opened %s (arch %s)\n", rig_device_name(d), rig_device_arch(d));

  /* Use it as any device. A submission made on it runs on it: a fill of
   * slot 0, then a copy of slot 0 into slot 1, which follows the fill since
   * it reads what the fill wrote. (rig_buffer_fill and rig_buffer_copy would
   * run on the host here, which addresses this device's memory.) */
  rig_buffer *a, *b;
  uint32_t words[256];
  CHECK(rig_buffer_create(d, sizeof words, &a));
  CHECK(rig_buffer_create(d, sizeof words, &b));
  rig_part parts[2] = {rig_part_fill(0, 0x2a2a2a2a, 4), rig_part_copy(0, 1)};
  rig_submission *s;
  rig_run *run;
  rig_point p;
  CHECK(rig_submission_make(d, parts, 2, &s));
  CHECK(rig_submission_take(s, &run));
  rig_buffer *slots[2] = {a, b};
  CHECK(rig_run_submit(run, slots, 2, NULL, 0, &p));
  CHECK(rig_buffer_get(b, 0, words, sizeof words)); /* follows the copy */
  rig_submission_release(s);
  rig_buffer_release(a);
  rig_buffer_release(b);

  /* Close waits for the device's work and runs the driver's stop. */
  CHECK(rig_device_close(d));
  rig_device_release(d);
  printf("driver: words[255] = 0x%08x; tally copied %llu bytes, filled %llu\n", words[255],
         (unsigned long long)copied, (unsigned long long)filled);
  return words[255] == 0x2a2a2a2a && copied == sizeof words && filled == sizeof words ? 0 : 1;
}
