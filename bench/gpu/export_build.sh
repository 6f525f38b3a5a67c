#!/bin/bash
# bench/gpu/export_build.sh — exported CUDA libraries for bench/gpu/run.sh's `export` step
# (docs/gpu.md §7 item 4): for each variant below, `perfora export --target cuda` and the CPU
# library of the same program and schedule, both built with their own Makefiles (the C source,
# no LLVM object: the GPU machine's processor may differ), and bench/gpu/export_check.c linked
# against the two shared objects, into DIR/export/NAME/ (default .gpubundle).
# Usage, from the repository root after building build/:  bash bench/gpu/export_build.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-.gpubundle}/export
PF=${PERFORA:-build/perfora}
rm -rf "$DIR" && mkdir -p "$DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'loop_pixels grid 2 2 reconstruct store linear\n' > "$tmp/bf.sched"
# name, app, schedule file ("" = the exact program)
VARIANTS="blur:blur: blur_paper:blur:apps/blur_paper.sched bf_exact:bilateral_filter: \
bf_grid:bilateral_filter:$tmp/bf.sched"
for v in $VARIANTS; do
  IFS=: read -r name app sched <<< "$v"
  d="$DIR/$name"
  mkdir -p "$d"
  s=(); [ -n "$sched" ] && s=(--schedule "$sched")
  "$PF" export "apps/$app.pf" "${s[@]}" --target cuda --name "${name}_gpu" --out "$d/gpu" --quiet > /dev/null
  "$PF" export "apps/$app.pf" "${s[@]}" --name "${name}_cpu" --out "$d/cpu" --no-object --quiet > /dev/null
  make -s -C "$d/gpu" > /dev/null && make -s -C "$d/cpu" AOT=0 > /dev/null
  cp "$d/gpu/build/lib${name}_gpu.so" "$d/cpu/build/lib${name}_cpu.so" "$d/"
  cc -std=c11 -O2 -Wall -Wextra -Werror -I"$d/gpu" -I"$d/cpu" \
     "-DGPU_H=\"${name}_gpu.h\"" "-DGPU_FN=${name}_gpu" "-DCPU_H=\"${name}_cpu.h\"" \
     "-DCPU_FN=${name}_cpu" bench/gpu/export_check.c -o "$d/export_check" \
     -L"$d" -l"${name}_gpu" -l"${name}_cpu" -Wl,-rpath,'$ORIGIN' -lm
  rm -rf "$d/gpu" "$d/cpu"
  echo "$d/export_check"
done
