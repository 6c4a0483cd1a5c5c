// spin.comp: work that runs long enough to test asynchrony: thread k of
// the grid (x only) iterates a recurrence that the compiler cannot fold
// `rounds` times from seed + k and writes the result to out[k], so a test
// sees that submit returned before the work ended, that waits wait for it,
// and that every thread ran. Parameters (16 bytes, push constants):
// { uint32_t *out; uint32_t rounds; uint32_t seed; }.
//
// The length comes from many threads, not from one long loop: lavapipe
// (llvmpipe's gallivm) ends a loop after 65535 iterations, so rounds must
// stay below that. 256 groups of 64 threads at 60000 rounds take about
// 0.5 s on lavapipe with two cores.
#version 460
#extension GL_EXT_buffer_reference : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Words { uint v[]; };

layout(push_constant, std430) uniform Params {
  Words out_;
  uint rounds;
  uint seed;
} p;

void main() {
  uint k = gl_GlobalInvocationID.x;
  uint x = p.seed + k;
  for (uint i = 0; i < p.rounds; i++)
    x = x * 1664525u + 1013904223u; // a linear congruential step
  p.out_.v[k] = x;
}
