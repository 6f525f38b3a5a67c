#!/usr/bin/env bash
# After bench/paper_table.sh: do the seven-app runs' claims hold, and how far can any variant go?
#  1. bench/check_claims.py on every image-perforation run (artistic blur left out: its call
#     takes ~1.1 s at 820x614): each frontier variant timed alone on the test photos against
#     the exact program; written to OUT/APP-full/claims.txt;
#  2. the memory floor: each app's exact default against bench/copy.pf (read the input, write
#     the output, nothing else) on the same test photos, alternating exact, copy, copy, exact:
#     exact / copy bounds the speedup of any variant that reads its input once and writes every
#     output pixel; written to OUT/floor.tsv.
# Timing: QUIET machine only. Usage: bench/paper_check.sh OUT [BUILD_DIR] [--time N]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/paper_check.sh OUT [BUILD_DIR] [--time N]}
build=${2:-build-bench}
reps=21
[ "${3:-}" = "--time" ] && reps=${4:?--time N}
perfora=$build/perfora
apps=(blur unsharp_mask bilateral_filter bilateral_grid demosaic median)

for app in "${apps[@]}"; do
  run=$out/$app-full
  [ -f "$run/frontier-test.tsv" ] || { echo "paper_check: no finished $run; skipped"; continue; }
  [ -f "$run/claims.txt" ] && { echo "paper_check: $run/claims.txt exists; kept"; continue; }
  echo "paper_check: check_claims $run, $(date +%H:%M:%S)"
  bench/check_claims.py "$run" --perfora "$perfora" --time "$reps" > "$run/claims.tmp"
  mv "$run/claims.tmp" "$run/claims.txt"
  tail -n 1 "$run/claims.txt"
done

ms() {  # ms PROGRAM IMAGE -> the median time of one call, ms
  "$perfora" run "$1" --in "$2" --out /tmp/paper_check_out.png --time "$reps" 2>&1 |
    sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}
printf 'app\texact_ms\tcopy_ms\texact_over_copy\n' > "$out/floor.tsv"
for app in "${apps[@]}" artistic_blur; do
  run=$out/$app-full
  [ -f "$run/config.json" ] || continue
  mapfile -t images < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["test_images"]))' "$run/config.json")
  [ "$app" = artistic_blur ] && images=("${images[0]}")  # one photo: its call takes ~1.1 s
  for img in "${images[@]}"; do  # exact, copy, copy, exact: drift cancels
    printf '%s %s %s %s\n' "$(ms "apps/$app.pf" "$img")" "$(ms bench/copy.pf "$img")" \
      "$(ms bench/copy.pf "$img")" "$(ms "apps/$app.pf" "$img")"
  done | awk -v app="$app" '{ e += $1 + $4; c += $2 + $3; n += 2 }
    END { printf "%s\t%.3f\t%.3f\t%.2f\n", app, e / n, c / n, e / c }' >> "$out/floor.tsv"
done
column -t "$out/floor.tsv"
