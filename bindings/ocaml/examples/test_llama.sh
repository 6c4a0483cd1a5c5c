#!/bin/sh
# test_llama.sh LLAMA_EXE: the OCaml rig-llama (llama.ml) against the C one
# (examples/llama) of the meson build that run-tests.sh names through
# RIG_EXE: on a seeded checkpoint of tools/make-checkpoint (dim 64, 2
# layers, grouped heads, separate classifier), 30 greedy tokens on the host
# and on vulkan:0 where it opens; the ids must be the C program's. Prints
# both rates.
set -eu
case $1 in /*) exe=$1 ;; *) exe=$PWD/$1 ;; esac
build=$(cd "$(dirname "$RIG_EXE")/.." && pwd)
src=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['directories']['source'])" \
  "$build/meson-info/meson-info.json")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/tools/make-checkpoint" "$tmp/m.bin" --separate-classifier --seed 7
for dev in CPU vulkan:0; do
  code="$build/examples/llama"
  [ "$dev" = CPU ] || code="$src/examples/llama/vulkan"
  if ! "$build/examples/rig-llama" "$tmp/m.bin" --steps 30 --device "$dev" >"$tmp/c.txt" 2>"$tmp/c.err"; then
    echo "llama: $dev does not open here: $(cat "$tmp/c.err")"
    continue
  fi
  "$exe" "$tmp/m.bin" --code "$code" --steps 30 --device "$dev" >"$tmp/ml.txt" 2>"$tmp/ml.err"
  if ! cmp -s "$tmp/c.txt" "$tmp/ml.txt"; then
    echo "llama on $dev: OCaml's tokens $(cat "$tmp/ml.txt"), C's $(cat "$tmp/c.txt")"
    exit 1
  fi
  echo "llama on $dev: the same 30 tokens; C $(head -1 "$tmp/c.err"), OCaml $(cat "$tmp/ml.err")"
done
