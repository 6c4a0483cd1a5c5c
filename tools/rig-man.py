#!/usr/bin/env python3
"""rig-man.py: section 3 man pages from the comments of rig's public headers.

Each public function (a RIG_API, RIG_EDGE_API or RIG_LINK_API prototype,
or a static inline function) gets NAME.3 with NAME, SYNOPSIS (the
prototype), DESCRIPTION (the comment above it, and the comment of its
group), RETURN VALUE, THREADS AND BLOCKING, and SEE ALSO (the functions of
its header section). Pages are made from the headers at build time so that
they cannot drift from them (docs/reference.md says why).

usage:
  rig-man.py --list HEADER...            the page names, one a line
  rig-man.py --out DIR HEADER...         writes DIR/NAME.3 and DIR/rig.7
  rig-man.py --check DIR [--symbols LIST]... [--lib SO]... [--nm NM]
      every exported symbol (the lists, the libraries' dynamic symbols)
      has a page in DIR with every section; exit 1 naming those without.
"""
import argparse
import os
import re
import subprocess
import sys

API = re.compile(r'^(RIG_API|RIG_EDGE_API|RIG_LINK_API)\s+')
INLINE = re.compile(r'^static inline\s+')
SECTION = re.compile(r'^/\* -+ (.*?) -+')
SECTIONS = ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'RETURN VALUE', 'THREADS AND BLOCKING',
            'SEE ALSO')
# What each header is, for the synopsis and the overview.
HEADERS = {
    'rig.h': ('rig/rig.h', 'rig-core', 'the public API'),
    'edge.h': ('rig/edge.h', 'rig-edge', 'the driver ABI'),
    'link.h': ('rig/link.h', 'rig-link', 'the host linker'),
    # Parts of the public API in headers of their own, which rig.h includes.
    'submission.h': ('rig/rig.h', 'rig-core', 'the public API'),
    'profile.h': ('rig/rig.h', 'rig-core', 'the public API'),
    'job.h': ('rig/rig.h', 'rig-core', 'the public API'),
}
# A sentence about threads, locks or blocking: words of the headers'
# conventions, used as such. "block" as a noun (a launch's parameter block),
# "threads" of a grid and "allocation" are not, nor is a list of errors.
THREAD_WORDS = re.compile(
    r"lock-free|\block(s|ed)?\b|\bblocks?(?=[;:,.]|\s+(only|until|while|for|to|on|but)\b)"
    r"|\b(may|must not|never|does not|not) block\b|\bthread-safe\b"
    r"|\b(calling|any|other|another|this|its|no|one|each|first asking)\s+threads?(\b|')"
    r"|\ballocates\b|\bwaits? (for|once|on)\b|\bnever fails\b|\bpure\b", re.I)
NOT_THREADS = re.compile(r'^(RIG_[A-Z_]+\b|NULL\b)')
# Attributes of a prototype that are not part of its return type.
ATTRIBUTES = re.compile(r'\bRIG_(MUST_USE|API|EDGE_API|LINK_API|EDGE_MUST_USE)\b')
RETURN_WORDS = re.compile(r'\b(returns?|whether|writes|NULL)\b', re.I)


class Function:
    def __init__(self, name, proto, header, section, comment, group, trailing):
        self.name, self.proto, self.header, self.section = name, proto, header, section
        self.comment, self.group, self.trailing = comment, group, trailing

    def description(self):
        parts = self.comment.split('\n\n') if self.comment else []
        if self.group and self.group != self.comment:
            parts += self.group.split('\n\n')
        if self.trailing:
            parts.append('Rules: ' + self.trailing + ' (docs/rule-index.md).'
                         if re.fullmatch(r'[A-Z]+-[0-9., A-Z-]+', self.trailing)
                         else self.trailing)
        return parts

    def text(self):
        return ' '.join(self.description()).replace('\n\n', ' ')


def comment_text(lines):
    """The words of a /* ... */ block, without its markers; an empty line
    of the block parts paragraphs, joined by a blank line."""
    paras, cur = [], []
    for line in lines:
        t = line.strip()
        t = re.sub(r'^/\*+', '', t)
        t = re.sub(r'\*+/$', '', t)
        t = re.sub(r'^\*(\s|$)', '', t.strip()).strip()
        if t:
            cur.append(t)
        elif cur:
            paras.append(' '.join(cur))
            cur = []
    if cur:
        paras.append(' '.join(cur))
    return '\n\n'.join(' '.join(p.split()) for p in paras)


def read_block(lines, i):
    """The comment block starting at line i: (its text, the next line)."""
    block = [lines[i]]
    while '*/' not in lines[i]:
        i += 1
        block.append(lines[i])
    return comment_text(block), i + 1


def read_prototype(lines, i):
    """The prototype starting at line i: (its text, trailing comment, next line)."""
    inline = INLINE.match(lines[i]) is not None
    text, trailing = [], ''
    while True:
        line = lines[i]
        code, _, rest = line.partition('/*')
        if rest:
            trailing = comment_text(['/*' + rest])
        text.append(code.strip())
        i += 1
        if (inline and '{' in code) or (not inline and code.rstrip().endswith(';')):
            break
    if inline:  # skip the body
        depth = sum(l.count('{') - l.count('}') for l in text)
        while depth > 0:
            depth += lines[i].count('{') - lines[i].count('}')
            i += 1
        text[-1] = text[-1].split('{')[0].rstrip()
        proto = ' '.join(text) + ';'
    else:
        proto = API.sub('', ' '.join(text))
    proto = re.sub(r'\s+', ' ', proto).replace('( ', '(')
    return proto, trailing, i


def items(path):
    """The header as a sequence: ('section', title), ('comment', text),
    ('proto', prototype, trailing comment) and ('break',) where a blank line
    or other code ends what a comment speaks of."""
    lines = open(path).read().split('\n')
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        m = SECTION.match(s)
        if m:
            out += [('break',), ('section', m.group(1).strip())]
            i += 1
        elif s.startswith('/*') and not line.startswith(' '):
            text, i = read_block(lines, i)
            out.append(('comment', text))
        elif API.match(line) or INLINE.match(line):
            proto, trailing, i = read_prototype(lines, i)
            out.append(('proto', proto, trailing))
        else:
            # One-line typedefs and macros between a comment and its
            # prototypes keep the comment; anything else ends it.
            if s == '' or not (s.startswith('#define') or s.startswith('__attribute__') or
                               (s.startswith('typedef') and s.endswith(';'))):
                out.append(('break',))
            i += 1
    return out


def parse(path):
    """The public functions of one header, in order. A function's own
    comment is the one right above it, or the one its untrailed neighbour
    above has (functions declared together); a comment right above two
    prototypes or more is also a group's, which the others after it until a
    blank line share."""
    seq = items(path)
    header = os.path.basename(path)
    out, section, own, group, last, first = [], '', '', '', None, True
    for k, it in enumerate(seq):
        if it[0] == 'section':
            section = it[1]
        elif it[0] == 'break':
            own, group, last, first = '', '', None, True
        elif it[0] == 'comment':
            own, last = it[1], 'comment'
            following = 0
            for nxt in seq[k + 1:]:
                if nxt[0] != 'proto':
                    break
                following += 1
            if following >= 2 and first:
                group = it[1]
            first = False
        else:
            proto, trailing = it[1], it[2]
            if last == 'proto' and trailing:
                own = ''
            name = re.search(r'(\w+)\s*\(', proto).group(1)
            out.append(Function(name, proto, header, section, own, group, trailing))
            last = 'proto'
    return out


def esc(text):
    """Text for roff: backslashes escaped, no line starting with a control character."""
    text = text.replace('\\', '\\e')
    return '\n'.join('\\&' + l if l[:1] in ('.', "'") else l for l in text.split('\n'))


def sentences(text):
    return [s.strip() for s in re.split(r'(?<=[.;:])\s+(?=[A-Z(])', text) if s.strip()]


def return_value(f):
    rtype = ATTRIBUTES.sub('', f.proto.split(f.name)[0].replace('static inline', ''))
    rtype = ' '.join(rtype.split())
    found = [s for s in sentences(f.text()) if RETURN_WORDS.search(s) or 'RIG_' in s]
    if rtype == 'rig_status':
        head = ('RIG_OK (0) on success. Otherwise a negative rig_status, with '
                'rig_error_last(3) holding the status, the device concerned and a message; '
                'no out-parameter is written.')
    elif rtype == 'void':
        head = 'None.'
    else:
        head = 'A value of type %s.' % rtype
    return [head] + [s for s in found if s != head]


def threads(f):
    found = list(dict.fromkeys(s for s in sentences(f.text())
                               if THREAD_WORDS.search(s) and not NOT_THREADS.match(s)))
    if f.header == 'rig.h':
        found.append('Any thread may call it (docs/conventions.md). A call that may lock '
                     'returns RIG_INVALID when made from a callback rig runs inside a lock; '
                     'a call that blocks holds no lock of rig\'s while it waits and asks the '
                     'wait hook (rig_runtime_set_wait_hook(3)) at least every 200 ms.')
    elif not found:
        found.append('Its comment in <%s> states no lock and no wait: it takes none.'
                     % HEADERS[f.header][0])
    return found


def page(f, siblings, version):
    include, pkg, what = HEADERS[f.header]
    out = ['.\\" Generated by tools/rig-man.py from %s; edit the header, not this page.' % include,
           '.TH %s 3 "" "rig %s" "rig: %s"' % (f.name.upper(), version, what),
           '.SH NAME', '%s \\- %s' % (f.name, esc(summary(f))),
           '.SH SYNOPSIS', '.nf', '.B #include <%s>' % include, '.PP',
           esc(f.proto), '.fi']
    if not f.proto.startswith('static inline'):
        out += ['.PP', 'Link with', '.IR "pkg-config --libs %s" .' % pkg]
    out += ['.SH DESCRIPTION']
    for para in f.description():
        out += ['.PP', esc(para)]
    if f.section:
        out += ['.PP', 'Part of the "%s" section of <%s>.' % (esc(f.section), include)]
    out += ['.SH RETURN VALUE']
    for s in return_value(f):
        out += ['.PP', esc(s)]
    out += ['.SH THREADS AND BLOCKING']
    for s in threads(f):
        out += ['.PP', esc(s)]
    # Its nearest neighbours in the header: the calls it is used with.
    at = [g.name for g in siblings].index(f.name)
    near = sorted(range(len(siblings)), key=lambda k: (abs(k - at), k))
    refs = [siblings[k].name for k in near if k != at][:10]
    if f.header == 'rig.h' and f.name != 'rig_error_last':
        refs.append('rig_error_last')
    out += ['.SH SEE ALSO', ',\n'.join('.BR %s (3)' % r for r in dict.fromkeys(refs))
            + (',\n' if refs else '') + '.BR rig (7)']
    return '\n'.join(out) + '\n'


def summary(f):
    first = sentences(f.text())
    text = first[0] if first else f.name
    return text.rstrip('.') if len(text) < 160 else text[:150].rsplit(' ', 1)[0] + ' ...'


def overview(functions, version):
    out = ['.\\" Generated by tools/rig-man.py; edit the headers, not this page.',
           '.TH RIG 7 "" "rig %s" "rig"' % version, '.SH NAME', 'rig \\- run work on devices, '
           'ordered by the memory it uses', '.SH DESCRIPTION',
           'rig\'s functions, one page each in section 3, by header and section. '
           'The repository\'s docs/tutorial.md starts from the beginning.']
    for header, (include, pkg, what) in HEADERS.items():
        fs = [f for f in functions if f.header == header]
        if not fs:
            continue
        out += ['.SH <%s>: %s' % (include, what.upper())]
        for section in dict.fromkeys(f.section for f in fs):
            out += ['.SS %s' % esc(section or 'general'), '.nf']
            out += ['%s(3)' % f.name for f in fs if f.section == section]
            out += ['.fi']
    return '\n'.join(out) + '\n'


def functions_of(headers):
    fs = []
    for h in headers:
        fs += parse(h)
    seen = set()
    for f in fs:
        if f.name in seen:
            sys.exit('rig-man.py: %s is declared twice' % f.name)
        seen.add(f.name)
        if not f.text():
            sys.exit('rig-man.py: %s in %s has no comment to make its page of' % (f.name, f.header))
    return fs


def write(out_dir, headers, version):
    fs = functions_of(headers)
    os.makedirs(out_dir, exist_ok=True)
    for f in fs:
        siblings = [g for g in fs if g.header == f.header and g.section == f.section]
        with open(os.path.join(out_dir, f.name + '.3'), 'w') as o:
            o.write(page(f, siblings, version))
    with open(os.path.join(out_dir, 'rig.7'), 'w') as o:
        o.write(overview(fs, version))


def exported(lib, nm, types='TW'):
    text = subprocess.run([nm, '-D', '--defined-only', lib], check=True, capture_output=True,
                          text=True).stdout
    names = set()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in types:
            names.add(parts[2].split('@')[0])
    return names - {'_init', '_fini'}


def check(man_dir, lists, libs, nm):
    want = set()
    for path in lists:
        with open(path) as f:
            want |= {l.split('#')[0].strip() for l in f if l.split('#')[0].strip()}
    for lib in libs:
        want |= exported(lib, nm)
    # An exported variable (edge.h's rig_edge_word_sleepers) is no function:
    # its header comment says what it is, and it has no page.
    for lib in libs:
        want -= exported(lib, nm, 'BDRV')
    bad = []
    for name in sorted(want):
        path = os.path.join(man_dir, name + '.3')
        if not os.path.exists(path):
            bad.append('%s: exported, and no page %s' % (name, path))
            continue
        text = open(path).read()
        bad += ['%s: its page has no %s section' % (name, s) for s in SECTIONS
                if '.SH %s\n' % s not in text]
    for b in bad:
        print(b)
    print('%d exported functions, %d without a complete page' % (len(want), len(bad)))
    return 1 if bad or not want else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--list', action='store_true')
    ap.add_argument('--out')
    ap.add_argument('--version', default='')
    ap.add_argument('--check')
    ap.add_argument('--symbols', action='append', default=[])
    ap.add_argument('--lib', action='append', default=[])
    ap.add_argument('--nm', default='nm')
    ap.add_argument('headers', nargs='*')
    a = ap.parse_args()
    if a.check:
        return check(a.check, a.symbols, a.lib, a.nm)
    if a.list:
        print('\n'.join([f.name + '.3' for f in functions_of(a.headers)] + ['rig.7']))
        return 0
    write(a.out, a.headers, a.version)
    return 0


if __name__ == '__main__':
    sys.exit(main())
