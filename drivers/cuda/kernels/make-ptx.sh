#!/bin/sh
# make-ptx.sh: the PTX of the CUDA driver's test kernels, committed beside
# their .cu files so that neither the build nor the tests need a toolkit.
# Run it after changing a .cu file, where nvcc is (CUDA 12 or 13):
#
#   drivers/cuda/kernels/make-ptx.sh [NVCC]
#
# PTX for the virtual architecture compute_75 (Turing, the oldest CUDA 13
# compiles for), which the driver's JIT compiles for the GPU it runs on,
# any of sm_75 and later. nvcc writes the PTX ISA version of its own
# release (.version 9.0 for CUDA 13), which drivers older than it refuse
# to JIT; these kernels use nothing past PTX ISA 7.0 (CUDA 11.0), so the
# script states that version, and the build test checks each file with
# ptxas (tests: ptxas-NAME), so a kernel that came to need more fails there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${1:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
for cu in "$here"/*.cu; do
  name=$(basename "$cu" .cu)
  "$nvcc" -ptx -arch=compute_75 -O3 -o "$here/$name.ptx.tmp" "$cu"
  sed -e 's/^\.version [0-9.]*$/.version 7.0/' "$here/$name.ptx.tmp" > "$here/$name.ptx"
  rm -f "$here/$name.ptx.tmp"
  echo "$name.ptx"
done
