#!/usr/bin/env bash
# Issue 25's Figure 5 check in one command: does the blur's test frontier at the Figure 5 budget
# dominate the paper's hand variant (apps/blur_paper.sched), both measured in the same run?
#  1. the search: perfora tune apps/blur.pf --population 30 --generations 20 --resolution
#     820x614 --seed 5 (confirmation and test re-measurement included; ~3.5 min on 2 quiet
#     cores);
#  2. bench_remeasure RUN --set test --also apps/blur_paper.sched: the frontier, a few other
#     candidates and the paper's file measured twice more on the test photos through the
#     pool, as the search measures;
#  3. the verdict: the paper's variant against the fastest frontier variant at no more error
#     (mean of both passes), and how well the run's training speedups predicted its test ones.
# Timing: run it on a QUIET machine (nothing else running); under load the numbers follow the
# load. Usage: bench/fig5_dominance.sh [RUN_DIR] [BUILD_DIR] [extra `perfora tune` options]
#   RUN_DIR defaults to runs/fig5-dominance-<date>; it must not exist yet.
#   BUILD_DIR (default build-bench, Release) is configured with the bench/ programs and its two
#   targets (perfora, bench_remeasure) are brought up to date first.
set -euo pipefail
cd "$(dirname "$0")/.."
run=${1:-runs/fig5-dominance-$(date +%Y%m%d-%H%M%S)}
build=${2:-build-bench}
shift $(( $# < 2 ? $# : 2 ))
if [ -e "$run" ]; then
  echo "fig5_dominance: $run exists; name a new run directory" >&2
  exit 2
fi
if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DPF_BENCH=ON >/dev/null
else
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPF_BENCH=ON >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target perfora bench_remeasure >/dev/null
echo "fig5_dominance: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) (timing: quiet only)"
mkdir -p "$(dirname "$run")"
start=$(date +%s)
"$build/perfora" tune apps/blur.pf --out "$run" --population 30 --generations 20 \
  --resolution 820x614 --seed 5 --quiet "$@"
echo "search: $(( $(date +%s) - start )) s; $(wc -l < "$run/evaluations.jsonl") evaluations"
tail -n 4 "$run/log.txt"
echo
"$build/bench/bench_remeasure" "$run" --set test --also apps/blur_paper.sched | tee "$run/remeasure.txt"
echo
echo "test frontier (the run's own numbers):"
column -t -s $'\t' "$run/frontier-test.tsv" | cut -c1-150
# Training speedup against test speedup per frontier variant (issue 25: within 10%).
awk -F'\t' 'NR > 1 && $11 == "ok" {
    n++; d = $4 / $2 - 1; if (d < 0) d = -d; if (d <= 0.10) k++
    printf "  variant %s: train %.2fx, test %.2fx, train/test - 1 = %+.3f\n", $1, 1 / $2, 1 / $4,
           $4 / $2 - 1
} END { printf "training speedup within 10%% of the test speedup: %d/%d\n", k, n }' \
  "$run/frontier-test.tsv"
echo
grep '^--also' "$run/remeasure.txt" | sed 's/^--also/verdict: apps\/blur_paper.sched/'
