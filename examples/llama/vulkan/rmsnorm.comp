// rmsnorm.comp: llama_rmsnorm of kernels.c: o = w * (x / rms(x)). Each
// invocation sums all of x in the reference's order (precise: no fused
// multiply-adds), then writes its element. One invocation per element.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F { float v[]; };

layout(push_constant, std430) uniform Params { F x; F w; F o; int64_t n; } p;

void main() {
  int64_t i = int64_t(gl_GlobalInvocationID.x);
  if (i >= p.n)
    return;
  precise float ss = 0.0;
  for (uint j = 0; j < uint(p.n); j++)
    ss += p.x.v[j] * p.x.v[j];
  ss /= float(p.n);
  ss += 1e-5;
  ss = 1.0 / sqrt(ss);
  precise float o = p.w.v[uint(i)] * (ss * p.x.v[uint(i)]);
  p.o.v[uint(i)] = o;
}
