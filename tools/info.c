/* SPDX-License-Identifier: MIT */
/* info.c: `rig info`, in the manner of `vulkaninfo --summary` and
 * `nvidia-smi`: a table of the devices that open here (name, type, driver
 * and its version, arch, memory total, in use and budget), then the
 * drivers that do not open and why; `rig info DEVICE` prints one device's
 * every fact and capability record, `--json` the same as JSON. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rig/rig.h>

#include <rig/drivers/rig-cuda.h>
#include <rig/drivers/rig-remote.h>
#include <rig/drivers/rig-vulkan.h>
#include "cli.h"
#include "devices.h"
#include "record.h"

/* ---- the facts of one device -------------------------------------------- */

static void host_model(char *out, size_t cap) {
  char line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  snprintf(out, cap, "%s", "");
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(out, cap, "%s", colon + 2);
      out[strcspn(out, "\n")] = 0;
      break;
    }
  }
  if (f)
    fclose(f);
}

/* The drivers built with rig: their version is rig's. */
static bool ships_with_rig(const char *driver) {
  static const char *const own[] = {"host", "memory", "io",     "vulkan",
                                    "cuda", "amdgpu", "sample", "test"};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (strcmp(driver, own[i]) == 0)
      return true;
  return false;
}

/* A Vulkan API version, "1.3.230". */
static void vk_version(char *out, size_t cap, uint32_t v) {
  snprintf(out, cap, "%u.%u.%u", (v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff);
}

static void vulkan_record(rig_cli_record *r, const rig_vulkan_device *v) {
  static const char *const types[] = {"other", "integrated", "discrete", "virtual", "cpu"};
  const char *g = RIG_VULKAN_DEVICE;
  char api[32];
  vk_version(api, sizeof api, v->api_version);
  rig_cli_str(r, g, "name", "%s", v->name);
  rig_cli_str(r, g, "device_type", "%s", v->device_type < 5 ? types[v->device_type] : "other");
  rig_cli_str(r, g, "vendor_id", "0x%04x", v->vendor_id);
  rig_cli_str(r, g, "device_id", "0x%04x", v->device_id);
  rig_cli_str(r, g, "api_version", "%s", api);
  rig_cli_str(r, g, "driver_name", "%s", v->driver_name);
  rig_cli_str(r, g, "driver_info", "%s", v->driver_info);
  rig_cli_str(r, g, "driver_version", "0x%08x", v->driver_version);
  rig_cli_size(r, g, "memory", v->memory_bytes);
}

static void cuda_record(rig_cli_record *r, const rig_cuda_device *c) {
  const char *g = RIG_CUDA_DEVICE;
  rig_cli_str(r, g, "name", "%s", c->name);
  rig_cli_num(r, g, "ordinal", (uint64_t)c->ordinal);
  rig_cli_str(r, g, "compute_capability", "%d.%d", c->cc_major, c->cc_minor);
  rig_cli_num(r, g, "multiprocessors", (uint64_t)c->sm_count);
  rig_cli_str(r, g, "driver_version", "%d.%d", c->driver_version / 1000, c->driver_version % 1000 / 10);
  rig_cli_size(r, g, "memory", c->memory_bytes);
  rig_cli_bool(r, g, "stream_memory_operations", c->stream_mem_ops != 0);
}

/* The capability records rig knows of that d's driver offers. */
static void capabilities(rig_cli_record *r, const rig_device *d) {
  const rig_vulkan_device *v = rig_device_capability(d, RIG_VULKAN_DEVICE);
  const rig_vulkan_validation *val = rig_device_capability(d, RIG_VULKAN_VALIDATION);
  const rig_cuda_device *c = rig_device_capability(d, RIG_CUDA_DEVICE);
  if (v && v->size >= sizeof *v)
    vulkan_record(r, v);
  if (val && val->size >= sizeof *val) {
    rig_cli_bool(r, RIG_VULKAN_VALIDATION, "active", val->active);
    rig_cli_num(r, RIG_VULKAN_VALIDATION, "errors", val->errors);
  }
  if (c && c->size >= sizeof *c)
    cuda_record(r, c);
}

/* The driver's version: what a driver outside rig states in its facts
 * (edge ABI 1.9); rig's for the drivers built with it, and the vendor
 * driver's beneath where a capability record says. */
static void driver_version(rig_cli_record *r, const char *driver, const rig_device *d,
                           const rig_vulkan_device *v, const rig_cuda_device *c) {
  if (*rig_device_driver_version(d) && !ships_with_rig(driver))
    rig_cli_str(r, NULL, "driver_version", "%s", rig_device_driver_version(d));
  else if (v)
    rig_cli_str(r, NULL, "driver_version", "rig %s, %s", rig_version(), v->driver_info);
  else if (c)
    rig_cli_str(r, NULL, "driver_version", "rig %s, CUDA %d.%d", rig_version(),
                c->driver_version / 1000, c->driver_version % 1000 / 10);
  else if (ships_with_rig(driver))
    rig_cli_str(r, NULL, "driver_version", "rig %s", rig_version());
  else
    rig_cli_unknown(r, NULL, "driver_version", RIG_CLI_STR);
}

/* What the device is called by its maker, its type, its driver and its
 * memory, from the capability records where they say, else what rig
 * knows. */
static void identity(rig_cli_record *r, const rig_device *d, const char *driver) {
  const rig_vulkan_device *v = rig_device_capability(d, RIG_VULKAN_DEVICE);
  const rig_cuda_device *c = rig_device_capability(d, RIG_CUDA_DEVICE);
  char model[256] = "";
  if (d == rig_device_host())
    host_model(model, sizeof model);
  rig_cli_str(r, NULL, "model", "%s",
              v                               ? v->name
              : c                             ? c->name
              : *model                        ? model
              : *rig_device_model(d)          ? rig_device_model(d)
              : rig_device_is_io(d)           ? "a file"
              : strcmp(driver, "memory") == 0 ? "host memory"
                                              : "");
  rig_cli_str(r, NULL, "type", "%s", rig_cli_type(d));
  rig_cli_str(r, NULL, "driver", "%s", driver);
  driver_version(r, driver, d, v, c);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (v || c)
    rig_cli_size(r, NULL, "memory_total", v ? v->memory_bytes : c->memory_bytes);
  else if (d == rig_device_host() && pages > 0 && page > 0)
    rig_cli_size(r, NULL, "memory_total", (uint64_t)pages * (uint64_t)page);
  else
    rig_cli_unknown(r, NULL, "memory_total", RIG_CLI_BYTES);
}

/* Every fact of d, then its capability records. */
static void describe(rig_cli_record *r, rig_device *d, const char *driver) {
  uint64_t cache = 0, signaled = 0;
  const char *bus = rig_device_bus(d);
  r->n = 0;
  if (d == rig_device_host())
    driver = "host"; /* core's own, whatever name it was asked by */
  rig_cli_str(r, NULL, "name", "%s", rig_device_name(d));
  identity(r, d, driver);
  rig_cli_size(r, NULL, "memory_in_use", rig_device_allocated(d));
  rig_cli_size(r, NULL, "budget", rig_device_budget(d));
  rig_cli_str(r, NULL, "arch", "%s", rig_device_arch(d));
  rig_cli_str(r, NULL, "instruction_set", "%s", rig_device_instruction_set(d));
  if (bus && *bus)
    rig_cli_str(r, NULL, "bus", "%s", bus);
  else
    rig_cli_unknown(r, NULL, "bus", RIG_CLI_STR);
  rig_cli_bool(r, NULL, "runs_on_host", rig_device_runs_on_host(d));
  rig_cli_bool(r, NULL, "computes", rig_device_computes(d));
  rig_cli_bool(r, NULL, "reaches_host", rig_device_reaches(d, rig_device_host()));
  rig_cli_num(r, NULL, "alignment", rig_device_alignment(d));
  if (rig_device_cache_bytes(d, &cache))
    rig_cli_size(r, NULL, "cache", cache);
  else
    rig_cli_unknown(r, NULL, "cache", RIG_CLI_BYTES);
  rig_cli_num(r, NULL, "submitted", rig_device_submitted(d));
  if (rig_device_signaled(d, &signaled) == RIG_OK)
    rig_cli_num(r, NULL, "signaled", signaled);
  else
    rig_cli_unknown(r, NULL, "signaled", RIG_CLI_NUM);
  capabilities(r, d);
}

/* ---- the devices here ---------------------------------------------------- */

/* The driver of a device name: what comes before its ':' (host, io). */
static void driver_of(const char *name, char *out, size_t cap) {
  snprintf(out, cap, "%.*s", (int)strcspn(name, ":"), name);
}

/* Opens name: the host, "io" as an io device over a scratch file (whose
 * path goes into scratch), or by rig_device_open. */
static rig_status open_named(const char *name, char *scratch, size_t cap, rig_device **d) {
  scratch[0] = 0;
  if (strcmp(name, "host") == 0 || strcmp(name, rig_device_name(rig_device_host())) == 0) {
    *d = rig_device_host();
    return RIG_OK;
  }
  if (strcmp(name, "io") == 0)
    return rig_cli_open_scratch(scratch, cap, d);
  return rig_device_open(name, d);
}

/* Describes the device called name into r, closing it after; false, with
 * rig_error_last() saying why, where it does not open. */
static bool describe_named(const char *name, const char *driver, rig_cli_record *r) {
  char scratch[256];
  rig_device *d;
  if (open_named(name, scratch, sizeof scratch, &d) != RIG_OK)
    return false;
  describe(r, d, driver);
  snprintf(r->f[0].s, sizeof r->f[0].s, "%s", name); /* "io", not the scratch file */
  bool closed = d == rig_device_host() || rig_device_close(d) == RIG_OK;
  if (d != rig_device_host())
    rig_device_release(d);
  if (*scratch)
    unlink(scratch);
  return closed;
}

typedef struct found {
  rig_cli_entry e[64];
  size_t n;
  rig_cli_record rec[65]; /* the host, then each entry that opens */
  size_t nrec;
} found;

/* The host and every device listed that opens, described; an entry that
 * no longer opens says why. */
static void find(found *f) {
  f->n = rig_cli_devices(f->e, sizeof f->e / sizeof f->e[0]);
  describe(&f->rec[0], rig_device_host(), "host");
  f->nrec = 1;
  for (size_t i = 0; i < f->n; i++) {
    rig_cli_entry *e = &f->e[i];
    if (!e->opens)
      continue;
    if (describe_named(e->name, e->driver, &f->rec[f->nrec]))
      f->nrec++;
    else {
      e->opens = false;
      snprintf(e->why, sizeof e->why, "%s", rig_error_last()->message);
    }
  }
}

/* The table's columns: a fact's key and its heading. */
static const char *const columns[][2] = {
    {"name", "DEVICE"}, {"type", "TYPE"},   {"model", "MODEL"},          {"driver", "DRIVER"},
    {"driver_version", "VERSION"}, {"arch", "ARCH"}, {"memory_total", "TOTAL"},
    {"memory_in_use", "IN USE"}, {"budget", "BUDGET"},
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])

static void row(const char *cells[NCOLUMNS], const int width[NCOLUMNS]) {
  for (size_t c = 0; c < NCOLUMNS; c++)
    printf("%-*s%s", c + 1 < NCOLUMNS ? width[c] : 0, cells[c], c + 1 < NCOLUMNS ? "  " : "\n");
}

/* One row per device, each column as wide as its widest cell. */
static void print_table(const found *f) {
  static char text[65][NCOLUMNS][256];
  const char *cells[NCOLUMNS];
  int width[NCOLUMNS];
  for (size_t c = 0; c < NCOLUMNS; c++) {
    width[c] = (int)strlen(columns[c][1]);
    for (size_t i = 0; i < f->nrec; i++) {
      const rig_cli_field *fd = rig_cli_get(&f->rec[i], columns[c][0]);
      rig_cli_text(fd, text[i][c], sizeof text[i][c]);
      if (!fd || !fd->known || !text[i][c][0]) /* a table says "-" for unknown */
        snprintf(text[i][c], sizeof text[i][c], "-");
      int w = (int)strlen(text[i][c]);
      width[c] = w > width[c] ? w : width[c];
    }
    cells[c] = columns[c][1];
  }
  row(cells, width);
  for (size_t i = 0; i < f->nrec; i++) {
    for (size_t c = 0; c < NCOLUMNS; c++)
      cells[c] = text[i][c];
    row(cells, width);
  }
}

static void print_unavailable(const found *f, const char *where) {
  bool any = false;
  for (size_t i = 0; i < f->n; i++) {
    const rig_cli_entry *e = &f->e[i];
    if (e->opens)
      continue;
    if (!any)
      printf("\nnot opening %s:\n", where);
    any = true;
    printf("  %-10s %-8s %-11s %s\n", e->name, e->driver, rig_cli_why_word(e->why), e->why);
  }
}

static void print_json(const found *f) {
  printf("{\n  \"rig_version\": ");
  rig_cli_json_string(stdout, rig_version());
  printf(",\n  \"devices\": [");
  for (size_t i = 0; i < f->nrec; i++) {
    printf("%s\n    ", i ? "," : "");
    rig_cli_print_json(stdout, &f->rec[i], 4);
  }
  printf("\n  ],\n  \"unavailable\": [");
  bool first = true;
  for (size_t i = 0; i < f->n; i++) {
    const rig_cli_entry *e = &f->e[i];
    if (e->opens)
      continue;
    const char *kv[][2] = {{"name", e->name}, {"driver", e->driver}, {"plugin", e->path},
                           {"reason", rig_cli_why_word(e->why)}, {"message", e->why}};
    printf("%s\n    {", first ? "" : ",");
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
      printf("%s", k ? ", " : "");
      rig_cli_json_string(stdout, kv[k][0]);
      printf(": ");
      rig_cli_json_string(stdout, kv[k][1]);
    }
    printf("}");
    first = false;
  }
  printf("%s]\n}\n", first ? "" : "\n  ");
}

static int info_all(bool json) {
  static found f; /* large: the records of up to 65 devices */
  find(&f);
  if (json) {
    print_json(&f);
    return 0;
  }
  /* An io device opens over a file, not by a name rig_device_list could
   * list (docs/finding-devices.md): its row shows that io devices open
   * here, over a scratch file, and is not counted among the devices. */
  size_t n = 0;
  bool io = false;
  for (size_t i = 0; i < f.nrec; i++) {
    const rig_cli_field *t = rig_cli_get(&f.rec[i], "type");
    bool is_io = t && strcmp(t->s, "io") == 0;
    io |= is_io;
    n += !is_io;
  }
  printf("rig %s: %zu device%s open%s here%s\n\n", rig_version(), n, n == 1 ? "" : "s",
         n == 1 ? "s" : "", io ? ", and io devices over files (the row io: a scratch file)" : "");
  print_table(&f);
  print_unavailable(&f, "here");
  printf("\n'rig info DEVICE' prints every fact of one device.\n");
  return 0;
}

static int info_one(const char *name, bool json) {
  static rig_cli_record r;
  char driver[32];
  driver_of(name, driver, sizeof driver);
  if (!describe_named(name, driver, &r)) {
    const char *m = rig_error_last()->message;
    fprintf(stderr, "rig info: %s does not open (%s): %s\n", name, rig_cli_why_word(m), m);
    return 1;
  }
  if (json) {
    rig_cli_print_json(stdout, &r, 0);
    printf("\n");
  } else {
    printf("%s\n", name);
    rig_cli_print_text(stdout, &r);
  }
  return 0;
}

/* ---- another machine's devices (docs/remote.md) --------------------------- */

/* Opens the host of "NAME=ADDR:PORT" with the key file, or says why not. */
static rig_device *machine_host(const char *spec, const char *key) {
  char name[64];
  const char *eq = strchr(spec, '=');
  rig_device *h = NULL;
  if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof name || !eq[1]) {
    fprintf(stderr, "rig info: --machine takes NAME=ADDR:PORT, not '%s'\n", spec);
    return NULL;
  }
  snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
  rig_host_opener o = {.address = eq + 1, .key_file = key};
  if (rig_device_open_host(name, &o, &h) != RIG_OK) {
    fprintf(stderr, "rig info: machine %s at %s does not open: %s\n", name, eq + 1,
            rig_error_last()->message);
    return NULL;
  }
  return h;
}

/* Describes the device the machine's list names, opened on its host. */
static bool describe_on(rig_device *host, const rig_remote_entry *e, rig_cli_record *r) {
  rig_device *d;
  if (rig_device_open_on(host, e->name, &d) != RIG_OK)
    return false;
  describe(r, d, e->driver);
  bool closed = d == host || rig_device_close(d) == RIG_OK;
  rig_device_release(d);
  return closed;
}

/* The machine's host, then every device its server lists that opens there,
 * described; an entry that does not open says why. */
static bool find_on(found *f, rig_device *host) {
  const rig_remote_machine *m = rig_device_capability(host, RIG_REMOTE_MACHINE);
  if (!m || m->size < sizeof *m)
    return false;
  describe(&f->rec[0], host, "remote");
  f->nrec = 1;
  f->n = 0;
  for (uint32_t i = 0; i < m->n && f->n < sizeof f->e / sizeof f->e[0]; i++) {
    const rig_remote_entry *e = &m->entries[i];
    if (strcmp(e->driver, "host") == 0 || strcmp(e->driver, "io") == 0 ||
        strcmp(e->driver, "remote") == 0)
      continue; /* the host is rec[0]; io's devices are files and remote's other
                   machines', which no list names */
    rig_cli_entry *c = &f->e[f->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", e->name);
    snprintf(c->driver, sizeof c->driver, "%s", e->driver);
    snprintf(c->why, sizeof c->why, "%s", e->why);
    c->opens = e->opens && describe_on(host, e, &f->rec[f->nrec]);
    if (c->opens)
      f->nrec++;
    else if (e->opens)
      snprintf(c->why, sizeof c->why, "%s", rig_error_last()->message);
  }
  return true;
}

static int info_machine(const char *spec, const char *key, bool json) {
  static found f;
  rig_device *h = machine_host(spec, key);
  if (!h)
    return 1;
  bool listed = find_on(&f, h);
  if (!listed)
    fprintf(stderr, "rig info: %s does not list its devices: %s\n", rig_device_name(h),
            rig_device_lost(h) ? rig_device_lost(h) : "a server without LIST");
  else if (json)
    print_json(&f);
  else {
    printf("rig %s: %zu device%s open%s on machine %s\n\n", rig_version(), f.nrec,
           f.nrec == 1 ? "" : "s", f.nrec == 1 ? "s" : "", rig_device_machine(h));
    char where[80];
    snprintf(where, sizeof where, "on %s", rig_device_machine(h));
    print_table(&f);
    print_unavailable(&f, where);
  }
  bool closed = rig_device_close(h) == RIG_OK;
  rig_device_release(h);
  return listed && closed ? 0 : 1;
}

int rig_cli_info(int argc, char **argv) {
  bool json = false;
  const char *device = NULL, *machine = NULL, *key = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--machine") == 0 && i + 1 < argc)
      machine = argv[++i];
    else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
      key = argv[++i];
    else if (argv[i][0] == '-')
      return rig_cli_bad("info", "no option '%s'", argv[i]);
    else if (device)
      return rig_cli_bad("info", "one device at a time: '%s', then '%s'", device, argv[i]);
    else
      device = argv[i];
  }
  if (machine && (!key || device))
    return rig_cli_bad("info", "--machine NAME=ADDR:PORT takes --key FILE, and no DEVICE");
  if (key && !machine)
    return rig_cli_bad("info", "--key goes with --machine");
  if (machine)
    return info_machine(machine, key, json);
  return device ? info_one(device, json) : info_all(json);
}
