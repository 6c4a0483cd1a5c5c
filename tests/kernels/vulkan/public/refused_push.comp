// Refused where the device takes fewer push-constant bytes than 256 (the
// least Vulkan allows is 128).
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Out { float y[]; };
layout(push_constant) uniform Big { float coef[64]; } p;
void main() { y[gl_GlobalInvocationID.x] = p.coef[gl_GlobalInvocationID.x % 64]; }
