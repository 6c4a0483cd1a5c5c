// embed.comp: llama_embed of kernels.c for Vulkan: x = the token's row of
// the table. Parameters: struct llama_embed (kernels.h) as push constants,
// the pointers buffer device addresses. One invocation per element.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer I { int64_t v[]; };

layout(push_constant, std430) uniform Params { F table; F x; I step; int64_t dim; } p;

void main() {
  int64_t i = int64_t(gl_GlobalInvocationID.x);
  if (i < p.dim)
    p.x.v[uint(i)] = p.table.v[uint(p.step.v[1] * p.dim + i)];
}
