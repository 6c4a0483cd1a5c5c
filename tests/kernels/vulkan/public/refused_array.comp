// Refused: an array of buffers under one binding.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Bufs { float v[]; } bufs[2];
void main() { bufs[1].v[gl_GlobalInvocationID.x] = bufs[0].v[gl_GlobalInvocationID.x]; }
