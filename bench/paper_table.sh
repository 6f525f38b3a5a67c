#!/usr/bin/env bash
# Issue 25's seven-app evaluation: the paper's protocol (train on the training photos, re-measure
# the frontier on the test split, 820x614) for every app of ../shared/docs/paper-apps.md, in
# image perforation (--mode full) and loop perforation (--mode loop, the paper's baseline).
# One `perfora tune` after the other (each uses every core; timing: QUIET machine only), each
# run's wall time appended to OUT/times.tsv; a run directory that already holds a finished run
# (frontier-test.tsv) is kept, so the script can be stopped and started again.
# Then bench/paper_table.py OUT makes the table of docs/search.md §8 and copies the frontiers
# (schedules + TSVs) to results/paper/.
# Usage: bench/paper_table.sh OUT [BUILD_DIR] [APP ...]   (default: all seven apps)
# Budgets: population x generations per app and mode, below; artistic blur's call takes ~1.1 s
# at 820x614, so it gets a small budget and fewer timing samples.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/paper_table.sh OUT [BUILD_DIR] [APP ...]}
build=${2:-build-bench}
shift $(( $# < 2 ? $# : 2 ))
apps=("$@")
[ ${#apps[@]} -gt 0 ] || apps=(blur unsharp_mask bilateral_filter bilateral_grid demosaic median
                              artistic_blur)
perfora=$build/perfora
[ -x "$perfora" ] || { echo "paper_table: no $perfora (build it first)" >&2; exit 2; }
mkdir -p "$out"
[ -f "$out/times.tsv" ] || printf 'run\tseconds\tevaluations\tcommit\tstart\n' > "$out/times.tsv"

# budget APP MODE -> the `perfora tune` options of that run
budget() {
  case "$1:$2" in
    artistic_blur:full) echo "--population 12 --generations 5 --samples 3 --confirm 1 --confirm-samples 5" ;;
    artistic_blur:loop) echo "--population 8 --generations 4 --samples 3 --confirm 1 --confirm-samples 5" ;;
    *) echo "--population 30 --generations 20" ;;
  esac
}

for app in "${apps[@]}"; do
  for mode in full loop; do
    run=$out/$app-$mode
    if [ -f "$run/frontier-test.tsv" ]; then
      echo "paper_table: $run is finished; kept"
      continue
    fi
    rm -rf "$run"
    echo "paper_table: $app --mode $mode, load $(cut -d' ' -f1-3 /proc/loadavg), $(date +%H:%M:%S)"
    start=$(date +%s)
    # shellcheck disable=SC2046  # the budget is a list of options
    "$perfora" tune "apps/$app.pf" --out "$run" --mode "$mode" --resolution 820x614 --seed 5 \
      --quiet $(budget "$app" "$mode")
    secs=$(( $(date +%s) - start ))
    printf '%s\t%d\t%d\t%s\t%s\n' "$app-$mode" "$secs" "$(wc -l < "$run/evaluations.jsonl")" \
      "$(git rev-parse --short HEAD)" "$(date -d "@$start" +%FT%T)" >> "$out/times.tsv"
    tail -n 2 "$run/log.txt"
  done
done
