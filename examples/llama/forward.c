/* forward.c: the model on one device or split over two (model.h). Each
 * token runs one prepared submission per device; between the devices,
 * the residual stream x is copied by rig_buffer_submit_copy, which follows
 * the first device's write of x and which the second device's run follows
 * in turn, by the stamps of the memory alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stage.h"

struct llama {
  llama_config c;
  rig_device *file;
  rig_device *devs[2];
  llama_stage stages[2];
  int nstages;
  rig_point last;
  uint64_t submit_ns, wait_ns, tokens; /* llama_times */
};

static uint64_t clock_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int fail(char *why, size_t n, const char *what) {
  snprintf(why, n, "%s: %s", what, rig_error_last()->message);
  return -1;
}

/* Opens name: "CPU" is the host; any other through rig_device_open. */
static int open_device(const char *name, rig_device **out, char *why, size_t n) {
  if (strcmp(name, "CPU") == 0 || strcmp(name, "host") == 0) {
    *out = rig_device_host();
    return 0;
  }
  if (rig_device_open(name, out) != RIG_OK)
    return fail(why, n, name);
  return 0;
}

int llama_open(const char *path, const char *const *names, int n, const llama_code *code,
               llama **out, char *why, size_t why_bytes) {
  llama *m = calloc(1, sizeof *m);
  if (!m)
    return snprintf(why, why_bytes, "out of host memory"), -1;
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_READ_ONLY};
  int r = -1;
  if (rig_device_open_io(&o, &m->file) != RIG_OK)
    fail(why, why_bytes, path);
  else if (llama_config_read(m->file, &m->c, why, why_bytes) == 0)
    r = 0;
  if (r == 0 && n == 2 && m->c.n_layers < 2)
    r = -1, snprintf(why, why_bytes, "a split needs two layers or more");
  for (int i = 0; r == 0 && i < n; i++) {
    if ((r = open_device(names[i], &m->devs[i], why, why_bytes)) != 0)
      break;
    m->nstages = i + 1;
    llama_stage *s = &m->stages[i];
    s->dev = m->devs[i];
    /* A device that runs no launches (memory, the sample and test devices)
     * holds the memory while the host's cores run the kernels through
     * borrows. */
    s->run_on = rig_device_launches(s->dev) ? s->dev : rig_device_host();
    s->l0 = i == 0 ? 0 : m->c.n_layers / 2;
    s->l1 = i + 1 == n ? m->c.n_layers : m->c.n_layers / 2;
    s->first = i == 0;
    s->last = i + 1 == n;
    r = llama_stage_build(s, &m->c, m->file, code, why, why_bytes);
  }
  if (r != 0) {
    llama_close(m);
    return -1;
  }
  *out = m;
  return 0;
}

const llama_config *llama_config_of(const llama *m) {
  return &m->c;
}
rig_point llama_last_point(const llama *m) {
  return m->last;
}

int llama_argmax(const float *v, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

void llama_times(const llama *m, uint64_t *tokens, double *submit_us, double *wait_us) {
  *tokens = m->tokens;
  *submit_us = 1e-3 * (double)m->submit_ns;
  *wait_us = 1e-3 * (double)m->wait_ns;
}

rig_status llama_forward(llama *m, int token, int pos, float *logits) {
  rig_point p;
  rig_status st = RIG_OK;
  uint64_t t0 = clock_ns();
  for (int i = 0; i < m->nstages && st == RIG_OK; i++) {
    if (i > 0)
      st = rig_buffer_submit_copy(m->stages[i - 1].x.own, m->stages[i].x.own, &p);
    if (st == RIG_OK)
      st = llama_stage_submit(&m->stages[i], token, pos, &m->last);
  }
  if (st != RIG_OK)
    return st;
  const llama_stage *s = &m->stages[m->nstages - 1];
  uint64_t t1 = clock_ns();
  st = rig_buffer_get(s->logits.own, 0, logits, (size_t)m->c.vocab_size * sizeof(float));
  m->submit_ns += t1 - t0;
  m->wait_ns += clock_ns() - t1;
  m->tokens++;
  return st;
}

void llama_close(llama *m) {
  if (!m)
    return;
  for (int i = 0; i < m->nstages; i++)
    llama_stage_free(&m->stages[i]);
  for (int i = 0; i < 2; i++)
    if (m->devs[i] && m->devs[i] != rig_device_host()) {
      rig_status st = rig_device_close(m->devs[i]);
      if (st != RIG_OK && st != RIG_LOST)
        fprintf(stderr, "rig-llama: closing %s: %s\n", rig_device_name(m->devs[i]),
                rig_error_last()->message);
      rig_device_release(m->devs[i]);
    }
  if (m->file) {
    rig_status st = rig_device_close(m->file);
    (void)st; /* a read-only file has nothing left to write */
    rig_device_release(m->file);
  }
  free(m);
}
