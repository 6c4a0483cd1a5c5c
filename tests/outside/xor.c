/* xor.c: a driver written outside rig's tree, from docs/writing-a-driver.md,
 * <rig/edge.h> and docs/edge.md alone, as a driver's author writes one: a
 * synchronous device of host memory with one queue for copies and fills.
 * It includes only <rig/edge.h> and links only librig-edge; built with
 *
 *   cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags rig-edge) \
 *     xor.c -o librig-driver-xor.so $(pkg-config --libs rig-edge)
 *
 * It leaves the queues of launches and words unset: since edge ABI 1.9 an
 * unset kind has no queue. Its facts state a model and a version (ABI 1.9),
 * which `rig info` shows.
 *
 * Its argument `mistake=WORD` makes the one mistake a new author makes
 * that the test (tests/outside/check-outside.py) checks rig answers with a
 * message naming it: nostore (a synchronous submit that never stores its
 * word), pastqueue (a kind on a queue past facts.queues), launch (a
 * launch on a queue, with no load), nocomputes (copies on a queue without
 * COMPUTES). Built with -DXOR_HIDDEN_ENTRY, its entry is a plain function
 * that -fvisibility=hidden leaves unexported. Built with -DXOR_LINKED,
 * it exports nothing and a test opens its table (xor_table) itself. */
#include <stdlib.h>
#include <string.h>

#include <rig/edge.h>

enum mistake { NONE, NOSTORE, PASTQUEUE, LAUNCH, NOCOMPUTES };

typedef struct xor_dev {
  volatile uint64_t *word; /* the timeline word core binds */
  enum mistake mistake;
} xor_dev;

static int xor_open(const char *args, void **out, rig_edge_error *err) {
  rig_edge_arg keys[] = {{.key = "mistake",
                          .type = RIG_EDGE_ARG_WORD,
                          .words = "none|nostore|pastqueue|launch|nocomputes"}};
  int r = rig_edge_args_parse("xor", args, keys, 1, NULL, err);
  if (r != RIG_EDGE_OK)
    return r;
  xor_dev *x = calloc(1, sizeof *x);
  if (!x)
    return rig_edge_fail(err, RIG_EDGE_UNAVAILABLE, "xor: out of memory");
  x->mistake = keys[0].given ? (enum mistake)keys[0].value : NONE;
  *out = x;
  return RIG_EDGE_OK;
}

/* One queue takes copies and fills; launches and words are left unset. */
static int xor_facts(void *h, rig_edge_facts *f, rig_edge_error *err) {
  xor_dev *x = h;
  strcpy(f->arch, "xor");
  strcpy(f->model, "xor host memory");
  strcpy(f->version, "xor 0.3");
  f->alignment = 64;
  f->budget = 64u << 20;
  f->flags = RIG_EDGE_HOST_ADDRESSES | RIG_EDGE_MAPS_HOST | RIG_EDGE_RUNS_ON_HOST |
             RIG_EDGE_COMPUTES | RIG_EDGE_SYNCHRONOUS;
  f->type = RIG_EDGE_TYPE_MEMORY;
  f->queues = 1;
  f->part_queue[RIG_EDGE_PART_COPY] = 0;
  f->part_queue[RIG_EDGE_PART_FILL] = 0;
  f->commit_k = 1;
  if (x->mistake == PASTQUEUE)
    f->part_queue[RIG_EDGE_PART_WORDS] = 1;
  if (x->mistake == LAUNCH)
    f->part_queue[RIG_EDGE_PART_LAUNCH] = 0;
  if (x->mistake == NOCOMPUTES)
    f->flags &= ~(uint32_t)RIG_EDGE_COMPUTES;
  return RIG_EDGE_OK;
}

static int xor_stop(void *h, rig_edge_error *err) {
  return RIG_EDGE_OK;
}

static void xor_destroy(void *h) {
  free(h);
}

static int xor_bind_word(void *h, volatile uint64_t *word, rig_edge_error *err) {
  ((xor_dev *)h)->word = word;
  return RIG_EDGE_OK;
}

static int xor_allocate(void *h, uint32_t kind, uint64_t bytes, rig_edge_alloc *out,
                        rig_edge_error *err) {
  void *p = NULL;
  if (kind != RIG_EDGE_KIND_DEVICE)
    return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "xor: only its own memory");
  if (posix_memalign(&p, 64, bytes ? bytes : 1) != 0)
    return rig_edge_fail(err, RIG_EDGE_NO_ROOM, "xor: no %llu bytes", (unsigned long long)bytes);
  *out = (rig_edge_alloc){.handle = p, .host = p, .address = (uintptr_t)p, .bytes = bytes};
  return RIG_EDGE_OK;
}

static int xor_release(void *h, rig_edge_alloc *a, rig_edge_error *err) {
  free(a->handle);
  return RIG_EDGE_OK;
}

/* Runs each part on the calling thread, then stores the work's value: a
 * synchronous driver's work is done when submit returns. */
static int xor_submit(void *h, const rig_edge_work *w, rig_edge_error *err) {
  xor_dev *x = h;
  for (uint32_t i = 0; i < w->nparts; i++) {
    int r = rig_edge_run_on_host(&w->parts[i], err);
    if (r != RIG_EDGE_OK)
      return r;
  }
  if (x->mistake != NOSTORE)
    rig_edge_word_store(x->word, w->value);
  return RIG_EDGE_OK;
}

#ifdef XOR_LINKED
const rig_edge_driver xor_table = {
#else
static const rig_edge_driver xor_table = {
#endif
    RIG_EDGE_DRIVER_INIT("xor"), .open = xor_open,
    .facts = xor_facts,          .stop = xor_stop,
    .destroy = xor_destroy,      .bind_word = xor_bind_word,
    .submit = xor_submit,        .allocate = xor_allocate,
    .release = xor_release,
};

#if defined(XOR_HIDDEN_ENTRY)
/* The mistake: the entry written as a plain function, which
 * -fvisibility=hidden keeps out of the plugin's exports. */
const struct rig_edge_driver *rig_edge_entry_v1(void) {
  return &xor_table;
}
#elif !defined(XOR_LINKED)
RIG_EDGE_DRIVER(xor_table)
#endif
