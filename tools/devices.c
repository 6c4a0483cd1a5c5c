/* SPDX-License-Identifier: MIT */
/* devices.c: the devices rig info lists: rig_device_list's (the plugins
 * on the driver path, beside core and in the install folder, and each
 * device they offer), and an io device over a scratch file, since io
 * devices need a target a list cannot name. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "devices.h"

const char *rig_cli_why_word(const char *message) {
  if (strstr(message, ": no library:")) /* the CUDA driver's own word */
    return "no library";
  if (strstr(message, ": no device:"))
    return "no device";
  if (strstr(message, "is in no folder"))
    return "no plugin";
  if (strstr(message, "cannot open shared object") || strstr(message, "undefined symbol"))
    return "no library";
  /* A plugin that loads but that rig refuses: no entry symbol, another ABI
   * major, a short table, facts that break a rule. Its devices may be
   * there; the plugin is at fault, and the message says how. */
  if (strstr(message, "rig_edge_entry_v1") || strstr(message, "driver ABI") ||
      strstr(message, "driver table") || strstr(message, "io table") ||
      strstr(message, "facts break a rule"))
    return "bad plugin";
  return "no device";
}

static void set_entry(rig_cli_entry *e, const char *name, const char *driver, bool opens,
                      const char *why) {
  memset(e, 0, sizeof *e);
  snprintf(e->name, sizeof e->name, "%s", name);
  snprintf(e->driver, sizeof e->driver, "%s", driver);
  e->opens = opens;
  snprintf(e->why, sizeof e->why, "%s", opens ? "" : why);
}

/* io's devices are files: it opens where an io device opens over one. */
static size_t probe_io(rig_cli_entry *out, size_t cap) {
  char path[256];
  rig_device *d;
  if (cap == 0)
    return 0;
  if (rig_cli_open_scratch(path, sizeof path, &d) != RIG_OK) {
    set_entry(out, "io", "io", false, rig_error_last()->message);
    return 1;
  }
  set_entry(out, "io", "io", true, "");
  if (rig_device_close(d) != RIG_OK)
    set_entry(out, "io", "io", false, rig_error_last()->message);
  rig_device_release(d);
  unlink(path);
  return 1;
}

static size_t listed(rig_cli_entry *out, size_t cap) {
  rig_device_entry e[64];
  size_t n = 0, k = 0;
  if (rig_device_list(e, sizeof e / sizeof e[0], &n) != RIG_OK)
    n = 0;
  for (size_t i = 0; i < n && k < cap; i++) {
    if (strcmp(e[i].driver, "host") == 0 || strcmp(e[i].name, "host") == 0 ||
        strcmp(e[i].name, rig_device_name(rig_device_host())) == 0)
      continue; /* rig info describes the host itself */
    if (strcmp(e[i].driver, "io") == 0)
      continue; /* an io library offers no device by name: probe_io opens one */
    set_entry(&out[k], e[i].name, e[i].driver, e[i].opens, e[i].why);
    snprintf(out[k++].path, sizeof out->path, "%s", e[i].path);
  }
  return k;
}

const char *rig_cli_type(const rig_device *d) {
  return rig_device_type_name(rig_device_type_of(d));
}

size_t rig_cli_devices(rig_cli_entry *out, size_t cap) {
  size_t k = listed(out, cap);
  for (size_t i = 0; i < k; i++)
    if (strcmp(out[i].driver, "io") == 0)
      return k;
  return k + probe_io(out + k, cap - k);
}
