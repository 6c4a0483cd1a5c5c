// rope.comp: llama_rope of kernels.c: rotates the pairs of q, and of k at
// its row pos below kv_dim, by the table's cos and sin for pos. One invocation
// per pair.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer I { int64_t v[]; };

layout(push_constant, std430) uniform Params {
  F q; F k; F table; I step; int64_t dim, kv_dim, head_size;
} p;

void main() {
  int64_t i = 2 * int64_t(gl_GlobalInvocationID.x);
  if (i >= p.dim)
    return;
  int64_t pos = p.step.v[0];
  uint cs = uint(2 * (pos * (p.head_size / 2) + (i % p.head_size) / 2));
  float fcr = p.table.v[cs], fci = p.table.v[cs + 1];
  precise float q0 = p.q.v[uint(i)], q1 = p.q.v[uint(i) + 1];
  p.q.v[uint(i)] = q0 * fcr - q1 * fci;
  p.q.v[uint(i) + 1] = q0 * fci + q1 * fcr;
  if (i < p.kv_dim) {
    uint at = uint(pos * p.kv_dim + i);
    precise float k0 = p.k.v[at], k1 = p.k.v[at + 1];
    p.k.v[at] = k0 * fcr - k1 * fci;
    p.k.v[at + 1] = k0 * fci + k1 * fcr;
  }
}
