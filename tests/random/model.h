/* model.h: what model.c's ops and submission.c's prepared submissions
 * share: a thread's buffers, its model of their bytes, and the checks of
 * each answer (tests/random). */
#ifndef RIG_RANDOM_MODEL_H
#define RIG_RANDOM_MODEL_H

#include "random.h"

#define MAX_H 40   /* live buffers of a thread */
#define MAX_PTS 32 /* points it remembers */
#define MAX_SLOTS 6

/* The model's bytes: an allocation's, or the thread's region of the io
 * file, which outlives the buffers over it. known: written in this program. */
typedef struct store {
  uint8_t *bytes, *known;
  size_t n;
  unsigned refs;
} store;

/* A rig allocation: bytes [base, base + n) of a store, dead once freed. */
typedef struct alloc {
  store *s;
  size_t base, n;
  rig_device *owner;
  bool dead, io, shared; /* shared: other threads' too, never freed... */
  bool doomed;           /* ...but this one, which any thread may free */
  unsigned handles;
} alloc;

typedef struct handle {
  rig_buffer *b;
  alloc *a;
  size_t off, len; /* in the allocation */
  rig_device *dev;
  rig_access acc;
  unsigned id;
} handle;

typedef struct worker {
  const rnd_devices *ds;
  unsigned t;
  handle h[MAX_H];
  unsigned nh, next_id;
  store *io;
  alloc *io_alloc; /* the last of_io allocation, while buffers remain */
  rig_point pts[MAX_PTS];
  unsigned npts;
  char *trace;
  size_t tlen, tcap;
  size_t op;
  bool failed, verbose;
} worker;

/* What the rules say of a call: RIG_INVALID with a message, RIG_OK, or
 * either where they leave it to the device. */
enum { MUST_FAIL = 0, MUST = 1, MAY = 2 };

void say(worker *w, const char *fmt, ...);
void fail(worker *w, const char *fmt, ...);
bool expect(worker *w, rig_status st, int valid, const char *what);
int rules(const handle *h, bool valid);

store *store_new(size_t n);
void store_drop(store *s);
size_t at(const handle *h, size_t i);
void written(handle *h, size_t off, size_t n);
void model_put(handle *h, size_t off, const uint8_t *src, size_t n);
void model_fill(handle *h, size_t off, size_t n, uint32_t pattern, unsigned size);
void model_copy(handle *src, size_t so, handle *dst, size_t dof, size_t n);
void compare(worker *w, const handle *h, size_t off, const uint8_t *got, size_t n,
             const char *what);

handle *add(worker *w, rig_buffer *b, alloc *a, size_t off, size_t len, rig_device *d,
            rig_access acc);
void drop(worker *w, unsigned i);
handle *pick(worker *w, uint32_t r);
handle *pick_writable(worker *w, uint32_t r);
void remember(worker *w, rig_point p);
void wait_all(worker *w);
rig_buffer *view_of(worker *w, handle *h, size_t off, size_t len);
void range(size_t len, uint32_t r1, uint32_t r2, size_t *off, size_t *n);
bool shares_byte(const handle *a, size_t ao, const handle *b, size_t bo, size_t n);

/* A prepared submission (submission.c). */
void op_submission(worker *w, const uint32_t *r);

#endif
