#!/usr/bin/env bash
# All set-up, build, and perfora's main job on the bundled images: the paper's two-pass blur,
# exact and with the paper's perforated variant, JIT-compiled and timed; then a short real
# search (genetic algorithm, a few minutes on two cores) for its Pareto frontier of variants,
# and the HTML report of that search (docs/report.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DPF_BENCH=OFF
mkdir -p out
photo=data/images/train/people_56_820x614.png
./build/perfora check apps/blur.pf
./build/perfora run apps/blur.pf --in "$photo" --out out/blur_exact.png --time 10
./build/perfora run apps/blur.pf --schedule apps/blur_paper.sched --in "$photo" \
    --out out/blur_perforated.png --time 10
echo "demo: wrote out/blur_exact.png and out/blur_perforated.png"
# The search: a fresh run directory each time (a killed run resumes with --resume out/blur-tune).
rm -rf out/blur-tune
# At the paper's resolution (820x614): on smaller images a call lasts a fraction of a
# millisecond and fixed costs hide what perforation saves.
./build/perfora tune apps/blur.pf --out out/blur-tune --resolution 820x614 \
    --population 12 --generations 6 --seed 1
# The report: Pareto plot, variants in words, pictures with error maps, how the search went.
report=$(./build/perfora report out/blur-tune --quiet)
echo "demo: the report of the search is $report"
