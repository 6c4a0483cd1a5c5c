#!/bin/sh
# arm64.sh LINKER_DIR KERNEL_DIR SCRATCH: the host linker on arm64, for real.
#
# Cross-compiles the linker and its tests (test_link.c, test_refuse.c,
# test_reloc.c, test_wx.c, test_mutate.c) for aarch64 with Debian's gcc-aarch64-linux-gnu,
# against libelf-dev:arm64, and runs them under qemu-aarch64 (qemu-user) on
# the kernels built with --target=aarch64-none-unknown-elf -ffixed-x18
# (OBJ-2). There they run ADR_PREL_PG_HI21, ADD_ABS_LO12_NC, LDST8..128,
# CALL26 and JUMP26 (RELOC-4..7), and the arm64 stubs (RELOC-8..10), calls
# out of reach going through them. With the x86_64 run of the same tests,
# this is host linking on both machines it is supported on, under Linux
# (PLAT-1).
#
# Needs (tools/bootstrap installs them): qemu-user, gcc-aarch64-linux-gnu,
# and libelf-dev:arm64 (dpkg --add-architecture arm64; apt-get update;
# apt-get install libelf-dev:arm64). Exits 77 (skipped) only where
# qemu-aarch64 is missing; any other lack is a failure that says what to
# install. RIG_ARM64_CC overrides the compiler.
set -eu
src=$(cd "$1" && pwd)
kernels=$2
out=$3

if ! command -v qemu-aarch64 >/dev/null 2>&1; then
  echo "arm64.sh: skipped: qemu-aarch64 is missing (Debian: apt-get install qemu-user)"
  exit 77
fi
cc=${RIG_ARM64_CC:-aarch64-linux-gnu-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "arm64.sh: $cc is missing (Debian: apt-get install gcc-aarch64-linux-gnu)" >&2
  exit 1
fi
for k in add libm rodata helpers many bad_global nothing; do
  if [ ! -f "$kernels/$k.aarch64.o" ]; then
    echo "arm64.sh: no kernel $kernels/$k.aarch64.o" >&2
    exit 1
  fi
done

mkdir -p "$out"
cflags="-std=gnu11 -O2 -g -Wall -Wno-unused-parameter -I$src/include -I$src/tests"
libs="-lelf -ldl -lm -lpthread"
lib=$(echo "$src"/src/*.c) # every source of the library (meson.build's rig_link_src)
common="$src/tests/common.c"

printf '#include <gelf.h>\nint main(void) { return elf_version(EV_CURRENT) == EV_NONE; }\n' >"$out/probe.c"
if ! "$cc" $cflags "$out/probe.c" -o "$out/probe" $libs >"$out/probe.log" 2>&1; then
  cat "$out/probe.log" >&2
  echo "arm64.sh: no libelf for arm64 (Debian: dpkg --add-architecture arm64 &&" \
    "apt-get update && apt-get install libelf-dev:arm64)" >&2
  exit 1
fi

"$cc" $cflags $lib $common "$src/tests/test_link.c" -o "$out/test-link" $libs
"$cc" $cflags $lib $common "$src/tests/test_refuse.c" -o "$out/test-refuse" $libs
"$cc" $cflags $lib $common "$src/tests/test_reloc.c" -o "$out/test-reloc" $libs
"$cc" $cflags $lib $common "$src/tests/test_mutate.c" -o "$out/test-mutate" $libs
"$cc" $cflags $lib $common "$src/tests/test_wx.c" -o "$out/test-wx" $libs \
  -Wl,--wrap=mmap -Wl,--wrap=mmap64 -Wl,--wrap=mprotect -Wl,--wrap=munmap \
  -Wl,--wrap=madvise -Wl,--wrap=fallocate -Wl,--wrap=fallocate64

# The arm64 libraries: Debian's multiarch ones (libc6:arm64 comes with
# libelf1:arm64), else the cross toolchain's.
if [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
fi

rc=0
for t in test-link test-refuse test-reloc test-wx; do
  echo "== $t (aarch64, qemu)"
  qemu-aarch64 "$out/$t" "$kernels" || rc=1
done
echo "== test-mutate (aarch64, qemu)"
qemu-aarch64 "$out/test-mutate" "$kernels" 1500 || rc=1
exit $rc
