// Kompute's first example, as its README writes it: three storage buffers
// in set 0 and one thread a group, each thread one element.
#version 450

layout (local_size_x = 1) in;

layout(set = 0, binding = 0) buffer buf_in_a { float in_a[]; };
layout(set = 0, binding = 1) buffer buf_in_b { float in_b[]; };
layout(set = 0, binding = 2) buffer buf_out_a { float out_a[]; };

void main() {
    uint index = gl_GlobalInvocationID.x;
    out_a[index] = in_a[index] * in_b[index];
}
