/* SPDX-License-Identifier: MIT */
/* list.h: another machine's device list, for the remote host's
 * RIG_REMOTE_MACHINE capability (rig-remote.h, list.c). */
#ifndef RIG_REMOTE_LIST_H
#define RIG_REMOTE_LIST_H

#include "link.h"
#include <rig/drivers/rig-remote.h>

/* Asks l's server for its devices (LIST). Returns a record the caller
 * frees, or NULL where the server did not answer or the reply does not
 * parse. Blocks up to the hang bound; locks the link. */
rig_remote_machine *rig_remote_list(rig_link *l);

#endif
