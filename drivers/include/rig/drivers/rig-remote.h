/* SPDX-License-Identifier: MIT */
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

/* rig_device_capability(d, RIG_REMOTE_BYTES), d any device of another
 * machine: a uint64_t, the bytes this process's remote driver has moved
 * between this host's memory and other machines' memory, by copies to and
 * from them and by copies between two machines that passed through this
 * host; a copy that one machine's server puts straight into another's
 * (docs/remote.md, "Copies between two machines") adds nothing. It only
 * grows, while the driver is loaded; read it as a snapshot. */
#define RIG_REMOTE_BYTES "remote.bytes_here"

#endif
