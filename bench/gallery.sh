#!/usr/bin/env bash
# Builds bench_gallery (in build-bench/ unless BUILD_DIR is set) and writes the gallery of one
# variant per sampling strategy -- reference, variant, error heat map -- to OUT (default
# BUILD_DIR/gallery, outside the source tree): OUT/index.html links every picture.
# Usage: bench/gallery.sh [OUT] [PHOTO.png]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build-bench}"
out="${1:-$build/gallery}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPF_BENCH=ON > /dev/null
fi
cmake --build "$build" --target bench_gallery -j "$(nproc)" > /dev/null
shift || true
"$build/bench/bench_gallery" "$out" "$@"
