// Refused where a group has less shared memory than 128 KiB.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { float d[]; };
shared float s[32768];
void main() {
    uint i = gl_LocalInvocationID.x;
    s[i * 512] = d[i];
    barrier();
    d[i] = s[((i + 1) % 64) * 512];
}
