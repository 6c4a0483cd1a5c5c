/* SPDX-License-Identifier: MIT */
/* profile_chrome.c: a profile as a Chrome trace (the Trace Event Format,
 * JSON object form), which Perfetto (ui.perfetto.dev) and chrome://tracing
 * show as a timeline; and RIG_PROFILE=PATH, which profiles a whole run
 * and writes PATH at exit.
 *
 * The trace: {"displayTimeUnit":"ns","traceEvents":[...]}, a process
 * (pid) per device, a thread (tid) per queue, named by metadata ("M")
 * events, and a complete ("X") event per record: its name the function
 * or the kind, ts and dur in microseconds (the format's unit) with
 * nanosecond fractions, ts counted from the profile's first start.
 */
#define _GNU_SOURCE /* secure_getenv */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* s as a JSON string's contents. */
static void put_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* Nanoseconds as microseconds with three decimals. */
static void put_us(FILE *f, uint64_t ns) {
  fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

/* The metadata event naming process pid or its thread tid; the first
 * process's name is the trace's first event, with no comma before it. */
static void put_name(FILE *f, const char *what, uint32_t pid, uint32_t tid, const char *name) {
  bool first = pid == 1 && strcmp(what, "process_name") == 0;
  fprintf(f, "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"ts\":0,\"pid\":%u,\"tid\":%u,"
          "\"args\":{\"name\":", first ? "" : ",", what, pid, tid);
  put_string(f, name);
  fputs("}}", f);
}

/* A device whose driver converts its own clock: the conversion's error
 * bound, as the process's label (which Perfetto shows by its name) and as
 * a number, so that a reader of the trace allows for it across devices. */
static void put_clock_error(FILE *f, uint32_t pid, uint64_t ns) {
  fprintf(f,
          ",\n{\"name\":\"process_labels\",\"ph\":\"M\",\"ts\":0,\"pid\":%u,\"tid\":0,"
          "\"args\":{\"labels\":\"clock within %" PRIu64 " ns of the host's\","
          "\"clock_error_ns\":%" PRIu64 "}}",
          pid, ns, ns);
}

/* Names each device's process and each queue its records ran on. */
static void put_names(FILE *f, const rig_profile *p) {
  for (uint32_t d = 0; d < p->ndevices; d++) {
    put_name(f, "process_name", d + 1, 0, p->devices[d]);
    if (p->clock_error[d])
      put_clock_error(f, d + 1, p->clock_error[d]);
    uint32_t queues = 0; /* a bit per queue that ran a record */
    for (size_t i = 0; i < p->n; i++)
      if (p->records[i].device == d && p->records[i].queue < 32)
        queues |= 1u << p->records[i].queue;
    for (uint32_t q = 0; q < 32; q++)
      if (queues & (1u << q)) {
        char name[32];
        snprintf(name, sizeof name, "queue %u", q);
        put_name(f, "thread_name", d + 1, q, name);
      }
  }
}

static void put_record(FILE *f, const rig_profile *p, const rig_profile_record *r, uint64_t t0) {
  static const char *const kinds[] = {"copy", "fill", "launch", "words"};
  char point[64];
  fputs(",\n{\"name\":", f);
  put_string(f, r->name);
  fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", r->kind < 4 ? kinds[r->kind] : "work");
  put_us(f, r->start_ns - t0);
  fputs(",\"dur\":", f);
  put_us(f, r->end_ns - r->start_ns);
  fprintf(f, ",\"pid\":%u,\"tid\":%u,\"args\":{\"point\":", r->device + 1, r->queue);
  snprintf(point, sizeof point, "%s:%" PRIu64, p->devices[r->device], rig_point_value(r->point));
  put_string(f, point);
  fprintf(f, ",\"part\":%u}}", r->part);
}

RIG_API rig_status rig_profile_write_chrome(const rig_profile *p, FILE *f) {
  if (!p || !f)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_profile_write_chrome: %s is NULL",
                     p ? "the file" : "the profile");
  uint64_t t0 = p->n ? p->records[0].start_ns : 0; /* sorted by start */
  /* Every record names a device, so the first device's process name
   * comes first, and each later event starts with a comma. */
  fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
  put_names(f, p);
  for (size_t i = 0; i < p->n; i++)
    put_record(f, p, &p->records[i], t0);
  fprintf(f, "\n],\"otherData\":{\"dropped\":%" PRIu64 "}}\n", p->dropped);
  if (fflush(f) != 0 || ferror(f))
    return rig__fail(RIG_IO, NULL, 0, "rig_profile_write_chrome: %s", strerror(errno));
  return RIG_OK;
}

RIG_API rig_status rig_profile_save_chrome(const rig_profile *p, const char *path) {
  if (!path)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_profile_save_chrome: the path is NULL");
  FILE *f = fopen(path, "we");
  if (!f)
    return rig__fail(RIG_IO, NULL, 0, "rig_profile_save_chrome: %s: %s", path, strerror(errno));
  rig_status st = rig_profile_write_chrome(p, f);
  if (fclose(f) != 0 && st == RIG_OK)
    st = rig__fail(RIG_IO, NULL, 0, "rig_profile_save_chrome: %s: %s", path, strerror(errno));
  return st;
}

/* ---- RIG_PROFILE=PATH -------------------------------------------------------- */

static char *at_exit_path;

/* Takes the run's profile and writes it; what fails is said on stderr,
 * since nobody else is left to hear it. */
static void write_at_exit(void) {
  rig_profile *p = NULL;
  rig_status st = rig_profile_take(&p);
  if (st == RIG_OK)
    st = rig_profile_save_chrome(p, at_exit_path);
  if (st != RIG_OK)
    fprintf(stderr, "rig: RIG_PROFILE: %s\n", rig_error_last()->message);
  rig_profile_free(p);
}

/* At load: RIG_PROFILE set to a path starts a profile that the run's exit
 * writes there. A setuid or setgid program ignores it (secure_getenv):
 * it would write a file its invoker names. */
__attribute__((constructor)) static void profile_from_environment(void) {
  const char *path = secure_getenv("RIG_PROFILE");
  if (!path || !path[0] || !(at_exit_path = strdup(path)))
    return;
  rig_profile_start(0);
  if (atexit(write_at_exit) != 0)
    rig_profile_stop();
}
