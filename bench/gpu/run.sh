#!/bin/bash
# bench/gpu/run.sh — the CUDA backend on a GPU machine, in one run of about five minutes
# (issue 24; docs/gpu.md §6), and the CPU's scaling on that machine's 16 cores (issue 28).
# Steps, in the order STEPS names them (default: all, this order):
#   tests    test_codegen's codegen_gpu_run (every app's default GPU schedule, GPU fills, GPU
#            Gaussian reconstructions, random perforation + GPU genes, on the CUDA backend
#            against the interpreter, max abs <= 1e-4) and codegen_gpu_ptx (ptxas registers and
#            spills);
#   exact    every app (EXACT_APPS) at SIZE: `perfora run --target cuda --time 101` (kernels by
#            CUDA events, transfers apart) and `--threads 2 --time 5` on the CPU, outputs compared;
#   anchors  the anchors' gpu_bench on the same GPU, minutes apart;
#   blur     blur's GPU schedules (the default = the best hand schedule's shape) and the paper's
#            variant;
#   perf     one perforated variant per app against its exact program, both on the GPU in the
#            same step, and its output against the same variant on the CPU;
#   gauss    Gaussian reconstructions on the GPU (docs/gpu.md §5): the recursive filter tiled
#            (PF_GPU_GAUSS=tiled, tiles of 32; tiled:16, tiled:64) against one thread per row
#            and column (rows), each variant's kernels against the exact program's in the same
#            step, and each output against the same variant on the CPU (2 threads);
#   tune     a small `perfora tune --target cuda` (the search on the GPU);
#   scaling  bench_scaling at 1, 2 and all cores (issue 28).
# Each step has a time limit, and the later steps are skipped once BUDGET_S seconds have passed.
#
# Usage, from the repository root, after bench/gpu/bundle.sh (its .gpubundle/bundle.tar.xz is
# unpacked when present) or with perfora built here:  OUT=out/gpu bash bench/gpu/run.sh
# Environment: BUDGET_S (default 420), SIZE (2048x1536), SRC (the photo scaled to SIZE), IMG
# (an image of SIZE to use instead).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTDIR=${OUT:-$PWD/out/gpu}
mkdir -p "$OUTDIR"
SUMMARY="$OUTDIR/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
BUDGET_S=${BUDGET_S:-420}
START=$(date +%s)
left() { [ $(( $(date +%s) - START )) -lt "$BUDGET_S" ] || { say "# SKIP: over the ${BUDGET_S} s budget"; return 1; }; }
APPS="blur unsharp_mask bilateral_filter bilateral_grid demosaic mosaic median artistic_blur"

# 0. the binaries: the bundle's (with its libraries), else this checkout's builds
PF=/tmp/pf
if [ -f .gpubundle/bundle.tar.xz ]; then
  mkdir -p $PF && tar -C $PF -xJf .gpubundle/bundle.tar.xz
  for b in $PF/bin/*; do  # wrappers: only our programs see the bundle's libraries
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib exec %s "$@"\n' $PF "$b" > "$b.sh"
    chmod +x "$b.sh"
  done
  PERFORA=$PF/bin/perfora.sh TESTS=$PF/bin/test_codegen.sh SCALING=$PF/bin/bench_scaling.sh
  GPU_BENCH=$PF/bin/gpu_bench
else
  PERFORA=build/perfora TESTS=build/tests/test_codegen SCALING=build-bench/bench/bench_scaling
  GPU_BENCH=../shared/anchors/gpu/bin/gpu_bench
fi

# the tests and benches find apps/ and data/ in the source directory they were built in (the
# bundle's: /work/main); a link there to this checkout where it is missing
SRC_DIR=${SRC_DIR:-/work/main}
if [ ! -e "$SRC_DIR/apps/blur.pf" ]; then mkdir -p "$(dirname "$SRC_DIR")" && ln -sfn "$PWD" "$SRC_DIR"; fi

# 1. the card
say "# $(date -u +%FT%TZ) bench/gpu/run.sh"
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version,memory.total \
  --format=csv 2>&1 | tee -a "$SUMMARY"
say "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

# the photo at SIZE
SIZE=${SIZE:-2048x1536}
SRC=${SRC:-data/images/train/man_made_55_820x614.png}
IMG=${IMG:-/tmp/pf_img_$SIZE.png}  # an image of that size given: used as it is
[ -f "$IMG" ] || python3 -c "
from PIL import Image
w, h = map(int, '$SIZE'.split('x'))
Image.open('$SRC').convert('RGB').resize((w, h), Image.BICUBIC).save('$IMG')" ||
  say "could not make $IMG"

# max |a - b| of two PNGs, in 8-bit levels
pngdiff() {
  python3 -c "
import numpy as np; from PIL import Image
a = np.asarray(Image.open('$1'), dtype=np.int32); b = np.asarray(Image.open('$2'), dtype=np.int32)
print(int(np.abs(a - b).max()) if a.shape == b.shape else 'shapes differ')" 2>&1
}
# median ms from a `perfora run --time` output (the kernels' on the GPU)
ms_of() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<< "$1" | head -1; }
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
# calls per timing
calls() { echo "$2"; }

step_tests() {
  say "# test_codegen codegen_gpu_run codegen_gpu_ptx"
  timeout 150 "$TESTS" codegen_gpu_run codegen_gpu_ptx > "$OUTDIR/gpu_tests.txt" 2>&1
  say "rc=$? $(grep -E 'asserts|tests ' "$OUTDIR/gpu_tests.txt" | tr -s ' ' | tr '\n' ' ')"
  say "compared: $(grep -c 'max|diff|' "$OUTDIR/gpu_tests.txt"), not run (host runtime call): $(grep -c 'not run' "$OUTDIR/gpu_tests.txt")"
  grep -E 'SKIP|on NVIDIA|FAIL|Assertion|GPU fill|GPU gaussian' "$OUTDIR/gpu_tests.txt" | head -50 | tee -a "$SUMMARY"
}

step_exact() {
  say "# $SIZE exact: perfora run --target cuda (kernels, CUDA events) vs --threads 2 --time 5"
  say "app              gpu_ms    upload  download  cpu2_ms   cpu/gpu   max|gpu-cpu| (8-bit)"
  for app in ${EXACT_APPS:-$APPS}; do
    left || break
    g=$(timeout 60 $PERFORA run apps/$app.pf --target cuda --time $(calls $app 101) --in $IMG \
        --out /tmp/gpu_$app.png --emit-ptx "$OUTDIR/$app.ptx" 2>&1)
    c=$(timeout 90 $PERFORA run apps/$app.pf --threads 2 --time 5 --in $IMG --out /tmp/cpu_$app.png 2>&1)
    echo "$g"$'\n'"$c" > "$OUTDIR/run_$app.txt"
    gm=$(ms_of "$g"); cm=$(ms_of "$c")
    up=$(sed -n 's/.*upload \([0-9.]*\) ms.*/\1/p' <<< "$g"); dn=$(sed -n 's/.*download \([0-9.]*\) ms.*/\1/p' <<< "$g")
    if [ -n "$gm" ] && [ -n "$cm" ]; then
      say "$(printf '%-16s %-9s %-7s %-9s %-9s %-9s %s' $app $gm $up $dn $cm $(ratio $cm $gm) \
            "$(pngdiff /tmp/gpu_$app.png /tmp/cpu_$app.png)")"
    else
      say "$(printf '%-16s GPU: %s | CPU: %s' $app "$(tail -1 <<< "$g")" "$(tail -1 <<< "$c")")"
    fi
  done
}

step_anchors() {
  [ -x "$GPU_BENCH" ] || { say "# SKIP anchors: no gpu_bench"; return; }
  say "# anchors: gpu_bench --reps 31 --sizes $SIZE"
  timeout 150 "$GPU_BENCH" --reps 31 --sizes "$SIZE" --csv "$OUTDIR/anchors.csv" \
    > "$OUTDIR/anchors.txt" 2> "$OUTDIR/anchors.err"
  say "gpu_bench rc=$?"
  head -60 "$OUTDIR/anchors.txt" >> "$SUMMARY"
}

sched() { printf '%b' "$2" > /tmp/pf_$1.sched; }
step_blur() {
  say "# blur $SIZE on the GPU: schedules (kernel median of 201 calls)"
  sched default ""
  sched fused64x64_64x4 "loop_output exec tile 64 64 gpu 64 4\nloop_temp exec at loop_output\n"
  sched fused64x32_64x8 "loop_output exec tile 64 32 gpu 64 8\nloop_temp exec at loop_output\n"
  sched fused64x128_64x4 "loop_output exec tile 64 128 gpu 64 4\nloop_temp exec at loop_output\n"
  sched fused32x32_32x8 "loop_output exec tile 32 32 gpu 32 8\nloop_temp exec at loop_output\n"
  sched fused128x32_128x4 "loop_output exec tile 128 32 gpu 128 4\nloop_temp exec at loop_output\n"
  sched root32x8 "loop_output exec tile 32 8 gpu\nloop_temp exec tile 32 8 gpu\n"
  sched root64x4 "loop_output exec tile 64 4 gpu\nloop_temp exec tile 64 4 gpu\n"
  grep -v '^#' apps/blur_paper.sched > /tmp/pf_paper_default_gpu.sched
  for s in default fused64x64_64x4 fused64x32_64x8 fused64x128_64x4 fused32x32_32x8 \
           fused128x32_128x4 root32x8 root64x4 paper_default_gpu; do
    left || break
    r=$(timeout 60 $PERFORA run apps/blur.pf --target cuda --schedule /tmp/pf_$s.sched --time 201 \
        --in $IMG --out /tmp/blur_$s.png 2>&1)
    say "$(printf '%-20s %s' $s "$(grep -E 'median|perfora:' <<< "$r" | head -1)")"
  done
}

declare -A PERF=( [blur]="$(grep -v '^#' apps/blur_paper.sched | tr '\n' ';')"
  [unsharp_mask]="loop_output grid 2 2 1 reconstruct store linear"
  [bilateral_filter]="loop_pixels grid 2 2 reconstruct store linear"
  [bilateral_grid]="yuv_to_rgb grid 2 2 reconstruct store linear"
  [demosaic]="loop_combine grid 2 2 reconstruct store linear"
  [mosaic]="bayer_sample grid 2 2 1 reconstruct store linear"
  [median]="loop_pixels grid 2 2 1 reconstruct store linear"
  [artistic_blur]="loop_blur grid 2 2 1 reconstruct store linear" )
step_perf() {
  say "# $SIZE perforated (the output stage on a 2x2 grid, stored linear; blur: the paper's):"
  say "# kernels of exact and variant on the GPU, same step; the variant's output vs the CPU's"
  say "app              exact_ms  perf_ms   speedup   cpu2_perf_ms  max|gpu-cpu|"
  for app in $APPS; do
    left || break
    tr ';' '\n' <<< "${PERF[$app]}" > /tmp/pf_perf_$app.sched
    n=$(calls $app 51)
    e=$(timeout 60 $PERFORA run apps/$app.pf --target cuda --time $n --in $IMG --out /tmp/gpue_$app.png 2>&1)
    g=$(timeout 60 $PERFORA run apps/$app.pf --target cuda --schedule /tmp/pf_perf_$app.sched \
        --time $n --in $IMG --out /tmp/gpup_$app.png 2>&1)
    c=$(timeout 90 $PERFORA run apps/$app.pf --schedule /tmp/pf_perf_$app.sched --threads 2 \
        --time 3 --in $IMG --out /tmp/cpup_$app.png 2>&1)
    echo "$e"$'\n'"$g"$'\n'"$c" > "$OUTDIR/perf_$app.txt"
    em=$(ms_of "$e"); gm=$(ms_of "$g"); cm=$(ms_of "$c")
    if [ -n "$gm" ] && [ -n "$cm" ] && [ -n "$em" ]; then
      say "$(printf '%-16s %-9s %-9s %-9s %-13s %s' $app $em $gm $(ratio $em $gm) $cm \
            "$(pngdiff /tmp/gpup_$app.png /tmp/cpup_$app.png)")"
    else
      say "$(printf '%-16s exact: %s | GPU: %s | CPU: %s' $app "$(tail -1 <<< "$e")" \
            "$(tail -1 <<< "$g")" "$(tail -1 <<< "$c")")"
    fi
  done
}

declare -A GAUSS=( [blur]="loop_output grid 2 2 1 reconstruct store gaussian 1"
  [bilateral_filter]="loop_pixels grid 2 2 reconstruct store gaussian 1"
  [median]="loop_pixels grid 3 3 1 channels 2 reconstruct store gaussian 0.7" )
step_gauss() {
  say "# $SIZE Gaussian reconstruction on the GPU: kernels (median of 51 calls), PF_GPU_GAUSS"
  say "app              exact_ms  rows_ms   tiled_ms  tiled16   tiled64   rows/tiled  max|gpu-cpu| (tiled, rows)"
  for app in ${GAUSS_APPS:-blur bilateral_filter median}; do
    left || break
    tr ';' '\n' <<< "${GAUSS[$app]}" > /tmp/pf_gauss_$app.sched
    : > "$OUTDIR/gauss_$app.txt"
    c=$(timeout 90 $PERFORA run apps/$app.pf --schedule /tmp/pf_gauss_$app.sched --threads 2 \
        --time 3 --in $IMG --out /tmp/cpug_$app.png 2>&1)
    e=$(timeout 60 $PERFORA run apps/$app.pf --target cuda --time 51 --in $IMG \
        --out /tmp/gpue_$app.png 2>&1)
    declare -A ms=()
    for mode in rows tiled tiled:16 tiled:64; do
      g=$(PF_GPU_GAUSS=$mode timeout 60 $PERFORA run apps/$app.pf --target cuda \
          --schedule /tmp/pf_gauss_$app.sched --time 51 --in $IMG \
          --out "/tmp/gpug_${app}_${mode/:/_}.png" 2>&1)
      echo "# PF_GPU_GAUSS=$mode"$'\n'"$g" >> "$OUTDIR/gauss_$app.txt"
      ms[$mode]=$(ms_of "$g")
      [ -n "${ms[$mode]}" ] || say "$app $mode: $(tail -1 <<< "$g")"
    done
    echo "$c"$'\n'"$e" >> "$OUTDIR/gauss_$app.txt"
    if [ -n "${ms[rows]}" ] && [ -n "${ms[tiled]}" ]; then
      say "$(printf '%-16s %-9s %-9s %-9s %-9s %-9s %-11s %s, %s' $app "$(ms_of "$e")" \
            ${ms[rows]} ${ms[tiled]} "${ms[tiled:16]}" "${ms[tiled:64]}" \
            $(ratio ${ms[rows]} ${ms[tiled]}) "$(pngdiff /tmp/gpug_${app}_tiled.png /tmp/cpug_$app.png)" \
            "$(pngdiff /tmp/gpug_${app}_rows.png /tmp/cpug_$app.png)")"
    else
      say "$(printf '%-16s CPU: %s' $app "$(ms_of "$c") ms (2 threads)")"
    fi
  done
}

step_tune() {
  say "# perfora tune apps/blur.pf --target cuda (population 8 x 3 generations, 820x614)"
  rm -rf /tmp/pf_tune
  timeout 110 $PERFORA tune apps/blur.pf --target cuda --out /tmp/pf_tune --population 8 \
    --generations 3 --resolution 820x614 --jobs 1 --confirm 1 --quiet > "$OUTDIR/tune.txt" 2>&1
  say "rc=$?"; tail -12 "$OUTDIR/tune.txt" >> "$SUMMARY"
  for f in /tmp/pf_tune/frontier-train.tsv /tmp/pf_tune/frontier-test.tsv; do
    [ -f $f ] && { say "$f:"; head -12 $f | tee -a "$SUMMARY"; }
  done
  tar -C /tmp -czf "$OUTDIR/tune_run.tgz" pf_tune 2>/dev/null
}

step_scaling() {
  for app in ${SCALING_APPS:-blur bilateral_filter}; do
    left || break
    say "# bench_scaling --reps 5 --app $app --size $SIZE ($(nproc) cores)"
    timeout 150 "$SCALING" --reps 5 --app $app --size "$SIZE" > "$OUTDIR/scaling_$app.txt" 2>&1
    say "rc=$?"; cat "$OUTDIR/scaling_$app.txt" >> "$SUMMARY"
  done
}

for step in ${STEPS:-tests exact anchors blur perf gauss tune scaling}; do
  say ""
  left || continue
  "step_$step"
done
say ""
say "# done in $(( $(date +%s) - START )) s"
