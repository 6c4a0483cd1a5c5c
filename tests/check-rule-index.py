#!/usr/bin/env python3
"""check-rule-index.py INDEX FILE...: every rule ID the files cite (A-3, or
A-3..5 for A-3, A-4, A-5) is explained in INDEX (docs/rule-index.md), where
an entry names it alone or within a range."""
import re
import sys

ID = re.compile(r'\b([A-Z]{2,7})-(\d+)(?:\.\.(?:[A-Z]+-)?(\d+))?')


def ids(text):
    out = set()
    for m in ID.finditer(text):
        first = int(m.group(2))
        last = int(m.group(3)) if m.group(3) else first
        out |= {'%s-%d' % (m.group(1), n) for n in range(first, last + 1)}
    return out


def main():
    index, files = sys.argv[1], sys.argv[2:]
    entries = [l for l in open(index).read().split('\n') if l.startswith('- ')]
    explained = set()
    for e in entries:
        explained |= ids(e.split(':')[0])
    cited = set()
    for f in files:
        cited |= {'%s: %s' % (i, f) for i in ids(open(f).read())}
    missing = sorted(c for c in cited if c.split(':')[0] not in explained)
    for m in missing:
        print('%s cites it; %s does not explain it' % (m, index))
    print('%d citations, %d IDs explained, %d missing' % (len(cited), len(explained), len(missing)))
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
