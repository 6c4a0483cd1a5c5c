#!/usr/bin/env python3
"""pc-relocate.py PCDIR FILE...: makes installed pkg-config files relocatable.

Run by `meson install` (core/meson.build) on the .pc files meson wrote
into PCDIR (relative to the prefix, e.g. lib/x86_64-linux-gnu/pkgconfig).
Meson writes prefix=/usr/local and libdir=${prefix}/LIBDIR; this writes
every directory from ${pcfiledir}, the folder pkg-config found the file
in: prefix=${pcfiledir}/../../.., libdir=${pcfiledir}/.., includedir=
${pcfiledir}/../../../include. So an install moved elsewhere, or unpacked
from a DESTDIR, gives its own paths, and `pkg-config --define-prefix`,
which guesses the prefix from the file's folder and guesses wrong where
the libdir is Debian's multiarch one (.../lib/lib/x86_64-linux-gnu,
-I.../lib/include), changes nothing, as libdir and includedir no longer
go through ${prefix}. A directory outside the prefix stays absolute.
"""
import os
import posixpath
import re
import sys


def relative(frm, to):
    """to, a path under the prefix, from the folder frm, as ${pcfiledir}/..."""
    return '${pcfiledir}/' + posixpath.relpath('/' + to, '/' + frm)


def rewrite(text, pcdir):
    out = []
    for line in text.split('\n'):
        m = re.match(r'^(prefix|libdir|includedir)=(.*)$', line)
        if m and m.group(1) == 'prefix':
            line = 'prefix=' + relative(pcdir, '')
        elif m and m.group(2).startswith('${prefix}/'):
            line = '%s=%s' % (m.group(1), relative(pcdir, m.group(2)[len('${prefix}/'):]))
        elif m and m.group(2) == '${prefix}':
            line = '%s=%s' % (m.group(1), relative(pcdir, ''))
        out.append(line)
    return '\n'.join(out)


def main():
    pcdir, files = sys.argv[1], sys.argv[2:]
    if os.environ.get('MESON_INSTALL_DRY_RUN'):
        return 0
    prefix = os.environ.get('MESON_INSTALL_PREFIX', '')
    if pcdir.startswith('/'):
        if not prefix or not (pcdir + '/').startswith(prefix.rstrip('/') + '/'):
            return 0  # the files are outside the prefix: they stay absolute
        pcdir = pcdir[len(prefix.rstrip('/')) + 1:]
    root = os.environ.get('MESON_INSTALL_DESTDIR_PREFIX', prefix)
    for name in files:
        path = os.path.join(root, pcdir, name)
        if not os.path.exists(path):  # not installed (meson install --tags runtime)
            continue
        with open(path) as f:
            text = f.read()
        with open(path, 'w') as f:
            f.write(rewrite(text, pcdir.strip('/')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
