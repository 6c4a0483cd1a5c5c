#!/bin/sh
# make-ptx.sh: the PTX of rig-llama's CUDA kernels, committed beside their
# .cu files so that neither the build nor the tests need a CUDA toolkit.
# Written by clang's CUDA front end (no toolkit headers or libdevice: the
# kernels use clang's PTX builtins, llama.cuh) for sm_75 with no fused multiply-adds (the sums round as the host's do), the oldest target
# the CUDA driver's tests take, with the PTX ISA version lowered to 7.0 as
# drivers/cuda/kernels/make-ptx.sh does. Run it after changing a kernel:
#
#   examples/llama/cuda/make-ptx.sh [CLANG]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
clang=${1:-clang}
for cu in "$here"/*.cu; do
  name=$(basename "$cu" .cu)
  "$clang" -x cuda --cuda-device-only --cuda-gpu-arch=sm_75 -nocudainc -nocudalib \
    -Wno-unknown-cuda-version -ffp-contract=off -O3 -S -o "$here/$name.ptx.tmp" "$cu"
  sed -e 's/^\.version [0-9.]*$/.version 7.0/' "$here/$name.ptx.tmp" > "$here/$name.ptx"
  rm -f "$here/$name.ptx.tmp"
  echo "$name.ptx"
done
