// common.h: what the amdgpu test kernels share. They are OpenCL C built
// with no device library (clang's -nogpulib), so they take a work-item's
// index from the hardware's own registers: the workgroup id (an SGPR the
// kernel descriptor asks for), the work-item id (VGPR 0) and the
// workgroup's size from the dispatch packet, whose address the driver
// passes in the user SGPRs the descriptor asks for (code object v4; the
// driver writes a packet of the HSA layout for each dispatch).
// Pointers travel as ulong in the parameter structs: OpenCL C refuses
// pointers inside a kernel's struct argument, and the layout is then the
// CUDA kernels' byte for byte (drivers/cuda/kernels).
#define GLOBAL_ID()                                                                                \
  ((ulong)__builtin_amdgcn_workgroup_id_x() *                                                      \
       ((__constant ushort *)__builtin_amdgcn_dispatch_ptr())[2] +                                 \
   __builtin_amdgcn_workitem_id_x())
