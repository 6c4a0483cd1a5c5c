#!/usr/bin/env python3
"""seed_examples.py: runs every OCaml example of the two seed pages.

The pages (the Rig module's reference and the memory guide) are read from
$RIG_SEEDS (run-tests.sh sets it to the seeds folder beside the
repository); where they are absent, as in a user's clone, the test says so
and passes. The pages are never copied into the repository.

Each example is compiled as its own program against the package, exactly
as the page writes it, run, and its output compared with what the page says
it prints. A complete program (the guide's, which opens with `open Rig;;`)
is compiled alone. A fragment of the reference (a `let ... in ...`
expression that names values its text only describes, such as `opener` or
`obj`) is put, unchanged, between a context that binds those names as the
page's text describes them and a check of what the text says the fragment
does; CONTEXTS below gives each. An example that cannot run here is listed
with the reason, never edited.

Prints a table, one row per example, and the closing line
"seed-examples: N passed, N failed, N skipped"; exits 1 on a failure.
"""
import glob
import os
import platform
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # bindings/ocaml, the dune project
WORK = os.path.join(ROOT, "seed-examples")  # made and removed by each run


def pages(seeds):
    ref = glob.glob(os.path.join(seeds, "000_*.txt"))
    guide = glob.glob(os.path.join(seeds, "004_*.txt"))
    return (ref[0] if ref else None), (guide[0] if guide else None)


def guide_examples(text):
    """The guide's blocks: a line "ocaml", the program, a line "out", then
    the lines it prints up to a blank line."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "ocaml":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "out":
                j += 1
            code = "\n".join(lines[i + 1:j])
            k = j + 1
            expect = []
            while k < len(lines) and lines[k].strip():
                expect.append(lines[k])
                k += 1
            out.append((i + 1, code, "\n".join(expect) + "\n" if expect else ""))
            i = k
        else:
            i += 1
    return out


def reference_examples(text):
    """The reference's examples: the lines that are an OCaml expression,
    `let NAME = ... in ...` (its captured page keeps each on one line)."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(r"^let [a-z_][A-Za-z0-9_']* = .* in ", line):
            out.append((n, line, ""))  # the page shows no output for them
    return out


def c_example(text):
    """The C function of the reference's Objects section, which its second
    example loads: from `#include <stdint.h>` to the brace that closes it."""
    m = re.search(r"(#include <stdint.h>\n.*?\n\})", text, re.S)
    return m.group(1) + "\n" if m else None


def compile_object(c_source, build):
    """The object, with the command the page gives for this host. Debian's
    clang has no C library headers for a target without a system, so where
    the page's command fails on <stdint.h> it adds -ffreestanding, which
    takes the compiler's own stdint.h: the source is unchanged."""
    src = os.path.join(build, "f.c")
    with open(src, "w") as f:
        f.write(c_source)
    if platform.machine() in ("aarch64", "arm64"):
        flags = ["--target=aarch64-none-unknown-elf", "-ffixed-x18"]
    else:
        flags = ["--target=x86_64-none-unknown-elf"]
    cmd = ["clang", "-c", "-O2", "-fPIC"] + flags + ["f.c"]
    r = subprocess.run(cmd, cwd=build, capture_output=True, text=True)
    note = ""
    if r.returncode != 0 and "libc-header-start.h" in r.stderr:
        r = subprocess.run(cmd + ["-ffreestanding"], cwd=build, capture_output=True, text=True)
        note = " (clang with -ffreestanding added: Debian's clang has no libc headers for the page's target)"
    if r.returncode != 0:
        return None, "the page's C example does not compile: " + r.stderr.strip()[:200]
    return os.path.join(build, "f.o"), note


# Contexts of the reference's fragments, keyed by the fragment's first
# words: what binds the names the page's text describes, and a check of
# what the text says the fragment does, which prints only on a mismatch.
CONTEXTS = {
    # "This copies five bytes to a device and back": opener is a device's
    # opener; a memory device stands for the GPU (the reference: tests use
    # it to stand for a GPU).
    "let d = Result.get_ok (Rig.open_ opener)": (
        'let opener = Rig_edge.plugin "memory:seed-example"\nlet () =\n',
        "\n",
        None,
    ),
    # "Loaded once, it runs over n floats in 64 groups": obj is the page's
    # object, x, y and z host buffers of n floats, Submission, host and
    # submit Rig's (the page writes them unqualified); it adds x and y into z.
    "let image = Result.get_ok (Rig.Image.load Rig.host obj)": (
        "open Rig\n"
        "let obj = In_channel.with_open_bin Sys.argv.(1) In_channel.input_all\n"
        "let n = 1000\n"
        "let floats f =\n"
        "  let b = Buffer.create host (4 * n) and s = Bytes.create (4 * n) in\n"
        "  for i = 0 to n - 1 do Bytes.set_int32_le s (4 * i) (Int32.bits_of_float (f i)) done;\n"
        "  Buffer.blit_from_string (Bytes.to_string s) 0 b 0 (4 * n); b\n"
        "let x = floats float_of_int and y = floats (fun i -> float_of_int (2 * i))\n"
        "let z = floats (fun _ -> 0.)\n"
        "let () =\n",
        ";\n  let out = Bytes.create (4 * n) in\n"
        "  Buffer.blit_to_bytes z 0 out 0 (4 * n);\n"
        "  for i = 0 to n - 1 do\n"
        "    let v = Int32.float_of_bits (Bytes.get_int32_le out (4 * i)) in\n"
        '    if v <> float_of_int (3 * i) then Printf.printf "z.(%d) = %g, not x + y\\n" i v\n'
        "  done\n",
        "object",
    ),
}

# In_channel arrived in OCaml 4.14: a program of 4.13 gets it from here.
IN_CHANNEL_COMPAT = """module In_channel = struct
  let with_open_bin path f = let ic = open_in_bin path in
    Fun.protect ~finally:(fun () -> close_in ic) (fun () -> f ic)
  let input_all ic = really_input_string ic (in_channel_length ic)
end
"""


def program(code, kind):
    """The program's source and the file it needs, or a reason to skip."""
    if kind == "guide":
        return code, None, None
    for key, (pre, post, needs) in CONTEXTS.items():
        if code.startswith(key):
            return IN_CHANNEL_COMPAT + pre + code + post, needs, None
    return None, None, "a fragment whose names no context binds"


def run_one(name, src, arg, build_dir):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "main.ml"), "w") as f:
        f.write(src)
    with open(os.path.join(d, "dune"), "w") as f:
        f.write("(executable (name main) (libraries rig)\n"
                " (ocamlopt_flags (:standard -w -a)) (flags (:standard -w -a)))\n")
    b = subprocess.run(["dune", "build", "--root", ROOT, "--build-dir", build_dir,
                        "./seed-examples/%s/main.exe" % name], capture_output=True, text=True)
    if b.returncode != 0:
        return None, "does not compile: " + (b.stdout + b.stderr).strip()[-600:]
    exe = os.path.join(ROOT, build_dir, "default", "seed-examples", name, "main.exe")
    r = subprocess.run([exe] + ([arg] if arg else []), capture_output=True, text=True, timeout=120)
    out = r.stdout + (("exit %d: %s" % (r.returncode, r.stderr)) if r.returncode else "")
    return out, None


def main():
    try:
        return run_all()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


def run_all():
    seeds = os.environ.get("RIG_SEEDS", "")
    build_dir = sys.argv[1] if len(sys.argv) > 1 else "_build"
    ref, guide = pages(seeds) if seeds and os.path.isdir(seeds) else (None, None)
    if not ref and not guide:
        print("SKIP: the seed pages are absent (RIG_SEEDS=%r): nothing to run" % seeds)
        print("seed-examples: 0 passed, 0 failed, 0 skipped")
        return 0
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    examples = []
    obj, obj_note = None, ""
    if ref:
        text = open(ref).read()
        examples += [("reference", ref, n, code, out) for n, code, out in reference_examples(text)]
        c = c_example(text)
        if c:
            obj, obj_note = compile_object(c, WORK)
    if guide:
        text = open(guide).read()
        examples += [("guide", guide, n, code, out) for n, code, out in guide_examples(text)]
    rows, passed, failed, skipped = [], 0, 0, 0
    for i, (kind, page, line, code, expect) in enumerate(examples, 1):
        where = "%s:%d" % (os.path.basename(page), line)
        src, needs, why = program(code, kind)
        arg = None
        if src and needs == "object":
            if not obj:
                why = obj_note
            else:
                arg = obj
        if why:
            skipped += 1
            rows.append((where, "skipped", why))
            continue
        out, err = run_one("ex%d" % i, src, arg, build_dir)
        if err:
            failed += 1
            rows.append((where, "FAILED", err))
        elif out == expect:
            passed += 1
            said = "prints the page's %d line(s)" % expect.count("\n") if expect else "prints nothing, as the page shows"
            rows.append((where, "passed", said + (obj_note if needs == "object" else "")))
        else:
            failed += 1
            rows.append((where, "FAILED", "printed %r, the page says %r" % (out, expect)))
    print("| example | result | note |")
    print("| --- | --- | --- |")
    for r in rows:
        print("| %s | %s | %s |" % r)
    print("seed-examples: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
