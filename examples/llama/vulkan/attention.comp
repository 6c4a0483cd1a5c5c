// attention.comp: llama_attention of kernels.c: head h's scores over
// positions 0..pos of the cache, their softmax, and the weighted sum of
// the values. One invocation per head.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer I { int64_t v[]; };

layout(push_constant, std430) uniform Params {
  F q; F kc; F vc; F att; F out_; I step; int64_t n_heads, kv_mul, head_size, kv_dim, seq_len;
} p;

void main() {
  int64_t h = int64_t(gl_GlobalInvocationID.x);
  if (h >= p.n_heads)
    return;
  uint hs = uint(p.head_size), q = uint(h) * hs, att = uint(h * p.seq_len);
  uint kvo = uint(h / p.kv_mul) * hs, kv_dim = uint(p.kv_dim), pos = uint(p.step.v[0]);
  for (uint t = 0; t <= pos; t++) {
    precise float score = 0.0;
    for (uint i = 0; i < hs; i++)
      score += p.q.v[q + i] * p.kc.v[t * kv_dim + kvo + i];
    score /= sqrt(float(hs));
    p.att.v[att + t] = score;
  }
  float mx = p.att.v[att];
  for (uint t = 1; t <= pos; t++)
    mx = max(mx, p.att.v[att + t]);
  precise float sum = 0.0;
  for (uint t = 0; t <= pos; t++) {
    float e = exp(p.att.v[att + t] - mx);
    p.att.v[att + t] = e;
    sum += e;
  }
  for (uint t = 0; t <= pos; t++)
    p.att.v[att + t] /= sum;
  for (uint i = 0; i < hs; i++) {
    precise float o = 0.0;
    for (uint t = 0; t <= pos; t++)
      o += p.att.v[att + t] * p.vc.v[t * kv_dim + kvo + i];
    p.out_.v[q + i] = o;
  }
}
