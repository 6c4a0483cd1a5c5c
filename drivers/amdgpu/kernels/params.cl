// params.cl: a kernel whose one argument is the device address of a large
// parameter block (8 KiB): out[at] = v[0] + ... + v[n - 1], by one thread.
struct block { ulong out; long n; long at; long v[1021]; };
kernel void sum(global const struct block *b) {
  if (__builtin_amdgcn_workgroup_id_x() != 0 || __builtin_amdgcn_workitem_id_x() != 0)
    return;
  long s = 0;
  for (long i = 0; i < b->n; i++)
    s += b->v[i];
  ((global long *)b->out)[b->at] = s;
}
