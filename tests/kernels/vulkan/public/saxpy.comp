// y = a * x + y over n elements: the scalars in a uniform block (binding 0)
// and an offset in push constants, the group's size a specialization
// constant (local_size_x_id), as Vulkan compute samples write it.
#version 450

layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) uniform Params {
    float a;
    uint n;
} params;
layout(set = 0, binding = 1) readonly buffer X { float x[]; };
layout(set = 0, binding = 2) buffer Y { float y[]; };

layout(push_constant) uniform Push {
    uint first;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x + pc.first;
    if (i < params.n)
        y[i] = params.a * x[i] + y[i];
}
