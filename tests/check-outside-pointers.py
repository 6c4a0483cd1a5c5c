#!/usr/bin/env python3
"""check-outside-pointers.py FILE...: no file points a reader outside the
repository: not at ../shared or /work/shared, the seeds, nor the
specification's and design's own files (RULES.md, ARCHITECTURE.md,
EDGE.md, API-INDEX.md). README, docs/ and the headers must stand alone."""
import re
import sys

OUTSIDE = re.compile(r'\.\./shared|/work/shared|\bseeds?/|\bRULES\.md|ARCHITECTURE\.md|'
                     r'\bEDGE\.md|API-INDEX\.md|STYLE\.md')


def main():
    bad = 0
    for path in sys.argv[1:]:
        for n, line in enumerate(open(path), 1):
            if OUTSIDE.search(line):
                print('%s:%d: points outside the repository: %s' % (path, n, line.strip()))
                bad += 1
    print('%d files, %d pointers outside the repository' % (len(sys.argv) - 1, bad))
    return 1 if bad or len(sys.argv) < 2 else 0


if __name__ == '__main__':
    sys.exit(main())
