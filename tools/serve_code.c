/* SPDX-License-Identifier: MIT */
/* serve_code.c: code a client loads on this machine (docs/remote.md,
 * "Code and launches"): LOAD links its object with this machine's
 * librig-core (the host linker for the host), RESOLVE names a function by
 * the entry address it has here, and LAUNCH runs it over the client's
 * buffers here, whose addresses its parameter block holds, answering once
 * the launch has run. RUN carries several copies, fills and launches of
 * one submission, run in order, in one round trip.
 *
 * The key is the whole of the trust: a client that proves it runs its own
 * code in this process, so the server checks the ids and sizes it names
 * but cannot check what the code does with the addresses it is given.
 */
#include "serve_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A function a client resolved: found by its entry, with the launch of
 * it, no refs and params_bytes of parameters, that its launches reuse. */
typedef struct serve_function {
  uint64_t entry;
  uint64_t image; /* its image's id */
  rig_function *f;
  rig_submission *launch;
  uint32_t params_bytes;
  struct serve_function *next;
} serve_function;

/* serve_refuse, where the linker's refusal (RIG_UNAVAILABLE, the text's
 * Error) stays one for the client's rig_image_load. */
static int refused(serve_reply *out, rig_status st) {
  int r = serve_refuse(out, st);
  if (st == RIG_UNAVAILABLE)
    out->status = r = RIG_EDGE_UNAVAILABLE;
  return r;
}

static rig_image *image(serve_client *c, uint64_t id) {
  return id >= 1 && id <= c->nimages ? c->images[id - 1] : NULL;
}

static serve_function *function(serve_client *c, uint64_t entry) {
  serve_function *f = c->functions;
  while (f && f->entry != entry)
    f = f->next;
  return f;
}

static int load(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_device *d = serve_device(c, m->dev);
  rig_image *im = NULL;
  if (!d)
    return serve_bad(out, "no device %llu", m->dev);
  rig_status st = rig_image_load(d, m->data, m->data_n, &im);
  if (st)
    return refused(out, st);
  long i = serve_add((void ***)&c->images, &c->nimages, im);
  if (i < 0) {
    rig_image_release(im);
    return serve_bad(out, "out of memory for image %llu", c->nimages);
  }
  serve_log(c, "loaded an object of %zu bytes on %s", m->data_n, rig_device_name(d));
  rig_wire_write(out->body, (uint64_t)i + 1, 8);
  out->body_n = 8;
  return 0;
}

static int resolve(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  char name[RIG_WIRE_NAME_MAX + 1];
  rig_image *im = image(c, m->image);
  rig_function *f = NULL;
  if (!im)
    return serve_bad(out, "no image %llu", m->image);
  memcpy(name, m->data, m->data_n);
  name[m->data_n] = 0;
  rig_status st = rig_image_resolve(im, name, &f);
  if (st)
    return refused(out, st);
  uint64_t entry = f ? rig_function_entry(f) : 0;
  if (f && !function(c, entry)) {
    serve_function *s = calloc(1, sizeof *s);
    if (!s)
      return serve_bad(out, "out of memory for function of image %llu", m->image);
    *s = (serve_function){.entry = entry, .image = m->image, .f = f, .next = c->functions};
    c->functions = s;
  }
  rig_wire_write(out->body, entry, 8);
  out->body_n = 8;
  return 0;
}

/* Forgets the functions of image id (all of them for id 0). */
static void forget_functions(serve_client *c, uint64_t id) {
  for (serve_function **p = &c->functions; *p;) {
    serve_function *f = *p;
    if (id && f->image != id) {
      p = &f->next;
      continue;
    }
    *p = f->next;
    rig_submission_release(f->launch);
    free(f);
  }
}

static int unload(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_image *im = image(c, m->image);
  if (!im)
    return serve_bad(out, "no image %llu", m->image);
  forget_functions(c, m->image);
  c->images[m->image - 1] = NULL;
  rig_image_release(im); /* the code goes once its launches are done */
  return 0;
}

/* f's launch of n bytes of parameters on d, made once per size. */
static rig_status launch_of(serve_function *f, rig_device *d, uint32_t n) {
  if (f->launch && f->params_bytes == n)
    return RIG_OK;
  rig_submission_release(f->launch);
  f->launch = NULL;
  rig_part p = rig_part_launch(f->f, NULL, 0, n);
  rig_status st = rig_submission_make(d, &p, 1, &f->launch);
  f->params_bytes = n;
  return st;
}

/* One run of f's launch with m's grid and parameters, waited for. */
static rig_status run(serve_function *f, const rig_wire_msg *m) {
  rig_run *r = NULL;
  uint32_t k = 0, n = (uint32_t)m->data_n;
  rig_point done = 0;
  rig_status st = rig_submission_block(f->launch, 0, &k);
  if (st == RIG_OK)
    st = rig_submission_take(f->launch, &r);
  if (st != RIG_OK)
    return st;
  st = rig_run_groups(r, k, m->groups[0], m->groups[1], m->groups[2]);
  if (st == RIG_OK)
    st = rig_run_threads(r, k, m->threads[0], m->threads[1], m->threads[2]);
  if (st == RIG_OK && m->shared_bytes)
    st = rig_run_shared(r, k, m->shared_bytes);
  if (st == RIG_OK && n)
    st = rig_run_bytes(r, k, 0, m->data, n);
  if (st != RIG_OK) { /* the run stays taken: the submission goes with it */
    rig_submission_release(f->launch);
    f->launch = NULL;
    return st;
  }
  st = rig_run_submit(r, NULL, 0, NULL, 0, &done);
  return st ? st : rig_point_wait(done);
}

static int launch(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  rig_device *d = serve_device(c, m->dev);
  serve_function *f = function(c, m->entry);
  if (!d)
    return serve_bad(out, "no device %llu", m->dev);
  if (!f)
    return serve_bad(out, "no function at %#llx", m->entry);
  if (rig_image_device(rig_function_image(f->f)) != d)
    return serve_bad(out, "the function at %#llx is another device's", m->entry);
  if (m->data_n > UINT32_MAX)
    return serve_bad(out, "a parameter block of %llu bytes", m->data_n);
  rig_status st = launch_of(f, d, (uint32_t)m->data_n);
  if (st == RIG_OK)
    st = run(f, m);
  return st ? refused(out, st) : 0;
}

/* Checks every part of RUN m before any runs, so that a body that breaks
 * half-way runs nothing; then runs them in order, each as its own
 * request would, and stops at the first that fails, naming it. */
static int run_parts(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  char why[sizeof out->text];
  rig_wire_msg part;
  for (int pass = 0; pass < 2; pass++) {
    rig_wire_reader r = {m->data, m->data_n, false};
    for (uint32_t i = 0; i < m->count; i++) {
      bool parsed = rig_wire_part_get(&r, &part, why, sizeof why);
      if (parsed && pass == 1 && serve_request(c, &part, out) != 0)
        snprintf(why, sizeof why, "%s", out->text);
      else if (parsed)
        continue;
      out->status = parsed ? out->status : RIG_EDGE_UNSUPPORTED;
      snprintf(out->text, sizeof out->text, "RUN: part %u: %.190s", i, why);
      return out->status;
    }
    if (r.n)
      return serve_bad(out, "RUN: %llu bytes past its parts", r.n);
  }
  return 0;
}

int serve_code_request(serve_client *c, const rig_wire_msg *m, serve_reply *out) {
  switch (m->type) {
  case RIG_WIRE_LOAD: return load(c, m, out);
  case RIG_WIRE_RESOLVE: return resolve(c, m, out);
  case RIG_WIRE_UNLOAD: return unload(c, m, out);
  case RIG_WIRE_LAUNCH: return launch(c, m, out);
  case RIG_WIRE_RUN: return run_parts(c, m, out);
  default: return serve_bad(out, "request %llu is no code's", m->type);
  }
}

void serve_code_forget(serve_client *c) {
  forget_functions(c, 0);
  for (size_t i = 0; i < c->nimages; i++)
    if (c->images[i])
      rig_image_release(c->images[i]);
  free(c->images);
  c->images = NULL;
  c->nimages = 0;
}
