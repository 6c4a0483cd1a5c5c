#!/bin/sh
# Writes the C flags of rig-core and rig-edge (the driver interface, which
# Rig_edge.Driver's tables use) as dune reads them (c_flags.sexp,
# c_library_flags.sexp), from pkg-config: an installed rig, or the build
# tree's meson-uninstalled/ folder on PKG_CONFIG_PATH (run-tests.sh).
set -eu
sexp() { printf '('; for w in "$@"; do printf ' "%s"' "$w"; done; printf ' )\n'; }
pkgs="rig-core rig-edge"
# shellcheck disable=SC2086
if ! pkg-config --exists $pkgs; then
  echo "rig: pkg-config finds no rig-core or rig-edge: install rig, or set PKG_CONFIG_PATH" >&2
  echo "to a build folder's meson-uninstalled/ (bindings/ocaml/run-tests.sh does)" >&2
  exit 1
fi
# shellcheck disable=SC2046,SC2086
sexp $(pkg-config --cflags $pkgs) > c_flags.sexp
# The library's folder goes into the run path, so that programs run from
# where rig is without LD_LIBRARY_PATH.
rpath=""
# shellcheck disable=SC2086
for w in $(pkg-config --libs-only-L $pkgs) -L"$(pkg-config --variable=libdir rig-core)"; do
  rpath="$rpath -Wl,-rpath,${w#-L}"
done
# shellcheck disable=SC2046,SC2086
sexp $(pkg-config --libs $pkgs) $rpath > c_library_flags.sexp
