#!/usr/bin/env python3
"""check-man-text.py: reads every page tools/rig-man.py generated and
fails on what a reader found wrong in them:

- RETURN VALUE naming an attribute macro as a type ("A value of type
  RIG_MUST_USE rig_status.");
- THREADS AND BLOCKING holding a sentence twice, a list of errors, or a
  sentence that is not about threads, locks, blocking or allocation (a
  launch's parameter "block", the "threads" of a grid, "the allocation");
- rig(7)'s machines group listing a function whose page speaks of no
  machine and no host.

  check-man-text.py DIR
"""
import os
import re
import sys

MACROS = re.compile(r'\bRIG_(MUST_USE|API|EDGE_API|LINK_API)\b')
ABOUT_THREADS = re.compile(r'lock|block|thread|wait|allocat|pure|never fails|spins|sleeps', re.I)
NOT_ABOUT_THREADS = re.compile(
    r"\bblock k\b|launch blocks \(|block or a range|threads of a group"
    r"|most threads a group|the allocation is the whole|^RIG_[A-Z_]+\b|^NULL\b")
# The paragraph every page of <rig/rig.h> ends the section with.
CONVENTIONS = 'Any thread may call it (docs/conventions.md).'


def sections(text):
    """{section title: [paragraphs]} of a page's roff."""
    out, cur, para = {}, None, []
    for line in text.split('\n') + ['.SH END']:
        if line.startswith('.SH ') or line.startswith('.PP') or line.startswith('.SS '):
            if cur is not None and para:
                out.setdefault(cur, []).append(' '.join(para))
            para = []
            if line.startswith('.SH '):
                cur = line[4:].strip()
        elif not line.startswith('.'):
            para.append(line.replace('\\&', ''))
    return out


def check_page(name, text):
    bad = []
    s = sections(text)
    for p in s.get('RETURN VALUE', []):
        if MACROS.search(p):
            bad.append('%s: RETURN VALUE names a macro: %s' % (name, p))
    seen = set()
    for p in s.get('THREADS AND BLOCKING', []):
        if p in seen:
            bad.append('%s: THREADS AND BLOCKING says twice: %s' % (name, p))
        seen.add(p)
        if p.startswith(CONVENTIONS):
            continue
        if not ABOUT_THREADS.search(p) or NOT_ABOUT_THREADS.search(p):
            bad.append('%s: THREADS AND BLOCKING is not about threads: %s' % (name, p[:120]))
    return bad


def check_overview(man_dir):
    bad = []
    text = open(os.path.join(man_dir, 'rig.7')).read()
    for m in re.finditer(r'\.SS (machines[^\n]*)\n\.nf\n(.*?)\n\.fi', text, re.S):
        for ref in m.group(2).split('\n'):
            fn = ref.replace('(3)', '').strip()
            page = open(os.path.join(man_dir, fn + '.3')).read()
            desc = ' '.join(p for p in sections(page).get('DESCRIPTION', [])
                            if not p.startswith('Part of the'))
            if not re.search(r"machine", desc, re.I):
                bad.append('rig.7: %s is listed under "%s", and its page speaks of no machine'
                           % (fn, m.group(1)))
    return bad


def main():
    man_dir = sys.argv[1]
    pages = sorted(p for p in os.listdir(man_dir) if p.endswith('.3'))
    bad = []
    for p in pages:
        bad += check_page(p, open(os.path.join(man_dir, p)).read())
    bad += check_overview(man_dir)
    for b in bad:
        print(b)
    print('%d pages and rig.7 read, %d problems' % (len(pages), len(bad)))
    return 1 if bad or not pages else 0


if __name__ == '__main__':
    sys.exit(main())
