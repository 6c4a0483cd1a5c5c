/* submission.c: the random programs' prepared submissions (tests/random):
 * parts drawn over the thread's buffers, made, taken, submitted with waits
 * and released, each answer checked against the rules and the model. */
#include <string.h>

#include "model.h"
#if __has_include(<rig/drivers/rig-vulkan.h>)
#include <rig/drivers/rig-vulkan.h>
#endif

/* The word of a words part: the test device's queue takes any word and
 * does nothing with it; Vulkan's takes rig-vulkan.h's packets, of which
 * NOP does nothing. */
static uint32_t inert_word(rig_device *d, size_t op) {
#ifdef RIG_VULKAN_H
  if (rig_device_capability(d, RIG_VULKAN_DEVICE))
    return RIG_VULKAN_PACKET(RIG_VULKAN_NOP, 1);
#endif
  (void)d;
  return 0xd0000000u | (uint32_t)op;
}

/* A prepared submission on the device of a buffer drawn: up to three
 * parts (copies, fills, words) over views of the thread's buffers on that
 * device, sometimes a foreign buffer among them, submitted once or twice
 * with waits on points drawn, and released at once after. */
typedef struct plan {
  bool copy;
  handle *a, *b;
  size_t ao, bo, n;
  uint32_t pattern;
  unsigned size;
} plan;

typedef struct prepared {
  rig_device *d;
  rig_part parts[3];
  plan plans[3];
  unsigned nparts, nslots;
  rig_buffer *slots[MAX_SLOTS];
  bool own[MAX_SLOTS], valid, words;
  bool unsure; /* a buffer of another device that d reaches: the driver decides */
  uint32_t word;
} prepared;

static void slot(worker *w, prepared *x, handle *h, size_t off, size_t n) {
  rig_buffer *v = view_of(w, h, off, n);
  x->unsure |= h->a->doomed;
  if (h->dev != x->d) {
    say(w, "  slot %u: b%u of %s, another device", x->nslots, h->id, rig_device_name(h->dev));
    if (rig_device_reaches(x->d, h->a->owner))
      x->unsure = true;
    else
      x->valid = false;
  }
  x->own[x->nslots] = v != NULL;
  x->slots[x->nslots++] = v ? v : h->b;
  x->valid &= v != NULL;
}

/* One of the submission's buffers: mostly one on its device, else any. */
static handle *draw(worker *w, handle **on, unsigned non, uint64_t *s, bool written) {
  uint64_t x = rnd_next(s);
  if (x % 12 == 0)
    return pick(w, (uint32_t)(x >> 8));
  handle *h = on[(x >> 8) % non];
  for (unsigned k = 1; k < non && written && h->acc != RIG_READ_WRITE && x % 5; k++)
    h = on[((x >> 8) + k) % non];
  return h;
}

static void draw_part(worker *w, prepared *x, handle **on, unsigned non, uint64_t *s) {
  unsigned i = x->nparts++, kind = rnd_next(s) % 5;
  plan *p = &x->plans[i];
  *p = (plan){.copy = kind < 2, .a = draw(w, on, non, s, kind >= 2), .b = draw(w, on, non, s, true)};
  if (kind == 4) {
    x->words = true;
    x->parts[i] = rig_part_words(&x->word, 1);
    p->n = 0;
    say(w, "  part %u: words 0x%08x", i, x->word);
  } else if (p->copy) {
    p->n = 1 + rnd_next(s) % (p->a->len < p->b->len ? p->a->len : p->b->len);
    p->ao = rnd_next(s) % (p->a->len - p->n + 1);
    p->bo = rnd_next(s) % (p->b->len - p->n + 1);
    x->valid &= p->b->acc == RIG_READ_WRITE && !shares_byte(p->a, p->ao, p->b, p->bo, p->n);
    x->parts[i] = rig_part_copy(x->nslots, x->nslots + 1);
    say(w, "  part %u: copy b%u [%zu, +%zu) -> b%u [%zu]", i, p->a->id, p->ao, p->n, p->b->id,
        p->bo);
    slot(w, x, p->a, p->ao, p->n);
    slot(w, x, p->b, p->bo, p->n);
  } else {
    range(p->a->len, (uint32_t)rnd_next(s), (uint32_t)rnd_next(s), &p->ao, &p->n);
    p->size = 1u << (rnd_next(s) % 3);
    p->pattern = (uint32_t)rnd_next(s);
    if (rnd_next(s) % 2)
      p->n -= p->n % p->size;
    x->valid &= p->a->acc == RIG_READ_WRITE && p->n % p->size == 0;
    x->parts[i] = rig_part_fill(x->nslots, p->pattern, p->size);
    say(w, "  part %u: fill b%u [%zu, +%zu) 0x%08x/%u", i, p->a->id, p->ao, p->n, p->pattern,
        p->size);
    slot(w, x, p->a, p->ao, p->n);
  }
}

static void apply(const prepared *x) {
  for (unsigned i = 0; i < x->nparts; i++) {
    const plan *p = &x->plans[i];
    if (x->parts[i].kind == RIG_PART_COPY)
      model_copy(p->a, p->ao, p->b, p->bo, p->n);
    else if (x->parts[i].kind == RIG_PART_FILL)
      model_fill(p->a, p->ao, p->n, p->pattern, p->size);
  }
}

static void submit_runs(worker *w, prepared *x, rig_submission *sub, const uint32_t *r) {
  unsigned times = r[6] % 3 == 1 ? 2 : 1;
  rig_point p = 0;
  for (unsigned k = 0; k < times && !w->failed; k++) {
    rig_run *run = NULL;
    if (!expect(w, rig_submission_take(sub, &run), MUST, "take"))
      return;
    rig_point waits[2];
    unsigned nw = w->npts ? r[7] % 3 : 0;
    for (unsigned j = 0; j < nw; j++)
      waits[j] = w->pts[((r[7] >> 4) + j) % w->npts];
    say(w, "  submit with %u waits", nw);
    if (expect(w, rig_run_submit(run, x->slots, x->nslots, waits, nw, &p),
               x->valid ? (x->unsure ? MAY : MUST) : MUST_FAIL, "submit")) {
      apply(x);
      remember(w, p);
    }
  }
  if (r[6] % 3 == 2 && p && !w->failed)
    expect(w, rig_point_wait(p), MUST, "wait for the submission's point");
}

void op_submission(worker *w, const uint32_t *r) {
  handle *h0 = pick(w, r[0]), *on[MAX_H];
  prepared x = {.d = h0->dev, .valid = true, .word = inert_word(h0->dev, w->op)};
  unsigned non = 0;
  for (unsigned i = 0; i < w->nh; i++)
    if (w->h[i].dev == x.d && !w->h[i].a->dead)
      on[non++] = &w->h[i];
  if (!non) /* h0 is dead: the submit refuses it */
    on[non++] = h0;
  say(w, "%zu submission on %s", w->op, rig_device_name(x.d));
  uint64_t s = r[1];
  unsigned n = 1 + r[2] % 3;
  while (x.nparts < n)
    draw_part(w, &x, on, non, &s);
  bool maybe = rig_device_runs_on_host(x.d) || !rig_device_computes(x.d) ||
               (x.words && strncmp(rig_device_name(x.d), "test:", 5) != 0);
  rig_submission *sub = NULL;
  if (expect(w, rig_submission_make(x.d, x.parts, x.nparts, &sub), maybe ? MAY : MUST, "make")) {
    submit_runs(w, &x, sub, r);
    rig_submission_release(sub);
  }
  for (unsigned i = 0; i < x.nslots; i++)
    if (x.own[i])
      rig_buffer_release(x.slots[i]);
}

