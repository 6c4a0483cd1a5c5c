/* SPDX-License-Identifier: MIT */
/* serve.h: `rig serve` (tools/serve.c, docs/remote.md). */
#ifndef RIG_TOOLS_SERVE_H
#define RIG_TOOLS_SERVE_H

/* Runs `rig serve --listen ADDR:PORT --key FILE` with argv after "serve";
 * returns the exit status once SIGTERM or SIGINT stops it. */
int rig_serve_main(int argc, char **argv);
/* rig links UCX (for serve), which installs its memory hooks (malloc,
 * mmap, madvise) as it loads: under a sanitizer, whose interceptors sit on
 * the same calls, every command then crashed (rig info, at a thread's
 * start). So under a sanitizer, where UCX_MEM_* are not all set, this sets
 * them (hooks off; the user's own settings stay) and executes the program
 * again, once, with argv. Returns where nothing needs doing, or the exec
 * failed. Call it first in main, before any thread starts. */
void rig_serve_hooks_off(char **argv);

#endif
