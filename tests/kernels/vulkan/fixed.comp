// fixed.comp: a kernel whose group size is fixed (LocalSize 64), not a
// specialization constant: the driver runs it only in groups of exactly
// 64 threads. Parameters: { uint32_t *dst; uint32_t n; } (16 bytes).
#version 460
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Words { uint v[]; };

layout(push_constant, std430) uniform Params {
  Words dst;
  uint n;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < p.n)
    p.dst.v[i] = 64u;
}
