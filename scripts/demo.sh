#!/usr/bin/env bash
# All set-up, build, and perfora's main job on the bundled images: the paper's two-pass blur,
# exact and with the paper's perforated variant, JIT-compiled and timed.
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
