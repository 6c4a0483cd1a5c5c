#!/usr/bin/env python3
"""check-symbols-odr.py SYMBOLS_CHECK: tools/symbols-check.py passes a
library built with AddressSanitizer, which exports __odr_asan.V beside each
exported variable V (librig-edge's rig_edge_word_sleepers), and still fails
one that exports an indicator of a variable it does not export, or an
unlisted symbol. A stand-in nm prints the library's symbols, so the test
runs in every build, sanitized or not.
"""
import os
import subprocess
import sys
import tempfile

LISTED = "rig_edge_word_sleepers\nrig_edge_fail\n"


def check(tool, tmp, symbols):
    nm = os.path.join(tmp, "nm")
    with open(nm, "w") as f:
        f.write("#!/bin/sh\ncat <<'END'\n%s\nEND\n" % "\n".join(symbols))
    os.chmod(nm, 0o755)
    listed = os.path.join(tmp, "list")
    with open(listed, "w") as f:
        f.write(LISTED)
    r = subprocess.run([sys.executable, tool, "--lib", "lib.so", "--symbols-file", listed,
                        "--nm", nm], capture_output=True, text=True)
    return r.returncode, r.stdout


def main():
    tool = sys.argv[1]
    base = ["0000000000015f40 B rig_edge_word_sleepers", "0000000000001000 T rig_edge_fail"]
    cases = [
        ("plain", base, 0),
        ("ASan's indicator of an exported variable", base + [
            "0000000000016060 B __odr_asan.rig_edge_word_sleepers"], 0),
        ("an indicator of a variable not exported", base + [
            "0000000000016060 B __odr_asan.rig__hidden"], 1),
        ("an unlisted function", base + ["0000000000001100 T rig__leak"], 1),
    ]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for what, symbols, want in cases:
            rc, out = check(tool, tmp, symbols)
            ok = rc == want
            bad += not ok
            print("%s: %s (exit %d, want %d)\n%s" % ("ok" if ok else "FAIL", what, rc, want, out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
