#!/usr/bin/env python3
"""paper_table: the seven-app table of docs/search.md §8 from bench/paper_table.sh's runs.

For every APP-MODE run under OUT (MODE full = image perforation, loop = loop perforation): the
test-frontier speedup over perfora's exact default at Lab error <= 1, 2, 4, 8 (summary.json,
computed as the report computes it: the best test speedup among frontier variants within the
budget, 1.00 when none beats the exact program), the same over Halide 14 Adams2019 exact where
a bench_pipelines speed table is given (speedup / (perfora default / Adams2019), both measured
in that bench's one run), the budget and wall time, and generalization: the frontier's mean test
error over its mean training error (target <= 1.25), over the variants within the training
error cap (10 Lab).

With bench/paper_check.sh's files: how many claims held when timed alone, and each app's exact
time over the memory floor. With --copy DEST every run's small files go to DEST/APP-MODE/
(config, summary, log, frontier TSVs and schedules, program, checkpoint, claims,
evaluations.jsonl as .xz): `xz -dk` the evaluations and `perfora report DEST/APP-MODE` makes
the review page.

Usage: bench/paper_table.py OUT [--halide SPEED.txt] [--threads 2] [--copy results/paper]
"""
import argparse
import json
import lzma
import os
import shutil
import sys

APPS = ["blur", "unsharp_mask", "bilateral_filter", "bilateral_grid", "demosaic", "median",
        "artistic_blur"]
BUDGETS = [1, 2, 4, 8]
SMALL = ["config.json", "summary.json", "log.txt", "frontier-train.tsv", "frontier-test.tsv",
         "program.pf", "checkpoint.json", "claims.txt", "remeasure.txt"]


def read_tsv(path):
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        return [dict(zip(head, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def halide_ratios(path, threads, size="820x614"):
    """app -> perfora default time / Halide Adams2019 time (bench_pipelines --only speed)."""
    ratios, cols = {}, None
    with open(path) as f:
        for line in f:
            tok = line.split()
            if tok and tok[0] == "app" and "/HL-Adams" in tok:
                cols = tok
                continue
            k = cols.index("/HL-Adams") if cols else 0
            if cols and len(tok) > k and tok[1] == size and tok[2] == str(threads):
                v = tok[k]
                if v != "-":
                    ratios[tok[0]] = float(v)
    return ratios


def generalization(rows, cap):
    """mean test error / mean training error over the frontier variants within the error cap
    on the training images (the ones a user would pick; beyond it, loop perforation's black
    regions make any ratio meaningless)."""
    ok = [r for r in rows if r.get("status") == "ok" and float(r["train_error"]) <= cap]
    if not ok:
        return None, None, None
    tr = sum(float(r["train_error"]) for r in ok) / len(ok)
    te = sum(float(r["test_error"]) for r in ok) / len(ok)
    return tr, te, (te / tr if tr > 0 else None)


def best_under(rows, cap):
    """(speedup, error) of the fastest test-frontier variant with test error <= cap."""
    best = (1.0, 0.0)
    for r in rows:
        if r.get("status") != "ok":
            continue
        s, e = float(r["test_speedup"]), float(r["test_error"])
        if e <= cap and s > best[0]:
            best = (s, e)
    return best


def claims_held(run):
    """'held/checked' from bench/paper_check.sh's check_claims output, '-' when not checked."""
    path = os.path.join(run, "claims.txt")
    if not os.path.exists(path):
        return "-"
    with open(path) as f:
        last = f.read().strip().splitlines()[-1]
    return last.split("alone: ")[1].split(";")[0] if "alone: " in last else "-"


def copy_run(run, dest):
    os.makedirs(os.path.join(dest, "frontier"), exist_ok=True)
    for name in SMALL:
        if os.path.exists(os.path.join(run, name)):
            shutil.copy(os.path.join(run, name), dest)
    for name in os.listdir(os.path.join(run, "frontier")):
        shutil.copy(os.path.join(run, "frontier", name), os.path.join(dest, "frontier"))
    with open(os.path.join(run, "evaluations.jsonl"), "rb") as f:
        data = f.read()
    with lzma.open(os.path.join(dest, "evaluations.jsonl.xz"), "wb", preset=9) as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--halide", help="bench_pipelines --only speed output")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--copy", help="copy every run's small files to DEST/APP-MODE")
    a = ap.parse_args()
    times = {}
    tpath = os.path.join(a.out, "times.tsv")
    if os.path.exists(tpath):
        times = {r["run"]: r for r in read_tsv(tpath)}
    ratios = halide_ratios(a.halide, a.threads) if a.halide else {}

    print("| app | mode | population x generations (evaluations, wall) | test speedup at Lab "
          "<= 1 / 2 / 4 / 8 | over Halide Adams2019 at <= 1 / 2 / 4 / 8 | best test speedup "
          "under 10 (Lab) | frontier mean error train / test (test / train) | claims within 10% "
          "of alone |")
    print("|---|---|---|---|---|---|---|---|")
    for app in APPS:
        for mode in ("full", "loop"):
            run = os.path.join(a.out, f"{app}-{mode}")
            if not os.path.exists(os.path.join(run, "frontier-test.tsv")):
                print(f"paper_table: {run} is not finished; left out", file=sys.stderr)
                continue
            with open(os.path.join(run, "summary.json")) as f:
                summ = json.load(f)
            with open(os.path.join(run, "config.json")) as f:
                ga = json.load(f)["ga"]
            rows = read_tsv(os.path.join(run, "frontier-test.tsv"))
            sp = [summ["test"][f"speedup_at_error_{b}"] for b in BUDGETS]
            r = ratios.get(app)
            hl = " / ".join(f"{s / r:.2f}" for s in sp) if r else "-"
            t = times.get(f"{app}-{mode}")
            wall = f", {int(t['seconds']) / 60:.0f} min" if t else ""
            tr, te, g = generalization(rows, summ.get("max_error", 10))
            gen = f"{tr:.2f} / {te:.2f} ({g:.2f})" if g is not None else "-"
            bs, be = best_under(rows, summ.get("max_error", 10))
            name = "image perforation" if mode == "full" else "loop perforation"
            print(f"| {app} | {name} | {ga['population']} x {ga['generations']} "
                  f"({summ['evaluations']}{wall}) | {' / '.join(f'{s:.2f}' for s in sp)} | {hl} "
                  f"| {bs:.2f}x ({be:.2f}) | {gen} | {claims_held(run)} |")
            if a.copy:
                copy_run(run, os.path.join(a.copy, f"{app}-{mode}"))
    floor = os.path.join(a.out, "floor.tsv")
    if os.path.exists(floor):
        print("\nexact default / copy (bench/paper_check.sh, the memory floor): " + ", ".join(
            f"{r['app']} {r['exact_over_copy']} ({r['exact_ms']} / {r['copy_ms']} ms)"
            for r in read_tsv(floor)))
    if ratios:
        print("\nperfora exact default / Halide Adams2019 (" + a.halide + f", {a.threads} "
              "threads, 820x614): " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
