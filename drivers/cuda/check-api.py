#!/usr/bin/env python3
"""check-api: the CUDA driver's own declarations (cuda_api.h) and the
symbols it takes from libcuda (library.c, and bench P9's bench/cuda.c) agree with the toolkit's cuda.h.

usage: check-api.py cuda_api.h library.c [more.c...]

It writes a C file that includes cuda.h and asserts, at compile time, that
every constant of cuda_api.h has cuda.h's value, every type its
representation, and every function type cuda.h's type of the function;
at run time, that the symbol library.c takes for each function is the
one cuda.h binds its name to (cuMemAlloc is cuMemAlloc_v2). Exits 77 where
no cuda.h is installed ($CUDA_PATH/include, /usr/local/cuda/include).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def find_include():
    for base in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if base and os.path.exists(os.path.join(base, "include", "cuda.h")):
            return os.path.join(base, "include")
    return None


def constants(text):
    """NAME = value in enums and #define NAME value (numbers only)."""
    found = re.findall(r"^\s*(CU[A-Z_0-9]*)\s*=\s*(0x[0-9a-fA-F]+|\d+),", text, re.M)
    found += re.findall(r"^#define\s+(CU_[A-Z_0-9]+)\s+(0x[0-9a-fA-F]+|\d+)\s*$", text, re.M)
    found += re.findall(r"^#define\s+(CU_LAUNCH_PARAM_\w+)\s+\(\(void \*\)(0x[0-9a-f]+)\)", text,
                        re.M)
    return found


def function_types(text):
    """typedef CUresult (*cu_Name)(params); -> (Name, params) over lines."""
    flat = re.sub(r"\s+", " ", text)
    return re.findall(r"typedef CUresult \(\*cu_(\w+)\)\(([^;]*)\);", flat)


def symbols(text):
    """S(Field, "symbol") / OPT(Field, "symbol") of library.c."""
    return re.findall(r"\b(?:S|OPT)\((\w+), \"(\w+)\"\)", text)


TYPES = [("CUresult", "unsigned int"), ("CUdevice", "int"),
         ("CUdeviceptr", "unsigned long long"), ("cuuint64_t", "uint64_t"),
         ("CUdevice_attribute", "unsigned int"), ("CUjit_option", "unsigned int"),
         ("CUfunction_attribute", "unsigned int"), ("CUhostFn", "void (*)(void *)")]


def program(api, lib):
    out = ["#include <cuda.h>", "#include <stdint.h>", "#include <stdio.h>",
           "#include <string.h>", "#define STR(x) #x", "#define XSTR(x) STR(x)",
           "#define SAME(a, b) __builtin_types_compatible_p(a, b)"]
    for name, value in constants(api):
        out.append(f'_Static_assert((long long)(uintptr_t){name} == {value}, "{name}");')
    for name, rep in TYPES:
        out.append(f'_Static_assert(SAME({name}, {rep}), "{name} is {rep}");')
    fns = function_types(api)
    for name, params in fns:
        out.append(f"typedef CUresult (*mine_{name})({params});")
        out.append(f'_Static_assert(SAME(mine_{name}, __typeof__(&cu{name})), "cu{name}");')
    out.append("int main(void) {\n  int bad = 0;")
    for field, sym in symbols(lib):
        out.append(f'  if (strcmp(XSTR(cu{field}), "{sym}") != 0) {{\n'
                   f'    printf("rig takes {sym}; cuda.h binds cu{field} to %s\\n",'
                   f' XSTR(cu{field}));\n    bad = 1;\n  }}')
    out.append(f'  if (!bad) printf("%d constants, %d function types, %d symbols agree with cuda.h\\n", '
               f'{len(constants(api))}, {len(fns)}, {len(symbols(lib))});')
    out.append("  return bad;\n}")
    return "\n".join(out) + "\n"


def main():
    inc = find_include()
    if not inc:
        print("skip: no cuda.h here (a CUDA toolkit's)")
        return 77
    api = open(sys.argv[1]).read()
    lib = "\n".join(open(f).read() for f in sys.argv[2:])
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "check.c"), os.path.join(tmp, "check")
        with open(src, "w") as f:
            f.write(program(api, lib))
        r = subprocess.run([cc, "-std=gnu11", "-Wall", "-I", inc, src, "-o", exe])
        if r.returncode != 0:
            print("cuda_api.h disagrees with " + os.path.join(inc, "cuda.h"))
            return 1
        return subprocess.run([exe]).returncode


if __name__ == "__main__":
    sys.exit(main())
