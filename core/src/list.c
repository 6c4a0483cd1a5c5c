/* SPDX-License-Identifier: MIT */
/* list.c: finding devices (docs/finding-devices.md): device types, and
 * rig_device_list, which lists the host and every plugin's devices.
 *
 * The list walks the folders the loader looks in, in its order
 * (rig__driver_folders), and takes each driver's name once, from the
 * first folder that has it: the plugin rig_device_open would load. Each
 * driver is loaded as an open loads it; its devices() (edge ABI 1.5) names
 * its devices, or "DRIVER:0" is probed where it has none. Each device is
 * opened to learn its type; one the list opened is closed again, one the
 * program holds is only released. No lock of core is held while a driver
 * runs.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device.h"

static const char *const type_names[] = {"unknown", "cpu", "gpu", "memory", "io", "remote"};

RIG_API const char *rig_device_type_name(rig_device_type t) {
  return (unsigned)t < sizeof type_names / sizeof *type_names ? type_names[t] : "unknown";
}

RIG_API rig_device_type rig_device_type_of(const rig_device *d) {
  if (!d)
    return RIG_DEVICE_TYPE_UNKNOWN;
  uint32_t t = d->facts.type;
  if (t == RIG_EDGE_TYPE_UNKNOWN && d->drv->io)
    return RIG_DEVICE_TYPE_IO; /* an io library of an older minor */
  return t <= RIG_EDGE_TYPE_REMOTE ? (rig_device_type)t : RIG_DEVICE_TYPE_UNKNOWN;
}

/* The drivers found, in the loader's order, each once. */
typedef struct found {
  char driver[32];
  char path[256];
} found;

typedef struct scan {
  found *all;
  size_t n, cap;
  bool failed; /* out of memory */
} scan;

/* src into dst[n], cut to fit: a path or message longer than an entry's
 * field is kept as far as it goes. */
static void copy(char *dst, size_t n, const char *src) {
  size_t len = strnlen(src, n - 1);
  memcpy(dst, src, len);
  dst[len] = 0;
}

static bool seen(const scan *s, const char *driver) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->all[i].driver, driver) == 0)
      return true;
  return false;
}

static void add(scan *s, const char *driver, const char *path) {
  if (seen(s, driver) || strlen(driver) >= sizeof s->all->driver)
    return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    found *all = realloc(s->all, cap * sizeof *all);
    if (!all) {
      s->failed = true;
      return;
    }
    s->all = all;
    s->cap = cap;
  }
  copy(s->all[s->n].driver, sizeof s->all->driver, driver);
  copy(s->all[s->n].path, sizeof s->all->path, path);
  s->n++;
}

/* The driver a folder's entry names: "librig-driver-NAME.so" in a plain
 * folder, "NAME" (a folder holding librig-driver-NAME.so) in a build tree. */
static bool driver_of(const char *entry, bool per_driver, char *driver, size_t n) {
  static const char pre[] = "librig-driver-", suf[] = ".so";
  size_t len = strlen(entry);
  if (strchr(entry, ':') || strchr(entry, ',')) /* no open could name it */
    return false;
  if (per_driver) {
    if (entry[0] == '.' || len >= n)
      return false;
    memcpy(driver, entry, len + 1);
    return true;
  }
  if (len <= strlen(pre) + strlen(suf) || strncmp(entry, pre, strlen(pre)) != 0 ||
      strcmp(entry + len - strlen(suf), suf) != 0)
    return false;
  size_t dlen = len - strlen(pre) - strlen(suf);
  if (dlen >= n)
    return false;
  memcpy(driver, entry + strlen(pre), dlen);
  driver[dlen] = 0;
  return true;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const found *)a)->driver, ((const found *)b)->driver);
}

/* One folder: its drivers not seen before, by name (readdir's order is
 * the file system's). Never stops the walk. */
static bool scan_folder(const char *folder, bool per_driver, void *ctx) {
  scan *s = ctx;
  DIR *dir = opendir(folder);
  if (!dir)
    return false;
  size_t first = s->n;
  struct dirent *e;
  char driver[32], path[1024];
  while ((e = readdir(dir)) != NULL)
    if (driver_of(e->d_name, per_driver, driver, sizeof driver) &&
        rig__plugin_file(folder, per_driver, driver, path, sizeof path) &&
        access(path, F_OK) == 0)
      add(s, driver, path);
  closedir(dir);
  if (s->n > first) /* qsort of nothing may not be given a NULL array */
    qsort(s->all + first, s->n - first, sizeof *s->all, by_name);
  return false;
}

void rig__driver_names(char *out, size_t n) {
  scan s = {0};
  const char *skipped;
  size_t skipped_len, w = 0;
  rig__driver_folders(scan_folder, &s, &skipped, &skipped_len);
  snprintf(out, n, "none");
  for (size_t i = 0; i < s.n && w < n; i++) {
    int k = snprintf(out + w, n - w, "%s%s", i ? ", " : "", s.all[i].driver);
    w += k > 0 ? (size_t)k : 0;
  }
  free(s.all);
}

/* The entries written so far and those counted past cap. */
typedef struct listing {
  rig_device_entry *out;
  size_t cap, n;
} listing;

static rig_device_entry *next_entry(listing *l) {
  static _Thread_local rig_device_entry spare; /* where entries past cap go */
  rig_device_entry *e = l->n < l->cap ? &l->out[l->n] : &spare;
  l->n++;
  memset(e, 0, sizeof *e);
  return e;
}

static void put(listing *l, const char *name, const found *f, rig_device_type type,
                const char *why) {
  rig_device_entry *e = next_entry(l);
  copy(e->name, sizeof e->name, name);
  copy(e->driver, sizeof e->driver, f->driver);
  copy(e->path, sizeof e->path, f->path);
  e->type = type;
  e->opens = why == NULL;
  copy(e->why, sizeof e->why, why ? why : "");
}

/* Opens name to learn its type; closes it again where the list opened it. */
static void probe(listing *l, const found *f, const char *name) {
  rig_device *d = NULL;
  bool created = false;
  if (rig__device_open_probe(name, &d, &created) != RIG_OK) {
    put(l, name, f, RIG_DEVICE_TYPE_UNKNOWN, rig_error_last()->message);
    return;
  }
  rig_device_type type = rig_device_type_of(d);
  bool closed = !created || rig_device_close(d) == RIG_OK;
  rig_device_release(d);
  put(l, name, f, type, NULL);
  /* It opened: a failing close does not make it a device that does not,
   * but the program learns of it. */
  if (!closed && l->n <= l->cap)
    copy(l->out[l->n - 1].why, sizeof l->out->why, rig_error_last()->message);
}

/* The names driver t offers, or NULL with *why; *count of them. */
static char (*offered(const rig_edge_driver *t, uint32_t *count, char *why, size_t n))[64] {
  rig_edge_error err = {0};
  uint32_t cap = 16;
  char(*names)[64] = NULL;
  for (;;) {
    char(*more)[64] = realloc(names, cap * sizeof *names);
    if (!more) {
      snprintf(why, n, "%s: out of memory", t->name);
      break;
    }
    names = more;
    int r = RIG__DRIVER(t->devices(names, cap, count, &err));
    if (r != RIG_EDGE_OK) {
      copy(why, n, err.message[0] ? err.message : "it lists no device");
      break;
    }
    if (*count <= cap)
      return names;
    cap = *count;
  }
  free(names);
  *count = 0;
  return NULL;
}

/* One driver: its devices, or one entry saying why it offers none. */
static void list_driver(listing *l, found *f) {
  const rig_edge_driver *t;
  struct rig__plugin *pl;
  if (rig__plugin_load(f->driver, &pl, &t) != RIG_OK) {
    put(l, f->driver, f, RIG_DEVICE_TYPE_UNKNOWN, rig_error_last()->message);
    return;
  }
  copy(f->path, sizeof f->path, rig__plugin_path(pl)); /* what opens load */
  bool has_devices = t->size >= offsetof(rig_edge_driver, devices) + sizeof t->devices &&
                     t->devices;
  if (!has_devices) {
    char name[64];
    snprintf(name, sizeof name, "%s:0", f->driver);
    probe(l, f, name);
    return;
  }
  char why[256] = "";
  uint32_t count = 0;
  char(*names)[64] = offered(t, &count, why, sizeof why);
  if (!names || count == 0) {
    if (!why[0])
      snprintf(why, sizeof why, t->io ? "%s: an io library: rig_device_open_io opens a target of it"
                                      : "%s: offers no device here", f->driver);
    put(l, f->driver, f, t->io ? RIG_DEVICE_TYPE_IO : RIG_DEVICE_TYPE_UNKNOWN, why);
  }
  for (uint32_t i = 0; names && i < count; i++) {
    char name[sizeof f->driver + 64]; /* "DRIVER:ARGS" */
    names[i][63] = 0;
    snprintf(name, sizeof name, "%s:%s", f->driver, names[i]);
    probe(l, f, name);
  }
  free(names);
}

RIG_API rig_status rig_device_list(rig_device_entry *out, size_t cap, size_t *n) {
  rig_status st = rig__may_lock("rig_device_list");
  if (st)
    return st;
  if (!n || (!out && cap))
    return rig__fail(RIG_INVALID, NULL, 0, "rig_device_list: %s",
                     !n ? "n is NULL" : "out is NULL with cap > 0");
  scan s = {0};
  const char *skipped;
  size_t skipped_len;
  rig__driver_folders(scan_folder, &s, &skipped, &skipped_len);
  if (s.failed) {
    free(s.all);
    return rig__fail(RIG_OUT_OF_MEMORY, rig__host_device(), s.cap * sizeof *s.all,
                     "rig_device_list: out of memory");
  }
  listing l = {out, cap, 0};
  const found host = {"host", ""};
  put(&l, "CPU", &host, RIG_DEVICE_TYPE_CPU, NULL);
  for (size_t i = 0; i < s.n; i++)
    list_driver(&l, &s.all[i]);
  free(s.all);
  *n = l.n;
  return RIG_OK;
}
