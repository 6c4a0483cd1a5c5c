#!/bin/sh
# findlib_link.sh DIR: a program of one's own links against the package as
# dune installs it (DIR/install/default/lib, its META) with
# `ocamlfind ocamlopt -package rig -linkpkg` and no -thread, and runs: the
# library requires what it needs itself (it once needed the threads
# library's Mutex, which ocamlfind links only with -thread).
set -eu
dir=$1
lib="$(pwd)/$dir/install/default/lib"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/prog.ml" <<'ML'
let () =
  match Rig.memory_device "findlib" with
  | Ok d -> Printf.printf "findlib-link: %s opens\n" (Rig.name d); Rig.close d
  | Error e -> prerr_endline e; exit 1
ML
OCAMLPATH="$lib${OCAMLPATH:+:$OCAMLPATH}" ocamlfind ocamlopt -package rig -linkpkg \
  "$tmp/prog.ml" -o "$tmp/prog"
"$tmp/prog"
echo "findlib-link: passed (ocamlfind -package rig, no -thread)"
