#!/usr/bin/env python3
"""test_llama.py: rig-llama against tests/llama/reference.c on a seeded
random checkpoint (tools/make-checkpoint: dim 64, 2 layers, 8 heads over 4
key/value heads, hidden 172, vocab 512, seq 64, a separate classifier).

  test_llama.py RIG REFERENCE MAKE_CHECKPOINT device NAME
      the tokens of 40 steps equal the reference's, every step's logits
      within 1e-4 of the largest (relative), and no allocation of rig's
      (or, off Vulkan, of anyone's) in tokens 2..40
  ... split A,B         the same with the layers split over A and B
  ... tokenizer NAME    a prompt encoded as the llama2.c project's run
      program encodes it (this file's own encoder), and the printed line
      equal to the reference's tokens decoded as that program prints them
  ... truncated NAME    a checkpoint cut short is refused with a message
      before any buffer is made, status 1
  ... fault ARGS        rig-llama ARGS (a device injecting a fault) ends
      with status 1 and the device's reason, every token printed before
      it the reference's

A device that does not open here exits 77 (skipped)."""
import os
import re
import struct
import subprocess
import sys
import tempfile
from array import array

STEPS = 40
PROMPT = 'the tea is hot; caf\u00e9 \u4e2d!'


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def floats(path):
    a = array('f')
    with open(path, 'rb') as f:
        a.frombytes(f.read())
    return a


def read_tokenizer(path, vocab):
    with open(path, 'rb') as f:
        (max_len,) = struct.unpack('<i', f.read(4))
        pieces, scores = [], []
        for _ in range(vocab):
            score, n = struct.unpack('<fi', f.read(8))
            pieces.append(f.read(n))
            scores.append(score)
    return pieces, scores


def encode(pieces, scores, text):
    """run.c's encode with BOS: a dummy " " where text is not empty, the
    code points (bytes + 3 where absent), then best-score pair merges."""
    ids = {p: i for i, p in enumerate(pieces)}
    tokens = [1] + ([ids[b' ']] if text else [])
    for ch in text:
        b = ch.encode()
        tokens += [ids[b]] if b in ids else [c + 3 for c in b]
    while True:
        best = None
        for i in range(len(tokens) - 1):
            j = ids.get(pieces[tokens[i]] + pieces[tokens[i + 1]])
            if j is not None and (best is None or scores[j] > best[0]):
                best = (scores[j], j, i)
        if best is None:
            return tokens
        tokens[best[2]:best[2] + 2] = [best[1]]


def decode(pieces, prev, token):
    """run.c's decode and safe_printf: what it prints for token after prev."""
    p = pieces[token]
    if prev == 1 and p.startswith(b' '):
        p = p[1:]
    m = re.fullmatch(rb'<0x([0-9A-F]{2})>', p)
    if m:
        p = bytes([int(m.group(1), 16)])
    if len(p) == 1 and not (32 <= p[0] < 127 or p[0] in b' \t\n\v\f\r'):
        return b''
    return p


def check_logits(got, want, vocab):
    worst = 0.0
    for s in range(len(want) // vocab):
        w, g = want[s * vocab:(s + 1) * vocab], got[s * vocab:(s + 1) * vocab]
        scale = max(abs(v) for v in w)
        worst = max(worst, max(abs(a - b) for a, b in zip(g, w)) / scale)
    if worst > 1e-4:
        sys.exit('logits differ from the reference\'s by %.3g of the largest' % worst)
    print('logits within %.3g of the largest' % worst)


def check_allocs(stderr, device_args):
    m = re.search(r'allocations in tokens 2\.\.\d+: (\d+) by rig and rig-llama, (\d+) in all',
                  stderr)
    if not m:
        print('allocations not counted here (a sanitizer owns malloc)')
        return
    mine, everyone = int(m.group(1)), int(m.group(2))
    print('allocations in tokens 2..: %d of rig\'s, %d in all' % (mine, everyone))
    if mine:
        sys.exit('rig or rig-llama allocated during the tokens')
    if everyone and 'vulkan' not in ' '.join(device_args):
        sys.exit('something allocated during the tokens')


def main():
    if os.environ.get("MESON_EXE_WRAPPER"):
        # A cross build (the arm64 stage under qemu, docs/arm64.md): it starts the programs directly
        print("skip: rig-llama and the reference are started directly, which a cross build's cannot be (MESON_EXE_WRAPPER is set)")
        sys.exit(77)
    rig, ref, make, mode, arg = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, tok = os.path.join(tmp, 'm.bin'), os.path.join(tmp, 'm.tok')
        subprocess.run([sys.executable, make, ckpt, '--tokenizer', tok, '--separate-classifier',
                        '--dim', '64', '--layers', '2', '--heads', '8', '--kv-heads', '4',
                        '--hidden', '172', '--vocab', '512', '--seq', '64', '--seed', '7'],
                       check=True)
        vocab = 512
        prompt_ids = []
        if mode == 'truncated':
            with open(ckpt, 'r+b') as f:
                f.truncate(os.path.getsize(ckpt) // 2)
            got = run([rig, ckpt, '--device', arg])
            err = got.stderr.decode()
            if got.returncode != 1 or 'which the file does not hold' not in err:
                sys.exit('a truncated checkpoint: status %d, %r' % (got.returncode, err))
            print('refused: ' + err.strip())
            return 0
        rig_args = [rig, ckpt, '--steps', str(STEPS), '--logits', os.path.join(tmp, 'rig.f32')]
        if mode == 'device':
            dev = ['--device', arg]
        elif mode == 'split':
            dev = ['--split', arg]
        elif mode == 'tokenizer':
            dev = ['--device', arg]
            pieces, scores = read_tokenizer(tok, vocab)
            prompt_ids = encode(pieces, scores, PROMPT)
            rig_args += ['--tokenizer', tok, '--prompt', PROMPT]
        else:  # fault
            dev = arg.split(' ')
        r = run([ref, ckpt, str(STEPS), ','.join(map(str, prompt_ids)),
                 os.path.join(tmp, 'ref.f32')])
        if r.returncode != 0:
            sys.exit('the reference failed (status %d): %s' % (r.returncode, r.stderr.decode()))
        want = r.stdout.decode().split()
        got = run(rig_args + dev)
        out, err = got.stdout.decode('utf-8', 'replace'), got.stderr.decode()
        sys.stderr.write(err)
        if got.returncode == 77:
            print('skipped: ' + err.strip())
            return 77
        if mode == 'fault':
            printed = out.split()
            if got.returncode != 1 or 'RIG_LOST' not in err or 'injected fault' not in err:
                sys.exit('a loss did not end rig-llama with the device\'s reason (status %d)'
                         % got.returncode)
            if printed != want[:len(printed)] or len(printed) >= len(want):
                sys.exit('tokens before the loss: %s, the reference\'s: %s' % (printed, want))
            print('lost after %d correct tokens: %s' % (len(printed), err.strip().split('\n')[-1]))
            return 0
        if got.returncode != 0:
            sys.exit('rig-llama failed (status %d)' % got.returncode)
        if mode == 'tokenizer':
            nexts = [int(w) for w in want]
            line = b''.join(decode(pieces, p, n) for p, n in zip([1] + nexts[:-1], nexts))
            expect = line.decode('utf-8', 'replace') + '\n'
            if out != expect:
                sys.exit('printed %r, run.c would print %r' % (out, expect))
            print('printed as run.c prints: %r' % out)
        elif out.split() != want:
            sys.exit('tokens %s, the reference\'s %s' % (out.split(), want))
        check_logits(floats(os.path.join(tmp, 'rig.f32')), floats(os.path.join(tmp, 'ref.f32')),
                     vocab)
        check_allocs(err, dev)
        print('%d tokens equal the reference\'s' % len(want))
    return 0


if __name__ == '__main__':
    sys.exit(main())
