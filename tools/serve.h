/* serve.h: `rig serve` (tools/serve.c, docs/remote.md). */
#ifndef RIG_TOOLS_SERVE_H
#define RIG_TOOLS_SERVE_H

/* Runs `rig serve --listen ADDR:PORT --key FILE` with argv after "serve";
 * returns the exit status once SIGTERM or SIGINT stops it. */
int rig_serve_main(int argc, char **argv);

#endif
