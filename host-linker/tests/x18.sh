#!/bin/sh
# x18.sh KERNEL_DIR CLANG PRESSURE_SOURCE: OBJ-2, x18 left alone.
#
# x18 is reserved on macOS and Windows, so arm64 kernels must never touch
# it: they are built with -ffixed-x18 (kernels/meson.build). This checks the
# built objects, not the flag: no arm64 kernel (*.aarch64.o) reads or
# writes x18 or w18. pressure.c keeps more values live than arm64 has
# registers to spare; built here without the flag it does use x18, which
# shows the check would see a kernel that breaks the rule.
# Exits 77 (skipped) where no arm64 disassembler is installed
# (binutils-aarch64-linux-gnu comes with gcc-aarch64-linux-gnu).
set -eu
kernels=$1
clang=$2
pressure=$3

if command -v aarch64-linux-gnu-objdump >/dev/null 2>&1; then
  objdump=aarch64-linux-gnu-objdump
elif command -v llvm-objdump >/dev/null 2>&1; then
  objdump=llvm-objdump
else
  echo "x18.sh: skipped: no arm64 disassembler (apt-get install binutils-aarch64-linux-gnu)"
  exit 77
fi

uses_x18() { # OBJECT: prints the instructions that name x18 or w18
  "$objdump" -d "$1" | grep -E '(^|[^A-Za-z0-9_])[xw]18([^0-9]|$)' || true
}

rc=0
found=0
for o in "$kernels"/*.aarch64.o; do
  [ -e "$o" ] || continue
  found=$((found + 1))
  hits=$(uses_x18 "$o")
  if [ -n "$hits" ]; then
    echo "x18.sh: $(basename "$o") touches x18 (OBJ-2):"
    echo "$hits" | head -5
    rc=1
  fi
done
if [ "$found" -eq 0 ]; then
  echo "x18.sh: no arm64 kernels in $kernels" >&2
  exit 1
fi
[ -e "$kernels/pressure.aarch64.o" ] || { echo "x18.sh: pressure.aarch64.o was not built" >&2; exit 1; }

# The control: the same kernel built without -ffixed-x18 uses x18.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$clang" -c -O2 -fPIC -ffreestanding --target=aarch64-none-unknown-elf "$pressure" \
  -o "$tmp/free.o"
if [ -z "$(uses_x18 "$tmp/free.o")" ]; then
  echo "x18.sh: pressure.c no longer uses x18 when allowed: the check above proves nothing" >&2
  rc=1
fi
[ $rc -eq 0 ] && echo "x18.sh: $found arm64 kernels leave x18 alone"
exit $rc
