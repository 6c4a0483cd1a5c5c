#!/usr/bin/env python3
"""check-pm4: every packet opcode, event, field and register offset of the
amdgpu driver's pm4.h against the Linux kernel's own amdgpu headers.

Each define of pm4.h that carries `check GENS: EXPR` is compiled, for each
generation named, as _Static_assert((NAME) == (EXPR)) (NAME(1) for a
function-like define) in a file that includes that generation's headers:

  9    soc15d.h, vega10_enum.h, gc_9_0_offset.h, gc_9_0_sh_mask.h (mm names)
  90a  soc15d.h, vega10_enum.h, gc_9_4_2_offset.h, gc_9_4_2_sh_mask.h (reg names)
  10   nvd.h, navi10_enum.h, gc_10_3_0_offset.h, gc_10_3_0_sh_mask.h (mm names)
  11   nvd.h, soc21_enum.h, gc_11_0_0_offset.h, gc_11_0_0_sh_mask.h (reg names)

GC_BASE is the GC block's first segment from vega10_ip_offset.h (9),
aldebaran_ip_offset.h (90a) and sienna_cichlid_ip_offset.h (10; also 11,
whose base the kernel reads from the chip's IP discovery table at run time
and which no header states). DMA_DATA's byte-count width is read from
each packet header's comment ("BYTE_COUNT [N:0]") and compared with
PM4_DMA_MAX_GFX9 / PM4_DMA_MAX_GFX10.

usage: check-pm4.py PM4_H CACHE_DIR
The headers come from $RIG_LINUX_AMD (a kernel tree's drivers/gpu/drm/amd)
or from Debian's linux-source package (/usr/src/linux-source-*.tar.xz),
extracted once into CACHE_DIR. Exit 77 where neither is found.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

FILES = ["amdgpu/soc15d.h", "amdgpu/nvd.h", "include/vega10_enum.h", "include/navi10_enum.h",
         "include/soc21_enum.h", "include/vega10_ip_offset.h", "include/aldebaran_ip_offset.h",
         "include/sienna_cichlid_ip_offset.h"] + [
    f"include/asic_reg/gc/gc_{v}_{k}.h" for v in ("9_0", "9_4_2", "10_3_0", "11_0_0")
    for k in ("offset", "sh_mask")]

GENS = {
    "9": ("soc15d.h", "vega10_enum.h", "gc_9_0", "mm", "vega10_ip_offset.h"),
    "90a": ("soc15d.h", "vega10_enum.h", "gc_9_4_2", "reg", "aldebaran_ip_offset.h"),
    "10": ("nvd.h", "navi10_enum.h", "gc_10_3_0", "mm", "sienna_cichlid_ip_offset.h"),
    "11": ("nvd.h", "soc21_enum.h", "gc_11_0_0", "reg", "sienna_cichlid_ip_offset.h"),
}


def headers(cache):
    tree = os.environ.get("RIG_LINUX_AMD")
    if tree and all(os.path.exists(os.path.join(tree, f)) for f in FILES):
        return tree
    amd = os.path.join(cache, "amd")
    if all(os.path.exists(os.path.join(amd, f)) for f in FILES):
        return amd
    tars = sorted(glob.glob("/usr/src/linux-source-*.tar.xz"))
    if not tars:
        return None
    top = os.path.basename(tars[-1])[: -len(".tar.xz")]
    names = [f"{top}/drivers/gpu/drm/amd/{f}" for f in FILES]
    os.makedirs(cache, exist_ok=True)
    r = subprocess.run(["tar", "-xJf", tars[-1], "-C", cache] + names, capture_output=True,
                       text=True)
    if r.returncode != 0:
        print(f"tar: {r.stderr.strip()}")
        return None
    os.makedirs(os.path.dirname(amd), exist_ok=True)
    if os.path.exists(amd):
        os.remove(amd)
    os.symlink(os.path.join(cache, top, "drivers/gpu/drm/amd"), amd)
    return amd


def checks(pm4_h):
    out = []
    for line in open(pm4_h):
        m = re.match(r"#define (\w+)(\(\w+(?:, *\w+)*\))?\s.*/\* check ([0-9a ]+): (.*?) \*/", line)
        if m:
            name = m.group(1) + ("(1)" if m.group(2) else "")
            out.append((name, m.group(3).split(), m.group(4)))
    return out


def gc_base(amd, ipfile):
    text = open(os.path.join(amd, "include", ipfile)).read()
    return re.search(r"#define GC_BASE__INST0_SEG0\s+(0x[0-9a-fA-F]+)", text).group(1)


def compile_gen(amd, gen, items, pm4_h):
    pkt, enum, gc, prefix, ip = GENS[gen]
    src = ["#include <stdint.h>", f'#include "{pkt}"', f'#include "{enum}"',
           f'#include "{gc}_offset.h"', f'#include "{gc}_sh_mask.h"',
           f"#define GC_BASE {gc_base(amd, ip)}", f"#define REG(x) {prefix}##x",
           f'#include "{os.path.abspath(pm4_h)}"']
    for name, _, expr in items:  # as dwords: the kernel writes (1 << 31) as an int
        src.append(f'_Static_assert((uint32_t)({name}) == (uint32_t)({expr}), '
                   f'"gfx{gen}: {name} is not {expr}");')
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write("\n".join(src) + "\n")
    inc = [os.path.join(amd, d) for d in ("amdgpu", "include", "include/asic_reg/gc")]
    r = subprocess.run(["cc", "-fsyntax-only", "-w"] + [f"-I{d}" for d in inc] + [f.name],
                       capture_output=True, text=True)
    os.unlink(f.name)
    bad = [l for l in r.stderr.splitlines() if "static assertion failed" in l or "error" in l]
    return bad


def byte_count(amd, pm4_h):
    text = open(pm4_h).read()
    bad = []
    for hdr, name in (("soc15d.h", "PM4_DMA_MAX_GFX9"), ("nvd.h", "PM4_DMA_MAX_GFX10")):
        kernel = open(os.path.join(amd, "amdgpu", hdr)).read()
        width = int(re.search(r"BYTE_COUNT \[(\d+):0\]", kernel).group(1)) + 1
        ours = re.search(rf"#define {name} \(\(1u << (\d+)\) - 4096u\)", text)
        if not ours or int(ours.group(1)) != width:
            bad.append(f"{name}: {hdr} says BYTE_COUNT has {width} bits")
    return bad


def main():
    pm4_h, cache = sys.argv[1], sys.argv[2]
    amd = headers(cache)
    if not amd:
        print("skip: no kernel amdgpu headers ($RIG_LINUX_AMD, or Debian's linux-source)")
        return 77
    items = checks(pm4_h)
    bad, count = [], 0
    for gen in GENS:
        mine = [i for i in items if gen in i[1]]
        count += len(mine)
        bad += compile_gen(amd, gen, mine, pm4_h)
    bad += byte_count(amd, pm4_h)
    for b in bad:
        print("FAIL", b)
    print(f"{len(items)} defines, {count} checks over {len(GENS)} generations, 2 byte-count "
          f"widths, against {amd}: {len(bad)} wrong")
    return 1 if bad or count < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
