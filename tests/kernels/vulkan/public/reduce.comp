// A sum by groups: a grid-stride loop (its stride from gl_NumWorkGroups),
// then a tree in shared memory sized by the group (gl_WorkGroupSize.x),
// with a barrier at each step; each group writes its partial sum.
#version 450

layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) readonly buffer In { uint data[]; };
layout(set = 0, binding = 1) writeonly buffer Out { uint partial[]; };

layout(push_constant) uniform PC { uint n; } pc;

shared uint sdata[gl_WorkGroupSize.x];

void main() {
    const uint lid = gl_LocalInvocationID.x;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint sum = 0;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride)
        sum += data[i];
    sdata[lid] = sum;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
        if (lid < s)
            sdata[lid] += sdata[lid + s];
        barrier();
    }
    if (lid == 0)
        partial[gl_WorkGroupID.x] = sdata[0];
}
