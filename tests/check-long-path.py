#!/usr/bin/env python3
"""Runs built tests from a build tree under a folder whose path is 200
characters long, as a CI runner's work folder or a meson subproject's build
folder can be: every message that names a folder of the build (the loader's
"nor beside librig-core (...)") is then long, and must still say what to do.

The build's libraries, plugins and the named test programs are linked (hard
links, or copies across file systems) into BUILD/<200-character folder>/,
each at its place relative to the build, so that their $ORIGIN run paths hold
and librig-core finds itself, and the plugins beside it, there. RIG_DRIVER_PATH
and LD_LIBRARY_PATH are the test's own with the build's folder replaced by the
long one (ldd checks that librig-core is found there); each test runs with the
long folder as its working folder. The folder is removed after,
whatever the outcome.

usage: check-long-path.py BUILD_ROOT TEST_PROGRAM...  (paths inside BUILD_ROOT)
"""
import os
import shutil
import subprocess
import sys

LENGTH = 200
# What the programs load: core and its libraries, and every plugin.
FOLDERS = ["core", "edge", "host-linker", "drivers", "tests/driver"]


def long_folder(build):
    """BUILD/lp-xxx...x, 200 characters in all (longer where BUILD is)."""
    base = os.path.join(build, "lp-")
    return base + "x" * max(1, LENGTH - len(base))


def place(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def mirror(build, root, programs):
    for folder in FOLDERS:
        for where, _, files in os.walk(os.path.join(build, folder)):
            for name in files:
                src = os.path.join(where, name)
                if ".so" in name and not name.endswith((".o", ".p", ".symbols")):
                    place(src, os.path.join(root, os.path.relpath(src, build)))
    for program in programs:
        place(program, os.path.join(root, os.path.relpath(program, build)))


def loaded_core(program, env):
    """Where the dynamic loader finds program's librig-core (ldd)."""
    out = subprocess.run(["ldd", program], env=env, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        if "librig-core" in line and "=>" in line:
            return line.split("=>")[1].split("(")[0].strip()
    return "nowhere"


def main():
    if os.environ.get("MESON_EXE_WRAPPER"):
        # A cross build (the arm64 stage under qemu, docs/arm64.md): ldd reads no foreign executable
        print("skip: ldd cannot read a cross-built program's libraries (MESON_EXE_WRAPPER is set)")
        sys.exit(77)
    build = os.path.realpath(sys.argv[1])
    programs = [os.path.realpath(p) for p in sys.argv[2:]]
    root = long_folder(build)
    assert len(root) >= LENGTH, root
    shutil.rmtree(root, ignore_errors=True)
    failed = 0
    try:
        mirror(build, root, programs)
        env = dict(os.environ)
        for var in ["RIG_DRIVER_PATH", "LD_LIBRARY_PATH", "RIG_KERNELS"]:
            entries = env.get(var, "").split(":")
            env[var] = ":".join(
                root + e[len(build):] if e == build or e.startswith(build + "/") else e
                for e in entries)
        for program in programs:
            moved = os.path.join(root, os.path.relpath(program, build))
            core = loaded_core(moved, env)
            if not core.startswith(root + "/"):
                print(f"{moved} would load librig-core from {core}, not under the long folder")
                return 1
            run = subprocess.run([moved], cwd=root, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=120)
            print(run.stdout)
            print(f"{os.path.basename(program)} from a {len(root)}-character folder: "
                  f"exit {run.returncode}")
            failed |= run.returncode != 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
