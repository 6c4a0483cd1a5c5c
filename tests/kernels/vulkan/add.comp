// add.comp: the seed's add kernel for Vulkan: z[i] = x[i] + y[i] for i < n.
// Parameters as the C kernel's struct add { const float *x, *y; float *z;
// int64_t n; } (32 bytes: push constants), the pointers as buffer device
// addresses read through GL_EXT_buffer_reference. One thread per element:
// thread g * t + i of the grid adds element g * t + i, as the C kernel's
// thread numbers do. The group's size is the run's threads, given as
// specialization constants 0, 1, 2 (local_size_x_id ...).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer In { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Out { float v[]; };

layout(push_constant, std430) uniform Params {
  In x;
  In y;
  Out z;
  int64_t n;
} p;

void main() {
  int64_t i = int64_t(gl_GlobalInvocationID.x);
  if (i < p.n)
    p.z.v[uint(i)] = p.x.v[uint(i)] + p.y.v[uint(i)];
}
