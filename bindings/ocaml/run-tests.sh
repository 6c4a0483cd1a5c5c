#!/bin/sh
# run-tests.sh [BUILD]: builds and tests the OCaml package against the rig
# of the build folder BUILD (../../build, made by `meson setup build &&
# ninja -C build` at the repository's root), with the OCaml on PATH.
#
# It sets what the in-tree build needs, which an installed rig does not:
#   PKG_CONFIG_PATH  BUILD/meson-uninstalled, whose rig-core-uninstalled.pc
#                    gives the C flags (src/discover.sh asks pkg-config)
#   RIG_DRIVER_PATH  the drivers the tests open (memory, io, test, remote)
#   RIG_SEEDS        the seed pages the examples' test reads, where present
#   RIG_EXE          the build's rig, whose `rig serve` test_machine starts
#   UCX_MEM_*        UCX's memory hooks off, as for rig's own tests
#                    (docs/remote.md says why)
# With OCAML_PREFIX=DIR it uses the compiler installed in DIR (OCaml 5.3,
# README.md) instead of Debian's: DIR/bin first on PATH and OCAMLPATH set to
# DIR/lib/ocaml, as Debian's dune does not read findlib's configuration.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
if [ -n "${OCAML_PREFIX:-}" ]; then
  PATH="$OCAML_PREFIX/bin:$PATH"
  OCAMLPATH="$OCAML_PREFIX/lib/ocaml"
  export PATH OCAMLPATH
fi
PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
RIG_DRIVER_PATH="$build/drivers/memory:$build/drivers/io:$build/tests/driver:$build/drivers/remote"
RIG_SEEDS="${RIG_SEEDS:-$root/../shared/seeds}"
RIG_EXE="$build/tools/rig"
UCX_MEM_EVENTS=no UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export PKG_CONFIG_PATH RIG_DRIVER_PATH RIG_SEEDS RIG_EXE UCX_MEM_EVENTS UCX_MEM_MALLOC_HOOKS UCX_MEM_MMAP_HOOK_MODE
cd "$here"
echo "rig-ocaml: OCaml $(ocamlfind ocamlopt -version 2>/dev/null || ocamlopt -version), build $build"
# Each compiler builds in a folder of its own, so that the two never mix.
dir="_build-$(ocamlopt -version)"
dune build --root . --build-dir "$dir" 2>&1
dune test --root . --build-dir "$dir" --force 2>&1
# A program of one's own through ocamlfind, as a user links one.
sh test/findlib_link.sh "$dir"
# The seed pages' OCaml examples, as written (test/seed_examples.py).
python3 test/seed_examples.py "$dir"
