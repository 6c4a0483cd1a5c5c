// A tiled matrix product C = A * B (row-major, M x K times K x N) with
// shared memory, written as ggml's mul_mm.comp sizes its tiles: the
// group's shape is specialization constants 0 and 1 (local_size_x_id,
// local_size_y_id) and the depth of a tile is constant 2; the shared
// arrays are sized by all three.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z = 1) in;

layout(constant_id = 0) const uint TN = 8;  // columns of a tile: threads on x
layout(constant_id = 1) const uint TM = 8;  // rows of a tile: threads on y
layout(constant_id = 2) const uint TK = 8;  // depth of a tile

layout(set = 0, binding = 0) readonly buffer MatA { float a[]; };
layout(set = 0, binding = 1) readonly buffer MatB { float b[]; };
layout(set = 0, binding = 2) writeonly buffer MatC { float c[]; };

layout(push_constant) uniform Sizes {
    uint M;
    uint N;
    uint K;
} sz;

shared float tile_a[TM * TK];
shared float tile_b[TK * TN];

void main() {
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    const uint col = gl_WorkGroupID.x * TN + tx;
    const uint row = gl_WorkGroupID.y * TM + ty;
    float acc = 0.0;
    for (uint k0 = 0; k0 < sz.K; k0 += TK) {
        for (uint k = tx; k < TK; k += TN)
            tile_a[ty * TK + k] = row < sz.M && k0 + k < sz.K ? a[row * sz.K + k0 + k] : 0.0;
        for (uint k = ty; k < TK; k += TM)
            tile_b[k * TN + tx] = col < sz.N && k0 + k < sz.K ? b[(k0 + k) * sz.N + col] : 0.0;
        barrier();
        for (uint k = 0; k < TK; k++)
            acc += tile_a[ty * TK + k] * tile_b[k * TN + tx];
        barrier();
    }
    if (row < sz.M && col < sz.N)
        c[row * sz.N + col] = acc;
}
