// swiglu.comp: llama_swiglu of kernels.c: hb = silu(hb) * hb2. One
// invocation per element.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F { float v[]; };

layout(push_constant, std430) uniform Params { F hb; F hb2; int64_t n; } p;

void main() {
  int64_t i = int64_t(gl_GlobalInvocationID.x);
  if (i >= p.n)
    return;
  precise float val = p.hb.v[uint(i)];
  val *= (1.0 / (1.0 + exp(-val)));
  val *= p.hb2.v[uint(i)];
  p.hb.v[uint(i)] = val;
}
