/* SPDX-License-Identifier: MIT */
/* profile_cmd.h: `rig profile` (profile_cmd.c). */
#ifndef RIG_TOOLS_PROFILE_CMD_H
#define RIG_TOOLS_PROFILE_CMD_H

/* Runs `rig profile [-o FILE] -- PROGRAM [ARGS...]`; argv[0] is
 * "profile". Returns the exit status rig should end with. */
int rig_profile_command(int argc, char **argv);

#endif
