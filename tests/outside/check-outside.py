#!/usr/bin/env python3
"""A driver written outside the tree, against an installed rig (issue 37).

Installs the build under a temporary DESTDIR, builds tests/outside/xor.c
with the line docs/writing-a-driver.md gives (pkg-config rig-edge,
-fvisibility=hidden), runs the installed conformance suite on it
(`rig-conformance xor:0`), and checks that each mistake a new author makes
is answered with a message that names it: a synchronous submit that never
stores its word, a kind on a queue past facts.queues, a launch on a queue
with no load, copies on a queue without COMPUTES, an entry symbol that
-fvisibility=hidden kept unexported (and `rig info` lists that plugin as a
"bad plugin", not "no device"); and that `rig info` shows the driver's own
version. Then the same source against the build tree's uninstalled
rig-edge. Usage: check-outside.py CC BUILD SOURCE
"""
import os
import pathlib
import subprocess
import sys
import tempfile

failed = []


def expect(ok, what, text=""):
    if not ok:
        failed.append(what)
        print(f"FAIL {what}\n{text[-3000:]}")
    else:
        print(f"ok   {what}")


def run(cmd, env, timeout=240):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def pkg_env(dest, pcdir):
    """pkg-config as a user of the install sees it. A .pc file written
    for the real prefix names paths that lie under DESTDIR here: sysroot
    them, unless the file finds its prefix from its own folder."""
    env = dict(os.environ, PKG_CONFIG_PATH=str(pcdir))
    env.pop("PKG_CONFIG_SYSROOT_DIR", None)
    prefix = subprocess.run(["pkg-config", "--variable=prefix", "rig-edge"], env=env,
                            capture_output=True, text=True).stdout.strip()
    if not pathlib.Path(prefix, "include", "rig", "edge.h").exists():
        env["PKG_CONFIG_SYSROOT_DIR"] = str(dest)
    return env


def build_driver(cc, src, out, env, extra=()):
    """The documented line, through the shell as a user types it."""
    line = (f"{cc} -shared -fPIC -fvisibility=hidden {' '.join(extra)} "
            f"$(pkg-config --cflags rig-edge) {src} -o {out}/librig-driver-xor.so "
            f"$(pkg-config --libs rig-edge)")
    rc, text = run(["sh", "-c", line], env)
    expect(rc == 0, f"builds: {line}", text)


def main():
    if os.environ.get("MESON_EXE_WRAPPER"):
        # A cross build (the arm64 stage under qemu, docs/arm64.md): it runs the installed programs directly
        print("skip: the installed programs are run directly, which a cross build's cannot be (MESON_EXE_WRAPPER is set)")
        sys.exit(77)
    cc, build, source = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    src = source / "tests" / "outside" / "xor.c"
    with tempfile.TemporaryDirectory() as tmp:
        dest = pathlib.Path(tmp) / "dest"
        rc, text = run(["meson", "install", "-C", build, "--no-rebuild", "--quiet",
                        "--destdir", str(dest)], dict(os.environ))
        expect(rc == 0, "meson install into a DESTDIR", text)
        pcdir = next(dest.glob("**/pkgconfig/rig-edge.pc")).parent
        bindir = next(dest.glob("**/bin/rig-conformance")).parent
        env = pkg_env(dest, pcdir)
        good, bad = pathlib.Path(tmp) / "good", pathlib.Path(tmp) / "bad"
        good.mkdir()
        bad.mkdir()
        build_driver(cc, src, good, env)
        build_driver(cc, src, bad, env, ["-DXOR_HIDDEN_ENTRY"])
        # The user's environment: none of the build's settings, no library
        # path (the installed programs find theirs relative to themselves).
        user = {k: v for k, v in os.environ.items()
                if not k.startswith("RIG_") and k not in ("MALLOC_PERTURB_", "LD_LIBRARY_PATH")}
        conf, rig = str(bindir / "rig-conformance"), str(bindir / "rig")
        at_good = dict(user, RIG_DRIVER_PATH=str(good))
        at_bad = dict(user, RIG_DRIVER_PATH=str(bad))

        rc, text = run([conf, "xor:0"], at_good)
        expect(rc == 0 and "5 passed, 0 skipped, failed: none" in text,
               "the installed conformance suite passes on xor:0", text)
        mistakes = [
            ("mistake=nostore", "buffers",
             "a SYNCHRONOUS driver's submit returned with its word at 0, below the work's value"),
            ("mistake=pastqueue", "words",
             "facts break a rule (OPEN-35): facts.part_queue[RIG_EDGE_PART_WORDS] is queue 1, "
             "past facts.queues (1)"),
            ("mistake=launch", "words",
             "facts.part_queue[RIG_EDGE_PART_LAUNCH] is queue 0, but the driver has no load"),
            ("mistake=nocomputes", "words", "but COMPUTES is not in facts.flags"),
        ]
        for args, file, words in mistakes:
            rc, text = run([conf, "xor:0," + args, file], at_good)
            expect(rc == 1 and words in text, f"{args}: the suite fails, saying '{words}'", text)
        rc, text = run([conf, "xor:0", "words"], at_bad)
        expect(rc == 1 and "no rig_edge_entry_v1 symbol: define it with RIG_EDGE_DRIVER(table)"
               in text, "an unexported entry: the message says how to export it", text)
        rc, text = run([rig, "info"], at_bad)
        row = [line for line in text.splitlines() if line.lstrip().startswith("xor ")]
        expect(row and "bad plugin" in row[0], "rig info lists it as a bad plugin", text)
        rc, text = run([rig, "info", "xor:0"], at_good)
        expect(rc == 0 and "xor 0.3" in text and "xor host memory" in text,
               "rig info shows the driver's model and version", text)

        # The same line against the build tree: rig-edge-uninstalled.pc.
        tree = pathlib.Path(tmp) / "tree"
        tree.mkdir()
        env = dict(os.environ, PKG_CONFIG_PATH=str(pathlib.Path(build) / "meson-uninstalled"))
        env.pop("PKG_CONFIG_SYSROOT_DIR", None)
        build_driver(cc, src, tree, env)
        rc, text = run([str(pathlib.Path(build) / "tests" / "conformance-words")],
                       dict(os.environ, RIG_CONF_DEVICE="xor:0", RIG_DRIVER_PATH=str(tree)))
        expect(rc == 0, "built against the uninstalled rig-edge, it passes words", text)
    if failed:
        print(f"{len(failed)} failed")
        sys.exit(1)


main()
