#!/bin/sh
# make-objects.sh: the HSA code objects of the amdgpu driver's test kernels,
# committed beside their OpenCL C sources (as the CUDA driver commits PTX),
# so that neither the build nor the tests need a compiler for them. Run it
# after changing a .cl file:
#
#   drivers/amdgpu/kernels/make-objects.sh
#
# clang-14 (code object v4) builds each kernel for gfx900 (GFX9), gfx90a
# (GFX9 with its own descriptor rules) and gfx1030 (GFX10, wave32); clang-16,
# with lld-16, where installed, builds gfx1100 (GFX11) and code object v5 for gfx1030.
# -nogpulib: no device library (ROCm's) is needed; the kernels read the
# hardware's ids themselves (common.h).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build() { # CLANG TARGET VERSION SUFFIX [LINKER]
  cc=$1 target=$2 version=$3 suffix=$4 linker=${5:-}
  for cl in "$here"/*.cl; do
    name=$(basename "$cl" .cl)
    out="$here/$name-$target$suffix.co"
    flags="-x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=$target
      -mcode-object-version=$version -O3 -nogpulib -I$here"
    if [ -n "$linker" ]; then # compile, then link with the linker named
      # shellcheck disable=SC2086
      "$cc" $flags -c -o "$out.o" "$cl"
      "$linker" -shared -o "$out" "$out.o"
      rm -f "$out.o"
    else
      # shellcheck disable=SC2086
      "$cc" $flags -o "$out" "$cl"
    fi
    basename "$out"
  done
}
for t in gfx900 gfx90a gfx1030; do
  build clang-14 $t 4 ""
done
# clang-16 with its own linker (lld-16): lld-14 knows no v5 object.
if command -v clang-16 >/dev/null && command -v ld.lld-16 >/dev/null; then
  build clang-16 gfx1100 4 "" ld.lld-16
  build clang-16 gfx1030 5 "-v5" ld.lld-16
fi
