// sum.comp: a parameter block larger than push constants hold (over 128
// bytes). The driver copies such a block into a buffer and pushes its
// device address; the kernel reads the block through it. The block
// (272 bytes): { int64_t *out; int64_t n; int64_t v[32]; }; one thread
// writes out[0] = v[0] + ... + v[n-1].
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer Out { int64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Block {
  Out out_;
  int64_t n;
  int64_t v[32];
};

layout(push_constant, std430) uniform Params {
  Block block; // the block's device address: it is over 128 bytes
} p;

void main() {
  if (gl_GlobalInvocationID.x != 0)
    return;
  int64_t s = 0;
  for (int64_t i = 0; i < p.block.n && i < 32; i++)
    s += p.block.v[uint(i)];
  p.block.out_.v[0] = s;
}
