// One thread an element over a grid of more groups than one dispatch takes
// (65,535 on many devices): each writes f(its global index), so every
// group ID must be the grid's own.
#version 450

layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform PC { uint n; uint salt; } pc;

void main() {
    uint i = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (i < pc.n)
        o[i] = i * 2654435761u ^ pc.salt;
}
