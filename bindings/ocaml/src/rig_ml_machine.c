/* rig_ml_machine.c: other machines (docs/remote.md): a machine's host
 * through a driver of other machines, the devices of that machine, and the
 * machine a device belongs to. Each open blocks on the network, so it runs
 * with the runtime lock released, over C copies of the OCaml strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig_ml.h"

static char *dup_or_null(value s) { return Is_block(s) ? strdup(String_val(Field(s, 0))) : NULL; }

/* open_host ~machine (Rig_edge.remote ?driver ?key_file ?hang_ms address):
 * rig_device_open_host(machine, {driver, address, key_file, hang_ms}). */
value rig_ml_device_open_host(value machine, value driver, value address, value key_file,
                              value hang_ms) {
  if (Long_val(hang_ms) < 0 || Long_val(hang_ms) > (intnat)UINT32_MAX)
    caml_invalid_argument("Rig_edge.remote: hang_ms out of 0 .. 2^32 - 1");
  char *m = strdup(String_val(machine)), *a = strdup(String_val(address));
  char *dr = dup_or_null(driver), *k = dup_or_null(key_file);
  if (!m || !a || (!dr && Is_block(driver)) || (!k && Is_block(key_file))) {
    free(m), free(a), free(dr), free(k);
    caml_raise_out_of_memory();
  }
  rig_host_opener o = {.driver = dr, .address = a, .key_file = k,
                       .hang_ms = (uint32_t)Long_val(hang_ms)};
  rig_device *d = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_device_open_host(m, &o, &d));
  free(m), free(a), free(dr), free(k);
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
