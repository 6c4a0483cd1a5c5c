// fill.comp: a fill pattern: word i of dst becomes pattern + i * step, for
// i < n, so that a test sees which words a launch wrote and in what order
// it ran against copies and fills. Parameters (24 bytes, push constants):
// { uint32_t *dst; uint32_t pattern, step; uint32_t n; }.
#version 460
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Words { uint v[]; };

layout(push_constant, std430) uniform Params {
  Words dst;
  uint pattern;
  uint step;
  uint n;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n)
    p.dst.v[i] = p.pattern + i * p.step;
}
