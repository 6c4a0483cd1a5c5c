#!/bin/sh
# conditions.sh [BUILD [BENCH...]]: runs `rig bench` (or the named benches:
# create, copy... as `rig bench NAME` takes them) under the three
# conditions of issue 20 and prints one table of every row's ratio
# (rig / anchor) as min and median over its rounds:
#   quiet   as it is;
#   1 core  under taskset -c 0;
#   loaded  beside stress-ng --cpu 1 (a busy shell loop where stress-ng is
#           not installed; the table says which).
# Each condition's full output, machine facts first, is kept in
# $OUT (default: a new folder under /tmp) for the closing note, with each
# row's counts (RIG_BENCH_COUNTS=1: CPU time and context switches of
# each side), which tell a side that did more work from one that lost its
# CPU to other programs.
# P7 (rig-bench-p7) runs too where it was built and a Vulkan device opens.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
benches=${*:-all}
here=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$here/$build ;; esac
rig=$build/tools/rig
p7=$build/bench/rig-bench-p7
[ -x "$rig" ] || { echo "conditions.sh: no $rig: build first" >&2; exit 2; }
RIG_DRIVER_PATH=$build/drivers/memory:$build/drivers/io:$build/drivers/vulkan:$build/tests/driver
RIG_KERNELS=$build/tests
RIG_BENCH_COUNTS=1
export RIG_DRIVER_PATH RIG_KERNELS RIG_BENCH_COUNTS
OUT=${OUT:-$(mktemp -d /tmp/rig-conditions.XXXXXX)}
mkdir -p "$OUT"

run_all() { # $1: the prefix command (may be empty), $2: output file
  for b in $benches; do
    if [ "$b" = all ]; then $1 "$rig" bench; else $1 "$rig" bench "$b"; fi
  done >"$2" 2>&1
  if [ -x "$p7" ]; then $1 "$p7" >>"$2" 2>&1; fi
}

load_pid=
start_load() {
  if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --cpu 1 --quiet & load_pid=$!
    load_kind="stress-ng --cpu 1"
  else
    sh -c 'while :; do :; done' & load_pid=$!
    load_kind="a busy shell loop (no stress-ng)"
  fi
}
stop_load() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null; load_pid=; }
trap stop_load EXIT INT TERM

echo "conditions.sh: quiet..." >&2
run_all "" "$OUT/quiet.txt"
echo "conditions.sh: taskset -c 0..." >&2
run_all "taskset -c 0" "$OUT/one-core.txt"
start_load
echo "conditions.sh: beside $load_kind..." >&2
run_all "" "$OUT/loaded.txt"
stop_load

python3 - "$OUT" "$load_kind" <<'PY'
import re, sys
out, load = sys.argv[1], sys.argv[2]
# A row of rig bench's table (bench/table.c): NAME, rig min / median,
# anchor min / median (each a number and its unit), ratio min / median.
T = r'(\S+ (?:ns|us|ms|s))'
row = re.compile(r'^\s+(?P<name>.*?)\s+' + T.replace('(', '(?P<rmin>', 1) + r'\s*/\s*' + T.replace('(', '(?P<rmed>', 1) +
                 r'\s+' + T.replace('(', '(?P<amin>', 1) + r'\s*/\s*' + T.replace('(', '(?P<amed>', 1) +
                 r'\s+(?P<min>[0-9.]+)\s*/\s*(?P<med>[0-9.]+)')
conds = [('quiet', 'quiet.txt'), ('1 core (taskset -c 0)', 'one-core.txt'), ('loaded (%s)' % load, 'loaded.txt')]
rows, order = {}, []
for i, (_, f) in enumerate(conds):
    for line in open('%s/%s' % (out, f), errors='replace'):
        m = row.match(line.rstrip())
        if not m:
            continue
        name = m['name'].strip()
        if name not in rows:
            rows[name] = [None] * len(conds)
            order.append(name)
        rows[name][i] = m
print('| bench | ' + ' | '.join('%s: ratio min / median (rig min / median)' % c for c, _ in conds) + ' |')
print('| --- ' * (len(conds) + 1) + '|')
for name in order:
    cells = []
    for m in rows[name]:
        cells.append('—' if m is None else '%s / %s (%s / %s)' % (m['min'], m['med'], m['rmin'], m['rmed']))
    print('| %s | %s |' % (name, ' | '.join(cells)))
print('\nfull output, machine facts first: %s/{quiet,one-core,loaded}.txt' % out)
PY
