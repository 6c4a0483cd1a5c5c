// In the manner of ggml's Vulkan shaders (scale.comp, generic_head.glsl):
// bindings without a set (set 0), a push-constant block of sizes and
// parameters, and one binding read through two aliased declarations (as
// ggml's A and A_PACKED are), with a specialization constant choosing
// between them.
#version 450

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout (push_constant) uniform parameter {
    uint KX;
    uint KY;
    float param1;
    float param2;
} p;

layout (constant_id = 0) const bool USE_VEC4 = false;

layout (binding = 0) readonly buffer A { float data_a[]; };
layout (binding = 0) readonly buffer A4 { vec4 data_a4[]; };
layout (binding = 1) writeonly buffer D { float data_d[]; };

void main() {
    const uint i = gl_GlobalInvocationID.z * 262144 + gl_GlobalInvocationID.y * 512 +
                   gl_GlobalInvocationID.x;
    if (i >= p.KX)
        return;
    float v = USE_VEC4 ? data_a4[i / 4][i % 4] : data_a[i];
    data_d[i] = v * p.param1 + p.param2;
}
