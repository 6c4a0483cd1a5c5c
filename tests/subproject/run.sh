#!/bin/sh
# Builds tests/subproject/parent with rig as its subproject
# (subprojects/rig -> this repository) under -Dwerror=true, and runs its
# program with no environment at all (env -i): it must find rig's plugins
# beside librig-core and open vulkan:0. Then installs it under a prefix
# that is not rig's usual one, moves the installed tree elsewhere, and runs
# the moved program, again with no environment: the plugins are found in
# the moved tree (docs/finding-devices.md). The program exits 77 where
# vulkan:0 does not open here for a reason other than a plugin not found;
# so does this script, once everything else passed.
# usage: run.sh SOURCE_ROOT SCRATCH_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work/subprojects"
cp "$src/tests/subproject/parent/meson.build" "$src/tests/subproject/parent/parent.c" "$work/"
ln -s "$src" "$work/subprojects/rig"
# A prefix nobody installs to: the moved tree cannot fall back on it.
prefix=/nonexistent/rig-parent-$$
meson setup "$work/build" "$work" -Dwerror=true --prefix="$prefix" -Dlibdir=lib \
  >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
meson compile -C "$work/build" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
# werror reached rig's own sources, and the tests, benches and tools stayed out.
grep -q -- "-Werror.*core/src/list.c\|core/src/list.c.*-Werror" "$work/build/compile_commands.json" ||
  { echo "subproject: rig's sources were not built with -Werror"; exit 1; }
for t in tests bench tools examples; do
  [ ! -d "$work/build/subprojects/rig/$t" ] || { echo "subproject: rig's $t were built"; exit 1; }
done

run() { # run LOG PROGRAM [ARGS]: the program with no environment but PATH
  log=$1
  shift
  rc=0
  env -i PATH=/usr/bin:/bin "$@" >"$log" 2>&1 || rc=$?
  cat "$log"
  case $rc in 0 | 77) ;; *) echo "subproject: $* exited $rc"; exit 1 ;; esac
  grep -q "parent: hello through memory:parent" "$log"
  last=$rc
}

run "$work/out.log" "$work/build/parent"
first=$last

DESTDIR="$work/dest" meson install -C "$work/build" --no-rebuild >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; exit 1; }
mv "$work/dest$prefix" "$work/moved"
run "$work/moved.log" "$work/moved/bin/parent" "$(cd "$work/moved" && pwd -P)/lib/rig/drivers"
# The pkg-config file names the driver folder, relative to the prefix.
dir=$(PKG_CONFIG_PATH="$work/moved/lib/pkgconfig" pkg-config --define-prefix \
  --variable=driver_dir rig-core)
[ -f "$dir/librig-driver-memory.so" ] || { echo "subproject: pkg-config driver_dir '$dir'"; exit 1; }
[ $first -eq 0 ] && [ $last -eq 0 ] || exit 77
