/* SPDX-License-Identifier: MIT */
/* rig: the command line. `rig info` lists the devices that open here and
 * why the others do not; `rig demo` runs the memory guide's quick start on
 * the best device present; `rig bench` runs the benchmarks. Each command
 * lives in a file of its own (cli.h); this one reads the command and
 * answers --help. */
#include <stdio.h>
#include <string.h>

#include <rig/rig.h>

#include "cli.h"
#include "profile_cmd.h"
#ifdef RIG_HAVE_SERVE
#include "serve.h"
#endif

/* rig_profile_command takes its own name as argv[0]. */
static int run_profile(int argc, char **argv) { return rig_profile_command(argc + 1, argv - 1); }

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
  const char *help; /* usage line, then what it does */
  void (*more_help)(void); /* what follows help, or NULL */
} command;

static const command commands[] = {
    {"info", rig_cli_info, "list the devices that open here, and why others do not",
     "usage: rig info [--json] [DEVICE]\n"
     "       rig info [--json] --machine NAME=ADDR:PORT --key FILE\n"
     "\n"
     "Without DEVICE: a table of every device that opens here (the host, each\n"
     "device of each driver plugin found, an io device over a file) with its\n"
     "type, model, driver and driver version, arch, memory total, memory rig\n"
     "holds on it now (IN USE) and its budget, then each driver that does not\n"
     "open, with the reason in a word (no plugin, no library, bad plugin, no\n"
     "device) and the open's message.\n"
     "\n"
     "With DEVICE (host, io, memory:x, vulkan:0, cuda:1, ...): that device's\n"
     "every fact, and the fields of the capability records its driver offers\n"
     "(vulkan.device, vulkan.validation, cuda.device). Exits 1 when it does\n"
     "not open.\n"
     "\n"
     "With --machine: the same table for another machine, whose `rig serve`\n"
     "listens at ADDR:PORT and holds the key in FILE (docs/remote.md): its\n"
     "host (CPU@NAME), then each device its server lists that opens there\n"
     "(memory:a@NAME, ...), with the facts it states, then those that do not.\n"
     "\n"
     "--json   the same as one JSON object: {\"rig_version\", \"devices\": [...],\n"
     "         \"unavailable\": [...]}, or one device's object. Sizes are in\n"
     "         bytes; null is unknown (a budget: unlimited).\n",
     NULL},
    {"demo", rig_cli_demo, "run the quick start on the best device present",
     "usage: rig demo\n"
     "\n"
     "Copies 1024 floats to the best device that opens (cuda:0, vulkan:0,\n"
     "amdgpu:0, else a memory device standing for a GPU), doubles them there\n"
     "(a kernel on a GPU, host code elsewhere), copies them back and checks\n"
     "them, then passes them through a file on an io device; last, the add\n"
     "example on the host. Prints each step and the point it made; exits 0\n"
     "only when every value is right.\n",
     NULL},
    {"bench", rig_cli_bench, "measure rig against what a program would do without it",
     "usage: rig bench [GROUP...]\n"
     "\n"
     "Runs the benchmark groups named (all but stress when none is): each\n"
     "row times one operation done through rig and the same work done\n"
     "directly (its anchor), alternating them, and prints the best time per\n"
     "operation of each and the ratio rig / anchor (below 1: rig is faster).\n"
     "Progress goes to stderr; the table to stdout, a line at a time.\n"
     "Groups that need what this install lacks (the test driver, the bench\n"
     "kernels) say so and are skipped.\n",
     rig_cli_bench_help},
    {"profile", run_profile, "run a program with every device's work timed, into a trace file",
     "usage: rig profile [-o FILE] -- PROGRAM [ARGS...]\n"
     "\n"
     "Runs PROGRAM with RIG_PROFILE set, so that rig times the work of every\n"
     "device that times work (host launches, Vulkan, CUDA) while it runs, and\n"
     "writes the records at its exit as a Chrome trace (Trace Event Format,\n"
     "JSON object form) to FILE (rig-profile.json by default), which Perfetto\n"
     "and chrome://tracing show as a timeline per device and queue. Exits with\n"
     "PROGRAM's status.\n",
     NULL},
#ifdef RIG_HAVE_SERVE
    {"serve", rig_serve_main, "make this machine's devices available to other machines (UCX)",
     "usage: rig serve [--listen ADDR:PORT] --key FILE\n"
     "\n"
     "Listens on ADDR:PORT (127.0.0.1:13370 by default; port 0 takes a free\n"
     "one; the first line printed names the port) over UCX and runs the\n"
     "requests of peers that prove they hold the secret in FILE (a challenge\n"
     "both ways: the key never goes on the wire) with this machine's devices,\n"
     "logging each connection to stderr. UCX uses only the network device\n"
     "that holds ADDR (all of them for 0.0.0.0), unless UCX_NET_DEVICES is\n"
     "set. FILE must be readable by its owner alone (chmod 600 FILE), as ssh\n"
     "asks of a private key. SIGTERM or SIGINT stops it (docs/remote.md).\n",
     NULL},
#endif
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int usage(FILE *out) {
  fprintf(out, "usage: rig COMMAND [ARGS]   (rig %s)\n\ncommands:\n", rig_version());
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\n'rig COMMAND --help' describes one. rig --version prints the version.\n");
  return out == stdout ? 0 : 2;
}

static bool asks_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
      return true;
  return false;
}

int main(int argc, char **argv) {
#ifdef RIG_HAVE_SERVE
  rig_serve_hooks_off(argv);
#endif
  if (argc < 2) {
    fprintf(stderr, "rig: no command given\n");
    return usage(stderr);
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)
    return usage(stdout);
  if (strcmp(argv[1], "--version") == 0) {
    printf("rig %s\n", rig_version());
    return 0;
  }
  for (size_t i = 0; i < NCOMMANDS; i++) {
    if (strcmp(argv[1], commands[i].name) != 0)
      continue;
    if (asks_help(argc - 2, argv + 2)) {
      fputs(commands[i].help, stdout);
      if (commands[i].more_help)
        commands[i].more_help();
      return 0;
    }
    return commands[i].run(argc - 2, argv + 2);
  }
  fprintf(stderr, "rig: no command '%s'\n", argv[1]);
  return usage(stderr);
}
