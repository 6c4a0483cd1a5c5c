#!/bin/sh
# build-ocaml-5.3.sh PREFIX: builds OCaml 5.3.0, which Debian 12 does not
# package, into PREFIX (bindings/ocaml/README.md), unless PREFIX/bin/ocamlopt
# is 5.3.0 already. The source is the npm registry's package `ocaml` 5.3.0,
# the compiler's source tree; its tarball's sha256 is checked before use.
# The build takes about 10 minutes on 2 cores and needs no network.
#
# Exit status: 0 built or present; 3 the source could not be fetched (no
# registry, no npm: a cause outside the project, which the caller may skip
# with that reason); anything else a failed check or build.
set -eu
prefix=$1
sha=c4108bac7b45c46325f0e15a988c308f7785cd6c4d29dac190df06f543f7c992
if [ -x "$prefix/bin/ocamlopt" ] && [ "$("$prefix/bin/ocamlopt" -version)" = 5.3.0 ]; then
  exit 0
fi
src="$prefix.src"
rm -rf "$src"
mkdir -p "$src"
cd "$src"
command -v npm >/dev/null || { echo "ocaml-5.3: no npm to fetch the source" >&2; exit 3; }
npm pack ocaml@5.3.0 >npm.log 2>&1 || { cat npm.log >&2; exit 3; }
echo "$sha  ocaml-5.3.0.tgz" | sha256sum -c - >/dev/null ||
  { echo "ocaml-5.3: ocaml-5.3.0.tgz does not have the sha256 $sha" >&2; exit 1; }
tar xzf ocaml-5.3.0.tgz
cd package
./configure --prefix="$prefix" --disable-ocamldoc --disable-debugger --disable-ocamltest \
  >"$src/build.log" 2>&1 || { tail -30 "$src/build.log" >&2; exit 1; }
nice make -j"$(nproc)" >>"$src/build.log" 2>&1 || { tail -30 "$src/build.log" >&2; exit 1; }
make install >>"$src/build.log" 2>&1 || { tail -30 "$src/build.log" >&2; exit 1; }
cd /
rm -rf "$src"
