#!/usr/bin/env python3
"""embedded.py SOURCE.c KERNEL.spv [--print]: checks that the SPIR-V words
embedded in SOURCE.c (the array after "static const uint32_t demo_spv[] =")
are KERNEL.spv's, but for word 2, the generator's version. --print writes
the C array to put there instead."""
import re
import struct
import sys


def words_of(path):
    data = open(path, 'rb').read()
    return list(struct.unpack('<%dI' % (len(data) // 4), data))


def main():
    src, spv = sys.argv[1], sys.argv[2]
    want = words_of(spv)
    if '--print' in sys.argv:
        lines = []
        for i in range(0, len(want), 6):
            lines.append('    ' + ', '.join('0x%08x' % w for w in want[i:i + 6]) + ',')
        print('\n'.join(lines))
        return 0
    text = open(src).read()
    m = re.search(r'static const uint32_t demo_spv\[\] = \{([^}]*)\}', text)
    if not m:
        print('%s: no demo_spv array' % src)
        return 1
    got = [int(w, 16) for w in re.findall(r'0x[0-9a-fA-F]+', m.group(1))]
    if len(got) == len(want) and all(a == b for i, (a, b) in enumerate(zip(got, want)) if i != 2):
        print('demo_spv in %s: %d words, as %s' % (src, len(got), spv))
        return 0
    print('demo_spv in %s differs from %s (%d words, want %d): regenerate it with\n'
          '  %s %s %s --print' % (src, spv, len(got), len(want), sys.argv[0], src, spv))
    return 1


if __name__ == '__main__':
    sys.exit(main())
