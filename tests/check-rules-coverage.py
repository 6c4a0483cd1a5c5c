#!/usr/bin/env python3
"""Checks tests/rules-coverage on a tree of its own: only an ID written on
its own names a rule; a range names none of its rules, not even its ends;
(its tags, KEEP and SHUT, are no tags of the real rules, so this file names
none of them)
benchmarks (bench/) name nothing; a rule docs/rules-not-testable.md lists
that a test names fails it. usage: check-rules-coverage.py SCRIPT"""

import os
import subprocess
import sys
import tempfile

RULES = """## Keep \u2014 KEEP
- KEEP-1: one.
- KEEP-2: two.
- KEEP-3: three.
- KEEP-4: four.
- KEEP-5: five.
- KEEP-6: six.
## Shut \u2014 SHUT
- SHUT-1: one.
"""

FILES = {
    "tests/unit/test_a.c": "/* KEEP-1..3: a span, no rule on its own */\n"
                           "/* KEEP-4 KEEP-2..KEEP-3 */\n"
                           "static void test_keep_5(void) {} /* KEEP-1..SHUT-1 */\n",
    "bench/b.c": "/* KEEP-6 */\n",
    # the design's own rules (docs/*.md), titled or not
    "docs/d.md": "- **DOCR-1.** plain.\n- **DOCR-2. Titled.** text.\n- **DOCR-3. Other.** text.\n",
    "tests/unit/test_d.c": "/* DOCR-1 DOCR-2 */\n",
}

WANT = {
    "KEEP-1": "tests/unit/test_a.c",  # the end of the mixed "KEEP-1..SHUT-1"
    "KEEP-2": "(not named)",
    "KEEP-3": "(not named)",
    "KEEP-4": "tests/unit/test_a.c",
    "KEEP-5": "tests/unit/test_a.c",  # the identifier form
    "KEEP-6": "(not named)",          # bench/ is no test
    "SHUT-1": "tests/unit/test_a.c",
    "DOCR-1": "tests/unit/test_d.c",
    "DOCR-2": "tests/unit/test_d.c",  # a titled rule counts
    "DOCR-3": "(not named)",
}


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "RULES.md"), "w", encoding="utf-8") as f:
            f.write(RULES)
        for rel, text in FILES.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        env = dict(os.environ, RIG_ROOT=root, RIG_RULES=os.path.join(root, "RULES.md"))
        env.pop("RIG_TESTS_ROOT", None)
        out = subprocess.run([sys.executable, script, "--where"] + list(WANT),
                             env=env, capture_output=True, text=True, check=True).stdout
        got = dict(line.split(": ", 1) for line in out.splitlines())
        bad = [k for k in WANT if got.get(k) != WANT[k]]
        for k in bad:
            print("%s: got %r, want %r" % (k, got.get(k), WANT[k]))
        summary = subprocess.run([sys.executable, script, "--summary"], env=env,
                                 capture_output=True, text=True, check=True).stdout
        last = summary.splitlines()[-1]
        if not last.startswith("rules-coverage: 6 of 10 rules named by a test"):
            print("summary: got %r" % last)
            bad.append("summary")
        # A rule the not-testable list holds that a test names fails the
        # report: KEEP-4 is named, KEEP-6 is not.
        os.makedirs(os.path.join(root, "docs"), exist_ok=True)
        with open(os.path.join(root, "docs", "rules-not-testable.md"), "w") as f:
            f.write("| rule | why |\n| --- | --- |\n| KEEP-4 | stale |\n| KEEP-6 | fine |\n")
        stale = subprocess.run([sys.executable, script, "--summary"], env=env,
                               capture_output=True, text=True)
        if stale.returncode != 1 or "KEEP-4 is in docs/rules-not-testable.md" not in stale.stderr \
                or "KEEP-6" in stale.stderr:
            print("a listed rule that a test names: rc %d, %r" % (stale.returncode, stale.stderr))
            bad.append("stale")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
