/* rig-remote.h: what the remote driver registers for rig_device_capability
 * (PROP-39; docs/remote.md). Programs and `rig info --machine` include it. */
#ifndef RIG_REMOTE_H
#define RIG_REMOTE_H

#include <stdint.h>

/* rig_device_capability(host, RIG_REMOTE_MACHINE), host being another
 * machine's host (rig_device_open_host): what that machine's
 * rig_device_list names, as its `rig serve` ran it. The first query asks
 * the server (a LIST request, which opens every device there: it blocks up
 * to the hang bound); later ones answer the same record, which stays valid
 * until the host is closed. NULL on a device of this machine, on another
 * machine's device that is not its host, or where the server did not
 * answer (the machine is then lost, as any failed request loses it). */
#define RIG_REMOTE_MACHINE "remote.machine"
typedef struct rig_remote_entry {
  char name[64];   /* what rig_device_open_on(host, name) takes */
  char driver[32];
  int32_t type;    /* rig_device_type */
  int32_t opens;   /* 1: it opened there; 0: why says why not */
  char why[128];
} rig_remote_entry;
typedef struct rig_remote_machine {
  uint32_t size;   /* sizeof(rig_remote_machine) */
  uint32_t n;      /* entries used, at most 64 */
  rig_remote_entry entries[64];
} rig_remote_machine;

#endif
