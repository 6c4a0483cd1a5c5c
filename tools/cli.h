/* SPDX-License-Identifier: MIT */
/* cli.h: what the commands of the rig program share. tools/rig.c reads the
 * command and its --help; each command lives in a file of its own (info.c,
 * demo.c, bench_cmd.c) and gets the arguments after its name. */
#ifndef RIG_TOOLS_CLI_H
#define RIG_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rig/rig.h>

/* The commands: each returns the process's exit status, 2 for a bad
 * argument. */
int rig_cli_info(int argc, char **argv);
int rig_cli_demo(int argc, char **argv);
int rig_cli_bench(int argc, char **argv);
/* Prints the benchmark groups, what each times and against what. */
void rig_cli_bench_help(void);

/* Prints "rig CMD: WHAT" and where the command's help is on stderr;
 * returns 2, the status of a bad argument. */
int rig_cli_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* n bytes in the largest binary unit that keeps it at least 1: "512 B",
 * "1.5 KiB", "15.6 GiB". */
void rig_cli_bytes(uint64_t n, char *out, size_t cap);

/* Opens an io device over a new file under $TMPDIR (else /tmp), whose path
 * it writes into path: rig info's and rig demo's scratch. The caller
 * unlinks it. */
rig_status rig_cli_open_scratch(char *path, size_t n, rig_device **out);

#endif
