// Refused: 33 buffers, one more than the bindings rig pushes (32, the
// least maxPushDescriptors Vulkan allows).
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B0 { float v0[]; };
layout(set = 0, binding = 1) buffer B1 { float v1[]; };
layout(set = 0, binding = 2) buffer B2 { float v2[]; };
layout(set = 0, binding = 3) buffer B3 { float v3[]; };
layout(set = 0, binding = 4) buffer B4 { float v4[]; };
layout(set = 0, binding = 5) buffer B5 { float v5[]; };
layout(set = 0, binding = 6) buffer B6 { float v6[]; };
layout(set = 0, binding = 7) buffer B7 { float v7[]; };
layout(set = 0, binding = 8) buffer B8 { float v8[]; };
layout(set = 0, binding = 9) buffer B9 { float v9[]; };
layout(set = 0, binding = 10) buffer B10 { float v10[]; };
layout(set = 0, binding = 11) buffer B11 { float v11[]; };
layout(set = 0, binding = 12) buffer B12 { float v12[]; };
layout(set = 0, binding = 13) buffer B13 { float v13[]; };
layout(set = 0, binding = 14) buffer B14 { float v14[]; };
layout(set = 0, binding = 15) buffer B15 { float v15[]; };
layout(set = 0, binding = 16) buffer B16 { float v16[]; };
layout(set = 0, binding = 17) buffer B17 { float v17[]; };
layout(set = 0, binding = 18) buffer B18 { float v18[]; };
layout(set = 0, binding = 19) buffer B19 { float v19[]; };
layout(set = 0, binding = 20) buffer B20 { float v20[]; };
layout(set = 0, binding = 21) buffer B21 { float v21[]; };
layout(set = 0, binding = 22) buffer B22 { float v22[]; };
layout(set = 0, binding = 23) buffer B23 { float v23[]; };
layout(set = 0, binding = 24) buffer B24 { float v24[]; };
layout(set = 0, binding = 25) buffer B25 { float v25[]; };
layout(set = 0, binding = 26) buffer B26 { float v26[]; };
layout(set = 0, binding = 27) buffer B27 { float v27[]; };
layout(set = 0, binding = 28) buffer B28 { float v28[]; };
layout(set = 0, binding = 29) buffer B29 { float v29[]; };
layout(set = 0, binding = 30) buffer B30 { float v30[]; };
layout(set = 0, binding = 31) buffer B31 { float v31[]; };
layout(set = 0, binding = 32) buffer B32 { float v32[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    v0[i] = v1[i] + v2[i] + v3[i] + v4[i] + v5[i] + v6[i] + v7[i] + v8[i] + v9[i] + v10[i] + v11[i] + v12[i] + v13[i] + v14[i] + v15[i] + v16[i] + v17[i] + v18[i] + v19[i] + v20[i] + v21[i] + v22[i] + v23[i] + v24[i] + v25[i] + v26[i] + v27[i] + v28[i] + v29[i] + v30[i] + v31[i] + v32[i];
}
