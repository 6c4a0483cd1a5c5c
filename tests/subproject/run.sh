#!/bin/sh
# Builds tests/subproject/parent with rig as its subproject
# (subprojects/rig -> this repository) and runs it.
# usage: run.sh SOURCE_ROOT SCRATCH_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work/subprojects"
cp "$src/tests/subproject/parent/meson.build" "$src/tests/subproject/parent/parent.c" "$work/"
ln -s "$src" "$work/subprojects/rig"
meson setup "$work/build" "$work" >"$work/setup.log" 2>&1 || { cat "$work/setup.log"; exit 1; }
meson compile -C "$work/build" >"$work/compile.log" 2>&1 || { cat "$work/compile.log"; exit 1; }
RIG_DRIVER_PATH="$work/build/subprojects/rig/drivers/memory" "$work/build/parent" | tee "$work/out.log"
grep -q "parent: hello through memory:parent" "$work/out.log"
