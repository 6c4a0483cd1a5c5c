/* SPDX-License-Identifier: MIT */
/* machine.c: other machines (MACH-1..9, MACH-18, MACH-21, PROP-9;
 * docs/remote.md). A machine is a host and the devices it drives. A program
 * opens another machine's host with rig_device_open_host, through a driver
 * such as "remote", then that machine's devices with rig_device_open_on or
 * rig_device_open("NAME@MACHINE"); their names end in "@MACHINE".
 *
 * The machine table keeps, per name, the host's opener (driver and
 * address), the host, and every device opened on it. A machine has one
 * host for its life (MACH-6): once that host is lost or closed, the name
 * stays in the table and every open on it is Error with the host's reason.
 * The host's loss loses every device of the machine; a device lost with a
 * reason that says its machine is lost ("MACHINE lost: ...", as the remote
 * driver says when its connection breaks) loses the machine's host too.
 *
 * The machine lock is a leaf: taken under the registry and under any lock
 * of a device, never while calling a driver or opening.
 */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

typedef struct rig__machine {
  char name[64];
  char driver[64];
  char address[256];
  rig_device *host;  /* a reference; NULL while the host opens */
  bool opening;
  bool closed;
  rig_device **devs; /* its other devices, each with a reference */
  size_t ndevs, cap;
  struct rig__machine *next;
} rig__machine;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static rig__machine *machines; /* never freed: a name is the machine's for life */

static rig__machine *find(const char *name) {
  for (rig__machine *m = machines; m; m = m->next)
    if (strcmp(m->name, name) == 0)
      return m;
  return NULL;
}

/* A machine's name: 1 to 63 of [A-Za-z0-9._-], so that it stands in a
 * device name after '@' and in the driver's arguments. */
static bool good_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 63)
    return false;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '.' || *c == '_' || *c == '-'))
      return false;
  return true;
}

static bool no_space(const char *s) { return s && *s && !strpbrk(s, " \t\n"); }

/* Why an open on m is Error now, or NULL: a closed or lost host (MACH-6).
 * Machine lock held. */
static const char *gone(const rig__machine *m) {
  if (m->closed)
    return "closed";
  return m->host ? rig_device_lost(m->host) : NULL;
}

static rig_status check_opener(const char *machine, const rig_host_opener *o, rig_device **out) {
  rig_status st = rig__may_lock("rig_device_open_host");
  if (st)
    return st;
  if (!out || !machine || !o)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open_host: %s is NULL",
                     !out ? "out" : !machine ? "machine" : "the opener");
  if (!good_name(machine))
    return rig__fail(RIG_INVALID, NULL, 0,
                     "rig_device_open_host: machine name '%s' is not 1 to 63 of A-Z a-z 0-9 . _ -",
                     machine);
  if (!no_space(o->address) || !o->key_file || !*o->key_file ||
      (o->driver && (!no_space(o->driver) || strlen(o->driver) >= 64)) ||
      strlen(o->address) >= 256)
    return rig__fail(RIG_INVALID, NULL, 0,
                     "rig_device_open_host: the opener needs an address and a key file, and a "
                     "driver and address without spaces");
  if (rig_runtime_failure())
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s", rig_runtime_failure()); /* OPEN-4 */
  return RIG_OK;
}

/* An open host of machine m: itself again for the same opener, Error once
 * lost or closed (MACH-6), Invalid for another opener (MACH-8, MACH-9).
 * Machine lock held. */
static rig_status existing(rig__machine *m, const char *driver, const char *address,
                           rig_device **out) {
  const char *why = gone(m);
  bool same = strcmp(m->driver, driver) == 0 && strcmp(m->address, address) == 0;
  if (why)
    return rig__fail(RIG_UNAVAILABLE, m->host, 0, "%s lost: %s", m->host->name,
                     why); /* MACH-6; the host's Lost as it prints (OPEN-8) */
  if (!same)
    return rig__fail(RIG_INVALID, m->host, 0,
                     "rig_device_open_host: machine %s has a host through %s at %s that is %s",
                     m->name, m->driver, m->address, m->opening ? "still opening" : "open");
  if (m->opening)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "CPU@%s: its host is opening on another thread",
                     m->name);
  *out = rig_device_retain(m->host);
  return RIG_OK;
}

RIG_API rig_status rig_device_open_host(const char *machine, const rig_host_opener *o,
                                        rig_device **out) {
  rig_status st = check_opener(machine, o, out);
  if (st)
    return st;
  const char *driver = o->driver ? o->driver : "remote";
  pthread_mutex_lock(&lock);
  rig__machine *m = find(machine);
  if (m || !(m = calloc(1, sizeof *m))) {
    st = m ? existing(m, driver, o->address, out)
           : rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", machine);
    pthread_mutex_unlock(&lock);
    return st;
  }
  snprintf(m->name, sizeof m->name, "%s", machine);
  snprintf(m->driver, sizeof m->driver, "%s", driver);
  snprintf(m->address, sizeof m->address, "%s", o->address);
  m->opening = true;
  m->next = machines;
  machines = m;
  pthread_mutex_unlock(&lock);
  char name[80], *args = NULL;
  rig_device *d = NULL;
  snprintf(name, sizeof name, "CPU@%s", machine);                      /* PROP-9 */
  if (asprintf(&args, RIG_EDGE_MACHINE_ARGS_PREFIX "host %s %u %s %s", machine,
               o->hang_ms ? o->hang_ms : 30000u, o->address, o->key_file) < 0)
    args = NULL;
  st = args ? rig__open_as(name, driver, args, &d)
            : rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", machine);
  free(args);
  pthread_mutex_lock(&lock);
  m->opening = false;
  if (st == RIG_OK) {
    d->machine = m;
    m->host = rig_device_retain(d);
  } else { /* never had a host: the name is free again */
    for (rig__machine **p = &machines; *p; p = &(*p)->next)
      if (*p == m) {
        *p = m->next;
        break;
      }
    free(m);
  }
  pthread_mutex_unlock(&lock);
  if (st == RIG_OK)
    *out = d;
  return st;
}

/* Adds d to m's devices, once. Machine lock held. */
static bool add_device(rig__machine *m, rig_device *d) {
  if (d->machine == m)
    return true; /* an open of an open name: listed already */
  if (m->ndevs == m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 8;
    rig_device **p = realloc(m->devs, cap * sizeof *p);
    if (!p)
      return false;
    m->devs = p;
    m->cap = cap;
  }
  d->machine = m;
  m->devs[m->ndevs++] = rig_device_retain(d);
  return true;
}

/* Opens name on m, whose host is open. */
static rig_status open_there(rig__machine *m, const char *name, rig_device **out) {
  char *full = NULL, *args = NULL;
  rig_device *d = NULL;
  rig_status st;
  if (asprintf(&full, "%s@%s", name, m->name) < 0)
    full = NULL;
  if (asprintf(&args, RIG_EDGE_MACHINE_ARGS_PREFIX "device %s %s", m->name, name) < 0)
    args = NULL;
  st = full && args ? rig__open_as(full, m->driver, args, &d)
                    : rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", m->name);
  free(args);
  if (st == RIG_OK) {
    pthread_mutex_lock(&lock);
    const char *why = gone(m);
    if (why)
      st = rig__fail(RIG_UNAVAILABLE, d, 0, "%s: %s", full, why);
    else if (!add_device(m, d))
      st = rig__fail(RIG_UNAVAILABLE, d, 0, "%s: out of memory", full);
    pthread_mutex_unlock(&lock);
    if (st != RIG_OK)
      rig_device_release(d);
  }
  free(full);
  if (st == RIG_OK)
    *out = d;
  return st;
}

RIG_API rig_status rig_device_open_on(rig_device *host, const char *name, rig_device **out) {
  rig_status st = rig__may_lock("rig_device_open_on");
  if (st)
    return st;
  if (!host || !name || !out)
    return rig__fail(RIG_INVALID, host, 0, "rig_device_open_on: %s is NULL",
                     !host ? "host" : !name ? "name" : "out");
  rig__machine *m = host->machine;
  if (!m || m->host != host)
    return rig__fail(RIG_INVALID, host, 0, "rig_device_open_on: %s is not another machine's host",
                     host->name);
  if (!*name || strchr(name, '@'))
    return rig__fail(RIG_INVALID, host, 0, "rig_device_open_on: name '%s' is empty or has '@'",
                     name);
  pthread_mutex_lock(&lock);
  const char *why = gone(m);
  pthread_mutex_unlock(&lock);
  if (why) /* every open on a lost or closed host's machine (OPEN-6, MACH-6), with
               the host's Lost as it prints (OPEN-8) */
    return rig__fail(RIG_UNAVAILABLE, host, 0, "%s@%s: %s lost: %s", name, m->name, host->name,
                     why);
  if (strcmp(name, "CPU") == 0) {
    *out = rig_device_retain(host);
    return RIG_OK;
  }
  return open_there(m, name, out);
}

rig_status rig__open_at(const char *name, rig_device **out) {
  const char *at = strrchr(name, '@');
  char local[256];
  if (!out || (size_t)(at - name) >= sizeof local)
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_open: %s",
                     out ? "a name too long" : "out is NULL");
  memcpy(local, name, (size_t)(at - name));
  local[at - name] = 0;
  pthread_mutex_lock(&lock);
  rig__machine *m = find(at + 1);
  rig_device *host = m && m->host ? rig_device_retain(m->host) : NULL;
  pthread_mutex_unlock(&lock);
  if (!host)
    return rig__fail(RIG_UNAVAILABLE, NULL, 0,
                     "%s: no host of machine '%s' is open (rig_device_open_host)", name, at + 1);
  rig_status st = rig_device_open_on(host, local, out);
  rig_device_release(host);
  return st;
}

/* Set while this thread loses a machine's devices, so that their losses
 * do not come back here. */
static _Thread_local bool cascading;

void rig__machine_lost(rig_device *d, const char *why) {
  rig__machine *m = d->machine;
  size_t n = strlen(m->name);
  bool whole = d == m->host ||
               (strncmp(why, m->name, n) == 0 && strncmp(why + n, " lost:", 6) == 0);
  if (!whole || cascading)
    return;
  pthread_mutex_lock(&lock);
  cascading = true;
  if (m->host)
    rig__lose(m->host, why);
  for (size_t i = 0; i < m->ndevs; i++)
    rig__lose(m->devs[i], why); /* MACH-6: every device of the machine */
  cascading = false;
  pthread_mutex_unlock(&lock);
}

/* Takes d out of m's devices; returns the reference the list held, or NULL. */
static rig_device *unlist(rig__machine *m, rig_device *d) {
  for (size_t i = 0; i < m->ndevs; i++)
    if (m->devs[i] == d) {
      m->devs[i] = m->devs[--m->ndevs];
      return d;
    }
  return NULL;
}

rig_status rig__machine_close(rig_device *d) {
  rig__machine *m = d->machine;
  pthread_mutex_lock(&lock);
  if (d != m->host) {
    rig_device *held = unlist(m, d);
    pthread_mutex_unlock(&lock);
    if (held)
      rig_device_release(held);
    return RIG_OK;
  }
  m->closed = true; /* opens on m are Error from now on (MACH-6) */
  rig_device **devs = m->devs;
  size_t n = m->ndevs;
  m->devs = NULL;
  m->ndevs = m->cap = 0;
  pthread_mutex_unlock(&lock);
  for (size_t i = 0; i < n; i++) { /* the machine's devices first */
    /* A device that fails to close is lost all the same: the host's
     * close goes on, and the device's own status is in the error. */
    rig_status closed = rig_device_close(devs[i]);
    if (closed != RIG_OK && closed != RIG_INTERRUPTED)
      rig__lose(devs[i], "closed");
    rig_device_release(devs[i]);
  }
  free(devs);
  return RIG_OK;
}

RIG_API const char *rig_device_machine(const rig_device *d) {
  return d && d->machine ? d->machine->name : NULL;
}

/* A device of a machine has its machine set only once that machine's host is
 * recorded (m->host is written before any device of m opens, and the host's
 * own d->machine with it), and m->host is never cleared: no lock needed. */
RIG_API rig_device *rig_device_host_of(const rig_device *d) {
  if (!d)
    return NULL;
  return d->machine ? d->machine->host : rig_device_host();
}
