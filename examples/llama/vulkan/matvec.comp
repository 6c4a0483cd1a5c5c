// matvec.comp: llama_matvec of kernels.c: out[off + i] (+)= W[i, :] . x,
// W d rows of n, off the position times pos_mul. One invocation per row; the sum in the reference's order.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer I { int64_t v[]; };

layout(push_constant, std430) uniform Params { F w; F x; F out_; I step; int64_t n, d, pos_mul, acc; } p;

void main() {
  int64_t i = int64_t(gl_GlobalInvocationID.x);
  if (i >= p.d)
    return;
  uint n = uint(p.n), row = uint(i) * n;
  precise float val = 0.0;
  for (uint j = 0; j < n; j++)
    val += p.w.v[row + j] * p.x.v[j];
  uint at = uint(p.step.v[0] * p.pos_mul + i);
  if (p.acc != 0)
    val = p.out_.v[at] + val;
  p.out_.v[at] = val;
}
