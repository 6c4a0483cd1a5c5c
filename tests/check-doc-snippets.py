#!/usr/bin/env python3
"""check-doc-snippets.py DOC SOURCE...: every ```c block of DOC is code the
suite compiles: its lines, stripped, appear in this order and together in
one of the SOURCE files. So docs/tutorial.md cannot show code that does
not build."""
import re
import sys


def norm(text):
    return '\n'.join(l.strip() for l in text.split('\n') if l.strip())


def main():
    doc, sources = sys.argv[1], sys.argv[2:]
    texts = {s: norm(open(s).read()) for s in sources}
    blocks = re.findall(r'```c\n(.*?)```', open(doc).read(), re.S)
    bad = [b for b in blocks if not any(norm(b) in t for t in texts.values())]
    for b in bad:
        print('%s: this block is in none of the sources:\n%s' % (doc, b))
    print('%d blocks, %d not in the sources' % (len(blocks), len(bad)))
    return 1 if bad or not blocks else 0


if __name__ == '__main__':
    sys.exit(main())
