// ids.comp: every thread of a grid of any shape writes its number, so that
// a test sees each thread run once: word k of out, k the thread's linear
// number over the whole grid (x fastest), becomes k + 1. The grid's total
// size comes in the parameters, not from gl_NumWorkGroups, which counts
// one dispatch's groups where the driver splits a launch into several.
// Parameters (24 bytes, push constants):
// { uint32_t *out; uint32_t width, height, depth; } in threads.
#version 460
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };

layout(push_constant, std430) uniform Params {
  Words out_;
  uint width;
  uint height;
  uint depth;
} p;

void main() {
  uvec3 id = gl_GlobalInvocationID;
  uint k = (id.z * p.height + id.y) * p.width + id.x;
  atomicAdd(p.out_.v[k], k + 1u);
}
