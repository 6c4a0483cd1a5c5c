// Refused: a combined image sampler beside a buffer.
#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Out { vec4 o[]; };
layout(set = 0, binding = 1) uniform sampler2D tex;
void main() { o[gl_GlobalInvocationID.x] = texture(tex, vec2(0.5)); }
