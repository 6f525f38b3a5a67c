#!/usr/bin/env python3
"""Generates random *well-typed* perfora programs (params, consts, helper functions, shape
scalars, stages with locals, arrays, sort/median, loops, reductions, image reads, scatter), to
drive the front end's oracle down the paths that random bytes rarely reach (checking, folding,
binding of valid programs). Usage: fuzz/gen_programs.py SEED COUNT OUTDIR; then replay the
files with fuzz/run.sh --replay OUTDIR (libFuzzer's -runs=0 on them)."""
import os
import random
import sys
R = random.Random(int(sys.argv[1]))
class Ctx:
    def __init__(s, ints, floats, bools, images=(), arrays=(), shape=False, depth=0):
        s.ints, s.floats, s.bools, s.images, s.arrays, s.shape = list(ints), list(floats), list(bools), list(images), list(arrays), shape
def lit(t):
    if t == 'int': return R.choice(['0', '1', '2', '7', '255', '2147483647'])
    if t == 'float': return R.choice(['0.5', '1.0', '2.5e3', '.25', '1.', '0.1', '3.0', '1e-3', '16777217.0'])
    return R.choice(['true', 'false'])
def e(t, c, d=0):
    if d > 4 or R.random() < 0.2:
        pool = {'int': c.ints, 'float': c.floats, 'bool': c.bools}[t]
        return R.choice(pool) if pool and R.random() < 0.6 else lit(t)
    r = R.random()
    if t == 'bool':
        if r < 0.3: return '(%s %s %s)' % (e('int', c, d+1), R.choice(['<', '<=', '>', '>=', '==', '!=']), e(R.choice(['int', 'float']), c, d+1))
        if r < 0.5: return '(%s %s %s)' % (e('bool', c, d+1), R.choice(['&&', '||', '==', '!=']), e('bool', c, d+1))
        if r < 0.6: return '!' + e('bool', c, d+1) if R.random() < 0.5 else '!(%s)' % e('bool', c, d+1)
        return '(%s ? %s : %s)' % (e('bool', c, d+1), e('bool', c, d+1), e('bool', c, d+1))
    ops = ['+', '-', '*', '/'] + (['%'] if t == 'int' else [])
    if r < 0.35: return '(%s %s %s)' % (e(t, c, d+1), R.choice(ops), e(t if t == 'int' else R.choice(['int', 'float']), c, d+1))
    if r < 0.42: return '-' + e(t, c, d+1)
    if r < 0.5: return '(%s)' % e(t, c, d+1)
    if r < 0.56: return '(%s ? %s : %s)' % (e('bool', c, d+1), e(t, c, d+1), e(t, c, d+1))
    if r < 0.64: return '%s(%s)' % (t, e(R.choice(['int', 'float', 'bool']), c, d+1))
    if r < 0.74:
        if t == 'float':
            f = R.choice(['exp', 'sqrt', 'sin', 'floor', 'round', 'abs'])
            if R.random() < 0.3: return 'pow(%s, %s)' % (e('float', c, d+1), e('int', c, d+1))
            if R.random() < 0.2: return 'noise(%s, %s)' % (e('int', c, d+1), e('int', c, d+1))
            if R.random() < 0.2: return 'yuv_v(%s, %s, %s)' % (e('float', c, d+1), e('float', c, d+1), e('int', c, d+1))
            return '%s(%s)' % (f, e('float', c, d+1))
        return '%s(%s, %s)' % (R.choice(['min', 'max']), e('int', c, d+1), e('int', c, d+1)) if R.random() < 0.7 else 'clamp(%s, 0, 9)' % e('int', c, d+1)
    if r < 0.8 and not c.shape:
        v = 'r%d' % d
        c2 = Ctx(c.ints + [v], c.floats, c.bools, c.images, c.arrays)
        return '%s(%s, %s = %s .. %s)' % (R.choice(['sum', 'min', 'max']), e(t, c2, d+1), v, e('int', c, d+1), e('int', c, d+1))
    if r < 0.9 and c.images and t == 'float':
        name, nd = R.choice(c.images)
        return '%s[%s]' % (name, ', '.join(e('int', c, d+1) for _ in range(nd)))
    if c.arrays:
        name, at = R.choice(c.arrays)
        if at == t: return '%s[%s]' % (name, e('int', c, d+1))
    return lit(t)
def stmts(c, n, d, locs):
    out = []
    for _ in range(n):
        r = R.random()
        if r < 0.25:
            t = R.choice(['int', 'float', 'bool']); v = 'l%d' % next(locs)
            out.append('%s %s = %s;' % (t, v, e(t, c)))
            {'int': c.ints, 'float': c.floats, 'bool': c.bools}[t].append(v)
        elif r < 0.35:
            v = 'a%d' % next(locs); t = R.choice(['int', 'float'])
            out.append('%s %s[%d];' % (t, v, R.randint(1, 9))); c.arrays.append((v, t))
            out.append('%s[%s] = %s;' % (v, e('int', c), e(t, c)))
            if R.random() < 0.5: out.append('sort(%s, %s);' % (v, e('int', c)))
            if R.random() < 0.5 and t == 'float': c.floats.append('median(%s, 3)' % v)
        elif r < 0.55 and d < 3:
            c2 = Ctx(c.ints, c.floats, c.bools, c.images, c.arrays)
            out.append('if (%s) { %s } else { %s }' % (e('bool', c), ' '.join(stmts(c2, 2, d+1, locs)), ' '.join(stmts(Ctx(c.ints, c.floats, c.bools, c.images, c.arrays), 1, d+1, locs))))
        elif r < 0.7 and d < 3:
            v = 'q%d' % next(locs)
            c2 = Ctx(c.ints + [v], c.floats, c.bools, c.images, c.arrays)
            out.append('for (%s) of %s .. %s%s { %s }' % (v, e('int', c), e('int', c), R.choice(['', ' step 2']), ' '.join(stmts(c2, 2, d+1, locs))))
        else:
            mut = [x for x in c.floats if x.startswith('l')] or [x for x in c.ints if x.startswith('l')]
            if mut:
                v = R.choice(mut); t = 'float' if v in c.floats else 'int'
                out.append('%s %s %s;' % (v, R.choice(['=', '+=', '-=', '*=', '/=']), e(t, c)))
    return out
def counter():
    i = 0
    while True:
        i += 1; yield i
def prog():
    out, top = [], Ctx([], [], [])
    locs = counter()
    for i in range(R.randint(0, 3)):
        t = R.choice(['int', 'float', 'bool'])
        out.append('%s P%d = %s;' % ('param ' + t, i, e(t, Ctx([], [], [], shape=True))))
        {'int': top.ints, 'float': top.floats, 'bool': top.bools}[t].append('P%d' % i)
    consts = Ctx([], [], [], shape=True)
    for i in range(R.randint(0, 3)):
        t = R.choice(['int', 'float', 'bool'])
        out.append('const %s K%d = %s;' % (t, i, e(t, consts)))
        {'int': consts.ints, 'float': consts.floats, 'bool': consts.bools}[t].append('K%d' % i)
    top.ints += consts.ints; top.floats += consts.floats; top.bools += consts.bools
    for i in range(R.randint(0, 2)):
        c = Ctx(top.ints + ['p'], top.floats + ['u'], top.bools, arrays=[])
        out.append('float F%d(int p, float u) { %s return %s; }' % (i, ' '.join(stmts(c, R.randint(0, 3), 1, locs)), e('float', c)))
        top.floats.append('F%d(1, 2.0)' % i)
    pc = Ctx(top.ints + ['W', 'H'], top.floats, top.bools, shape=True)
    items = ['int S0 = %s;' % e('int', pc)]
    pc.ints.append('S0')
    items.append('image A[max(W + %s, 1), H] boundary %s;' % (e('int', Ctx(['W', 'S0'], [], [], shape=True)), R.choice(['clamp', 'mirror', 'wrap', 'constant(0.5)'])))
    sc = Ctx(pc.ints, pc.floats, pc.bools, images=[('in', 3), ('A', 2)], arrays=[])
    items.append('for each (x, y) of A as sa { %s A[x, y] = %s; }' % (' '.join(stmts(Ctx(sc.ints + ['x', 'y'], sc.floats, sc.bools, [('in', 3)], []), 3, 1, locs)), e('float', Ctx(sc.ints + ['x', 'y'], sc.floats, sc.bools, [('in', 3)], []))))
    oc = Ctx(sc.ints + ['x', 'y', 'c'], sc.floats, sc.bools, [('in', 3), ('A', 2)], [])
    over = R.choice(['', ' over (0 .. W - 1, 1 .. H step 2, 0 .. 2)'])
    items.append('for each (x, y, c) of out%s as so { %s out[x, y, c] %s %s; }' % (over, ' '.join(stmts(oc, 4, 1, locs)), R.choice(['=', '+=']), e('float', oc)))
    if R.random() < 0.5:
        items.append('for each (x, y) of in as splat { out[%s, y, 0] += 1.0; }' % e('int', Ctx(['x', 'y', 'W'], [], [])))
    out.append('pipeline p(image in[W, H, 3]) -> (image out[W, H, 3]) {\n    %s\n}' % '\n    '.join(items))
    return '\n'.join(out) + '\n'
for i in range(int(sys.argv[2])):
    open(os.path.join(sys.argv[3], 'gen%05d.pf' % i), 'w').write(prog())
