#!/usr/bin/env python3
"""symbols-check: the dynamic symbols a library exports are exactly a list.

As libdrm's symbols-check: a new public function must be added to the list
on purpose, and nothing internal (rig__*) leaks out of a library.

usage: symbols-check.py --lib FILE --symbols-file LIST [--nm NM]
LIST has one symbol a line; '#' starts a comment.
"""
import argparse
import subprocess
import sys

# Symbols the toolchain adds to every shared object.
PLATFORM = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def exported(lib, nm):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TDBRVWiu":
            names.add(parts[2].split("@")[0])
    return names - PLATFORM


# AddressSanitizer's ODR indicator of an exported variable V: it exports
# __odr_asan.V (or __odr_asan_gen_V) beside V in an instrumented build.
ODR_PREFIXES = ("__odr_asan.", "__odr_asan_gen_")


def sanitizer_added(name, have):
    """Whether name is a sanitizer's companion of an exported symbol."""
    return any(name.startswith(p) and name[len(p):] in have for p in ODR_PREFIXES)


def wanted(path):
    with open(path) as f:
        return {l.split("#")[0].strip() for l in f if l.split("#")[0].strip()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--symbols-file", required=True)
    ap.add_argument("--nm", default="nm")
    a = ap.parse_args()
    have, want = exported(a.lib, a.nm), wanted(a.symbols_file)
    have = {s for s in have if not sanitizer_added(s, have)}
    extra, missing = sorted(have - want), sorted(want - have)
    for s in extra:
        print(f"{a.lib}: exports {s}, which {a.symbols_file} does not list")
    for s in missing:
        print(f"{a.lib}: does not export {s}, which {a.symbols_file} lists")
    print(f"{len(have)} symbols exported, {len(extra)} unlisted, {len(missing)} missing")
    return 1 if extra or missing else 0


if __name__ == "__main__":
    sys.exit(main())
