#!/usr/bin/env python3
"""check-codeobj: the amdgpu driver's code object reader against LLVM's own
tools, an independent reading of the same files: for every committed
object, the target llvm-readobj's file header names, each kernel's
metadata (.kernarg_segment_size, .kernarg_segment_align,
.private_segment_fixed_size, .wavefront_size, .args' offsets, sizes and
kinds) from llvm-readobj --notes, the NAME.kd descriptor's address and the
kernel's entry (its function symbol) from llvm-readelf --dyn-syms.

usage: check-codeobj.py DUMP-TOOL DIR
Exit 77 where no llvm-readobj or PyYAML is installed (LLVM 16's is preferred: 14
names no gfx11 target).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    yaml = None


def tool(name):
    versions = [os.environ["RIG_LLVM_SUFFIX"]] if "RIG_LLVM_SUFFIX" in os.environ else []
    for v in versions + ["-16", "-15", "-14", ""]:
        path = shutil.which(name + v)
        if path:
            return path
    return None


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def llvm_view(readobj, readelf, path):
    heads = run(readobj, "--file-headers", path)
    mach = re.search(r"EF_AMDGPU_MACH_AMDGCN_(GFX[0-9A-F]+)", heads)
    notes = run(readobj, "--notes", path)
    text = notes.split("AMDGPU Metadata:", 1)[1].lstrip()
    doc = yaml.safe_load(text[: text.index("\n...") + 4])
    syms = {}
    for line in run(readelf, "--dyn-syms", "-W", path).splitlines():
        f = line.split()
        if len(f) == 8 and f[3] in ("FUNC", "OBJECT"):
            syms[f[7]] = int(f[1], 16)
    # An LLVM older than the target names no machine in the header (14 and
    # gfx11): its reading of the metadata's amdhsa.target stands in.
    target = mach.group(1).lower() if mach else \
        doc.get("amdhsa.target", "?").split("--")[-1].split(":")[0]
    view = {"target": target, "kernels": {}}
    for k in doc["amdhsa.kernels"]:
        view["kernels"][k[".name"]] = {
            "kd": syms[k[".symbol"]], "entry": syms[k[".name"]],
            "kernarg": k[".kernarg_segment_size"], "align": k[".kernarg_segment_align"],
            "private": k[".private_segment_fixed_size"], "wave": k[".wavefront_size"],
            "args": [(a[".offset"], a[".size"], a[".value_kind"]) for a in k.get(".args", [])]}
    return view


def rig_view(dump, path):
    out = subprocess.run([dump, "dump", path], capture_output=True, text=True).stdout
    view = {"target": "?", "kernels": {}}
    for line in out.splitlines():
        f = line.split()
        if f[0] == "target":
            view["target"] = f[1]
        elif f[0] == "kernel":
            v = dict(zip(f[2::2], f[3::2]))
            view["kernels"][f[1]] = {
                "kd": int(v["kd"], 16), "entry": int(v["entry"], 16), "kernarg": int(v["kernarg"]),
                "align": int(v["align"]), "private": int(v["private"]), "wave": int(v["wave"]),
                "args": []}
        elif f[0] == "arg":
            view["kernels"][f[1]]["args"].append((int(f[2]), int(f[3]), f[4]))
        elif f[0] == "error":
            view["error"] = line
    return view


def main():
    dump, folder = sys.argv[1], sys.argv[2]
    readobj, readelf = tool("llvm-readobj"), tool("llvm-readelf")
    if not readobj or not readelf or not yaml:
        print("skip: no llvm-readobj / llvm-readelf (Debian's llvm) or no PyYAML")
        return 77
    bad = 0
    files = sorted(glob.glob(os.path.join(folder, "*.co")))
    for path in files:
        name = os.path.basename(path)
        theirs, ours = llvm_view(readobj, readelf, path), rig_view(dump, path)
        if name.startswith("scratch-"):
            # the reader refuses it; LLVM says why: private memory
            ks = theirs["kernels"].values()
            ok = "error" in ours and "scratch" in ours["error"] and any(k["private"] for k in ks)
        else:
            ok = theirs == ours
        if not ok:
            bad += 1
            print(f"FAIL {name}:\n  llvm: {theirs}\n  rig:  {ours}")
    print(f"{len(files)} objects compared with {os.path.basename(readobj)}: {bad} differ")
    return 1 if bad or len(files) < 18 else 0


if __name__ == "__main__":
    sys.exit(main())
