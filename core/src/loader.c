/* loader.c: finds driver plugins at open time (ARCHITECTURE.md, Plugins).
 *
 * rig_open("NAME:ARGS") loads librig-driver-NAME.so from the first folder of
 * RIG_DRIVER_PATH (colon-separated) that has it, else from the install
 * folder RIG_DRIVER_DIR. Each plugin is loaded once per process with
 * dlopen(RTLD_NOW | RTLD_LOCAL) and kept for its life, since devices and
 * their memory may outlive any one open. The table's ABI is checked before
 * anything in it is called.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

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

/* Looks for the plugin file in one folder; true with path filled if found. */
static bool in_folder(const char *folder, size_t len, const char *driver, char *path,
                      size_t n) {
  if (len == 0)
    return false;
  int w = snprintf(path, n, "%.*s/librig-driver-%s.so", (int)len, folder, driver);
  return w > 0 && (size_t)w < n && access(path, F_OK) == 0;
}

/* Finds the plugin's file: RIG_DRIVER_PATH first, then the install folder. */
static bool find_file(const char *driver, char *path, size_t n) {
  const char *p = getenv("RIG_DRIVER_PATH");
  while (p && *p) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (in_folder(p, len, driver, path, n))
      return true;
    p = colon ? colon + 1 : NULL;
  }
  return in_folder(RIG_DRIVER_DIR, strlen(RIG_DRIVER_DIR), driver, path, n);
}

static rig_status load_file(const char *driver, const char *path, struct rig__plugin *pl) {
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) /* most often a vendor library the plugin links is missing */
    return rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: %s", driver, dlerror());
  rig_edge_entry_fn entry = (rig_edge_entry_fn)dlsym(so, RIG_EDGE_ENTRY_NAME);
  const rig_edge_driver *t = entry ? entry() : NULL;
  rig_status st = t ? rig__check_table(t, path)
                    : rig__fail(RIG_INVALID, NULL, 0, "%s: no %s symbol", path,
                                RIG_EDGE_ENTRY_NAME);
  if (st != RIG_OK) {
    dlclose(so);
    return st;
  }
  snprintf(pl->driver, sizeof pl->driver, "%s", driver);
  snprintf(pl->path, sizeof pl->path, "%s", path);
  pl->table = t;
  return RIG_OK;
}

rig_status rig__plugin_load(const char *driver, struct rig__plugin **out_plugin,
                            const rig_edge_driver **out_table) {
  rig_status st = RIG_OK;
  pthread_mutex_lock(&plugins_lock);
  struct rig__plugin *pl = plugins;
  while (pl && strcmp(pl->driver, driver) != 0)
    pl = pl->next;
  if (!pl) {
    char path[1024];
    struct rig__plugin *n = calloc(1, sizeof *n);
    if (!n)
      st = rig__fail(RIG_UNAVAILABLE, NULL, 0, "%s: out of memory", driver);
    else if (!find_file(driver, path, sizeof path))
      st = rig__fail(RIG_UNAVAILABLE, NULL, 0,
                     "no driver '%s': librig-driver-%s.so is in no folder of "
                     "RIG_DRIVER_PATH nor in %s",
                     driver, driver, RIG_DRIVER_DIR);
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
