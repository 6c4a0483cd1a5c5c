// empty.comp: a dispatch that does nothing: bench P7 (bench/p7.c) times
// submit -> signal of one group of it through rig and through hand-written
// Vulkan. No parameters.
#version 460

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

void main() {}
