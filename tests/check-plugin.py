#!/usr/bin/env python3
"""check-plugin: a driver plugin links librig-edge and never librig-core,
and exports only its entry symbol (the linker's view of the file:
readelf -d for NEEDED, nm -D for exports).

usage: check-plugin.py PLUGIN.so [--allow LIB]...

With --allow, the plugin links nothing else but librig-edge, the C runtime
and the vendor libraries named (by prefix: --allow libvulkan.so).
"""
import subprocess
import sys

ENTRY = "rig_edge_entry_v1"


def needed(path):
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True,
                         text=True).stdout
    return [l.split("[")[1].split("]")[0] for l in out.splitlines() if "(NEEDED)" in l]


def exports(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    skip = {"_init", "_fini", "_edata", "_end", "__bss_start"}
    return {l.split()[2] for l in out.splitlines() if len(l.split()) >= 3} - skip


# The C runtime, and the sanitizers' runtimes of a sanitized build.
RUNTIME = ("libc.so", "libm.so", "libpthread.so", "libdl.so", "librt.so", "ld-linux",
           "libgcc_s.so", "libasan.so", "libubsan.so", "libtsan.so")


def main():
    path = sys.argv[1]
    args = sys.argv[2:]
    allowed = [args[i + 1] for i in range(len(args) - 1) if args[i] == "--allow"]
    libs = needed(path)
    bad = []
    if allowed:
        others = [l for l in libs if not l.startswith("librig-edge.so")
                  and not l.startswith(RUNTIME) and not l.startswith(tuple(allowed))]
        if others:
            bad.append(f"links {others}, beyond librig-edge and {allowed}")
    if not any(l.startswith("librig-edge.so") for l in libs):
        bad.append(f"does not link librig-edge (NEEDED: {libs})")
    if any(l.startswith("librig-core") for l in libs):
        bad.append(f"links librig-core (NEEDED: {libs})")
    ex = exports(path)
    if ex != {ENTRY}:
        bad.append(f"exports {sorted(ex)}, not only {ENTRY}")
    for b in bad:
        print(f"{path}: {b}")
    print(f"{path}: NEEDED {libs}; exports {sorted(ex)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
