// spin.comp: runs long enough to test asynchrony: one thread iterates a
// recurrence `rounds` times that the compiler cannot fold, then writes the
// result and a done flag, so a test sees that submit returned before the
// work ended, and that waits wait for it. Parameters (16 bytes, push
// constants): { uint32_t *out; uint32_t rounds; uint32_t seed; }.
// out[0] gets the recurrence's value, out[1] = 1 once done.
#version 460
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 1) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint v[]; };

layout(push_constant, std430) uniform Params {
  Words out_;
  uint rounds;
  uint seed;
} p;

void main() {
  uint x = p.seed;
  for (uint i = 0; i < p.rounds; i++)
    x = x * 1664525u + 1013904223u; // a linear congruential step
  p.out_.v[0] = x;
  p.out_.v[1] = 1u;
}
