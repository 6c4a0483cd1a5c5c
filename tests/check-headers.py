#!/usr/bin/env python3
"""check-headers.py: every public header compiles on its own, first of all,
in C99, C11 and C17 and in C++11, 14, 17 and 20, with -pedantic-errors and
every warning an error, as a user's program includes it.

  check-headers.py --cc CC --cxx CXX -I DIR... HEADER...

HEADER is the name a program includes (rig/rig.h). A compiler that is
missing skips its languages; with neither, the test skips (77).
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

C_STDS = ['c99', 'c11', 'c17']
CXX_STDS = ['c++11', 'c++14', 'c++17', 'c++20']
FLAGS = ['-fsyntax-only', '-pedantic-errors', '-Wall', '-Wextra', '-Werror']


def unit(first, headers):
    """The header `first` included before any other, then the rest; a
    declaration after them, as ISO C refuses an empty unit."""
    order = [first] + [h for h in headers if h != first]
    return ''.join('#include <%s>\n' % h for h in order) + 'int rig_header_check;\n'


def compile_one(compiler, std, source, suffix, includes):
    with tempfile.NamedTemporaryFile('w', suffix=suffix, delete=False) as f:
        f.write(source)
        path = f.name
    try:
        cmd = compiler + ['-std=' + std] + FLAGS + ['-I' + d for d in includes] + [path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode, r.stderr
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cc', default='')
    ap.add_argument('--cxx', default='')
    ap.add_argument('-I', dest='includes', action='append', default=[])
    ap.add_argument('headers', nargs='+')
    a = ap.parse_args()
    langs = []
    for cmd, stds, suffix in [(a.cc, C_STDS, '.c'), (a.cxx, CXX_STDS, '.cpp')]:
        words = shlex.split(cmd)
        if words and shutil.which(words[0]):
            langs.append((words, stds, suffix))
        elif cmd:
            print('no %s here: its languages are not checked' % cmd)
    if not langs:
        print('SKIP: no C or C++ compiler')
        return 77
    failed = 0
    for compiler, stds, suffix in langs:
        for std in stds:
            for h in a.headers:
                rc, err = compile_one(compiler, std, unit(h, a.headers), suffix, a.includes)
                if rc != 0:
                    failed += 1
                    first = '\n'.join(err.splitlines()[:12])
                    print('FAIL %s -std=%s, %s first:\n%s' % (compiler[0], std, h, first))
            print('%s -std=%s: %d headers, each first' % (compiler[0], std, len(a.headers)))
    print('%d failures' % failed)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
