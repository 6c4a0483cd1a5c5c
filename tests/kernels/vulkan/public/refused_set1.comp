// Refused: a buffer in descriptor set 1 (rig binds set 0 only).
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 1, binding = 0) writeonly buffer Out { float y[]; };
void main() { y[gl_GlobalInvocationID.x] = x[gl_GlobalInvocationID.x]; }
