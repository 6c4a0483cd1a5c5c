/* SPDX-License-Identifier: MIT */
/* cli.c: the helpers every command of the rig program uses (cli.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

int rig_cli_bad(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rig %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'rig %s --help'.\n", cmd);
  return 2;
}

void rig_cli_bytes(uint64_t n, char *out, size_t cap) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(out, cap, "%llu B", (unsigned long long)n);
  else
    snprintf(out, cap, "%.1f %s", v, unit[u]);
}

rig_status rig_cli_open_scratch(char *path, size_t n, rig_device **out) {
  const char *t = getenv("TMPDIR");
  snprintf(path, n, "%s/rig-scratch-%d", t && *t ? t : "/tmp", (int)getpid());
  rig_io_opener o = {.library = "io", .target = path, .flags = RIG_IO_CREATE};
  return rig_device_open_io(&o, out);
}
