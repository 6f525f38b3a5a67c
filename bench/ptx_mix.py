#!/usr/bin/env python3
"""Instruction mix of a PTX kernel's hot path, per output pixel (docs/gpu.md §3).

Static evidence for GPU kernel quality without a GPU: give the basic blocks one iteration of a
loop runs (PTX labels without the '$', e.g. L__BB0_8,L__BB0_10) and how many times that
iteration runs per output pixel; ALL_AFTER:LABEL takes that block and every later one, A..B the
blocks from A up to B (B excluded), in the file's order; parts join with commas.

  ptx_mix.py FILE BLOCKS MULT [BLOCKS MULT ...]
"""
import re
import sys
from collections import Counter


def blocks(path):
    bb, cur = {'entry': []}, 'entry'
    order = [cur]
    for line in open(path):
        s = line.strip()
        m = re.match(r'^\$(L__\w+):', s)
        if m:
            cur = m.group(1)
            order.append(cur)
            bb[cur] = []
            continue
        if not s or s.startswith(('//', '.', ')')) or s in '{}':
            continue
        bb[cur].append(s)
    return bb, order


def category(ins):
    words = ins.split()
    op = words[1] if words[0].startswith('@') else words[0]
    for prefix, name in (('ld.global', 'ld.global'), ('ld.shared', 'ld.shared'),
                         ('st.shared', 'st.shared'), ('st.global', 'st.global'),
                         ('ld.const', 'ld.const/param'), ('ld.param', 'ld.const/param')):
        if op.startswith(prefix):
            return name + ('.v4' if '.v4' in op else '')
    if op.startswith('mov'):
        return 'mov'
    if op.startswith(('bra', 'setp')):
        return 'control'
    if '.f32' in op or op.startswith('fma'):
        return 'fp32'
    if any(t in op for t in ('.s64', '.u64', '.b64')) or op.startswith('mul.wide'):
        return 'int64'
    return 'int32'


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        sys.exit(__doc__)
    bb, order = blocks(argv[1])
    total = Counter()
    for i in range(2, len(argv), 2):
        spec, mult = argv[i], float(argv[i + 1])
        names = []
        for part in spec.split(','):
            if part.startswith('ALL_AFTER:'):
                names += order[order.index(part[10:]):]
            elif '..' in part:
                a, b = part.split('..')
                names += order[order.index(a):order.index(b)]
            else:
                names.append(part)
        part = Counter(category(ins) for n in names for ins in bb[n])
        print(f'  part {i // 2}: {sum(part.values())} instructions x {mult}: ' +
              ', '.join(f'{k} {v}' for k, v in sorted(part.items())))
        for k, v in part.items():
            total[k] += v * mult
    print(f'  per output pixel: {sum(total.values()):.1f}: ' +
          ', '.join(f'{k} {v:.2f}' for k, v in sorted(total.items())))


if __name__ == '__main__':
    main(sys.argv)
