#!/bin/sh
# run.sh FUZZER SEED_DIR [libFuzzer options]: fuzzes the host linker (LINK-1)
# from the objects in SEED_DIR, into a fresh corpus beside the fuzzer, and
# fails on any crash, leak or undefined behaviour; a crash's input is left
# beside the fuzzer as crash-*, to become a regression test
# (fuzz/regressions/, which test link-fuzz runs first).
set -eu
fuzzer=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seeds=$(cd "$2" && pwd)
shift 2
corpus="${fuzzer}-corpus"
rm -rf "$corpus"
mkdir -p "$corpus"
cd "$(dirname "$fuzzer")"
exec "$fuzzer" -artifact_prefix="$(dirname "$fuzzer")/" -max_len=65536 "$@" "$corpus" "$seeds"
