// double.comp: `rig demo`'s kernel: x[i] *= 2 for i < n. Parameters
// (16 bytes, push constants): { float *x; int64_t n; }; any group size.
// tools/rig.c embeds its SPIR-V (the words glslangValidator gives with
// --target-env vulkan1.2); the test vulkan-demo-kernel checks they agree.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

layout(push_constant, std430) uniform Params {
  Floats x;
  int64_t n;
} p;

void main() {
  int64_t i = int64_t(gl_GlobalInvocationID.x);
  if (i < p.n)
    p.x.v[uint(i)] *= 2.0;
}
