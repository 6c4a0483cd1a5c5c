#!/usr/bin/env python3
"""check-size.py: the library's files stay under 800 lines and its functions
under 60, the sizes at which a reader still holds one in mind.

    tools/check-size.py [ROOT]

Reads every C source and header of the libraries and drivers under ROOT
(core, edge, host-linker, drivers, wire; not tests, tools or bench) and prints each
file over 800 lines and each function over 60. A function may be longer where
the comment just above it says why, in a sentence holding "longer than 60
lines". Exits 1 when something is over, 0 otherwise.

Functions are found by their braces: a '{' at depth 0 whose text since the
last ';' or '}' holds a '(' and no '=' before it opens a function body.
Strings, character constants and comments are blanked first, so a brace in
them counts for nothing.
"""
import os
import re
import sys

MAX_FILE = 800
MAX_FUNCTION = 60
DIRS = ("core", "edge", "host-linker", "drivers", "wire")
EXEMPT = "longer than 60 lines"


def blank(text):
    """text with comments, strings and character constants blanked, newlines
    kept, so that line numbers still hold."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        two = text[i:i + 2]
        if two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            # A preprocessor line (and its continuations) is not code here.
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, lines) of each function body in text."""
    code = blank(text)
    found = []
    depth = 0
    head_start = 0      # where the text before the next '{' at depth 0 starts
    start = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[head_start:i]
                paren = head.find("(")
                if paren >= 0 and "=" not in head[:paren]:
                    names = re.findall(r"([A-Za-z_]\w*)\s*\(", head)
                    start = (names[0] if names else "?", i)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if start:
                    name, at = start
                    first = code.count("\n", 0, at) + 1
                    last = code.count("\n", 0, i) + 1
                    found.append((name, first, last - first + 1, (head_start, at)))
                start = None
                head_start = i + 1
        elif c == ";" and depth == 0:
            head_start = i + 1
    return found


def exempt(text, head):
    """Whether the comment above a function, between the code before it and
    its body's brace (head: those two offsets), says why it is long."""
    return EXEMPT in " ".join(text[head[0]:head[1]].split())


def sources(root):
    for top in DIRS:
        for base, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in ("tests", "kernels"))
            for f in sorted(files):
                if f.endswith((".c", ".h")) and not f.startswith("test_"):
                    yield os.path.join(base, f)


def self_test():
    """Checks the checker on a tree of its own: a function of 61 lines, one
    as long that says why, a struct of 70 lines, a brace in a string, and a
    file of 801 lines."""
    import tempfile
    body = "".join(f"  x += {i};\n" for i in range(59))
    long_fn = "static int long_one(int x) {\n" + body + "}\n"
    ok_fn = "/* It is longer than 60 lines: one table. */\nstatic int said(int x) {\n" + body + "}\n"
    struct = "struct s {\n" + "".join(f"  int f{i};\n" for i in range(70)) + "};\n"
    text = 'static const char *s = "{";\n' + struct + long_fn + ok_fn
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "core"))
        open(os.path.join(root, "core", "a.c"), "w").write(text)
        open(os.path.join(root, "core", "b.h"), "w").write("int x;\n" * 801)
        found = check(root)
    want = ["core/a.c:74: long_one is 61 lines", "core/b.h: 801 lines"]
    missing = [w for w in want if not any(f.startswith(w) for f in found)]
    if missing or len(found) != 2:
        print("self-test: found", found, "missing", missing)
        return 1
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    found = check(root)
    for line in found:
        print(line)
    return 1 if found else 0


# A label that heads a group of declarations ("/* ---- io (io.c) ---- */",
# "/* Claims (claim.c). */") may stand right above a function's comment.
LABEL = re.compile(r"^/\* (-+ .* -+|[A-Z][\w ,'-]* \([\w./, ]+\)\.?) \*/$")


def stacked_comments(text):
    """(line, first words) of each comment that stands on nothing: a comment
    of its own lines followed at once by another, as is left where a helper
    was inserted between a comment and the function it describes."""
    found = []
    lines = text.split("\n")
    start = None
    for i, line in enumerate(lines):
        if start is None and line.startswith("/*"):
            start = i
        if start is not None and line.rstrip().endswith("*/"):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            one = lines[start].rstrip() if start == i else ""
            # A file's own header comment (the first, after an SPDX line)
            # may precede anything.
            first = start == 0 or (start == 1 and "SPDX-License-Identifier" in lines[0])
            if nxt.startswith("/*") and not first and not LABEL.match(one):
                found.append((start + 1, lines[start][3:50]))
            start = None
    return found


def check(root):
    """The lines saying what is over, for the tree at root."""
    over = []
    for path in sources(root):
        text = open(path, encoding="utf-8", errors="replace").read()
        rel = os.path.relpath(path, root)
        lines = text.count("\n")
        if lines > MAX_FILE:
            over.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
        for name, first, n, head in functions(text):
            if n > MAX_FUNCTION and not exempt(text, head):
                over.append(f"{rel}:{first}: {name} is {n} lines (at most {MAX_FUNCTION}, "
                            f"or a comment above it saying why it is {EXEMPT})")
        for line, words in stacked_comments(text):
            over.append(f"{rel}:{line}: the comment \"{words}...\" stands on nothing: another "
                        f"comment follows it at once (move it to what it describes)")
    return over


if __name__ == "__main__":
    sys.exit(main())
