#!/usr/bin/env python3
"""check_claims: do a finished run's frontier speedups hold when each variant is timed alone?

For every frontier variant of RUN, on every image of the split (the run's own images, at the
run's resolution), `perfora run --time N` times the exact program and the variant in separate
processes in the order exact, variant, variant, exact; the variant's speedup alone is
1 / mean over images of (t_v1 / t_e1 + t_v2 / t_e2) / 2 (each variant timing paired with the
exact timing next to it: a linear drift cancels), as the search's own time is a mean of
relative times over images. Prints, per variant, the run's training and test claims,
the speedup alone, and claim/alone - 1; the summary says how many claims hold within 10%, and
how well the training speedup predicts the test speedup. "spread" is the speedup alone of each
pair on its own (exact 1 with variant 1, variant 2 with exact 2; "alone" lies between them): how
far two timings of the same variant alone, a few seconds apart, already disagree.

Usage: bench/check_claims.py RUN [--perfora build/perfora] [--time 41] [--set test|train]
"""
import argparse
import json
import os
import re
import subprocess
import sys


def median_ms(perfora, program, sched, image, runs, threads, params):
    out_png = os.path.join(os.environ.get("TMPDIR", "/tmp"), "check_claims_out.png")
    cmd = [perfora, "run", program, "--in", image, "--out", out_png, "--time", str(runs)]
    if sched:
        cmd += ["--schedule", sched]
    if threads:
        cmd += ["--threads", str(threads)]
    for p in params:
        cmd += ["--param", p]
    res = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"median ([0-9.]+) ms", res.stdout + res.stderr)
    if res.returncode != 0 or not m:
        sys.exit(f"check_claims: {' '.join(cmd)} failed:\n{res.stdout}{res.stderr}")
    return float(m.group(1))


def read_tsv(path):
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--perfora", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                       "perfora"))
    ap.add_argument("--time", type=int, default=41)
    ap.add_argument("--set", choices=["test", "train"], default="test")
    a = ap.parse_args()
    cfg = json.load(open(os.path.join(a.run, "config.json")))
    ev = cfg["evaluation"]
    images = cfg[a.set + "_images"]
    program = os.path.join(a.run, "program.pf")
    threads, params = ev.get("threads", 0), ev.get("params", [])
    rows = read_tsv(os.path.join(a.run, "frontier-test.tsv"))
    train = {r["variant"]: r for r in read_tsv(os.path.join(a.run, "frontier-train.tsv"))}
    print(f"check_claims: {a.run}: {len(rows)} frontier variants, {len(images)} {a.set} images "
          f"({ev['width']}x{ev['height']}), perfora run --time {a.time}, threads "
          f"{threads or 'all'}")
    print(f"{'#':>3} {'error':>7} {'train':>7} {'test':>7} {'alone':>7} {'spread':>13}"
          f" {'claim/alone-1':>14} {'train/test-1':>13}  schedule")
    held = checked = pred = 0
    for r in rows:
        sched = os.path.join(a.run, r["file"])
        half1, half2 = [], []
        for img in images:
            e1 = median_ms(a.perfora, program, None, img, a.time, threads, params)
            v1 = median_ms(a.perfora, program, sched, img, a.time, threads, params)
            v2 = median_ms(a.perfora, program, sched, img, a.time, threads, params)
            e2 = median_ms(a.perfora, program, None, img, a.time, threads, params)
            half1.append(v1 / e1)
            half2.append(v2 / e2)
        a1, a2 = len(half1) / sum(half1), len(half2) / sum(half2)
        alone = 2 / (1 / a1 + 1 / a2)
        s_train = 1 / float(r["train_time"])
        s_test = float(r["test_speedup"]) if r["test_speedup"] != "-" else float("nan")
        claim = s_test if a.set == "test" else s_train
        dev = claim / alone - 1
        tt = s_train / s_test - 1
        checked += 1
        held += abs(dev) <= 0.10
        pred += abs(tt) <= 0.10
        genes = train.get(r["variant"], {}).get("schedule", "")
        spread = f"{min(a1, a2):.2f}-{max(a1, a2):.2f}x"
        print(f"{r['variant']:>3} {float(r['train_error']):7.3f} {s_train:6.2f}x {s_test:6.2f}x "
              f"{alone:6.2f}x {spread:>13} {dev:+14.3f} {tt:+13.3f}  {genes}")
    print(f"claims within 10% of the speedup alone: {held}/{checked}; training speedup within "
          f"10% of the test speedup: {pred}/{checked}")


if __name__ == "__main__":
    main()
