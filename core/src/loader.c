/* SPDX-License-Identifier: MIT */
/* loader.c: finds driver plugins at open time (ARCHITECTURE.md, Plugins).
 *
 * rig_device_open("NAME:ARGS") loads librig-driver-NAME.so from the first folder of
 * RIG_DRIVER_PATH (colon-separated) that has it, else from beside core's
 * own library (the build tree's or the install tree's driver folder,
 * wherever that tree now is), else from the install folder RIG_DRIVER_DIR
 * (docs/finding-devices.md). RIG_DRIVER_PATH is read with secure_getenv: a
 * setuid or setgid program ignores it, so that its caller cannot make it
 * run code of the caller's choosing. Only absolute folders count: a
 * relative one would name another folder at each open, as the current
 * directory changes, so it is skipped, and an open that finds no plugin
 * says so. Each plugin is loaded once per process with
 * dlopen(RTLD_NOW | RTLD_LOCAL) and kept for its life, since devices and
 * their memory may outlive any one open. The table's ABI is checked before
 * anything in it is called.
 */
#define _GNU_SOURCE /* secure_getenv, dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "device.h"

#ifndef RIG_DRIVER_DIR
#define RIG_DRIVER_DIR "/usr/local/lib/rig/drivers"
#endif

struct rig__plugin {
  char driver[64];
  char path[1024];
  const rig_edge_driver *table;
  struct rig__plugin *next;
};

static pthread_mutex_t plugins_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rig__plugin *plugins;

rig_status rig__check_table(const rig_edge_driver *t, const char *what) {
  if (t->abi_major != RIG_EDGE_ABI_MAJOR)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: driver ABI %u.%u, rig needs %u.x", what,
                     t->abi_major, t->abi_minor, RIG_EDGE_ABI_MAJOR);
  /* Every entry core calls in ABI 1 lies before io. */
  if (t->size < offsetof(rig_edge_driver, io) + sizeof t->io)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: driver table of %u bytes is too small",
                     what, t->size);
  if (!t->open || !t->facts || !t->name)
    return rig__fail(RIG_INVALID, NULL, 0, "%s: driver table lacks open, facts or name", what);
  /* An io library's calls, through sync, are all core reads. */
  if (t->io && (t->io->size < offsetof(rig_edge_io, sync) + sizeof t->io->sync ||
                !t->io->read || !t->io->write))
    return rig__fail(RIG_INVALID, NULL, 0, "%s: io table too small or lacks read/write", what);
  return RIG_OK;
}

/* The folder core's own library is in (dladdr on one of its functions: a
 * static one, whose address a non-PIE program's PLT cannot stand in
 * for), into out; false where dladdr says nothing. */
static bool core_folder(char *out, size_t n) {
  Dl_info info;
  if (!dladdr((void *)(uintptr_t)core_folder, &info) || !info.dli_fname || info.dli_fname[0] != '/')
    return false;
  /* The real folder: a program's run path may reach it through "bin/.." */
  char *real = realpath(info.dli_fname, NULL);
  if (!real)
    return false;
  const char *slash = strrchr(real, '/');
  int w = snprintf(out, n, "%.*s", (int)(slash - real), real);
  free(real);
  return w >= 0 && (size_t)w < n;
}

/* Calls fn on the folders beside core: in a build tree (core's library in
 * BUILD/core) BUILD/drivers, whose driver NAME is in its folder NAME; in an
 * install tree (core in LIBDIR) LIBDIR/rig/drivers. Both follow core where
 * it moves, so a parent project's program and a moved install find their
 * plugins with no environment. */
static bool beside_core(rig__folder_fn fn, void *ctx) {
  char lib[1024], folder[1100];
  if (!core_folder(lib, sizeof lib))
    return false;
  const char *base = strrchr(lib, '/');
  if (base && strcmp(base, "/core") == 0) {
    snprintf(folder, sizeof folder, "%.*s/drivers", (int)(base - lib), lib);
    if (fn(folder, true, ctx))
      return true;
  }
  snprintf(folder, sizeof folder, "%s/rig/drivers", lib);
  return fn(folder, false, ctx);
}

/* RIG_DRIVER_PATH_ONLY=1: no folder but RIG_DRIVER_PATH's (a test's way of
 * standing for a machine without some driver). */
static bool path_only(void) {
  const char *only = secure_getenv("RIG_DRIVER_PATH_ONLY");
  return only && strcmp(only, "1") == 0;
}

bool rig__driver_folders(rig__folder_fn fn, void *ctx, const char **skipped,
                         size_t *skipped_len) {
  const char *p = secure_getenv("RIG_DRIVER_PATH");
  char folder[1024];
  *skipped = NULL;
  *skipped_len = 0;
  while (p && *p) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (len && p[0] != '/') {
      if (!*skipped) {
        *skipped = p;
        *skipped_len = len;
      }
    } else if (len && len < sizeof folder) {
      memcpy(folder, p, len);
      folder[len] = 0;
      if (fn(folder, false, ctx))
        return true;
    }
    p = colon ? colon + 1 : NULL;
  }
  if (path_only())
    return false;
  return beside_core(fn, ctx) || fn(RIG_DRIVER_DIR, false, ctx);
}

size_t rig__plugin_file(const char *folder, bool per_driver, const char *driver, char *path,
                        size_t n) {
  int w = per_driver ? snprintf(path, n, "%s/%s/librig-driver-%s.so", folder, driver, driver)
                     : snprintf(path, n, "%s/librig-driver-%s.so", folder, driver);
  return w > 0 && (size_t)w < n ? (size_t)w : 0;
}

struct find { const char *driver; char *path; size_t n; };

static bool found_in(const char *folder, bool per_driver, void *ctx) {
  struct find *f = ctx;
  return rig__plugin_file(folder, per_driver, f->driver, f->path, f->n) &&
         access(f->path, F_OK) == 0;
}

/* Finds the plugin's file: RIG_DRIVER_PATH's absolute folders first, then
 * beside core, then the install folder. *skipped: the first relative entry
 * it ignored, and its length (0: none). */
static bool find_file(const char *driver, char *path, size_t n, const char **skipped,
                      size_t *skipped_len) {
  struct find f = {driver, path, n};
  return rig__driver_folders(found_in, &f, skipped, skipped_len);
}

/* The open's error when no folder has the plugin: the drivers that are
 * there (a misspelt name's fix), the folders it looked in and no other,
 * and why RIG_DRIVER_PATH may not have counted. */
static rig_status not_found(const char *driver, const char *skipped, size_t skipped_len) {
  char lib[1024], where[1400], names[160];
  rig__driver_names(names, sizeof names);
  if (!core_folder(lib, sizeof lib))
    snprintf(lib, sizeof lib, "unknown");
  if (getauxval(AT_SECURE)) /* secure_getenv read no RIG_DRIVER_PATH */
    snprintf(where, sizeof where,
             "is not beside librig-core (%s) nor in %s (a setuid or "
             "setgid program ignores RIG_DRIVER_PATH)",
             lib, RIG_DRIVER_DIR);
  else if (path_only())
    snprintf(where, sizeof where,
             "is in no folder of RIG_DRIVER_PATH, the only folders "
             "searched as RIG_DRIVER_PATH_ONLY is set");
  else
    snprintf(where, sizeof where,
             "is in no folder of RIG_DRIVER_PATH, nor beside librig-core "
             "(%s), nor in %s",
             lib, RIG_DRIVER_DIR);
  if (skipped) /* the advice first: the folders after it may be long */
    return rig__fail(RIG_UNAVAILABLE, NULL, 0,
                     "no driver '%s': relative entries of RIG_DRIVER_PATH are ignored "
                     "('%.*s'), give absolute ones (drivers found: %s); librig-driver-%s.so %s",
                     driver, (int)(skipped_len > 200 ? 200 : skipped_len), skipped, names, driver,
                     where);
  return rig__fail(RIG_UNAVAILABLE, NULL, 0,
                   "no driver '%s' (drivers found: %s): "
                   "librig-driver-%s.so %s",
                   driver, names, driver, where);
}

static rig_status load_file(const char *driver, const char *path, struct rig__plugin *pl) {
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) /* most often a vendor library the plugin links is missing */
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: %s", driver, dlerror());
  rig_edge_entry_fn entry = (rig_edge_entry_fn)dlsym(so, RIG_EDGE_ENTRY_NAME);
  const rig_edge_driver *t = entry ? entry() : NULL;
  rig_status st = t ? rig__check_table(t, path)
                    : rig__fail(RIG_INVALID, NULL, 0,
                                "%s: no %s symbol: define it with RIG_EDGE_DRIVER(table), "
                                "which exports it even under -fvisibility=hidden, and check "
                                "with nm -D that the plugin exports it",
                                path, RIG_EDGE_ENTRY_NAME);
  if (st != RIG_OK) {
    dlclose(so);
    return st;
  }
  snprintf(pl->driver, sizeof pl->driver, "%s", driver);
  snprintf(pl->path, sizeof pl->path, "%s", path);
  pl->table = t;
  return RIG_OK;
}

const char *rig__plugin_path(const struct rig__plugin *pl) { return pl->path; }

void rig__plugins_fork(rig__fork_phase ph) { rig__fork_mutex(&plugins_lock, ph); }

rig_status rig__plugin_load(const char *driver, struct rig__plugin **out_plugin,
                            const rig_edge_driver **out_table) {
  rig_status st = RIG_OK;
  pthread_mutex_lock(&plugins_lock);
  struct rig__plugin *pl = plugins;
  while (pl && strcmp(pl->driver, driver) != 0)
    pl = pl->next;
  if (!pl) {
    char path[1024];
    const char *skipped;
    size_t skipped_len;
    struct rig__plugin *n = calloc(1, sizeof *n);
    if (!n)
      st = rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", driver);
    else if (!find_file(driver, path, sizeof path, &skipped, &skipped_len))
      st = not_found(driver, skipped, skipped_len);
    else
      st = load_file(driver, path, n);
    if (st == RIG_OK) {
      n->next = plugins;
      plugins = pl = n;
    } else
      free(n);
  }
  pthread_mutex_unlock(&plugins_lock);
  if (st == RIG_OK) {
    if (out_plugin)
      *out_plugin = pl;
    *out_table = pl->table;
  }
  return st;
}
