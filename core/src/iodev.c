/* SPDX-License-Identifier: MIT */
/* iodev.c: what core keeps of an io device beside its memory (docs/io.md):
 * the flags it was opened with, which a second open must ask again, and
 * how a failure of its library ends: RIG_IO for an error of a call
 * (ERR-26), the device's loss for a fault (a page the file lost under a
 * mapping of it).
 */
#include "alloc.h"

/* The flags of rig_device_open_io's argument string; 0 for any other. */
uint32_t rig__io_flags(const char *args) {
  rig_edge_io_args a;
  return args && rig_edge_io_args_parse(args, &a) == RIG_EDGE_OK ? a.flags : 0;
}

/* A second open of open io device d with args: the same READ_ONLY and
 * DURABLE, or RIG_INVALID. CREATE asks for a file that is there already. */
rig_status rig__io_reopen(rig_device *d, const char *args) {
  const uint32_t kept = RIG_IO_READ_ONLY | RIG_IO_DURABLE;
  uint32_t want = rig__io_flags(args) & kept, have = d->io_flags & kept;
  if (want == have)
    return RIG_OK;
  return rig__fail(RIG_INVALID, d, 0,
                   "rig_device_open_io: %s is open %s%s; this open asks it %s%s: close it first",
                   d->name, have & RIG_IO_READ_ONLY ? "read-only" : "read-write",
                   have & RIG_IO_DURABLE ? " and durable" : "",
                   want & RIG_IO_READ_ONLY ? "read-only" : "read-write",
                   want & RIG_IO_DURABLE ? " and durable" : "");
}

rig_status(rig__io_failed)(rig_device *d, int r, uint64_t n, const rig_edge_error *err) {
  if (r == RIG_EDGE_FAULT) { /* its pages lost bytes: the device is lost */
    rig__lose_for(d, r, err->message);
    return rig__lost_error(d);
  }
  return rig__fail(RIG_IO, d, n, "%s: %s", d->name, err->message); /* ERR-26 */
}

RIG_API bool rig_device_is_io(const rig_device *d) { return d && d->drv->io; }

RIG_API rig_status rig_device_io_sync(rig_device *d) {
  if (!d || !d->drv->io)
    return rig__fail(RIG_INVALID, d, 0, "rig_device_io_sync: %s", d ? "not an io device" : "device is NULL");
  if (rig__is_lost(d))
    return rig__lost_error(d);
  rig_edge_error err = {0};
  int r = d->drv->io->sync ? RIG__DRIVER_OF(d, d->drv->io->sync(d->h, &err)) : RIG_EDGE_OK;
  return r == RIG_EDGE_OK ? RIG_OK : rig__io_failed(d, r, 0, &err);
}
