#!/usr/bin/env python3
"""check-chrome-trace: a profile's trace file follows the Trace Event
Format in its JSON object form, which Perfetto and chrome://tracing load,
and holds the known pipeline of `test-profile workload`.

usage: check-chrome-trace.py env TEST_PROFILE
       check-chrome-trace.py cli RIG TEST_PROFILE

env runs `TEST_PROFILE workload` with RIG_PROFILE=FILE (the run's profile,
written at its exit); cli runs `RIG profile -o FILE -- TEST_PROFILE
workload`. Either way FILE must be a JSON object with "traceEvents", a
list of events each with the keys and types the format requires (name,
ph, ts, pid, tid; dur for the complete "X" events; args.name for the
metadata "M" events that name processes and threads), every process and
thread an X event uses named, no two X events of one thread overlapping,
and the workload's events there: two launches of "add", two copies and a
fill on "CPU", a fill on queue 0 and a copy on queue 1 of "sample:0", and,
where vulkan:0 opened, its fill, launch of "fill" and copy.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile


def fail(why):
    print('check-chrome-trace: ' + why)
    sys.exit(1)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_event(i, e):
    if not isinstance(e, dict):
        fail('event %d is not an object' % i)
    for key, kind in (('name', str), ('ph', str), ('pid', int), ('tid', int)):
        if not isinstance(e.get(key), kind) or isinstance(e.get(key), bool):
            fail('event %d: %r is not a %s: %r' % (i, key, kind.__name__, e))
    if not number(e.get('ts')) or e['ts'] < 0:
        fail('event %d: ts is not a number >= 0: %r' % (i, e))
    if e['ph'] == 'X':
        if not number(e.get('dur')) or e['dur'] < 0:
            fail('event %d: dur is not a number >= 0: %r' % (i, e))
    elif e['ph'] == 'M':
        if e['name'] not in ('process_name', 'thread_name', 'process_labels'):
            fail('event %d: metadata %r' % (i, e['name']))
        want = 'labels' if e['name'] == 'process_labels' else 'name'
        if not isinstance(e.get('args'), dict) or not isinstance(e['args'].get(want), str):
            fail('event %d: metadata without args.%s: %r' % (i, want, e))
        if want == 'labels' and not isinstance(e['args'].get('clock_error_ns'), int):
            fail('event %d: a process label without clock_error_ns: %r' % (i, e))
    else:
        fail('event %d: phase %r is neither X nor M' % (i, e['ph']))


def check_format(trace):
    if not isinstance(trace, dict) or not isinstance(trace.get('traceEvents'), list):
        fail('not a JSON object with a traceEvents list')
    if trace.get('displayTimeUnit') not in (None, 'ms', 'ns'):
        fail('displayTimeUnit %r' % trace.get('displayTimeUnit'))
    events = trace['traceEvents']
    for i, e in enumerate(events):
        check_event(i, e)
    procs = {e['pid']: e['args']['name'] for e in events
             if e['ph'] == 'M' and e['name'] == 'process_name'}
    threads = {(e['pid'], e['tid']) for e in events
               if e['ph'] == 'M' and e['name'] == 'thread_name'}
    spans = [e for e in events if e['ph'] == 'X']
    for e in spans:
        if e['pid'] not in procs or (e['pid'], e['tid']) not in threads:
            fail('an X event of an unnamed process or thread: %r' % e)
    for key in {(e['pid'], e['tid']) for e in spans}:
        one = sorted((e for e in spans if (e['pid'], e['tid']) == key), key=lambda e: e['ts'])
        for a, b in zip(one, one[1:]):
            if a['ts'] + a['dur'] > b['ts'] + 0.0015:  # microseconds, printed to 3 decimals
                fail('events overlap on one queue: %r and %r' % (a, b))
    return procs, spans


def check_workload(procs, spans, vulkan):
    def of(device):
        pids = [p for p, n in procs.items() if n == device]
        return sorted(((e['tid'], e['cat'], e['name']) for e in spans if e['pid'] in pids))
    want = {
        'CPU': sorted([(0, 'launch', 'add')] * 2 + [(0, 'copy', 'copy')] * 2 +
                      [(0, 'fill', 'fill')]),
        'sample:0': [(0, 'fill', 'fill'), (1, 'copy', 'copy')],
    }
    if vulkan:
        want['vulkan:0'] = sorted([(0, 'fill', 'fill'), (0, 'launch', 'fill'),
                                   (0, 'copy', 'copy')])
    for device, events in want.items():
        if of(device) != events:
            fail('%s: events %r, expected %r' % (device, of(device), events))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('env', 'cli'):
        fail(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'trace.json')
        env = dict(os.environ)
        if sys.argv[1] == 'env':
            env['RIG_PROFILE'] = path
            cmd = [sys.argv[2], 'workload']
        else:
            env.pop('RIG_PROFILE', None)
            cmd = [sys.argv[2], 'profile', '-o', path, '--', sys.argv[3], 'workload']
        # A cross build's test run (arm64 under qemu-aarch64): meson's exe
        # wrapper runs the program, which the kernel cannot.
        cmd = shlex.split(os.environ.get('MESON_EXE_WRAPPER', '')) + cmd
        run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=120)
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            fail('%s exited %d' % (' '.join(cmd), run.returncode))
        try:
            with open(path) as f:
                trace = json.load(f)
        except (OSError, ValueError) as e:
            fail('%s: %s' % (path, e))
    procs, spans = check_format(trace)
    check_workload(procs, spans, 'vulkan:0 does not open here' not in run.stdout)
    print('check-chrome-trace: %d events follow the format' % len(trace['traceEvents']))


main()
