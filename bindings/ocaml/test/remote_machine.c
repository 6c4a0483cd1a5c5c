/* A program's own C stub over a driver's record (Rig_edge.capability):
 * the names in the remote driver's "remote.machine" record, the devices
 * the machine's rig serve lists (drivers/remote/rig-remote.h). */
#define CAML_NAME_SPACE
#include <caml/alloc.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

#include <rig/drivers/rig-remote.h>

value rig_test_remote_machine_names(value addr) {
  CAMLparam1(addr);
  CAMLlocal1(names);
  const rig_remote_machine *m = (const rig_remote_machine *)Nativeint_val(addr);
  uint32_t n = m->size >= sizeof *m ? m->n : 0;
  names = caml_alloc(n, 0);
  for (uint32_t i = 0; i < n; i++)
    Store_field(names, i, caml_copy_string(m->entries[i].name));
  CAMLreturn(names);
}
