/* rig_ml_machine.c: other machines (docs/remote.md): a machine's host
 * through a driver of other machines, the devices of that machine, and the
 * machine a device belongs to. Each open blocks on the network, so it runs
 * with the runtime lock released, over C copies of the OCaml strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig_ml.h"

/* The machine's name, then o's address, driver and key file, copied into
 * one block that the caller frees (the name is its start): the runtime
 * lock is released while they are used. An absent option is NULL. */
static char *copy_opener(value machine, value driver, value address, value key_file,
                         rig_host_opener *o) {
  value s[4] = {machine, address, Is_block(driver) ? Field(driver, 0) : Val_unit,
                Is_block(key_file) ? Field(key_file, 0) : Val_unit};
  size_t n = 0;
  for (int i = 0; i < 4; i++)
    n += s[i] == Val_unit ? 0 : caml_string_length(s[i]) + 1;
  char *block = malloc(n), *p = block, *out[4] = {NULL, NULL, NULL, NULL};
  if (!block)
    caml_raise_out_of_memory();
  for (int i = 0; i < 4; i++)
    if (s[i] != Val_unit) {
      size_t k = caml_string_length(s[i]) + 1;
      out[i] = memcpy(p, String_val(s[i]), k);
      p += k;
    }
  o->address = out[1], o->driver = out[2], o->key_file = out[3];
  return block;
}

/* open_host ~machine (Rig_edge.remote ?driver ?key_file ?hang_ms address):
 * rig_device_open_host(machine, {driver, address, key_file, hang_ms}). */
value rig_ml_device_open_host(value machine, value driver, value address, value key_file,
                              value hang_ms) {
  if (Long_val(hang_ms) < 0 || Long_val(hang_ms) > (intnat)UINT32_MAX)
    caml_invalid_argument("Rig_edge.remote: hang_ms out of 0 .. 2^32 - 1");
  rig_host_opener o = {.hang_ms = (uint32_t)Long_val(hang_ms)};
  char *m = copy_opener(machine, driver, address, key_file, &o);
  rig_device *d = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_open_host(m, &o, &d));
  free(m);
  return rig_ml_opened(st, d);
}

/* The device name of on's machine: rig_device_open_on where on is that
 * machine's host, else "NAME@MACHINE" through the machine's open host, and
 * name itself where on is a device of this machine. */
value rig_ml_device_open_on(value on, value name) {
  rig_device *h = Rig_device_val(on);
  const char *machine = rig_device_machine(h);
  size_t n = caml_string_length(name) + (machine ? strlen(machine) + 2 : 1);
  char *full = malloc(n), host_name[80];
  if (!full)
    caml_raise_out_of_memory();
  if (machine) {
    snprintf(full, n, "%s@%s", String_val(name), machine);
    snprintf(host_name, sizeof host_name, "CPU@%s", machine);
  } else
    snprintf(full, n, "%s", String_val(name));
  int via_host = machine && strcmp(rig_device_name(h), host_name) == 0;
  rig_device *d = NULL;
  rig_status st;
  if (via_host) {
    full[caml_string_length(name)] = 0; /* the name alone */
    RIG_ML_BLOCKING(st, rig_device_open_on(h, full, &d));
  } else
    RIG_ML_BLOCKING(st, rig_device_open(full, &d));
  free(full);
  return rig_ml_opened(st, d);
}

value rig_ml_device_machine(value d) {
  const char *m = rig_device_machine(Rig_device_val(d));
  return m ? rig_ml_some(caml_copy_string(m)) : Val_int(0);
}
