/* rig_ml_io.c: buffers over an io device's contents (Buffer.of_io). */
#include "rig_ml.h"

/* of_io d off n: rig_buffer_of_io, which moves collected memory first and
 * so may lock: it runs with the runtime lock released. */
value rig_ml_buffer_of_io(value d, value off, value len) {
  if (Long_val(off) < 0 || Long_val(len) < 0)
    caml_invalid_argument("Rig.Buffer.of_io: a negative offset or length");
  rig_device *dev = Rig_device_val(d);
  uint64_t o = (uint64_t)Long_val(off);
  size_t n = (size_t)Long_val(len);
  rig_buffer *b = NULL;
  rig_status st;
  RIG_ML_BLOCKING(st, rig_buffer_of_io(dev, o, n, &b));
  rig_ml_check(st);
  return rig_ml_buffer_alloc_unpaced(b);
}
